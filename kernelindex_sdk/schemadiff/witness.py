"""Witnesses: the record that proves a violation, judged by the reference engine.

A finding of the walk claims "records like this: the accepting side takes them, the
rejecting side refuses them, at this place". :class:`Verifier` builds candidates for
the claim from the accepting side's normal form (:class:`~.values.Builder`) and hands
each, whole, to :class:`~kernelindex_sdk.engine.JsonschemaEngine` over each side's
registry — the same engine ``kernelindex validate`` uses as its reference, with
ECMA-262 patterns and format checking, and with ``enum`` checked by a set look-up
(``keyed_enums``, the same answers): a diff of an enum whose every value is replaced
proves one witness per value, and the member-by-member check (and the message listing
every member) made that the square of the enum's size. The first candidate that

* the accepting side's engine accepts,
* the rejecting side's engine rejects,
* with a problem located at the claimed place (at it, inside it, or on its parent
  object — where a missing or unknown member is reported)

is the witness. No such candidate among the first few dozen: no witness, and the
claim is reported as undecided, never as a violation.
"""

from __future__ import annotations

import itertools
from typing import Any

from kernelindex_sdk.engine import JsonschemaEngine
from kernelindex_sdk.registry import SchemaEntry, SchemaRegistry
from kernelindex_sdk.schemadiff.normal import Norm
from kernelindex_sdk.schemadiff.values import Builder, Leaf, SearchExhausted, Step
from kernelindex_sdk.schemadiff.walk import instance_pointer

__all__ = ["Verifier", "located"]

#: Candidate records tried per claim.
CANDIDATES = 40
#: Checks of a value against a schema that building them may take, per claim.
CHECKS = 20_000


def located(problem_pointer: str, claimed: str) -> bool:
    """Whether a problem at ``problem_pointer`` is one at ``claimed``: the place, a
    place inside it, or its parent (a missing or an unknown member is reported there)."""
    if problem_pointer == claimed or problem_pointer.startswith(claimed + "/"):
        return True
    if claimed.startswith(problem_pointer + "/"):
        return "/" not in claimed[len(problem_pointer) + 1 :]
    return False


class Verifier:
    """Builds and checks witnesses for one diff (an engine per side, built once)."""

    def __init__(self, builder: Builder, old: SchemaRegistry, new: SchemaRegistry) -> None:
        self.builder = builder
        #: The last search ran out of checks (what an undecided claim then says).
        self.exhausted = False
        self._engines = {
            "old": JsonschemaEngine(old, keyed_enums=True),
            "new": JsonschemaEngine(new, keyed_enums=True),
        }

    def accepts(self, side: str, entry: SchemaEntry, record: Any) -> bool:
        return self._engines[side].is_valid(entry.id, record)

    def witness(
        self,
        root: Norm,
        path: tuple[Step, ...],
        leaf: Leaf | None,
        accepting: tuple[str, SchemaEntry],
        rejecting: tuple[str, SchemaEntry] | None,
    ) -> Any | None:
        """The first record built for the claim that the engines bear out, else None.

        ``rejecting`` None: the other side has no schema for the kind at all, so any
        record the accepting side takes is refused there.
        """
        checks = self.builder.checks
        checks.left, self.exhausted = CHECKS, False
        try:
            return self._search(root, path, leaf, accepting, rejecting)
        except SearchExhausted:
            self.exhausted = True
            return None
        finally:
            checks.left = None

    def _search(
        self,
        root: Norm,
        path: tuple[Step, ...],
        leaf: Leaf | None,
        accepting: tuple[str, SchemaEntry],
        rejecting: tuple[str, SchemaEntry] | None,
    ) -> Any | None:
        side, entry = accepting
        claimed = instance_pointer(path)
        candidates = self.builder.build(root, path, leaf)
        for record in itertools.islice(candidates, CANDIDATES):
            if not self.accepts(side, entry, record):
                continue
            if rejecting is None:
                return record
            other, refusing = rejecting
            engine = self._engines[other]
            if engine.is_valid(refusing.id, record):
                continue
            if any(located(p, claimed) for p in engine.problem_pointers(refusing.id, record)):
                return record
        return None
