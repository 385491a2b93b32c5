"""Interleaved A/B of ``kernelindex validate --jobs 1`` across checkouts, the bare loop as unit.

    python benchmarks/bench_ab.py --rev a61fba3 --rev HEAD [--tree now=.] \\
        [--lines FILE] [--count 30000] [--repeats 9] [--files DIR]

How the end-to-end figures in ``benchmarks/README.md`` are taken. Each
``--rev`` is checked out as a git worktree in a temporary folder; each ``--tree
LABEL=PATH`` names a folder that holds ``kernelindex_sdk`` (a checkout with changes not
yet committed). Every repeat runs every command once, in turn, each as its own process,
so a drift in the machine's speed (this development VM's swings by ±30 % from minute to
minute) falls on all of them alike:

- ``python -P -m kernelindex_sdk.cli.main validate --jobs 1 LINES`` with ``PYTHONPATH``
  set to the checkout (``-P``: the current folder cannot shadow it), its bytecode
  compiled first, as an installed copy's is;
- ``benchmarks/bare_loop.py``: ``orjson.loads`` and jsonschema-rs ``is_valid`` on the
  bundled Bundle schema, the floor the JSON Lines target is measured against.

``LINES`` is the first ``--count`` lines of ``--lines`` (default: the JSON Lines file
``make_corpus.py`` writes). Every command must accept every line, or nothing is timed.
Prints the median wall time of each, its lines per second, and its ratio to the bare
loop's median.

With ``--files DIR`` (the folder of files ``make_corpus.py`` writes, say) a second run
follows, interleaved the same way: per checkout, ``validate DIR`` (``--jobs`` unset, as
a user runs it) and ``validate`` of DIR's first file (the cold start), beside
ajv-cli with ajv-formats on the same folder and file when ``setup_peers.sh`` has
installed it (the peer the files target names) and ``python -c pass``. It prints each
median, wall and CPU time (user + system of the command and of every process it waited
for, so a forked run's workers count), and how many times faster than ajv-cli each is
by both: on a loaded machine the wall-clock ratio measures the scheduler as much as the
code. So old and new code are set
against their peers in one run, on one machine.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS_LINES = HERE / "corpus" / "records.jsonl"
AJV = HERE / "node_modules" / ".bin" / "ajv"


def _checkouts(revs: list[str], trees: list[str], scratch: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for rev in revs:
        path = scratch / f"rev-{len(found)}"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(path), rev],
            check=True,
        )
        found[rev] = path
    for tree in trees:
        label, _, path = tree.partition("=")
        if not path or not (Path(path) / "kernelindex_sdk").is_dir():
            raise SystemExit(f"bench_ab: --tree {tree!r}: want LABEL=PATH of a checkout")
        found[label] = Path(path).resolve()
    return found


def _validate(checkout: Path, *args: str) -> tuple[list[str], dict[str, str]]:
    command = [sys.executable, "-P", "-m", "kernelindex_sdk.cli.main", *args]
    return command, {**os.environ, "PYTHONPATH": str(checkout)}


def ab_parser(description: str, count: int, repeats: int) -> argparse.ArgumentParser:
    """The options of every A/B timing: the checkouts (``--rev``, ``--tree``), the corpus
    (the first ``--count`` lines of ``--lines``) and ``--repeats``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rev", action="append", default=[], help="a git revision to time")
    parser.add_argument("--tree", action="append", default=[], help="LABEL=PATH of a checkout")
    parser.add_argument("--lines", type=Path, default=CORPUS_LINES)
    parser.add_argument("--count", type=int, default=count)
    parser.add_argument("--repeats", type=int, default=repeats)
    return parser


