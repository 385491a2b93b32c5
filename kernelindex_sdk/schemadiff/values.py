"""Values a normalized schema accepts, built to order: the raw material of witnesses.

A witness is a whole record, so it is built from the accepting side's root schema:
the required fields, each with the simplest value its schema takes (``"a"`` for text,
the first enum value, a date-time for a timestamp, a bound for a number), the fields on
the *path* to the change, and at the end of the path the *leaf* — the changed value
(:class:`Values`) or the absence of a field (:class:`Absent`).

Constraints that tie fields together (``if``/``then``, a ``oneOf`` of required fields)
are met by search: a few alternatives of each field, tried one deviation at a time,
and optional fields added one or two at a time; each candidate is checked against
the schema of its own level (:func:`~kernelindex_sdk.schemadiff.normal.to_schema`,
self-contained) before it is offered. The search is bounded, and nothing here decides
a verdict: :mod:`~kernelindex_sdk.schemadiff.witness` checks every record with the
reference engine, and a change no record can be built for is reported as undecided.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from referencing.exceptions import Unresolvable

from kernelindex_sdk.base.timebox import OverBudget, bounded
from kernelindex_sdk.schemadiff._forms import (
    Branch,
    Norm,
    Undecidable,
    Where,
    branch_schema,
    canonical,
    to_schema,
)
from kernelindex_sdk.schemadiff.normal import Unmatched, member_schema, true_norm
from kernelindex_sdk.schemadiff.patterns import matches
from kernelindex_sdk.schemadiff.regexgen import examples
from kernelindex_sdk.validating.engine import schema_validator

__all__ = [
    "ANY_VALUES",
    "UNJUDGED",
    "Absent",
    "Builder",
    "Checks",
    "Leaf",
    "SearchExhausted",
    "Step",
    "Values",
]

#: What stops a validator from judging a value: a step that ran out of time (a regex
#: that backtracks, a schema walked exponentially), a schema or value nested deeper
#: than Python's recursion limit, a ``pattern`` Python cannot read, a normal form too
#: large to write out as a schema. A value so left unjudged is no witness: what it was
#: to show stays undecided.
UNJUDGED: tuple[type[Exception], ...] = (OverBudget, RecursionError, re.error, Undecidable)

#: Alternatives kept of each field, candidates tried per object, values offered per node.
ALTERNATIVES = 5
TRIES = 400
OFFER = 12
#: The largest string (code points), array or object a witness is built with: a bound
#: beyond it is not shown by a record (and so reported undecided, not passed).
MAX_SIZE = 1 << 16

_ANYWHERE = Where("")
_TRUE = true_norm(_ANYWHERE)
_ANY_STRING = Norm((Branch("string", {}, _ANYWHERE),), _ANYWHERE)

#: Typical values of each asserted format (checked like any candidate).
_FORMAT_SAMPLES = {
    "date-time": ["2024-01-01T00:00:00Z", "2024-01-01T00:00:00.000Z"],
    "date": ["2024-01-01"],
    "time": ["00:00:00Z"],
    "uri": ["https://example.com/x", "urn:x"],
    "uri-reference": ["x", "https://example.com/x"],
    "email": ["a@example.com"],
    "idn-email": ["a@example.com"],
    "idn-hostname": ["example.com"],
    "ipv4": ["192.0.2.1"],
    "ipv6": ["::1"],
    "uuid": ["00000000-0000-4000-8000-000000000000"],
    "regex": ["a"],
}
#: Strings of many shapes: what a changed pattern or format may admit or not.
_MISC_STRINGS = [
    "a", "x", "A", "0", "1", "", " ", "-", ".", "_", "a.b", "a b", "A1", "é", "/", "a/b",
    "not a date", "2024-13-01T00:00:00Z", "0000-00-00T00:00:00Z", "x y", "1.0", "::",
]  # fmt: skip
#: Values of every type: what an open schema admits and a constrained one may not.
ANY_VALUES: list[Any] = [None, True, 0, 0.5, -1, "", "a", [], {}, [None], {"a": None}]


@dataclass(frozen=True, slots=True)
class Step:
    """One step from a value to a part of it: ``prop`` (a member by name), ``item`` (the
    first element), ``newkey`` (a new member, its name the leaf), ``type`` (the branch
    of one type)."""

    op: Literal["prop", "item", "newkey", "type"]
    name: str = ""


@dataclass(frozen=True, slots=True)
class Absent:
    """The leaf is the absence of the member the path's last step names."""


