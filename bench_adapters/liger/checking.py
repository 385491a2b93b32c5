"""Each row's records, checked with ``kernelindex validate --strict-refs``'s own checks.

The importer never writes a record that ``validate`` would reject: before anything is
written, every run and every record it references goes through the SDK's
:class:`~kernelindex_sdk.validation.ValidationSession` — schemas and semantic rules
alike (quantiles in order, ``observedAt`` not in the future, numbers in range, text
within its limits). References resolve by construction: a run is only ever written
with the very records it was checked with.

A row whose records fail is refused with one problem per finding, located at the
row's file and line. The pointer is the field's place in the row's bundle
(``/run/spec/observedAt``, ``/workload/spec/parameters/vocab``); where it names a
single CSV column, the message starts with that column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from kernelindex_sdk.errors import Problem
from kernelindex_sdk.validation import ValidationSession

#: Bundle members a run references, in the run's digest-field order.
MEMBERS = ("protocol", "workload", "environment", "implementation")

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


class RecordChecker:
    """Checks runs and referenced records; each referenced record object once."""

    def __init__(self, now: datetime | None = None) -> None:
        # Every value was digested while mapping, so JCS can canonicalize it.
        self._session = ValidationSession(strict_json=True, now=now)
        self._verdicts: dict[int, tuple[Problem, ...]] = {}
        #: Keeps the checked objects alive, so no id() is ever reused for another.
        self._checked: list[Mapping[str, Any]] = []

    def row_problems(
        self,
        run: Mapping[str, Any],
        referenced: Sequence[Mapping[str, Any]],
        source: str | None,
        line: int | None,
    ) -> list[Problem]:
        """Everything ``validate`` would find in the row's run and referenced records."""
        found: list[Problem] = []
        for member, record in zip(MEMBERS, referenced, strict=True):
            found.extend(self._record(record, f"/{member}"))
        found.extend(self._check(run, "/run"))
        return [_at_row(problem, source, line) for problem in found]

    def _record(self, record: Mapping[str, Any], pointer: str) -> tuple[Problem, ...]:
        key = id(record)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = self._check(record, pointer)
            self._checked.append(record)
        return verdict

    def _check(self, record: Mapping[str, Any], pointer: str) -> tuple[Problem, ...]:
        return self._session.check_item(record, pointer=pointer).problems


def _at_row(problem: Problem, source: str | None, line: int | None) -> Problem:
    column = column_of(problem.pointer)
    if column is None:
        return replace(problem, source=source, line=line, column=None)
    message = f"{column}: {problem.message} ({problem.pointer})"
    return replace(problem, message=message, pointer="", source=source, line=line, column=None)
