"""The nodes of the normal form, and writing them back as JSON Schema.

A place in a schema (:class:`Where`), a branch of one JSON type (:class:`Branch`), a
schema's union of branches (:class:`Norm`), a recursion (:class:`Recur`), a constraint
kept whole (:class:`Opaque`), what cannot be compared soundly (:class:`Undecidable`),
and the writer that turns them back into a self-contained schema (:func:`to_schema`).
The normalizer (:mod:`.normal`) builds these nodes and the proofs that a ``oneOf``'s
members share no value (:mod:`.unions`) read them; both import them from here, so the
normalizer can ask those proofs without either module importing the other. So do the
other modules of the diff.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kernelindex_sdk.base.pointers import pointer_of

#: The types an untyped schema admits (``number`` covers the integers).
ALL_TYPES = ("null", "boolean", "string", "number", "array", "object")


class Undecidable(Exception):
    """A construct the diff cannot compare soundly (verdict "cannot decide", exit 3)."""

    def __init__(self, where: Where, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where.label()}: {reason}")


@dataclass(frozen=True, slots=True)
class Where:
    """A place in a schema document: its URI and an RFC 6901 pointer into it."""

    uri: str
    pointer: str = ""

    def at(self, *tokens: str | int) -> Where:
        return Where(self.uri, pointer_of(tokens, self.pointer))

    def label(self) -> str:
        """``benchmark-run.schema.json#/$defs/spec``: the document's last path segment."""
        name = self.uri.rstrip("/").rsplit("/", 1)[-1]
        return f"{name}#{self.pointer}"


@dataclass(frozen=True, eq=False)
class Opaque:
    """A constraint kept whole: compared by its normalized JSON (``key``), or — when a
    recursion runs through it — by :func:`equivalent`, which unfolds the recursions;
    and, for ``if``/``then``/``else`` and ``not``, by its parts' normal forms
    (``parts``: the walk compares ``then`` with ``then`` under an equal ``if``)."""

    keyword: str
    value: Mapping[str, Any]
    where: Where
    parts: Mapping[str, Norm] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Written out, a value shares what it holds (a subschema reached twice); its
        # key does not: refused before that costs more than a schema of its size.
        if _written_size(self.value) > WRITE_LIMIT:
            raise Undecidable(self.where, _TOO_LARGE)

    @cached_property
    def key(self) -> str:
        return canonical(self.value)

    @cached_property
    def refs(self) -> tuple[Recur, ...]:
        """The recursions written in ``value`` (each a ``$ref`` to ``#/$defs/<name>``):
        what a schema it is written into must define under ``$defs``."""
        found: dict[str, Recur] = {}
        _collect_refs(self.value, found)
        return tuple(found.values())


#: The most schema objects a normal form is written out as (a key, a constraint kept
#: whole, :func:`to_schema`): a schema that reaches one subschema twice at every level
#: (``anyOf: [{"$ref": A}, {"$ref": A}]`` level under level, or two properties of one
#: definition) writes out in size exponential in its depth.
WRITE_LIMIT = 200_000
_TOO_LARGE = (
    f"written out, more than {WRITE_LIMIT} schema objects (a subschema reached twice at"
    " every level, nested): not compared"
)


def _written_size(value: Any) -> int:
    """The size of ``value`` written out as JSON text would repeat what it shares (each
    object and array counted once per place it is reached), counted in time linear in
    the objects it holds and stopped past :data:`WRITE_LIMIT`."""
    sizes: dict[int, int] = {}
    opened: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, done = stack.pop()
        if not done and id(item) in opened:
            continue
        children = (
            list(item.values())
            if isinstance(item, dict)
            else item
            if isinstance(item, list)
            else []
        )
        if not done:
            opened.add(id(item))
            stack.append((item, True))
            stack.extend((c, False) for c in children if isinstance(c, dict | list))
            continue
        total = 1 + sum(sizes.get(id(c), 0) for c in children if isinstance(c, dict | list))
        sizes[id(item)] = min(total, WRITE_LIMIT + 1)
    return sizes.get(id(value), 0)


