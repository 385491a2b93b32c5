"""Start-up of ``kernelindex validate one.json`` as a ratio to ``python -c pass``.

    python benchmarks/bench_startup.py [--tree now=.] [--rev main] [--repeats 25] [FILE]

An absolute start-up time says more about the machine than about the code (the same
command has measured 62 ms and 146 ms on one VM within a day), so this prints it as a
multiple of the bare interpreter's, both measured in one run, interleaved: every
repeat runs ``python -c pass`` and then each checkout's ``validate FILE``, each as its
own process. Per command: the median wall time and the median CPU time (user + system,
from ``wait4``), and the ratio to ``python -c pass`` two ways: of the medians, and the
median of the per-repeat ratios (each repeat's command against the interpreter run just
before it, so a slow minute falls on both).

Each checkout runs as ``python -P -m kernelindex_sdk.cli.main validate FILE`` with
``PYTHONPATH`` on it (``--tree LABEL=PATH``, default ``now=`` this repository, or
``--rev REV``, extracted with ``git archive`` into a temporary folder), its bytecode
compiled first, as an installed copy's is. FILE defaults to the first published seed
(``shared/seeds`` beside the repository), else ``examples/``' first bundle. Every
command must accept FILE (exit 0) or nothing is timed.
"""

from __future__ import annotations

import argparse
import compileall
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _default_file() -> Path:
    seeds = sorted((ROOT.parent / "shared" / "seeds").glob("*.json"))
    if seeds:
        return seeds[0]
    return sorted((ROOT / "examples").rglob("*.json"))[0]


def _extract(rev: str, into: Path) -> Path:
    """``kernelindex_sdk`` and ``schemas`` of ``rev``, from ``git archive`` (no worktree)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "kernelindex_sdk", "schemas"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _run(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"bench_startup: {' '.join(command)} exited {process.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=None)
    parser.add_argument("--tree", action="append", default=[], help="LABEL=PATH of a checkout")
    parser.add_argument("--rev", action="append", default=[], help="a git revision to time")
    parser.add_argument("--repeats", type=int, default=25)
    args = parser.parse_args(argv)
    one = args.file or _default_file()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as scratch:
        checkouts: dict[str, Path] = {}
        for index, rev in enumerate(args.rev):
            checkouts[rev] = _extract(rev, Path(scratch) / f"rev-{index}")
        for tree in args.tree or ([] if args.rev else [f"now={ROOT}"]):
            label, _, path = tree.partition("=")
            if not (Path(path) / "kernelindex_sdk").is_dir():
                parser.error(f"--tree {tree!r}: want LABEL=PATH of a checkout")
            checkouts[label] = Path(path).resolve()
        plain = dict(os.environ)
        commands: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], plain)
        }
        for label, checkout in checkouts.items():
            compileall.compile_dir(str(checkout / "kernelindex_sdk"), quiet=1)
            command = [sys.executable, "-P", "-m", "kernelindex_sdk.cli.main", "validate", str(one)]
            commands[f"validate one file, {label}"] = (
                command,
                {**plain, "PYTHONPATH": str(checkout)},
            )
        for command, env in commands.values():
            _run(command, env)  # warm the page cache; fails loudly if a command rejects FILE
        walls: dict[str, list[float]] = {label: [] for label in commands}
        cpus: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(args.repeats):
            for label, (command, env) in commands.items():
                wall, cpu = _run(command, env)
                walls[label].append(wall)
                cpus[label].append(cpu)
    base_wall, base_cpu = walls["python -c pass"], cpus["python -c pass"]
    print(f"{one.name}: {args.repeats} interleaved repeats, medians; ratio to python -c pass")
    print("(of the medians; median of the per-repeat ratios)\n")
    print("| command | wall | CPU | ratio, wall | ratio, CPU |")
    print("|---|---:|---:|---:|---:|")
    for label in commands:
        wall, cpu = statistics.median(walls[label]), statistics.median(cpus[label])
        paired_wall = statistics.median(w / b for w, b in zip(walls[label], base_wall, strict=True))
        paired_cpu = statistics.median(c / b for c, b in zip(cpus[label], base_cpu, strict=True))
        print(
            f"| {label} | {wall * 1000:.1f} ms | {cpu * 1000:.1f} ms "
            f"| {wall / statistics.median(base_wall):.2f}×; {paired_wall:.2f}× "
            f"| {cpu / statistics.median(base_cpu):.2f}×; {paired_cpu:.2f}× |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
