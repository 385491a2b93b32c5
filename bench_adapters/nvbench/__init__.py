"""nvbench's JSON output (format 1.0.0) as kernelindex records.

Every state of every benchmark becomes a ``BenchmarkRun`` — skipped states included,
as runs with status ``skipped`` and nvbench's reason — plus the protocol (nvbench's
measurement method and settings), workload (benchmark and axis values), environment
(the device, with the provenance of every field) and implementation (the program) it
references. The mapping is data (``data/mapping.json``); see
``docs/importers/nvbench.md``.

    from bench_adapters.nvbench import import_files
    summary = import_files(["run.json"], "out", declarations=["cuda=12.4"])
    print("\\n".join(summary.lines()))
"""

from __future__ import annotations

from bench_adapters.nvbench.importer import JSONL_NAME, RESERVED, convert, import_files

__all__ = ["JSONL_NAME", "RESERVED", "convert", "import_files"]
