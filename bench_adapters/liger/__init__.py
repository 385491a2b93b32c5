"""Liger-Kernel benchmark CSVs (``all_benchmark_data*.csv``) as kernelindex records.

Every row becomes a ``BenchmarkRun`` plus the ``BenchmarkProtocol``, ``Workload``,
``ExecutionEnvironment`` and ``Implementation`` it references by digest; each
distinct record is kept once. The mapping reproduces the published seeds exactly
(see ``docs/importers/liger.md``); what it needs to know about kernels, parameters,
GPUs and providers is catalog data in ``data/*.json``.

    from bench_adapters.liger import import_csv
    summary = import_csv(["all_benchmark_data.csv"], "out", layout="bundles")
    print("\\n".join(summary.lines()))

:func:`convert` does the reading, mapping and checking alone (records in memory,
nothing written), :func:`write_records` the writing. The way back, records to Liger's
CSV, is :mod:`bench_adapters.liger.export` (``kernelindex export liger``).
"""

from __future__ import annotations

from bench_adapters.liger.catalog import Catalog, CatalogError, load_catalog
from bench_adapters.liger.importer import Conversion, ImportSummary, convert, import_csv
from bench_adapters.liger.mapper import MappedRun, Mapper
from bench_adapters.liger.records import COLLAPSED_QUANTILES
from bench_adapters.liger.source import COLUMNS, LIGER_HEADER, MAX_ROW_BYTES
from bench_adapters.liger.writer import (
    JSONL_NAME,
    LAYOUTS,
    ExistingOutput,
    Layout,
    OutputError,
    WriteResult,
    bundle_file_name,
    write_records,
)

__all__ = [
    "COLLAPSED_QUANTILES",
    "COLUMNS",
    "JSONL_NAME",
    "LAYOUTS",
    "LIGER_HEADER",
    "MAX_ROW_BYTES",
    "Catalog",
    "CatalogError",
    "Conversion",
    "ExistingOutput",
    "ImportSummary",
    "Layout",
    "MappedRun",
    "Mapper",
    "OutputError",
    "WriteResult",
    "bundle_file_name",
    "convert",
    "import_csv",
    "load_catalog",
    "write_records",
]
