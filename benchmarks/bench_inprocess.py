"""In-process throughput on one core: schema validation and digests, against the references.

    python benchmarks/bench_inprocess.py [--records 5000] [--repeats 7]

Records are the corpus generator's seed-like bundles (a run with its protocol and
environment embedded, ~2.3 KB of compact JSON), parsed once before timing. Peers are
measured side by side in one run, interleaved repeat by repeat, on one pinned core:

* schema validation: ``JsonschemaEngine`` (python-jsonschema, the reference) against
  ``FastEngine`` (jsonschema-rs fast path), both through ``engine.is_valid``;
* schema validation of the same records one at a time (run, protocol, environment),
  each against its own kind's schema;
* digests: the ``rfc8785`` reference (``sha256(rfc8785.dumps({apiVersion, kind, spec}))``)
  against ``kernelindex_sdk.canonical.digest``, over each bundle's run record parsed on
  its own, and over the same runs left inside the parsed bundles (a layout with more
  cache misses per record, shown for contrast).

Each figure is the median of the repeats, as records per second of wall time and of
this process's CPU time (the machine is shared: CPU time is the steadier of the two).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_corpus

import kernelindex_sdk
from kernelindex_sdk.canonical import digest
from kernelindex_sdk.schema.registry import default_registry
from kernelindex_sdk.validating.engine import JsonschemaEngine
from kernelindex_sdk.validating.fastengine import FastEngine


def pin_one_core() -> str:
    try:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    except (AttributeError, OSError):
        return "not pinned"


def measure(
    peers: dict[str, tuple[Callable[[Any], Any], list[Any]]], repeats: int
) -> dict[str, tuple[float, float]]:
    """Median records/s (wall, CPU) of each peer, repeats interleaved."""
    walls: dict[str, list[float]] = {name: [] for name in peers}
    cpus: dict[str, list[float]] = {name: [] for name in peers}
    for _ in range(repeats):
        for name, (function, records) in peers.items():
            wall, cpu = time.perf_counter(), time.process_time()
            for record in records:
                function(record)
            walls[name].append(len(records) / (time.perf_counter() - wall))
            cpus[name].append(len(records) / max(time.process_time() - cpu, 1e-9))
    return {n: (statistics.median(walls[n]), statistics.median(cpus[n])) for n in peers}


def reference_digest(record: dict[str, Any]) -> str:
    import rfc8785

    identity = {k: record[k] for k in ("apiVersion", "kind", "spec")}
    return "sha256:" + hashlib.sha256(rfc8785.dumps(identity)).hexdigest()


def report(title: str, results: dict[str, tuple[float, float]], baseline: str) -> None:
    print(f"\n{title}")
    print(f"{'peer':<34} {'records/s (wall)':>17} {'records/s (CPU)':>16} {'× baseline':>11}")
    base = results[baseline]
    for name, (wall, cpu) in results.items():
        print(f"{name:<34} {wall:>17,.0f} {cpu:>16,.0f} {cpu / base[1]:>10.1f}×")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--reference-records", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    pinned = pin_one_core()
    bundles = [json.loads(json.dumps(b)) for b in make_corpus.bundles(args.records, seed=7)]
    size = statistics.mean(len(json.dumps(b, separators=(",", ":"))) for b in bundles)
    print(f"kernelindex {kernelindex_sdk.__version__}, Python {sys.version.split()[0]}, {pinned}")
    print(f"{len(bundles)} bundles, mean {size:,.0f} bytes of compact JSON, {args.repeats} repeats")

    registry = default_registry()
    bundle_id = registry.bundle("kernelindex.dev/v1alpha1").id
    reference, fast = JsonschemaEngine(registry), FastEngine(registry)
    assert fast.compiled(bundle_id)
    for bundle in bundles[:200]:
        assert reference.is_valid(bundle_id, bundle) and fast.is_valid(bundle_id, bundle)
    results = measure(
        {
            "jsonschema (JsonschemaEngine)": (
                lambda b: reference.is_valid(bundle_id, b),
                bundles[: args.reference_records],
            ),
            "kernelindex FastEngine": (lambda b: fast.is_valid(bundle_id, b), bundles),
        },
        args.repeats,
    )
    report("Schema validation, one bundle per record", results, "jsonschema (JsonschemaEngine)")

    # The same records one at a time, each against its own kind's schema (what
    # validating a directory of single records, or a stream of them, does).
    members = [
        (registry.route(r["apiVersion"], r["kind"]).id, r) for b in bundles for r in b.values()
    ]
    for schema_id, record in members[:300]:
        assert reference.is_valid(schema_id, record) and fast.is_valid(schema_id, record)
    results = measure(
        {
            "jsonschema (JsonschemaEngine)": (
                lambda m: reference.is_valid(m[0], m[1]),
                members[: args.reference_records * 3],
            ),
            "kernelindex FastEngine": (lambda m: fast.is_valid(m[0], m[1]), members),
        },
        args.repeats,
    )
    sizes = [len(json.dumps(r, separators=(",", ":"))) for _, r in members]
    report(
        f"Schema validation, one record (run, protocol or environment; mean "
        f"{statistics.mean(sizes):,.0f} bytes) per record",
        results,
        "jsonschema (JsonschemaEngine)",
    )

    # Digests of run records (~1.0 KB canonical), in two memory layouts: each run parsed
    # from its own JSON text, as a service holds a record it has just read (the runs lie
    # together in memory), and the runs inside the parsed bundles above (each between its
    # protocol and environment, so more cache misses per record).
    in_bundles = [b["run"] for b in bundles]
    alone = [json.loads(json.dumps(run)) for run in in_bundles]
    for run in alone[:200]:
        assert digest(run) == reference_digest(run)
    results = measure(
        {
            "rfc8785 reference + sha256": (reference_digest, alone),
            "kernelindex_sdk.canonical.digest": (digest, alone),
            "kernelindex, runs inside bundles": (digest, in_bundles),
        },
        args.repeats,
    )
    report("Digests of run records", results, "rfc8785 reference + sha256")


if __name__ == "__main__":
    main()