@dataclass(frozen=True, slots=True)
class Values:
    """The leaf is one of these values (made on demand, tried in order)."""

    make: Callable[[], Iterable[Any]] = field(compare=False)


Leaf = Absent | Values


class SearchExhausted(Exception):
    """A search for values ran out of the checks it was allowed (:attr:`Checks.left`)."""


class Checks:
    """Whether a normalized schema (or one branch) accepts a value, by its own schema
    (``formats``: whether ``format`` is asserted, as the diff assumes it)."""

    def __init__(self, *, formats: bool = True) -> None:
        self.formats = formats
        #: Why the last value that could not be judged was not (None: none was).
        self.unjudged: Exception | None = None
        #: id → (the node, kept alive so the id stays its, and its validator).
        self._validators: dict[int, tuple[object, Any]] = {}
        #: Checks a search may still make (None: no limit); past it, SearchExhausted.
        #: Building a record along a long path through wide unions and recursion can
        #: otherwise try alternatives at every level, multiplied level by level.
        self.left: int | None = None

    def accepts(self, node: Norm | Branch, value: Any, *, unknown: bool = False) -> bool:
        """Whether ``node`` accepts ``value``; ``unknown`` when that depends on an
        external schema the check reaches (one not given, never fetched), or cannot be
        judged (:data:`UNJUDGED`): False where a value is being chosen (it is not
        offered), True where the caller must not rule the value out on it (it stays a
        claim, and no witness can rest on it)."""
        if self.left is not None:
            self.left -= 1
            if self.left < 0:
                raise SearchExhausted
        try:
            with bounded("checking a value"):
                return bool(self._validator(node).is_valid(value))
        except Unresolvable:
            return unknown
        except UNJUDGED as error:
            self.unjudged = error
            return unknown

    def _validator(self, node: Norm | Branch) -> Any:
        entry = self._validators.get(id(node))
        if entry is None:
            schema = to_schema(node) if isinstance(node, Norm) else branch_schema(node)
            validator = schema_validator(schema, formats=self.formats)
            entry = self._validators[id(node)] = (node, validator)
        return entry[1]


