"""Importing nvbench JSON: read every file, map and check every state, then write.

The shared import path (:mod:`bench_adapters.common.importing`): a file that cannot be
read, or that is not nvbench's JSON format 1.0.0, stops the import before anything is
written (exit 2); a state whose records would not pass ``validate --strict-refs`` is
refused in one line naming the file and the state's JSON Pointer (exit 1), the others
are written; nothing already in the output is lost.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from bench_adapters.common.importing import Collector, Paths, SourceImport, as_list
from bench_adapters.common.provenance import (
    Declarations,
    declared_timestamp,
    parse_declarations,
)
from bench_adapters.nvbench.mapper import NvbenchMapper
from bench_adapters.nvbench.mapping import load_mapping
from bench_adapters.nvbench.reader import read_file

JSONL_NAME = "nvbench.jsonl"
#: ``--set`` keys that are the importer's own; any other key declares a software version.
RESERVED = ("observed-at",)


def _mapper(paths: Paths, declared: Sequence[str] | Declarations) -> Callable[[Collector], None]:
    """Check the declarations now (a bad one is a usage error), map when called."""
    declarations = (
        declared if isinstance(declared, Declarations) else parse_declarations(declared, RESERVED)
    )
    observed = declarations.reserved.get("observed-at")
    observed_at = declared_timestamp(observed) if observed else None
    files = as_list(paths)

    def map_all(collector: Collector) -> None:
        mapping = load_mapping()
        mapper = NvbenchMapper(collector, mapping, declarations, observed_at)
        for path in files:
            mapper.map_file(read_file(os.fspath(path), mapping))
            if collector.summary.stopped:
                return

    return map_all


SOURCE = SourceImport(noun="states", jsonl_name=JSONL_NAME, prepare=_mapper)
#: Read, map and check every state of ``paths``; writes nothing (:meth:`SourceImport.convert`).
convert = SOURCE.convert
#: Import nvbench JSON files into ``out_dir`` (:meth:`SourceImport.import_into`).
import_files = SOURCE.import_into