class _Ref(dict[str, Any]):
    """A :class:`Recur` written back, ``{"$ref": "#/$defs/<name>"}``, that remembers the
    node it stands for: a constraint kept whole that holds one can still be unfolded
    (:func:`equivalent`) and written with the ``$defs`` it needs (:class:`_Writer`)."""

    def __init__(self, node: Recur) -> None:
        super().__init__({"$ref": f"#/$defs/{node.name}"})
        self.node = node


def _collect_refs(value: Any, found: dict[str, Recur]) -> None:
    if isinstance(value, _Ref):
        found.setdefault(value.node.name, value.node)
    elif isinstance(value, dict):
        for sub in value.values():
            _collect_refs(sub, found)
    elif isinstance(value, list):
        for sub in value:
            _collect_refs(sub, found)


def equivalent(a: Opaque, b: Opaque) -> bool:
    """Whether two constraints kept whole are written alike, their recursions unfolded:
    co-inductively, a pair of recursions met again is assumed alike (a bisimulation of
    the two written graphs), so alike means the same unfolded schema — the same
    meaning. (Their keys differ whenever a recursion runs through them: a
    :class:`Recur`'s name is its own normalizer's.)"""
    if a.key == b.key:
        return True
    if not a.refs or not b.refs:
        return False
    assumed: set[tuple[str, str]] = set()

    def unfolded(node: Recur) -> Any:
        return _Writer().norm(resolved(node))

    def same(x: Any, y: Any) -> bool:
        if isinstance(x, _Ref) and isinstance(y, _Ref):
            pair = (x.node.name, y.node.name)
            if pair in assumed:
                return True
            assumed.add(pair)
            return same(unfolded(x.node), unfolded(y.node))
        if isinstance(x, _Ref):  # one side written inline (finite): unfold the other
            return same(unfolded(x.node), y)
        if isinstance(y, _Ref):
            return same(x, unfolded(y.node))
        if isinstance(x, dict) and isinstance(y, dict):
            return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
        if isinstance(x, list) and isinstance(y, list):
            return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y, strict=True))
        return canonical(x) == canonical(y)

    try:
        return same(a.value, b.value)
    except Undecidable:
        return False


@dataclass(frozen=True, eq=False)
class Branch:
    """The part of a schema that applies to one JSON type.

    ``keywords`` holds normalized values: ``enum`` a tuple, ``lower``/``upper`` a
    ``(bound, exclusive)`` pair, ``pattern``/``format``/``multipleOf`` frozensets (all
    must hold), ``required`` a frozenset, ``dependentRequired`` a frozenset of (member,
    member it requires) pairs, ``properties`` a dict of :class:`Norm`,
    ``items``/``additionalProperties``/``propertyNames`` a :class:`Norm`, the lengths
    and counts ints, ``uniqueItems`` True, ``patternProperties`` a dict of regex →
    :class:`Norm`. ``places`` says where each was written.
    """

    type: str
    keywords: Mapping[str, Any]
    where: Where
    places: Mapping[str, Where] = field(default_factory=dict)
    opaque: tuple[Opaque, ...] = ()

    @cached_property
    def key(self) -> str:
        # Without the $defs of recursion targets: a Recur's name is its target's alone.
        return canonical(_Writer().branch(self))

    def place(self, keyword: str) -> Where:
        """Where ``keyword`` was written, else where the branch's schema is."""
        return self.places.get(keyword, self.where)


@dataclass(frozen=True, eq=False)
class Norm:
    """A normalized schema: the union of its branches (none: ``false``)."""

    branches: tuple[Branch, ...]
    where: Where
    #: The document URI when this is a whole schema document (a kind's root).
    root: str | None = None
    #: A ``$ref`` below it leads back to it (a :class:`Recur` stands for it there).
    recursive: bool = False

    def _set(self, **fields: Any) -> None:
        """Set fields of this frozen node: a recursion's and a pending union's are made
        by their own ``__init__``, not the dataclass's."""
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @cached_property
    def key(self) -> str:
        """One text per normal form, what equality compares: :func:`to_schema` but for
        the ``$defs`` of recursion targets, which each :class:`Recur`'s name stands for
        (unique to its normalizer and target), so a key stays the size of its node."""
        return canonical(_Writer().norm(self))


