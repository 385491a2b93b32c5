"""Writing imported Liger records: one bundle per run, or the stream ``DIR/liger.jsonl``.

The writer is every importer's (:mod:`bench_adapters.common.writer`: deterministic
layouts, one atomic batch under the directory's writer lock, nothing earlier lost);
this module names Liger's stream and keeps the names the importer, the runner and
their tests have always used.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from bench_adapters.common import writer as common
from bench_adapters.common.writer import (
    DIGEST_PREFIX_LENGTH,
    LAYOUTS,
    STREAM_ORDER,
    ExistingOutput,
    ExistingStream,
    Layout,
    OutputError,
    WriteResult,
    WrittenRun,
    bundle_file_name,
    output_lock,
)
from kernelindex_sdk.base.prettyjson import pretty

__all__ = [
    "DIGEST_PREFIX_LENGTH",
    "JSONL_NAME",
    "LAYOUTS",
    "STREAM_ORDER",
    "ExistingOutput",
    "ExistingStream",
    "Layout",
    "OutputError",
    "WriteResult",
    "bundle_file_name",
    "output_lock",
    "pretty",
    "read_stream",
    "write_records",
]

JSONL_NAME = "liger.jsonl"


def read_stream(out_dir: str | os.PathLike[str]) -> ExistingStream | None:
    """Every record of ``DIR/liger.jsonl``, line by line (None if there is none), to merge."""
    return common.read_stream(out_dir, JSONL_NAME)


def write_records(
    runs: Iterable[WrittenRun],
    records: Mapping[str, dict[str, Any]],
    out_dir: str | os.PathLike[str],
    layout: Layout,
    *,
    advance: Callable[[int], None] | None = None,
    force: bool = False,
    existing: ExistingStream | None = None,
) -> WriteResult:
    """Write ``runs`` and the records they reference under ``out_dir`` (``liger.jsonl``)."""
    return common.write_records(
        runs,
        records,
        out_dir,
        layout,
        jsonl_name=JSONL_NAME,
        advance=advance,
        force=force,
        existing=existing,
    )
