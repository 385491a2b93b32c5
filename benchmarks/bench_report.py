"""``kernelindex report`` over a large set of runs: wall time, CPU time, peak memory.

    python benchmarks/bench_report.py [--runs 100000] [--repeats 1] [--store]

Writes ``--runs`` complete bundles (``store_corpus.write_jsonl``: the four seed shapes
with eight batch sizes and three releases, every reference resolvable) as one JSON
Lines file, then times ``kernelindex report FILE --out DIR`` as its own process (with
``--store``: the same records added to a store first, and the report read from it).
Prints the median wall time, CPU time, the peak RSS, the files written and their
bytes. The target: 10^5 runs in at most 60 s and 1 GiB. Figures, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cli import KERNELINDEX, run
from store_corpus import write_jsonl


def _size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--store", action="store_true", help="report from a store")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        data = Path(work) / "runs.jsonl"
        write_jsonl(data, args.runs)
        source = str(data)
        if args.store:
            source = str(Path(work) / "runs.kistore")
            subprocess.run(
                [KERNELINDEX, "store", "add", str(data), "--store", source],
                check=True,
                capture_output=True,
            )
        walls, cpus, peak = [], [], 0
        for repeat in range(args.repeats):
            out = Path(work) / f"site{repeat}"
            status, wall, cpu, rss = run([KERNELINDEX, "report", source, "--out", str(out)])
            if status != 0:
                raise SystemExit(f"kernelindex report exited {status}")
            walls.append(wall)
            cpus.append(cpu)
            peak = max(peak, rss)
        files, size = _size(out)
        # Printed before the folder is removed: deleting 10^5 files can take minutes.
        where = "a store" if args.store else "JSON Lines"
        print(f"kernelindex report, {args.runs} runs from {where} ({os.cpu_count()} CPUs):")
        print(
            f"  wall {statistics.median(walls):.1f} s, CPU {statistics.median(cpus):.1f} s,"
            f" peak RSS {peak / 1024:.0f} MiB, load average {os.getloadavg()[0]:.1f}"
        )
        print(f"  {files} files, {size / 2**20:.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