class Recur(Norm):
    """A ``$ref`` back into a schema being normalized: the normal form it leads to,
    once that is complete (a recursive schema's normal form is a cyclic graph).

    Its :attr:`name` is unique to the normalizer and the target, so equal keys still
    mean equal schemas (two sides' recursion targets never share a name); it is
    written back as ``{"$ref": "#/$defs/<name>"}``. Its branches are read only once the
    target is complete (a conjunction with it is a :class:`_Meet` until then); reading
    them before is :class:`Undecidable`.
    """

    def __init__(self, where: Where, name: str, holder: list[Norm], ref: str) -> None:
        self._set(where=where, root=None, recursive=False, name=name, _holder=holder, _ref=ref)

    name: str
    _holder: list[Norm]
    _ref: str

    @property
    def target(self) -> Norm:
        if not self._holder:
            raise Undecidable(
                self.where,
                f"$ref {self._ref!r} leads back into a schema still being read, where it"
                " is merged with others (allOf, keywords beside it) or compared whole"
                " (oneOf, not, if...): a recursion there is not compared",
            )
        return self._holder[0]

    @property
    def branches(self) -> tuple[Branch, ...]:  # the target's, once it is complete
        return self.target.branches


class _Union(Norm):
    """An ``anyOf`` one of whose members is a recursion not yet complete: the union of
    its members' branches, taken once they are (reading it before is the members'
    :class:`Undecidable`), and kept (the walk tells pairs apart by their branches).
    A recursion runs through it, so it is ``recursive``; it is written back as the
    ``anyOf`` of its members, each :class:`Recur` a ``$ref``."""

    def __init__(self, where: Where, members: tuple[Norm, ...]) -> None:
        self._set(where=where, root=None, recursive=True, members=members)
        self._set(_branches=None, _busy=False)

    members: tuple[Norm, ...]
    _branches: tuple[Branch, ...] | None
    _busy: bool

    @property
    def branches(self) -> tuple[Branch, ...]:
        if self._branches is None:
            if self._busy:
                raise Undecidable(
                    self.where,
                    "an anyOf leads back to itself on the same value: it means no schema",
                )
            object.__setattr__(self, "_busy", True)
            try:
                union = tuple(b for m in self.members for b in m.branches)
            finally:
                object.__setattr__(self, "_busy", False)
            object.__setattr__(self, "_branches", union)
            return union
        return self._branches


#: The keyword of an external schema's constraint (:func:`external`).
EXTERNAL = "$ref"


def external(constraint: Opaque) -> str | None:
    """The absolute URI of an external schema (a ``$ref`` into a document not among
    those given, never fetched), when ``constraint`` is one; else None."""
    if constraint.keyword != EXTERNAL:
        return None
    uri: str = constraint.value[EXTERNAL]
    return uri


def externals(branch: Branch) -> list[str]:
    """The external schemas a branch's values must match, by URI."""
    return [uri for o in branch.opaque if (uri := external(o)) is not None]


def resolved(node: Norm) -> Norm:
    """The normal form a :class:`Recur` stands for (through any chain of them); any
    other node itself."""
    while isinstance(node, Recur):
        node = node.target
    return node