class Builder:
    """Candidate values of normalized schemas, simplest first (see the module's doc)."""

    def __init__(self, checks: Checks) -> None:
        self.checks = checks
        self._free: dict[int, tuple[Norm, list[Any]]] = {}
        #: Nodes whose values are being made (a recursive schema reaches itself).
        self._making: set[int] = set()

    # ------------------------------------------------------------------ entry points

    def build(
        self, node: Norm, path: Sequence[Step] = (), leaf: Leaf | None = None
    ) -> Iterator[Any]:
        """Values ``node`` accepts with ``leaf`` at the end of ``path``, simplest first."""
        if not path and leaf is None:
            yield from self.some(node)
            return
        branches: Iterable[Branch] = node.branches
        if path and path[0].op == "type":
            # number and integer overlap: a path through a part walked on its own (an
            # if's then) may name the one where the record's schema has the other.
            numeric = {"number", "integer"}
            wanted = numeric if path[0].name in numeric else {path[0].name}
            branches = [b for b in branches if b.type in wanted]
            path = path[1:]
        elif path:
            want = "array" if path[0].op == "item" else "object"
            branches = [b for b in branches if b.type == want]
        yield from _distinct(
            itertools.chain.from_iterable(self._branch(b, path, leaf) for b in _ordered(branches))
        )

    def some(self, node: Norm) -> list[Any]:
        """A few values ``node`` accepts (remembered: fields repeat across candidates)."""
        found = self._free.get(id(node))
        if found is None:
            if id(node) in self._making:
                return []  # a recursive schema: no value is made from inside itself
            self._making.add(id(node))
            try:
                values = itertools.chain.from_iterable(
                    self._branch(b, (), None) for b in _ordered(node.branches)
                )
                made = list(itertools.islice(_distinct(values), OFFER))
            finally:
                self._making.discard(id(node))
            found = self._free[id(node)] = (node, made)
        return found[1][:ALTERNATIVES]

    def strings(self, branch: Branch, length: int | None = None) -> Iterator[str]:
        """Strings ``branch`` accepts; exactly ``length`` code points long if given."""
        kw = branch.keywords
        if length is not None and length > MAX_SIZE:
            return
        if "enum" in kw:
            candidates: Iterable[Any] = kw["enum"]
        else:
            low = kw.get("minLength", 0)
            size = length if length is not None else max(low, 1)
            made: list[Iterable[str]] = [
                _FORMAT_SAMPLES.get(f, []) for f in sorted(kw.get("format", ()))
            ]
            for pattern in sorted(kw.get("pattern", ())):
                made.append(itertools.islice(examples(pattern, length), 24))
                if length is None and low > 1:
                    made.append(itertools.islice(examples(pattern, low), 8))
            made.append([c * size for c in "ax1A-"])
            made.append(_MISC_STRINGS)
            candidates = itertools.chain.from_iterable(made)
        for value in _distinct(candidates):
            if (
                isinstance(value, str)
                and (length is None or len(value) == length)
                and self.checks.accepts(branch, value)
            ):
                yield value

    def numbers(self, branch: Branch, near: Iterable[float] = ()) -> Iterator[int | float]:
        """Numbers ``branch`` accepts: its bounds and steps, then ``near``, then small ones."""
        kw = branch.keywords
        if "enum" in kw:
            points: list[Any] = list(kw["enum"])
        else:
            points = []
            for name, sign in (("lower", 1), ("upper", -1)):
                if name in kw:
                    bound = kw[name][0]
                    # Beyond 2**52 a half is not a double of its own (-2**63 is an int).
                    half = [bound + sign * 0.5] if abs(bound) < 2**52 else []
                    points += [bound, bound + sign, *half, math.floor(bound) + 1]
                    points += [math.ceil(bound) - 1, math.ceil(bound), math.floor(bound)]
            points += [*near, 0, 1, -1, 0.5, 2, 1.5, -0.5, 10, 100]
            for step in sorted(kw.get("multipleOf", ())):
                points = [
                    *(step * math.ceil(p / step) for p in points if abs(p) < 2**1000),
                    step,
                    2 * step,
                    *points,
                ]
        for value in _distinct(_as_number(p) for p in points if _finite(p)):
            if branch.type == "integer" and not float(value).is_integer():
                continue
            if self.checks.accepts(branch, value):
                yield value

    def arrays(
        self, branch: Branch, *, length: int | None = None, duplicate: bool = False
    ) -> Iterator[list[Any]]:
        """Arrays ``branch`` accepts: of ``length`` items, or holding an item twice."""
        yield from self._arrays(branch, (), None, length=length, duplicate=duplicate)

    def objects(self, branch: Branch, *, size: int) -> Iterator[dict[str, Any]]:
        """Objects ``branch`` accepts with exactly ``size`` members."""
        yield from self._objects(branch, (), None, size=size)

    def fresh_keys(self, branch: Branch, avoid: Iterable[str] = ()) -> Iterator[str]:
        """Member names ``branch`` declares no property for and its propertyNames allow."""
        taken = set(branch.keywords.get("properties", {})) | set(avoid)
        patterns = list(branch.keywords.get("patternProperties", ()))
        names = branch.keywords.get("propertyNames", _ANY_STRING)
        pool = itertools.chain(
            ["x", "y", "z", "extra", "k1", "k2", "k3", "X", "x1", "x2"], self.build(names)
        )
        for name in _distinct(pool):
            if (
                isinstance(name, str)
                and name not in taken
                and all(matches(p, name) is False for p in patterns)
                and self.checks.accepts(names, name)
            ):
                yield name

    # ------------------------------------------------------------------ by type

    def _branch(self, branch: Branch, path: Sequence[Step], leaf: Leaf | None) -> Iterator[Any]:
        if not path:
            values = leaf.make() if isinstance(leaf, Values) else self.values(branch)
            for value in values:
                if self.checks.accepts(branch, value):
                    yield value
            return
        if branch.type == "object" and path[0].op in ("prop", "newkey"):
            yield from self._objects(branch, path, leaf)
        elif branch.type == "array" and path[0].op == "item":
            yield from self._arrays(branch, path, leaf)

    def values(self, branch: Branch) -> Iterable[Any]:
        """Values ``branch`` accepts, unchecked and unbounded (take what you need)."""
        if "enum" in branch.keywords:
            return tuple(branch.keywords["enum"])
        if branch.type == "null":
            return [None]
        if branch.type == "boolean":
            return [False, True]
        if branch.type == "string":
            return self.strings(branch)
        if branch.type in ("number", "integer"):
            return self.numbers(branch)
        if branch.type == "array":
            return self._arrays(branch, (), None)
        return self._objects(branch, (), None)

    def _arrays(
        self,
        branch: Branch,
        path: Sequence[Step],
        leaf: Leaf | None,
        *,
        length: int | None = None,
        duplicate: bool = False,
    ) -> Iterator[list[Any]]:
        kw = branch.keywords
        items: Norm = kw.get("items", _TRUE)
        low = kw.get("minItems", 0)
        if max(low, length or 0) > MAX_SIZE:
            return
        pool = self.some(items) or []
        if path:  # the first item realizes the path; the rest fill up to minItems
            firsts: Iterable[Any] = itertools.islice(self.build(items, path[1:], leaf), OFFER)
            shapes = [
                [first, *self._fill(pool, max(low, 1) - 1, kw, avoid=first)] for first in firsts
            ]
        elif duplicate:
            shapes = [[value] * max(low, 2) for value in pool]
        else:
            sizes = [length] if length is not None else list(dict.fromkeys([low, max(low, 1)]))
            shapes = [
                [*([pool[0]] if n and pool else []), *self._fill(pool, n - 1, kw)] if n else []
                for n in sizes
            ]
        for shape in shapes:
            if self.checks.accepts(branch, shape):
                yield shape

    @staticmethod
    def _fill(pool: list[Any], count: int, kw: Any, avoid: Any = None) -> list[Any]:
        if count <= 0:
            return []
        if not kw.get("uniqueItems"):
            return [pool[0]] * count if pool else []
        distinct = [v for v in pool if avoid is None or canonical(v) != canonical(avoid)]
        return distinct[:count]

    def _objects(
        self, branch: Branch, path: Sequence[Step], leaf: Leaf | None, *, size: int | None = None
    ) -> Iterator[dict[str, Any]]:
        kw = branch.keywords
        if max(size or 0, kw.get("minProperties", 0)) > MAX_SIZE:
            return
        required: frozenset[str] = kw.get("required", frozenset())
        absent: set[str] = set()
        demanded: dict[str, Callable[[], Iterable[Any]]] = {}
        names: list[str | None] = [None]
        if path and path[0].op == "prop":
            name = path[0].name
            if len(path) == 1 and isinstance(leaf, Absent):
                if name in required:
                    return
                absent.add(name)
            elif name in kw.get("properties", {}) or not _conditional(branch, name):
                sub = _member(branch, name)
                demanded[name] = lambda: self.build(sub, path[1:], leaf)
            else:  # declared only by a then/else: built as each declares it, in turn
                subs = _conditional(branch, name)
                demanded[name] = lambda: _round_robin(
                    [self.build(sub, path[1:], leaf) for sub in subs]
                )
        elif path and path[0].op == "newkey":
            key_node = kw.get("propertyNames", _ANY_STRING)
            names = list(itertools.islice(self.build(key_node, path[1:], leaf), ALTERNATIVES))
        tries = 0
        for new_name in names:
            wanted = dict(demanded)
            if new_name is not None:
                sub = _member(branch, new_name)
                wanted[new_name] = lambda sub=sub: self.some(sub)  # type: ignore[misc]
            for keys in self._key_sets(branch, wanted, absent, size):
                alternatives = []
                for key in keys:
                    source = wanted.get(key)
                    if source is not None:
                        values = list(itertools.islice(source(), ALTERNATIVES))
                    elif key in kw.get("properties", {}) or not _conditional(branch, key):
                        values = self.some(_member(branch, key))
                    else:  # declared only by a then/else: as each declares it, in turn
                        made = [iter(self.some(sub)) for sub in _conditional(branch, key)]
                        values = list(itertools.islice(_round_robin(made), ALTERNATIVES))
                    if not values:
                        break
                    alternatives.append(values)
                else:
                    for combination in _deviations(alternatives):
                        tries += 1
                        if tries > TRIES:
                            return
                        candidate = dict(zip(keys, combination, strict=True))
                        if self.checks.accepts(branch, candidate):
                            yield candidate

    def _key_sets(
        self,
        branch: Branch,
        wanted: dict[str, Any],
        absent: set[str],
        size: int | None,
    ) -> Iterator[list[str]]:
        """Member names to fill: the required and wanted ones, then with optional ones
        added one or two at a time (when a constraint may ask for them), or fresh
        ones (to reach a size)."""
        kw = branch.keywords
        properties: dict[str, Norm] = kw.get("properties", {})
        required: frozenset[str] = kw.get("required", frozenset())
        base = [k for k in properties if k in required or k in wanted]
        base += [k for k in sorted(required) if k not in properties]
        base += [k for k in wanted if k not in base]
        base = [k for k in base if k not in absent]
        optional = [k for k in properties if k not in base and k not in absent]
        optional += [  # members only a then/else declares (and may require)
            k for k in _conditional_names(branch) if k not in base and k not in absent
            and k not in properties
        ]  # fmt: skip
        target = size if size is not None else kw.get("minProperties", 0)
        if size is None or len(base) == size:
            yield base
        # Optional members too, when a constraint may ask for them (or a member must be
        # absent while another is there: a dependentRequired the other side adds).
        if branch.opaque or target > len(base) or "dependentRequired" in kw or absent:
            for extra in itertools.chain(
                ([k] for k in optional), itertools.combinations(optional, 2)
            ):
                keys = [*base, *extra]
                if size is None or len(keys) == size:
                    yield keys
        if target > len(base):
            fresh = list(itertools.islice(self.fresh_keys(branch, absent), target - len(base)))
            keys = [*base, *fresh]
            if len(keys) == target:
                yield keys


