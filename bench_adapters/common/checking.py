"""Each entry's records, checked with ``kernelindex validate --strict-refs``'s own checks.

No importer writes a record that ``validate`` would reject: before anything is
written, every run and every record it references goes through the SDK's
:class:`~kernelindex_sdk.validating.validation.ValidationSession` — schemas and semantic rules
alike (statistics in order, ``observedAt`` not in the future, numbers in range, text
within its limits). References resolve by construction: a run is only ever written
with the very records it was checked with.

An entry whose records fail is refused with one problem per finding, located where
the entry is in its source (a CSV line, a JSON pointer into the source file); the
pointer into the entry's bundle (``/run/spec/observedAt``) is kept in the message.
Each importer says how to locate a finding (``locate``); the default names the
entry's place and appends the bundle pointer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from kernelindex_sdk.errors import Problem
from kernelindex_sdk.validating.validation import ValidationSession

#: Bundle members a run references, in the run's digest-field order.
MEMBERS = ("protocol", "workload", "environment", "implementation")

#: Where a finding is reported: (finding, entry's file, line, pointer) → the located one.
Locate = Callable[[Problem, "str | None", "int | None", "str | None"], Problem]


def at_entry(
    problem: Problem, source: str | None, line: int | None, pointer: str | None
) -> Problem:
    """The finding at the entry's place: its file, line and pointer in the source file;
    the pointer into the entry's bundle goes into the message."""
    message = problem.message
    if problem.pointer:
        message = f"{message} ({problem.pointer})"
    return replace(
        problem, message=message, pointer=pointer or "", source=source, line=line, column=None
    )


class RecordChecker:
    """Checks runs and referenced records; each referenced record object once."""

    def __init__(self, now: datetime | None = None, locate: Locate = at_entry) -> None:
        # Every value was digested while mapping, so JCS can canonicalize it.
        self._session = ValidationSession(strict_json=True, now=now)
        self._locate = locate
        self._verdicts: dict[int, tuple[Problem, ...]] = {}
        #: Keeps the checked objects alive, so no id() is ever reused for another.
        self._checked: list[Mapping[str, Any]] = []

    def entry_problems(
        self,
        run: Mapping[str, Any],
        referenced: Sequence[Mapping[str, Any]],
        source: str | None,
        line: int | None,
        pointer: str | None = None,
    ) -> list[Problem]:
        """Everything ``validate`` would find in the entry's run and referenced records."""
        found: list[Problem] = []
        for member, record in zip(MEMBERS, referenced, strict=True):
            found.extend(self._record(record, f"/{member}"))
        found.extend(self._check(run, "/run"))
        return [self._locate(problem, source, line, pointer) for problem in found]

    def _record(self, record: Mapping[str, Any], pointer: str) -> tuple[Problem, ...]:
        key = id(record)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = self._check(record, pointer)
            self._checked.append(record)
        return verdict

    def _check(self, record: Mapping[str, Any], pointer: str) -> tuple[Problem, ...]:
        return self._session.check_item(record, pointer=pointer).problems


def one_per_entry(found: list[Problem]) -> list[Problem]:
    """A refused entry is one line: its first problem, saying how many more there are."""
    if len(found) <= 1:
        return found
    first = found[0]
    return [replace(first, message=f"{first.message} (and {len(found) - 1} more)")]
