"""Unions: which ``oneOf`` is the union of its members, and which branches may share a value.

A ``oneOf`` accepts the values exactly one member accepts. When no value can match two
members, those are all the values some member accepts: the ``oneOf`` is an ``anyOf``,
whose normal form is the union of its members' branches (:mod:`.normal`), compared
branch by branch (:meth:`.walk.Walk._union`). Any other ``oneOf`` stays a constraint
compared whole. So what this module proves is *disjointness*: that no value is
accepted by two branches. A proof must be sound — a false "disjoint" would read a
``oneOf`` that rejects the overlap as an ``anyOf`` that accepts it, and so call a
change compatible that is not — while a proof not found costs only a "cannot decide".

Two branches share no value (:func:`branches_disjoint`) when

* their types differ (an integer is a number);
* both list their values (``enum``/``const``) and no value is in both (``1`` and
  ``1.0`` are one value), or one lists values and the other, its whole schema checked
  by the validator, rejects each of them;
* their ranges do not meet: lengths, numeric bounds (integers counted as integers),
  item or member counts;
* they are arrays that must hold an item, of item schemas that share no value;
* they are objects where one requires a member the other forbids (its schema there is
  ``false``, or the object is closed and does not declare it), or whose schemas for a
  member one of them requires share no value (a discriminating ``kind``, say).

Everything else a branch says only narrows it further (an opaque ``if``, a
``pattern``), so a proof from some of its keywords holds for the whole branch.

Cost: a union's branches are grouped by type, and a group's members told apart by
their listed values, or by one required member's, or by a member each closed object
requires and no other declares, through an index (a look-up per value or name); only
a group no index decides is compared pair by pair — at most
:data:`~.normal.UNION_LIMIT` branches. A proof looks at most :data:`DEPTH` schemas
deep (a recursive schema's normal form is a cyclic graph) and compares at most
:data:`BUDGET` pairs of branches; beyond that nothing is proven.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from kernelindex_sdk.schemadiff._forms import (
    Branch,
    Norm,
    Undecidable,
    branch_schema,
    canonical,
)
from kernelindex_sdk.validating.engine import schema_validator

__all__ = [
    "BUDGET",
    "DEPTH",
    "branches_disjoint",
    "discriminators",
    "exclusive",
    "sharing",
    "value_key",
]

#: Schemas a proof looks into below the branches it starts from.
DEPTH = 4
#: Pairs of branches (and listed values checked) one proof may compare.
BUDGET = 512


class _Proof:
    """What one proof may still spend, and the validators it built (per branch)."""

    def __init__(self, budget: int = BUDGET) -> None:
        self.left = budget
        self._validators: dict[int, tuple[Branch, Any]] = {}

    def spend(self, amount: int = 1) -> bool:
        self.left -= amount
        return self.left >= 0

    def rejects_all(self, branch: Branch, values: Iterable[Any]) -> bool:
        """Whether ``branch`` (its whole schema, by the validator) rejects each value."""
        entry = self._validators.get(id(branch))
        if entry is None:
            try:
                schema = branch_schema(branch)
            except Undecidable:  # a recursion still being read: nothing is proven
                return False
            entry = self._validators[id(branch)] = (branch, schema_validator(schema))
        validator = entry[1]
        return all(self.spend() and not validator.is_valid(value) for value in values)


def value_key(value: Any) -> str:
    """One text per JSON value as the validator tells values apart: ``1`` and ``1.0``
    are one value (``true`` and ``1`` are not)."""
    return canonical(_plain(value))


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _family(type_: str) -> str:
    """Branch types that may share values share a family (an integer is a number)."""
    return "number" if type_ == "integer" else type_


# --------------------------------------------------------------------------- oneOf


def exclusive(members: Sequence[Norm]) -> bool:
    """Whether no value can match two of ``members`` (so their ``oneOf`` is their
    ``anyOf``). Their branches must be readable (no recursion still being read)."""
    proof = _Proof(4 * BUDGET)  # pairs of up to UNION_LIMIT branches, where no index decides
    groups: dict[str, list[tuple[int, Branch]]] = {}
    for index, member in enumerate(members):
        for branch in member.branches:
            groups.setdefault(_family(branch.type), []).append((index, branch))
    return all(
        len({i for i, _ in group}) < 2 or _group_exclusive(group, proof)
        for group in groups.values()
    )


def _group_exclusive(group: list[tuple[int, Branch]], proof: _Proof) -> bool:
    """Whether branches of one family, of different members, share no value: by an
    index of their listed values, else of one required member's values, else pair by
    pair."""
    if all("enum" in b.keywords for _, b in group):
        return _apart((i, (value_key(v) for v in b.keywords["enum"])) for i, b in group)
    tables = [discriminators(b) for _, b in group]
    for name in sorted(set.intersection(*(set(t) for t in tables))):
        if _apart((i, table[name]) for (i, _), table in zip(group, tables, strict=True)):
            return True
    if _private_members(group):
        return True
    return all(
        i == j or branches_disjoint(x, y, proof)
        for (i, x), (j, y) in itertools.combinations(group, 2)
    )


def _private_members(group: list[tuple[int, Branch]]) -> bool:
    """Whether each branch is a closed object that requires a member no other member's
    declares (so the others forbid it): an index of declared names, no pairs compared."""
    declared: dict[str, set[int]] = {}
    for index, branch in group:
        if branch.type != "object" or not _closed(branch):
            return False
        for name in branch.keywords.get("properties", {}):
            declared.setdefault(name, set()).add(index)
    return all(
        any(declared.get(name, set()) <= {index} for name in branch.keywords.get("required", ()))
        for index, branch in group
    )


def _closed(branch: Branch) -> bool:
    """An object branch that allows no member beyond its ``properties``."""
    others: Norm | None = branch.keywords.get("additionalProperties")
    return others is not None and "patternProperties" not in branch.keywords and _read(others) == ()


def _apart(owned: Iterable[tuple[int, Iterable[str]]]) -> bool:
    """Whether no key is owned by two owners (a look-up per key, no pairs compared)."""
    owner: dict[str, int] = {}
    for index, keys in owned:
        for key in keys:
            if owner.setdefault(key, index) != index:
                return False
    return True


def discriminators(branch: Branch) -> dict[str, frozenset[str]]:
    """An object branch's required members whose schema lists their values (a
    ``const``/``enum`` in each of its branches), by name: the keys (:func:`value_key`)
    of those values. Two branches whose sets for a name are disjoint share no value."""
    if branch.type != "object":
        return {}
    properties: Mapping[str, Norm] = branch.keywords.get("properties", {})
    found: dict[str, frozenset[str]] = {}
    for name in branch.keywords.get("required", ()):
        sub = properties.get(name)
        branches = None if sub is None else _read(sub)
        if branches and all("enum" in b.keywords for b in branches):
            found[name] = frozenset(value_key(v) for b in branches for v in b.keywords["enum"])
    return found


# --------------------------------------------------------------------------- unions


def sharing(x: Branch, ys: Sequence[Branch]) -> list[Branch]:
    """Those of ``ys`` that may accept a value ``x`` accepts: all but the ones proven
    to share no value with it (each proof on its own budget)."""
    return [y for y in ys if not branches_disjoint(x, y, _Proof())]


# --------------------------------------------------------------------------- proofs


def branches_disjoint(
    x: Branch, y: Branch, proof: _Proof | None = None, depth: int = DEPTH
) -> bool:
    """Whether no value is accepted by both ``x`` and ``y`` (see the module's doc)."""
    if _family(x.type) != _family(y.type):
        return True
    proof = proof or _Proof()
    if not proof.spend():
        return False
    kx, ky = x.keywords, y.keywords
    if "enum" in kx and "enum" in ky:
        return not {value_key(v) for v in kx["enum"]} & {value_key(v) for v in ky["enum"]}
    if "enum" in kx:
        return proof.rejects_all(y, kx["enum"])
    if "enum" in ky:
        return proof.rejects_all(x, ky["enum"])
    if x.type == "string":
        return _counts_apart(kx, ky, "minLength", "maxLength")
    if _family(x.type) == "number":
        return _numbers_apart(x, y)
    if x.type == "array":
        return _counts_apart(kx, ky, "minItems", "maxItems") or (
            kx.get("minItems", 0) >= 1
            and ky.get("minItems", 0) >= 1
            and _norms_disjoint(kx.get("items"), ky.get("items"), proof, depth)
        )
    if x.type == "object":
        return (
            _counts_apart(kx, ky, "minProperties", "maxProperties")
            or _members_apart(x, y, proof, depth)
            or _members_apart(y, x, proof, depth)
        )
    return False  # null, boolean: one value or two, listed (above) or not


def _counts_apart(kx: Mapping[str, Any], ky: Mapping[str, Any], low: str, high: str) -> bool:
    """Whether two ranges of a count (length, items, members) do not meet."""
    return any(high in b and a.get(low, 0) > b[high] for a, b in ((kx, ky), (ky, kx)))


def _numbers_apart(x: Branch, y: Branch) -> bool:
    """Whether two numeric ranges do not meet (in the integers, when one is integral)."""
    integral = "integer" in (x.type, y.type)
    for low, high in ((x, y), (y, x)):
        lower, upper = low.keywords.get("lower"), high.keywords.get("upper")
        if lower is None or upper is None:
            continue
        if integral:
            if _first_integer(lower) > _last_integer(upper):
                return True
        elif lower[0] > upper[0] or (lower[0] == upper[0] and (lower[1] or upper[1])):
            return True
    return False


def _first_integer(bound: tuple[Any, bool]) -> int:
    """The least integer a lower bound admits."""
    value = Fraction(bound[0])
    return math.floor(value) + 1 if bound[1] else math.ceil(value)


def _last_integer(bound: tuple[Any, bool]) -> int:
    """The greatest integer an upper bound admits."""
    value = Fraction(bound[0])
    return math.ceil(value) - 1 if bound[1] else math.floor(value)


def _members_apart(x: Branch, y: Branch, proof: _Proof, depth: int) -> bool:
    """Whether a member ``x`` requires cannot be in an object ``y`` accepts: ``y``
    forbids it, or ``y``'s schema for it shares no value with ``x``'s."""
    for name in sorted(x.keywords.get("required", ())):
        theirs = _member(y, name)
        if theirs is None:
            continue
        if _norms_disjoint(_member(x, name), theirs, proof, depth):
            return True
    return False


def _member(branch: Branch, name: str) -> Norm | None:
    """The schema ``branch`` applies to its member ``name`` (None: none known — any
    value, or a pattern's that is not read here)."""
    properties: Mapping[str, Norm] = branch.keywords.get("properties", {})
    if name in properties:
        return properties[name]
    if "patternProperties" in branch.keywords:
        return None
    found: Norm | None = branch.keywords.get("additionalProperties")
    return found


def _norms_disjoint(a: Norm | None, b: Norm | None, proof: _Proof, depth: int) -> bool:
    """Whether no value is accepted by both (None: any value), ``depth`` levels deep."""
    if depth <= 0:
        return False
    if a is None or b is None:
        other = b if a is None else a
        return other is not None and _read(other) == ()  # only false shares nothing with all
    xs, ys = _read(a), _read(b)
    if xs is None or ys is None:
        return False
    return all(
        branches_disjoint(x, y, proof, depth - 1)
        for x in xs
        for y in ys
        if _family(x.type) == _family(y.type)
    )


def _read(node: Norm) -> tuple[Branch, ...] | None:
    """``node``'s branches, or None for a recursion still being read."""
    try:
        return node.branches
    except Undecidable:
        return None