def _member(branch: Branch, name: str) -> Norm:
    """The schema a member ``name`` meets in an object ``branch`` (any value: ``true``);
    where a pattern's match is not told, its entry or ``additionalProperties`` — a
    guess the check of the whole candidate judges."""
    try:
        found = member_schema(branch, name)
    except Unmatched:
        kw = branch.keywords
        found = kw.get("properties", {}).get(name, kw.get("additionalProperties"))
    return _TRUE if found is None else found


def _ordered(branches: Iterable[Branch]) -> list[Branch]:
    """Branches in the order their values make the plainest witnesses."""
    rank = ["object", "string", "integer", "number", "boolean", "null", "array"]
    return sorted(branches, key=lambda b: rank.index(b.type))


def _conditional(branch: Branch, name: str) -> list[Norm]:
    """The schemas the ``then``/``else`` parts of a branch's ``if`` constraints give a
    member its own ``properties`` do not declare (a record that reaches a change inside
    a ``then`` must hold the member as that ``then`` wants it)."""
    found = []
    for constraint in branch.opaque:
        for part in ("then", "else"):
            node = constraint.parts.get(part) if constraint.keyword == "if" else None
            for inner in node.branches if node is not None else ():
                sub = inner.keywords.get("properties", {}).get(name)
                if inner.type == "object" and sub is not None:
                    found.append(sub)
    return found


