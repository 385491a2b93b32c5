"""The store's figures: prints them; not a timed test.

On N complete bundles (``store_corpus.py``: make_corpus's seed variants with the
workload and implementation they reference, so ``--strict-refs`` passes), in one
JSON Lines file::

    python benchmarks/bench_store.py --runs 100000            # the target's: --runs 1000000

prints, each command run as a real ``kernelindex`` process:

* ``store add`` time beside ``validate --strict-refs`` of the same JSON Lines
  (the target: at most 1.3x);
* the store's size on disk beside the JSON Lines';
* ``compare --format json`` over the store beside over the JSON Lines (target: 5x
  faster), ``--repeats`` times each, interleaved, medians of wall and CPU time (the
  store is one its reader trusts: made by this code, its facts read in bulk);
* the query "fastest implementation per workload and GPU" through
  ``kernelindex store query`` and, without the CLI's start-up, in DuckDB (target: 1 s);
* the peak resident memory of ``add`` (the ``kernelindex`` process itself, from
  ``wait4``; target: 1 GiB).

``--json`` prints the figures as one JSON object instead; ``--add-only`` stops after
``add`` and the sizes (for the largest corpora, where compare over the JSON Lines
takes long); ``--dir`` keeps the work folder, and a corpus of the same size already
there is reused.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cli import ensure_bytecode
from store_corpus import write_jsonl

FASTEST = """
SELECT kernel, pass, parameters, gpu, arg_min(implementation, value) AS fastest,
       min(value) AS ns
FROM runs WHERE status = 'passed' AND metric = 'latency'
GROUP BY kernel, pass, parameters, gpu
"""


#: CPU seconds (user + system, the process and the workers it waited for) of each
#: timed command, by label: on a shared machine, steadier than wall time.
CPU: dict[str, float] = {}


def timed(*args: str | os.PathLike[str]) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in bytes of the process itself, exit status); its CPU
    seconds go to :data:`CPU` under the command's first two words."""
    command = [sys.executable, "-m", "kernelindex_sdk.cli.main", *map(str, args)]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    CPU[" ".join(map(str, args[:2]))] = usage.ru_utime + usage.ru_stime
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.stderr is not None:
        err = process.stderr.read().decode(errors="replace")
        process.stderr.close()
        if process.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(map(str, args))} failed ({process.returncode}): {err}")
    return elapsed, usage.ru_maxrss * 1024, process.returncode


