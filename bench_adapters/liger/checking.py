"""Each row's records, checked with ``kernelindex validate --strict-refs``'s own checks.

The checking itself is every importer's (:mod:`bench_adapters.common.checking`);
what is Liger's is where a finding is reported: at the row's file and line, and,
where the finding is one CSV column, with the message starting with that column.
Otherwise the pointer is the field's place in the row's bundle
(``/run/spec/observedAt``, ``/workload/spec/parameters/vocab``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from bench_adapters.common.checking import MEMBERS
from bench_adapters.common.checking import RecordChecker as EntryChecker
from kernelindex_sdk.errors import Problem

__all__ = ["COLUMN_OF", "MEMBERS", "RecordChecker", "column_of"]

#: Pointer prefix in a row's bundle -> the CSV column it comes from (first match wins).
COLUMN_OF = (
    ("/run/spec/observedAt", "timestamp"),
    ("/run/spec/timing", "y_value_50"),
    ("/run/spec/memory", "y_value_50"),
    ("/run/spec/measurements/0", "y_value_20"),
    ("/run/spec/measurements/1", "y_value_80"),
    ("/run/metadata/labels/liger_version", "liger_version"),
    ("/workload/spec/kernel", "kernel_name"),
    ("/workload/spec/dtype", "extra_benchmark_config_str"),
    ("/environment", "gpu_name"),
    ("/implementation", "kernel_provider"),
)


def column_of(pointer: str | None) -> str | None:
    """The CSV column a field of a row's bundle comes from, when it is one column."""
    for prefix, column in COLUMN_OF:
        if pointer is not None and (pointer == prefix or pointer.startswith(prefix + "/")):
            return column
    return None


class RecordChecker(EntryChecker):
    """The shared checker, reporting at CSV rows and columns."""

    def __init__(self, now: datetime | None = None) -> None:
        super().__init__(now, locate=_at_row)

    def row_problems(
        self,
        run: Mapping[str, Any],
        referenced: Sequence[Mapping[str, Any]],
        source: str | None,
        line: int | None,
    ) -> list[Problem]:
        """Everything ``validate`` would find in the row's run and referenced records."""
        return self.entry_problems(run, referenced, source, line)


def _at_row(
    problem: Problem, source: str | None, line: int | None, _pointer: str | None
) -> Problem:
    column = column_of(problem.pointer)
    if column is None:
        return replace(problem, source=source, line=line, column=None)
    message = f"{column}: {problem.message} ({problem.pointer})"
    return replace(problem, message=message, pointer="", source=source, line=line, column=None)
