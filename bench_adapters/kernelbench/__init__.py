"""KernelBench's baseline timing files as kernelindex records.

Every ``level → problem`` entry of ``baseline_time_<implementation>.json`` becomes a
``BenchmarkRun`` — ``null`` entries included, as runs that failed — plus the protocol,
workload (level and problem), environment (from the entry's own ``hardware``, with the
provenance of every field) and implementation (eager PyTorch or torch.compile, from the
file name) it references. The mapping is data (``data/mapping.json``); see
``docs/importers/kernelbench.md``.

    from bench_adapters.kernelbench import import_paths
    summary = import_paths(["results/timing"], "out", declarations=["torch=2.5.0"])
    print("\\n".join(summary.lines()))
"""

from __future__ import annotations

from bench_adapters.kernelbench.importer import JSONL_NAME, RESERVED, convert, import_paths

__all__ = ["JSONL_NAME", "RESERVED", "convert", "import_paths"]