def ab_arguments(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """The options :func:`ab_parser` made, read and checked."""
    args = parser.parse_args(argv)
    if not args.rev and not args.tree:
        parser.error("give at least one --rev or --tree")
    if not args.lines.is_file():
        parser.error(f"{args.lines} is missing: run benchmarks/make_corpus.py first")
    return args


@contextlib.contextmanager
def ab_checkouts(args: argparse.Namespace, prefix: str) -> Iterator[tuple[dict[str, Path], Path]]:
    """The checkouts to time (a git worktree per ``--rev``, removed after) and a scratch
    folder, for the time of the ``with``."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        scratch = Path(folder)
        checkouts = _checkouts(args.rev, args.tree, scratch)
        try:
            yield checkouts, scratch
        finally:
            for rev in args.rev:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(checkouts[rev])],
                    check=False,
                )


def main(argv: list[str] | None = None) -> int:
    parser = ab_parser(__doc__.split("\n\n")[0], count=30_000, repeats=9)
    parser.add_argument("--files", type=Path, help="also time validate of this folder")
    args = ab_arguments(parser, argv)
    if args.files is not None and not sorted(args.files.glob("*.json")):
        parser.error(f"--files {args.files}: no *.json files there")
    with ab_checkouts(args, "bench-ab-") as (checkouts, scratch):
        return _measure(checkouts, args, scratch)


def _measure(checkouts: dict[str, Path], args: argparse.Namespace, scratch: Path) -> int:
    lines = scratch / "lines.jsonl"
    with open(args.lines, "rb") as source, open(lines, "wb") as out:
        count = 0
        for line in source:
            if count == args.count:
                break
            out.write(line)
            count += 1
    first = next(iter(checkouts.values()))
    command, env = _validate(first, "schema", "export", "--bundled", str(scratch / "schemas"))
    subprocess.run(command, env=env, check=True, capture_output=True)
    (bundle_schema,) = (scratch / "schemas").rglob("bundle.schema.json")
    commands: dict[str, tuple[list[str], dict[str, str]]] = {}
    for label, checkout in checkouts.items():
        compileall.compile_dir(str(checkout / "kernelindex_sdk"), quiet=1)
        commands[label] = _validate(checkout, "validate", "--jobs", "1", str(lines))
    commands["bare loop"] = (
        [sys.executable, str(HERE / "bare_loop.py"), str(bundle_schema), str(lines)],
        dict(os.environ),
    )
    if not _all_accept(commands, f"all {count} lines"):
        return 1
    times = _interleaved(commands, args.repeats)
    bare = times["bare loop"]
    print(f"{count} JSON Lines bundles, {args.repeats} interleaved repeats (medians)\n")
    print("| command | wall | lines/s | ÷ bare loop |")
    print("|---|---:|---:|---:|")
    for label, median in times.items():
        name = label if label == "bare loop" else f"validate --jobs 1, {label}"
        print(f"| {name} | {median:.3f} s | {count / median:,.0f} | {median / bare:.2f}× |")
    if args.files is not None:
        return _measure_files(checkouts, args.files, scratch / "export", args.repeats)
    return 0


def _all_accept(commands: dict[str, tuple[list[str], dict[str, str]]], what: str) -> bool:
    """Whether every command accepts its input (exit 0); says which does not."""
    for label, (command, env) in commands.items():
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"- {label} does not accept {what}: nothing timed")
            print(done.stdout[-500:] + done.stderr[-500:])
            return False
    return True


def _interleaved(
    commands: dict[str, tuple[list[str], dict[str, str]]], repeats: int
) -> dict[str, float]:
    """Each command's median wall time, every repeat running every command once in turn."""
    return {label: wall for label, (wall, _) in _interleaved_cpu(commands, repeats).items()}


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _interleaved_cpu(
    commands: dict[str, tuple[list[str], dict[str, str]]], repeats: int
) -> dict[str, tuple[float, float]]:
    """Each command's median wall time and median CPU time (user + system of the
    process and everything it waited for: a forked run's workers, node's threads),
    every repeat running every command once in turn."""
    walls: dict[str, list[float]] = {label: [] for label in commands}
    cpus: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(repeats):
        for label, (command, env) in commands.items():
            start, cpu = time.perf_counter(), _children_cpu()
            subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
            walls[label].append(time.perf_counter() - start)
            cpus[label].append(_children_cpu() - cpu)
    return {
        label: (statistics.median(walls[label]), statistics.median(cpus[label]))
        for label in commands
    }


def _measure_files(checkouts: dict[str, Path], folder: Path, scratch: Path, repeats: int) -> int:
    """``validate FOLDER`` and ``validate`` of its first file per checkout, beside
    ajv-cli (when installed) and the bare interpreter, interleaved."""
    files = sorted(folder.glob("*.json"))
    one = str(files[0])
    plain = dict(os.environ)
    commands: dict[str, tuple[list[str], dict[str, str]]] = {}
    for label, checkout in checkouts.items():
        commands[f"validate {len(files):,} files, {label}"] = _validate(
            checkout, "validate", str(folder)
        )
        commands[f"validate one file, {label}"] = _validate(checkout, "validate", one)
    if AJV.exists():  # as bench_cli.py runs it: one schema file a kind, refs by $id
        command, env = _validate(next(iter(checkouts.values())), "schema", "export", str(scratch))
        subprocess.run(command, env=env, check=True, capture_output=True)
        (bundle,) = scratch.rglob("bundle.schema.json")
        refs = [
            a for p in sorted(bundle.parent.glob("*.json")) if p != bundle for a in ("-r", str(p))
        ]
        ajv = [str(AJV), "validate", "--spec=draft2020", "-c", "ajv-formats",
               "--allow-union-types", "-s", str(bundle), *refs, "-d"]  # fmt: skip
        commands[f"ajv-cli, {len(files):,} files"] = ([*ajv, str(folder / "*.json")], plain)
        commands["ajv-cli, one file"] = ([*ajv, one], plain)
    commands["python -c pass"] = ([sys.executable, "-c", "pass"], plain)
    if not _all_accept(commands, "every file"):
        return 1
    times = _interleaved_cpu(commands, repeats)
    ajv_files = times.get(f"ajv-cli, {len(files):,} files")
    ajv_one = times.get("ajv-cli, one file")
    print(f"\n{folder}: {len(files):,} files, {repeats} interleaved repeats (medians)\n")
    print("| command | wall | ajv-cli ÷ this | CPU | ajv-cli ÷ this, CPU |")
    print("|---|---:|---:|---:|---:|")
    for label, (wall, cpu) in times.items():
        peer = ajv_one if "one file" in label else ajv_files
        ratios = ["", ""]
        if peer is not None and label != "python -c pass":
            ratios = [f"{peer[0] / wall:.2f}×", f"{peer[1] / cpu:.2f}×" if cpu else ""]
        print(f"| {label} | {wall:.3f} s | {ratios[0]} | {cpu:.3f} s | {ratios[1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
