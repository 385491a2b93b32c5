"""Every speed target in one interleaved run: the current-figures table.

    python benchmarks/run_current_figures.py [--repeats 5] [--lines 100000] [--files-only]

Each row is a command of this checkout against its peer, each its own process, every
command of every row run once per repeat, in an order that rotates from repeat to
repeat (so a slow minute of a shared machine falls on all rows alike). A row's ratio is
the median over repeats of (its time ÷ its peer's time in that repeat), by wall clock
and by CPU time (the command and every process it waited for, ``wait4``). The rows:

- JSON Lines of bundles from each common writer (``bench_writers.py``'s writers, the
  first ``--lines`` lines of ``corpus/records.jsonl``): ``validate --jobs 1`` ÷
  ``bare_loop.py`` (target ≤ 1.6×);
- records one per line (``corpus/record-lines.jsonl``, ``make_record_lines.py``: what
  ``import liger --layout jsonl`` writes): ``validate --jobs 1`` ÷
  ``bare_loop_kinds.py``, one jsonschema-rs validator per kind (target ≤ 1.4×);
- 2,000 bundle files of each of the three indent writers: ajv-cli ÷ ``validate DIR``
  (target ≥ 3.5×; ajv-cli from ``setup_peers.sh`` or ``benchmarks/node_modules``);
- start-up: ``validate one.json`` ÷ ``python -c pass`` (target ≤ 5×);
- digests: ``kernelindex_sdk.digest`` (public) over the rfc8785 reference, from
  ``bench_digest.py --liger --json`` run after the others (in process, its own
  interleaving; target ≥ 12×).

Nothing is timed unless every command accepts its input (exit 0). It prints a Markdown
table headed by the command line, the commit, the date and the load average, to paste
into ``benchmarks/README.md``. Missing inputs are made first (``make_corpus.py
--file-writers``, ``make_record_lines.py``, ``schema export --bundled``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from bench_ab import HERE
from bench_cli import ensure_bytecode, run
from bench_writers import WRITERS, _have_pandas

ROOT = HERE.parent
CORPUS = HERE / "corpus"
PY = sys.executable
KI = [PY, "-P", "-m", "kernelindex_sdk.cli.main"]
AJV = HERE / "node_modules" / ".bin" / "ajv"
FILE_FOLDERS = ("files-indent2", "files-indent2-utf8", "files-orjson-indent2")

#: A row: (label, target, command, peer command, ratio is peer ÷ command).
Row = tuple[str, str, list[str], list[str], bool]


def _inputs(lines: int, work: Path) -> tuple[Path, dict[str, Path]]:
    """The schema folder the bare loops read and the writers' JSON Lines files."""
    if not all((CORPUS / folder).is_dir() for folder in FILE_FOLDERS):
        subprocess.run([PY, str(HERE / "make_corpus.py"), "--file-writers"], check=True)
    if not (CORPUS / "record-lines.jsonl").is_file():
        subprocess.run([PY, str(HERE / "make_record_lines.py")], check=True)
    schemas = work / "schemas"
    for options in (["--bundled", str(schemas)], [str(work / "by-id")]):  # bare loops; ajv
        subprocess.run([*KI, "schema", "export", *options], check=True, stdout=subprocess.DEVNULL)
    records = [json.loads(line) for line in (CORPUS / "records.jsonl").open("rb")]
    records = (records * (lines // max(len(records), 1) + 1))[:lines]
    written: dict[str, Path] = {}
    for name, write in WRITERS.items():
        if name.startswith("pandas") and not _have_pandas():
            continue
        path = work / f"writer-{len(written)}.jsonl"
        with path.open("wb") as handle:
            handle.writelines(write(records))
        written[name] = path
    return schemas / "kernelindex.dev" / "v1alpha1", written


def _rows(schemas: Path, written: dict[str, Path], files_only: bool) -> list[Row]:
    rows: list[Row] = []
    if not files_only:
        bare = [PY, str(HERE / "bare_loop.py"), str(schemas / "bundle.schema.json")]
        for name, path in written.items():
            command = [*KI, "validate", "--jobs", "1", str(path)]
            label = f"bundles per line, `{name}`"
            rows.append((label, "≤ 1.6×", command, [*bare, str(path)], False))
        lines = str(CORPUS / "record-lines.jsonl")
        peer = [PY, str(HERE / "bare_loop_kinds.py"), str(schemas), lines]
        command = [*KI, "validate", "--jobs", "1", lines]
        rows.append(("records one per line", "≤ 1.4×", command, peer, False))
        one = str(sorted((CORPUS / "files").glob("*.json"))[0])
        rows.append(("start-up, `validate one.json`", "≤ 5×", [*KI, "validate", one],
                     [PY, "-c", "pass"], False))  # fmt: skip
    if AJV.exists():  # as bench_ab.py runs it: one schema file a kind, refs by $id
        by_id = schemas.parents[2] / "by-id" / "kernelindex.dev" / "v1alpha1"
        bundle = by_id / "bundle.schema.json"
        refs = [a for p in sorted(by_id.glob("*.json")) if p != bundle for a in ("-r", str(p))]
        for folder in FILE_FOLDERS:
            ajv = [str(AJV), "validate", "--spec=draft2020", "-c", "ajv-formats",
                   "--allow-union-types", "-s", str(bundle), *refs,
                   "-d", str(CORPUS / folder / "*.json")]  # fmt: skip
            rows.append((f"2,000 files, `{folder}`, ajv-cli ÷ kernelindex", "≥ 3.5×",
                         [*KI, "validate", str(CORPUS / folder)], ajv, True))  # fmt: skip
    return rows


def _measure(rows: list[Row], repeats: int) -> dict[str, tuple[float, float]]:
    """Median over repeats of each row's paired ratio (wall, CPU)."""
    commands = [(i, side) for i in range(len(rows)) for side in (0, 1)]
    for i, side in commands:  # every command must accept its input before timing
        status = run(rows[i][2 + side])[0]
        if status != 0:
            raise SystemExit(f"not timed: {shlex.join(rows[i][2 + side])} exited {status}")
    times: dict[tuple[int, int], list[tuple[float, float]]] = {c: [] for c in commands}
    for repeat in range(repeats):
        shift = repeat % len(commands)
        for i, side in commands[shift:] + commands[:shift]:
            _, wall, cpu, _ = run(rows[i][2 + side])
            times[(i, side)].append((wall, cpu))
    ratios: dict[str, tuple[float, float]] = {}
    for i, (label, _, _, _, inverse) in enumerate(rows):
        pairs = list(zip(times[(i, 0)], times[(i, 1)], strict=True))
        by = [[(p[c] / m[c]) if inverse else (m[c] / p[c]) for m, p in pairs] for c in (0, 1)]
        ratios[label] = (statistics.median(by[0]), statistics.median(by[1]))
    return ratios


def _digest_ratio(repeats: int) -> tuple[float, float]:
    done = subprocess.run([PY, str(HERE / "bench_digest.py"), "--liger", "--json",
                           "--repeats", str(max(repeats, 5))],
                          capture_output=True, text=True, check=True)  # fmt: skip
    public = json.loads(done.stdout)["records_per_s"]["kernelindex_sdk.digest (public)"]
    return public["wall"]["paired_ratio"], public["cpu"]["paired_ratio"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--files-only", action="store_true", help="only the ajv-cli rows")
    args = parser.parse_args(argv)
    ensure_bytecode()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
    started, load = datetime.now(timezone.utc), os.getloadavg()
    with tempfile.TemporaryDirectory() as work:
        schemas, written = _inputs(args.lines, Path(work))
        rows = _rows(schemas, written, args.files_only)
        ratios = _measure(rows, args.repeats)
    if not args.files_only:
        ratios["`kernelindex_sdk.digest` ÷ rfc8785 (in process)"] = _digest_ratio(args.repeats)
    targets = {label: target for label, target, *_ in rows}
    targets["`kernelindex_sdk.digest` ÷ rfc8785 (in process)"] = "≥ 12×"
    finished, load_after = datetime.now(timezone.utc), os.getloadavg()
    print(f"command: `python {shlex.join(['benchmarks/run_current_figures.py', *sys.argv[1:]])}`")
    print(f"commit: `{commit}`; {started:%Y-%m-%d %H:%M}–{finished:%H:%M} UTC; load average "
          f"{load[0]:.1f} → {load_after[0]:.1f}; {args.repeats} interleaved repeats\n")  # fmt: skip
    print("| measure | target | wall | CPU |")
    print("| --- | --- | ---: | ---: |")
    for label, (wall, cpu) in ratios.items():
        print(f"| {label} | {targets[label]} | {wall:.2f}× | {cpu:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
