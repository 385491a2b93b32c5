"""``kernelindex history`` over a large store: prints figures; not a timed test.

A store of ``--seed-runs`` complete bundles (``store_corpus.py``) is made with
``kernelindex store add``, then its runs are copied in SQL, each copy a new digest and
a value scattered by ±2 % (a noisy series), until it holds ``--runs`` runs::

    python benchmarks/bench_history.py --runs 1000000      # the target: at most 5 s

prints, ``--repeats`` times each, the wall and CPU time of ``kernelindex history STORE
--format json`` as a real process (output to /dev/null), of the same in process
(:func:`~kernelindex_sdk.compare.history_store.open_store` and
:meth:`~kernelindex_sdk.compare.history_store.StoreHistory.history`, each phase timed),
and the series, points and changes found. ``--dir`` keeps the work folder; a store of
the same size already there is reused if this very code made it (a store is trusted
only by the code that wrote it: any change to the SDK makes it read record by record).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from store_corpus import write_jsonl

KERNELINDEX = [sys.executable, "-m", "kernelindex_sdk.cli.main"]


def make_store(folder: Path, runs: int, seed_runs: int) -> Path:
    """A trusted store of ``runs`` runs: ``seed_runs`` added, the rest copies in SQL."""
    from kernelindex_sdk.compare.history_store import open_store
    from kernelindex_sdk.schema.fingerprint import checks_fingerprint

    store = folder / f"history-{runs}.kistore"
    if store.exists() and open_store(str(store), trusted_by=checks_fingerprint()):
        return store
    store.unlink(missing_ok=True)  # made by other code: its facts are not trusted now
    corpus = folder / f"seed-{seed_runs}.jsonl"
    write_jsonl(corpus, seed_runs)
    partial = folder / "partial.kistore"
    partial.unlink(missing_ok=True)
    added = subprocess.run(
        [*KERNELINDEX, "store", "add", str(corpus), "--store", str(partial)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if added.returncode != 0:
        sys.exit(f"store add failed: {added.stderr}")
    _copy_runs(partial, runs, seed_runs)
    partial.rename(store)
    return store


def _copy_runs(store: Path, runs: int, seed_runs: int) -> None:
    """Copies of every run (records row and facts row), until ``runs`` runs."""
    import duckdb

    copies = -(-runs // seed_runs)
    new = "'sha256:' || md5(r.digest || ':' || k) || md5(k || ':' || r.digest)"
    with duckdb.connect(str(store)) as connection:
        (top,) = connection.execute("SELECT max(seq) FROM records").fetchone() or (0,)
        connection.execute(
            f"""INSERT INTO records SELECT r.seq + k * {top}, {new}, r.kind, r.api_version,
                r.name, r.record, r.standalone, r.members, r.origin, r.origin_line, r.add_id
                FROM records r, range(1, {copies}) t(k) WHERE r.kind = 'BenchmarkRun'
                AND (k * {seed_runs} + (r.seq % {seed_runs})) < {runs}"""
        )
        columns = [row[0] for row in connection.execute("DESCRIBE run_facts").fetchall()]
        # Each copy k days later (a series re-measured day by day), its value scattered.
        shifted = "strftime(f.observed_at::TIMESTAMPTZ + to_days(k::INTEGER), '%Y-%m-%dT%H:%M:%SZ')"
        chosen = [
            new if c == "digest" else "f.value * (0.98 + 0.04 * random())" if c == "value"
            else shifted if c == "observed_at" else f"f.{c}"
            for c in columns
        ]  # fmt: skip
        connection.execute(
            f"""INSERT INTO run_facts SELECT {", ".join(chosen)}
                FROM run_facts f JOIN records r ON r.digest = f.digest, range(1, {copies}) t(k)
                WHERE (k * {seed_runs} + (r.seq % {seed_runs})) < {runs}"""
        )
        (count,) = connection.execute(
            "SELECT count(*) FROM records WHERE kind = 'BenchmarkRun'"
        ).fetchone() or (0,)
        print(f"store: {count} runs")


def timed_cli(store: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``history STORE --format json`` as a process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with open(os.devnull, "w") as sink:
        done = subprocess.run(
            [*KERNELINDEX, "history", str(store), "--format", "json", "--fail-on", "none"],
            stdout=sink, stderr=subprocess.PIPE, text=True, check=False,
        )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"history failed: {done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_process(store: Path) -> dict[str, float]:
    """Each phase's seconds, without the CLI's start-up and output."""
    from kernelindex_sdk.compare.history_store import open_store
    from kernelindex_sdk.schema.fingerprint import checks_fingerprint

    started = time.perf_counter()
    opened = open_store(str(store), trusted_by=checks_fingerprint())
    assert opened is not None, "the store is not trusted"
    opened_at = time.perf_counter()
    found = opened.history(opened.runs)
    done = time.perf_counter()
    points = sum(len(s.points) for s in found.series)
    changes = sum(len(s.changes) for s in found.series)
    print(f"  {len(found.series)} series, {points} points, {changes} changes")
    return {"open": opened_at - started, "history": done - opened_at, "total": done - started}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seed-runs", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path)
    args = parser.parse_args(argv)
    folder = args.dir or Path(tempfile.mkdtemp(prefix="bench-history-"))
    folder.mkdir(parents=True, exist_ok=True)
    store = make_store(folder, args.runs, args.seed_runs)
    walls, cpus, phases = [], [], []
    for _ in range(args.repeats):
        wall, cpu = timed_cli(store)
        walls.append(wall)
        cpus.append(cpu)
        phases.append(in_process(store))
    print(f"history {args.runs} runs, CLI: wall {statistics.median(walls):.2f} s (min"
          f" {min(walls):.2f}), CPU {statistics.median(cpus):.2f} s")  # fmt: skip
    for phase in ("open", "history", "total"):
        print(f"  in process {phase}: {statistics.median(p[phase] for p in phases):.2f} s")


if __name__ == "__main__":
    main()