def _conditional_names(branch: Branch) -> list[str]:
    """The members the ``then``/``else`` parts of a branch's ``if`` constraints declare."""
    names: dict[str, None] = {}
    for constraint in branch.opaque:
        for part in ("then", "else"):
            node = constraint.parts.get(part) if constraint.keyword == "if" else None
            for inner in node.branches if node is not None else ():
                if inner.type == "object":
                    names.update(dict.fromkeys(inner.keywords.get("properties", {})))
    return list(names)


def _round_robin(sources: list[Iterator[Any]]) -> Iterator[Any]:
    """The first value of each source, then the second of each, and so on."""
    for values in itertools.zip_longest(*sources, fillvalue=_NONE):
        yield from (v for v in values if v is not _NONE)


_NONE = object()


def _deviations(alternatives: list[list[Any]]) -> Iterator[tuple[Any, ...]]:
    """The first of every list; then one list at a time on another; then two."""
    first = tuple(values[0] for values in alternatives)
    yield first
    for i, values in enumerate(alternatives):
        for value in values[1:]:
            yield (*first[:i], value, *first[i + 1 :])
    for i, j in itertools.combinations(range(len(alternatives)), 2):
        for x in alternatives[i][1:]:
            for y in alternatives[j][1:]:
                changed = list(first)
                changed[i], changed[j] = x, y
                yield tuple(changed)


def _distinct(values: Iterable[Any]) -> Iterator[Any]:
    seen: set[str] = set()
    for value in values:
        key = canonical(value)
        if key not in seen:
            seen.add(key)
            yield value


def _finite(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _as_number(value: int | float) -> int | float:
    """Integral floats as ints (``2.0`` → ``2``), so integer branches take them as written."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value
