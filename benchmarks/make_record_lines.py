"""Write records one per line as an importer writes them: ``import liger --layout jsonl``.

    python benchmarks/make_record_lines.py [--copies 80] [--csv CSV] [OUT]

Liger-Kernel's benchmark CSV (``shared/liger`` beside the repository) is copied
``--copies`` times into one CSV: each copy's rows a day later, their latencies scaled a
little, and every fourth copy's ``x_value`` moved (new workloads); then
``kernelindex import liger --layout jsonl`` writes the stream, every kind of record one
per line, runs referencing the others by digest. ``OUT`` (default
``benchmarks/corpus/record-lines.jsonl``) gets that stream. 80 copies make ~200,000
lines. The output is deterministic.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CSV = ROOT.parent / "shared" / "liger" / "all_benchmark_data.csv"


def write_csv(source: Path, target: Path, copies: int) -> int:
    """The rows of ``source`` ``copies`` times, varied; the rows written."""
    with source.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows, f"{source}: no rows"
    with target.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for copy in range(copies):
            scale = 1 + copy / 1000
            for row in rows:
                when = datetime.strptime(row["timestamp"], "%Y-%m-%d %H:%M:%S")
                varied = dict(row, timestamp=str(when + timedelta(days=copy)))
                for key in ("y_value_50", "y_value_20", "y_value_80"):
                    if varied[key]:
                        varied[key] = repr(float(varied[key]) * scale)
                if copy % 4 == 3 and varied["x_value"].isdigit():
                    varied["x_value"] = str(int(varied["x_value"]) + copy)
                writer.writerow(varied)
    return copies * len(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "out", type=Path, nargs="?", default=ROOT / "benchmarks" / "corpus" / "record-lines.jsonl"
    )
    parser.add_argument("--copies", type=int, default=80)
    parser.add_argument("--csv", type=Path, default=CSV)
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        rows = write_csv(options.csv, Path(work) / "all_benchmark_data.csv", options.copies)
        command = [
            sys.executable,
            "-m",
            "kernelindex_sdk.cli.main",
            "import",
            "liger",
            str(Path(work) / "all_benchmark_data.csv"),
            "--out",
            str(Path(work) / "out"),
            "--layout",
            "jsonl",
        ]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        options.out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(Path(work) / "out" / "liger.jsonl"), options.out)
    with options.out.open("rb") as handle:
        lines = sum(1 for _ in handle)
    print(f"{options.out}: {lines} lines from {rows} rows")


if __name__ == "__main__":
    main()
