"""What a schema diff says: violations with witnesses, places it cannot decide, a verdict.

Plain frozen values, so reporters (text, JSON, GitHub annotations, JUnit) and
library users read one shape. The exit status follows from them: **0** compatible,
**1** at least one violation (each proven by its witness), **3** no violation proven
but some place not decided — a diff that cannot be sure fails closed.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

__all__ = ["DiffReport", "Undecided", "Violation"]


@dataclass(frozen=True, slots=True)
class Violation:
    """A change that breaks ``mode``, and a record that shows it."""

    rule: str
    #: The direction it breaks: ``backward`` (NEW rejects an OLD record) or ``forward``.
    mode: Literal["backward", "forward"]
    #: The kind (``BenchmarkRun``), or the file name when a schema states none.
    kind: str
    #: Where in a record it bites (RFC 6901).
    path: str
    #: Where OLD and NEW say what they say: ``file#/pointer`` (None: no such schema).
    old: str | None
    new: str | None
    message: str
    #: A whole record the side named by ``accepted_by`` accepts and the other rejects,
    #: as the reference engine judged it.
    witness: Any
    accepted_by: Literal["old", "new"]
    #: The schema files ``old`` and ``new`` are in (for annotations), where known.
    old_file: str | None = None
    new_file: str | None = None

    def as_json(self) -> dict[str, Any]:
        """Its fields, the files left out (they are local paths, for annotations)."""
        return _fields(self, leave_out=("old_file", "new_file"))


@dataclass(frozen=True, slots=True)
class Undecided:
    """A place the diff cannot decide (exit 3), and why."""

    kind: str
    path: str
    old: str | None
    new: str | None
    reason: str
    #: The direction being checked, when the doubt arose in one.
    mode: Literal["backward", "forward"] | None = None

    def as_json(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True, slots=True)
class DiffReport:
    """The outcome of :func:`kernelindex_sdk.schemadiff.diff`."""

    mode: str
    policy: str
    #: The kinds compared (or found on one side only).
    kinds: tuple[str, ...]
    violations: tuple[Violation, ...]
    undecided: tuple[Undecided, ...]
    #: The external schemas both sides reach (a ``$ref`` into a document not given,
    #: never fetched), by URI: the verdict holds if each is the same schema for both.
    assumed_unchanged: tuple[str, ...] = ()
    #: Whether ``format`` was read as an assertion (``--format-assertion``) rather than
    #: as the annotation every dialect makes it by default.
    format_assertion: bool = False

    @property
    def compatible(self) -> bool:
        """True only when every kind was decided and nothing breaks."""
        return not self.violations and not self.undecided

    def exit_status(self) -> int:
        """0 compatible, 1 a violation, 3 nothing proven but something undecided."""
        if self.violations:
            return 1
        return 3 if self.undecided else 0

    def as_json(self) -> dict[str, Any]:
        return {
            "compatible": self.compatible,
            "decided": not self.undecided,
            "mode": self.mode,
            "policy": self.policy,
            "kinds": list(self.kinds),
            "violations": [v.as_json() for v in self.violations],
            "undecided": [u.as_json() for u in self.undecided],
            "assumed_unchanged": list(self.assumed_unchanged),
            "format_assertion": self.format_assertion,
        }


def _fields(value: Violation | Undecided, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in fields(value) if f.name not in leave_out}