def measure(runs: int, folder: Path, repeats: int = 3, add_only: bool = False) -> dict[str, Any]:
    corpus = folder / "bundles.jsonl"
    store = folder / "runs.kistore"
    started = time.perf_counter()
    if not (corpus.exists() and sum(1 for _ in corpus.open("rb")) == runs):
        write_jsonl(corpus, runs)  # a corpus of the same size in --dir is reused
    store.unlink(missing_ok=True)
    figures: dict[str, Any] = {"runs": runs, "generate_s": time.perf_counter() - started}
    figures["validate_strict_refs_s"], figures["validate_peak_bytes"], _ = timed(
        "validate", "--strict-refs", corpus
    )
    figures["validate_strict_refs_cpu_s"] = CPU["validate --strict-refs"]
    figures["add_s"], figures["add_peak_bytes"], status = timed(
        "store", "add", corpus, "--store", store
    )
    figures["add_cpu_s"] = CPU["store add"]
    assert status == 0, "the corpus is valid: add must store it"
    figures["add_over_validate"] = figures["add_s"] / figures["validate_strict_refs_s"]
    figures["add_over_validate_cpu"] = figures["add_cpu_s"] / figures["validate_strict_refs_cpu_s"]
    figures["jsonl_bytes"] = corpus.stat().st_size
    figures["store_bytes"] = store.stat().st_size
    figures["store_over_jsonl"] = figures["store_bytes"] / figures["jsonl_bytes"]
    if add_only:
        return figures
    figures["add_again_s"], _, _ = timed("store", "add", corpus, "--store", store)
    # Interleaved, repeat by repeat: both share whatever else the machine is doing.
    times: dict[str, list[tuple[float, float, int]]] = {"jsonl": [], "store": []}
    for _ in range(repeats):
        for label, path in (("jsonl", corpus), ("store", store)):
            wall, peak, _ = timed("compare", "--format", "json", path)
            times[label].append((wall, CPU["compare --format"], peak))
    for label in ("jsonl", "store"):
        figures[f"compare_{label}_s"] = statistics.median(t[0] for t in times[label])
        figures[f"compare_{label}_cpu_s"] = statistics.median(t[1] for t in times[label])
        figures[f"compare_{label}_peak_bytes"] = max(t[2] for t in times[label])
    figures["compare_repeats"] = repeats
    figures["compare_speedup"] = figures["compare_jsonl_s"] / figures["compare_store_s"]
    figures["compare_cpu_speedup"] = figures["compare_jsonl_cpu_s"] / figures["compare_store_cpu_s"]
    figures["query_cli_s"], _, _ = timed("store", "query", FASTEST, "--store", store)
    import duckdb

    with duckdb.connect(str(store), read_only=True) as connection:
        started = time.perf_counter()
        rows = connection.execute(FASTEST).fetchall()
        figures["query_s"] = time.perf_counter() - started
    figures["query_rows"] = len(rows)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000, help="bundles (default 10,000)")
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--repeats", type=int, default=3, help="compare runs per input (default 3)")
    parser.add_argument(
        "--add-only",
        action="store_true",
        help="only validate --strict-refs, store add and the sizes (large --runs)",
    )
    options = parser.parse_args(argv)
    # Bytecode as an installed copy has it: an editable install with
    # PYTHONDONTWRITEBYTECODE set compiles every module in every process.
    ensure_bytecode()
    if options.dir is not None:
        options.dir.mkdir(parents=True, exist_ok=True)
        figures = measure(options.runs, options.dir, options.repeats, options.add_only)
    else:
        with tempfile.TemporaryDirectory(prefix="bench-store-") as folder:
            figures = measure(options.runs, Path(folder), options.repeats, options.add_only)
    if options.json:
        print(json.dumps(figures, indent=2))
        return
    mib = 1 << 20
    print(f"{figures['runs']:,} bundles ({figures['jsonl_bytes'] / mib:,.1f} MiB of JSON Lines)")
    print(
        f"validate --strict-refs  {figures['validate_strict_refs_s']:8.2f} s"
        f" ({figures['validate_strict_refs_cpu_s']:.2f} s CPU)"
        f"  peak {figures['validate_peak_bytes'] / mib:,.0f} MiB"
    )
    print(
        f"store add               {figures['add_s']:8.2f} s"
        f" ({figures['add_cpu_s']:.2f} s CPU)  peak"
        f" {figures['add_peak_bytes'] / mib:,.0f} MiB  ({figures['add_over_validate']:.2f}x"
        f" validate, {figures['add_over_validate_cpu']:.2f}x in CPU; target <= 1.3x, <= 1 GiB)"
    )
    print(
        f"size on disk            {figures['store_bytes'] / mib:8.1f} MiB"
        f"  ({figures['store_over_jsonl']:.2f}x the JSON Lines)"
    )
    if options.add_only:
        return
    print(f"store add, again        {figures['add_again_s']:8.2f} s  (everything already present)")
    print(
        f"compare over JSON Lines {figures['compare_jsonl_s']:8.2f} s"
        f" ({figures['compare_jsonl_cpu_s']:.2f} s CPU)"
        f"  peak {figures['compare_jsonl_peak_bytes'] / mib:,.0f} MiB\n"
        f"compare over the store  {figures['compare_store_s']:8.2f} s"
        f" ({figures['compare_store_cpu_s']:.2f} s CPU)"
        f"  peak {figures['compare_store_peak_bytes'] / mib:,.0f} MiB\n"
        f"  {figures['compare_speedup']:.2f}x faster in wall time,"
        f" {figures['compare_cpu_speedup']:.2f}x in CPU time (medians of"
        f" {figures['compare_repeats']}, interleaved; target >= 5x)"
    )
    print(
        f"fastest per workload/GPU {figures['query_s']:7.3f} s in DuckDB,"
        f" {figures['query_cli_s']:.2f} s as kernelindex store query"
        f" ({figures['query_rows']} rows; target <= 1 s)"
    )


if __name__ == "__main__":
    main()
