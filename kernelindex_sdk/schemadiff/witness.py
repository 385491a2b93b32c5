"""Witnesses: the record that proves a violation, judged by the reference engine.

A finding of the walk claims "records like this: the accepting side takes them, the
rejecting side refuses them, at this place". :class:`Verifier` builds candidates for
the claim from the accepting side's normal form (:class:`~.values.Builder`) and hands
each, whole, to :class:`~kernelindex_sdk.validating.engine.JsonschemaEngine` over each side's
registry — the same engine ``kernelindex validate`` uses as its reference, with
ECMA-262 patterns and format checking, and with ``enum`` checked by a set look-up
(``keyed_enums``, the same answers): a diff of an enum whose every value is replaced
proves one witness per value, and the member-by-member check (and the message listing
every member) made that the square of the enum's size. The first candidate that

* the accepting side's engine accepts,
* the rejecting side's engine rejects,
* with a problem located at the claimed place (at it, inside it, or on its parent
  object — where a missing or unknown member is reported), or reported higher up (a
  ``oneOf`` or ``anyOf`` above the place reports there) while the same record with only
  that place changed — the member left out, or another value the accepting side
  allows there — is one the rejecting side accepts

is the witness. No such candidate among the first few dozen: no witness, and the
claim is reported as undecided, never as a violation.

A candidate the engine cannot judge — a step that ran out of time (a regex that
backtracks: :mod:`kernelindex_sdk.base.timebox`), a schema or record nested deeper than
Python's recursion limit, a ``pattern`` Python cannot read — is no witness, and the
search for the claim stops there (:attr:`Verifier.unjudged` says why in the undecided
reason): the next candidate would most likely cost as much.

A witness never rests on an external schema (a ``$ref`` into a document not given,
known by its URI alone): the engines' registries hold only the schemas given and
fetch nothing, so a candidate whose judgement reaches one raises there, and is passed
over (:attr:`Verifier.external` says so in the undecided reason).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import Any

from kernelindex_sdk.base.pointers import unescape_token
from kernelindex_sdk.base.timebox import bounded
from kernelindex_sdk.errors import UnresolvableReference
from kernelindex_sdk.schema.registry import SchemaEntry, SchemaRegistry
from kernelindex_sdk.schemadiff._forms import Norm, Undecidable
from kernelindex_sdk.schemadiff.values import UNJUDGED, Builder, Leaf, SearchExhausted, Step
from kernelindex_sdk.schemadiff.walk import instance_pointer
from kernelindex_sdk.validating.engine import JsonschemaEngine

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
        #: The external schema a candidate of the last search reached, if one did.
        self.external: str | None = None
        #: Why the engine could not judge a candidate of the last search, if it could not.
        self.unjudged: str | None = None
        formats = builder.checks.formats
        self._engines = {
            "old": JsonschemaEngine(old, keyed_enums=True, formats=formats),
            "new": JsonschemaEngine(new, keyed_enums=True, formats=formats),
        }

    def accepts(self, side: str, entry: SchemaEntry, record: Any) -> bool:
        with bounded("judging a record"):
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
        checks.left, self.exhausted, self.external, self.unjudged = CHECKS, False, None, None
        checks.unjudged = None
        try:
            claimed = instance_pointer(path)
            candidates = self.builder.build(root, path, leaf)
            for record in itertools.islice(candidates, CANDIDATES):
                try:
                    if self._bears_out(record, root, path, claimed, accepting, rejecting):
                        return record
                except UnresolvableReference as error:
                    self.external = error.ref  # judged by what is not given: no witness
                except UNJUDGED as error:
                    # Not judged, and the next candidate likely would not be either (a
                    # search that runs out of time costs a step's time each): no witness.
                    self.unjudged = _why(error)
                    return None
            if checks.unjudged is not None:
                self.unjudged = _why(checks.unjudged)  # a value to build it from
            return None
        except SearchExhausted:
            self.exhausted = True
            return None
        except RecursionError:  # building a candidate, nested too deeply
            self.unjudged = _why(RecursionError())
            return None
        finally:
            checks.left = None

    def _bears_out(
        self,
        record: Any,
        root: Norm,
        path: tuple[Step, ...],
        claimed: str,
        accepting: tuple[str, SchemaEntry],
        rejecting: tuple[str, SchemaEntry] | None,
    ) -> bool:
        """Whether ``record`` is a witness of the claim (see the module's doc)."""
        if not self.accepts(*accepting, record):
            return False
        if rejecting is None:
            return True
        other, refusing = rejecting
        engine = self._engines[other]
        if self.accepts(other, refusing, record):
            return False
        with bounded("locating what rejects a record"):
            problems = list(engine.problem_pointers(refusing.id, record))
        if any(located(p, claimed) for p in problems):
            return True
        return any(_above(p, claimed) for p in problems) and self._blamed(
            record, claimed, (other, refusing), self.builder.build(root, path)
        )

    def _blamed(
        self,
        record: Any,
        claimed: str,
        rejecting: tuple[str, SchemaEntry],
        candidates: Iterable[Any],
    ) -> bool:
        """Whether the rejecting side refuses ``record`` for what is at ``claimed``, when
        its engine reports the problem higher up (a ``oneOf``/``anyOf`` above the place
        reports there, not inside its branches): the same record with only that place
        changed — the member left out, or another value the accepting side allows
        there put in (taken from ``candidates``, records the accepting side's schema
        builds) — is one the rejecting side accepts. Two records that differ at one
        place only, one refused and one not: the place is what is refused."""
        other, refusing = rejecting
        tokens = [unescape_token(t) for t in claimed.split("/")[1:]]
        if not tokens:
            return False
        variants = [_without(record, tokens)]
        for candidate in itertools.islice(candidates, _VARIANTS):
            found, value = _at(candidate, tokens)
            if found:
                variants.append(_with(record, tokens, value))
        return any(v is not _MISSING and self.accepts(other, refusing, v) for v in variants)


def _why(error: Exception) -> str:
    """Why a candidate could not be judged, for the undecided claim's reason."""
    if isinstance(error, RecursionError):
        return "a schema or record nested (or $ref chained) deeper than Python's recursion limit"
    if isinstance(error, re.error):
        return f"a pattern Python cannot read ({error})"
    if isinstance(error, Undecidable):
        return error.reason
    return str(error)


#: Other values tried at a claimed place to see that the place is what is refused.
_VARIANTS = 8
_MISSING = object()


def _above(problem_pointer: str, claimed: str) -> bool:
    """Whether ``problem_pointer`` is an ancestor of ``claimed`` (the root included)."""
    return claimed.startswith(problem_pointer + "/")


def _at(value: Any, tokens: list[str]) -> tuple[bool, Any]:
    """(found, the value at ``tokens`` in ``value``)."""
    for token in tokens:
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return False, None
    return True, value


def _with(record: Any, tokens: list[str], value: Any) -> Any:
    """A copy of ``record`` with ``value`` at ``tokens`` (its parent must exist), else
    :data:`_MISSING`."""
    if not tokens:
        return value
    head, rest = tokens[0], tokens[1:]
    if isinstance(record, dict):
        if rest and head not in record:
            return _MISSING
        inner = _with(record[head], rest, value) if rest else value
        return _MISSING if inner is _MISSING else {**record, head: inner}
    if isinstance(record, list) and head.isdigit() and int(head) < len(record):
        inner = _with(record[int(head)], rest, value) if rest else value
        if inner is _MISSING:
            return _MISSING
        return [*record[: int(head)], inner, *record[int(head) + 1 :]]
    return _MISSING


def _without(record: Any, tokens: list[str]) -> Any:
    """A copy of ``record`` without the member at ``tokens`` (:data:`_MISSING` when that
    is no object member, or is absent already)."""
    found, parent = _at(record, tokens[:-1])
    if not found or not isinstance(parent, dict) or tokens[-1] not in parent:
        return _MISSING
    rest = {k: v for k, v in parent.items() if k != tokens[-1]}
    return _with(record, tokens[:-1], rest) if tokens[:-1] else rest
