"""Importing KernelBench baseline timings: read every file, map and check every entry, write.

The shared import path (:mod:`bench_adapters.common.importing`): a file that cannot be
read, or is not an object of levels, stops the import before anything is written (exit
2); an entry whose records would not pass ``validate --strict-refs`` — or that says
nothing usable — is refused in one line naming the file and the entry's JSON Pointer
(exit 1), the others are written; ``null`` entries are runs that did not pass; nothing
already in the output is lost.

What the files do not say is declared by the caller or recorded as unknown, never
guessed: ``--set torch=2.5.0`` (a known software component; any other as
``--set software.NAME=VERSION``), ``--set timer=cuda_events``,
``--set warmup=3``, ``--set gpu=NAME`` (for entries that name no GPU),
``--set dtype=fp32`` (a known dtype), ``--set observed-at=TIMESTAMP``, ``--set implementation=NAME``
(for files whose names do not say).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bench_adapters.common.importing import Collector, Paths, SourceImport, as_list
from bench_adapters.common.provenance import (
    DeclarationError,
    Declarations,
    declared_count,
    declared_dtype,
    declared_timer,
    declared_timestamp,
    parse_declarations,
)
from bench_adapters.kernelbench.files import FileNameError, implementation_of, timing_files
from bench_adapters.kernelbench.mapper import KernelBenchMapper
from bench_adapters.kernelbench.mapping import load_mapping

JSONL_NAME = "kernelbench.jsonl"
#: ``--set`` keys that are the importer's own; any other key declares a software version.
RESERVED = ("timer", "warmup", "gpu", "dtype", "observed-at", "implementation")


def _mapper(paths: Paths, declared: Sequence[str] | Declarations) -> Callable[[Collector], None]:
    """Check the declarations now (a bad one is a usage error), map when called."""
    declarations = (
        declared if isinstance(declared, Declarations) else parse_declarations(declared, RESERVED)
    )
    reserved = declarations.reserved
    mapping = load_mapping()
    timer = declared_timer(reserved["timer"]) if "timer" in reserved else None
    warmup = declared_count("warmup", reserved["warmup"]) if "warmup" in reserved else None
    observed = declared_timestamp(reserved["observed-at"]) if "observed-at" in reserved else None
    gpu = reserved.get("gpu")
    if gpu is not None and len(gpu) > 1024:
        raise DeclarationError("--set gpu: a GPU name holds at most 1024 characters")
    dtype = declared_dtype(reserved["dtype"]) if "dtype" in reserved else None
    implementation = reserved.get("implementation")
    if implementation is not None:
        try:
            implementation_of(implementation, mapping)
        except FileNameError as error:
            raise DeclarationError(f"--set implementation: {error}") from None
    files = as_list(paths)

    def map_all(collector: Collector) -> None:
        mapper = KernelBenchMapper(
            collector,
            mapping,
            declarations,
            observed_at=observed,
            timer=timer,
            warmup=warmup,
            gpu=gpu,
            dtype=dtype,
            implementation=implementation,
        )
        mapper.map_files(timing_files(files, mapping.file_prefix, collector.warn))

    return map_all


SOURCE = SourceImport(noun="entries", jsonl_name=JSONL_NAME, prepare=_mapper)
#: Read, map and check every entry of ``paths`` (files or folders); writes nothing.
convert = SOURCE.convert
#: Import KernelBench timing files and folders into ``out_dir``.
import_paths = SOURCE.import_into