def canonical(value: Any) -> str:
    """One text per JSON value (keys sorted): what equality of normal forms compares."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def is_true(node: Norm) -> bool:
    """Whether ``node`` accepts every value (``true``, ``{}``): a free branch per type."""
    free = {b.type for b in node.branches if not b.keywords and not b.opaque}
    return free >= set(ALL_TYPES)


def is_false(node: Norm) -> bool:
    return not node.branches


# --------------------------------------------------------------------------- writing back


def to_schema(node: Norm) -> Any:
    """A self-contained JSON Schema accepting exactly what ``node`` accepts (a
    recursive one with its recursion targets under ``$defs``)."""
    writer = _Writer()
    return writer.finish(writer.norm(node))


def branch_schema(branch: Branch) -> dict[str, Any]:
    """One branch as a self-contained JSON Schema (see :func:`to_schema`)."""
    writer = _Writer()
    out: dict[str, Any] = writer.finish(writer.branch(branch))
    return out


class _Writer:
    """Writes normal forms back as JSON Schema: each :class:`Recur` as a ``$ref`` to
    ``#/$defs/<its name>``, its target written there once (:meth:`finish`), so that a
    recursive normal form is a finite schema."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}
        self.pending: list[Recur] = []
        #: Schema objects written so far (at most WRITE_LIMIT, else Undecidable).
        self.written = 0

    def _count(self, where: Where) -> None:
        self.written += 1
        if self.written > WRITE_LIMIT:
            raise Undecidable(where, _TOO_LARGE)

    def finish(self, out: Any) -> Any:
        """``out`` with the ``$defs`` its references need (a schema object then)."""
        while self.pending:
            recur = self.pending.pop()
            if recur.name not in self.defs:
                self.defs[recur.name] = None  # claimed: a cycle writes it once
                self.defs[recur.name] = self.norm(resolved(recur))
        if not self.defs:
            return out
        return {**out, "$defs": dict(sorted(self.defs.items()))}

    def norm(self, node: Norm) -> Any:
        self._count(node.where)
        if isinstance(node, Recur):
            self.pending.append(node)
            return _Ref(node)
        if isinstance(node, _Union):
            return {"anyOf": [self.norm(m) for m in node.members]}
        if not node.branches:
            return False
        if is_true(node):
            return True
        merged = self.merged(node.branches)
        if merged is not None:
            return merged
        parts = [self.branch(b) for b in node.branches]
        return parts[0] if len(parts) == 1 else {"anyOf": parts}

    def merged(self, branches: tuple[Branch, ...]) -> dict[str, Any] | None:
        """Several branches as one schema, when that says the same: each keyword applies
        to one type only, so branches of distinct types (not ``number`` and ``integer``
        together), with no ``enum`` and the same opaque constraints, merge into
        ``{"type": [...], <every branch's keywords>}`` — or, covering every type, no
        ``type`` at all (``{"required": ["x"]}`` rather than six branches)."""
        if len(branches) < 2:
            return None
        types = [b.type for b in branches]
        if len(set(types)) < len(types) or {"number", "integer"} <= set(types):
            return None
        opaque = [o.key for o in branches[0].opaque]
        if any("enum" in b.keywords or [o.key for o in b.opaque] != opaque for b in branches):
            return None
        out: dict[str, Any] = {}
        if set(types) != set(ALL_TYPES):
            out["type"] = sorted(types)
        also: list[Any] = []
        for branch in branches:
            written = self.branch(Branch(branch.type, branch.keywords, branch.where))
            written.pop("type")
            also.extend(written.pop("allOf", []))
            out.update(written)
        also.extend(self.opaque(branches[0].opaque))
        if also:
            out["allOf"] = also
        return out

    def opaque(self, constraints: tuple[Opaque, ...]) -> list[dict[str, Any]]:
        """Constraints kept whole, as written (their recursions' targets then in ``$defs``)."""
        for constraint in constraints:
            self.pending.extend(constraint.refs)
        return [dict(o.value) for o in constraints]

    def branch(self, branch: Branch) -> dict[str, Any]:
        self._count(branch.where)
        out: dict[str, Any] = {"type": branch.type}
        also: list[Any] = []
        kw = branch.keywords
        for name, value in kw.items():
            if name == "enum":
                if len(value) == 1:
                    out["const"] = value[0]
                else:
                    out["enum"] = list(value)
            elif name in ("lower", "upper"):
                bound, exclusive = value
                plain, strict = (
                    ("minimum", "exclusiveMinimum")
                    if name == "lower"
                    else ("maximum", "exclusiveMaximum")
                )
                out[strict if exclusive else plain] = bound
            elif name in ("pattern", "format", "multipleOf"):
                first, *rest = sorted(value, key=canonical)
                out[name] = first
                also.extend({name: more} for more in rest)
            elif name == "required":
                out[name] = sorted(value)
            elif name == "dependentRequired":
                grouped: dict[str, list[str]] = {}
                for member, needed in sorted(value):
                    grouped.setdefault(member, []).append(needed)
                out[name] = grouped
            elif name in ("properties", "patternProperties"):
                out[name] = {key: self.norm(sub) for key, sub in value.items()}
            elif isinstance(value, Norm):
                out[name] = self.norm(value)
            else:
                out[name] = value
        also.extend(self.opaque(branch.opaque))
        if also:
            out["allOf"] = also
        return out
