"""The normal form the schema diff compares: one spelling per meaning, as far as it goes.

Two schemas that accept the same records can be written many ways — a ``$ref`` or the
subschema inline, ``allOf`` or one object, ``type: [a, b]`` or ``anyOf``, with or without
titles. A diff that walked the text would report a refactor as a change; so both sides
are first brought to this form, and only then walked in parallel:

* every ``$ref`` resolved against the schemas given, as the inliner resolves it
  (:func:`kernelindex_sdk.schema.inlining.target`), and inlined; ``allOf`` members and a
  ``$ref``'s siblings merged into one schema (a conjunction). Nothing is fetched: a
  ``$ref`` into a document none of the schemas given is (``kubernetes-definitions.json``
  beside a CI schema) is an **external** schema, known by its absolute URI alone — an
  opaque constraint on every type (:func:`external`), equal to the same URI on the
  other side (the diff compares two versions of one schema, not the document it
  borrows from: that is assumed unchanged) and to nothing else; a pointer that reaches
  nothing in a document that *is* given is an error (:class:`UnresolvableRef`);
* a schema split into **branches**, one per JSON type it admits (``null``, ``boolean``,
  ``string``, ``number``, ``integer``, ``array``, ``object``), each holding only the
  keywords that apply to its type: ``{"type": ["number", "string"], "minimum": 0}`` is
  ``anyOf [{number, minimum 0}, {string}]``; an ``anyOf`` is the union of its members'
  branches (several of one type, then), and so is a ``oneOf`` no value can match twice
  (members that share no value, as :mod:`.unions` proves it: disjoint types, objects
  told apart by a discriminating ``const``/``enum`` or by a member one requires and
  another forbids, disjoint enums or ranges...), up to :data:`UNION_LIMIT` branches;
* ``const`` as a one-value ``enum``, each value in the branch of its type; the tighter
  of ``minimum`` and ``exclusiveMinimum`` (and of the maxima);
* annotations (``title``, ``description``, ``examples``, ``default``, ``$comment``,
  ``deprecated``, ``readOnly``, ``writeOnly``, ``content*``), unknown keywords and
  ``format`` dropped — the validator ignores them too: ``format`` is an annotation in
  every dialect unless the diff is told to assert it (``formats=True``, the CLI's
  ``--format-assertion``), and then still where no checker asserts that format;
* ``patternProperties`` as a dict of regex → normal form beside ``properties`` and
  ``additionalProperties`` (which then applies to the names no entry and no regex
  covers): a member's schema is :func:`member_schema`, its matches told by
  :mod:`.patterns` (a regex Python cannot read keeps the three whole, as below);
* what has no structural spelling — a ``oneOf`` whose members may overlap,
  ``not``, ``if``/``then``/``else``, ``contains``, ``prefixItems``, ``dependentSchemas``
  — kept whole as **opaque** constraints of a branch, normalized inside
  and compared for equality; an ``if``/``then``/``else`` and a ``not`` also keep their
  parts' normal forms (:attr:`Opaque.parts`), which the walk compares part by part.

A ``$ref`` that leads back into a schema being normalized (a tree whose node refers to
itself) becomes a :class:`Recur`: the normal form is then a cyclic graph, its target
marked ``recursive``, and the walk compares such pairs by co-induction. A recursion
merged with other schemas before its target is complete (under ``allOf``, beside other
keywords) makes their conjunction a :class:`_Meet`, read once the document is: one node
per set of schemas merged, so the conjunction of recursive schemas is a finite cyclic
graph too. Inside a constraint kept whole a recursion is written as a ``$ref``
(:class:`_Ref`), and two such constraints are compared by unfolding them
(:func:`equivalent`). Only a recursion that leads back to itself on the same value
(``allOf: [{"$ref": "#"}]``, no schema) is :class:`Undecidable`.

``unevaluatedProperties``/``unevaluatedItems`` in a schema object that applies no
subschema in place is the ``additionalProperties``/``items`` it amounts to there
(:func:`_evaluated_here`); ``unevaluatedProperties`` beside ``allOf`` and ``$ref``, the
``additionalProperties`` over the names no member declares
(:meth:`Normalizer._unevaluated_properties`). Beside ``anyOf``, ``if``... whose
subschemas declare members, ``unevaluatedItems`` beside any of them, ``$dynamicRef``
(the inliner's :data:`~kernelindex_sdk.schema.inlining.CONTEXT_KEYWORDS`, read from there) and
an ``$id`` below a document's root raise :class:`Undecidable`: their meaning depends on
more than the schema object they sit in, and a diff that cannot be sure must say so rather than
guess. Other dialects' keywords are first rewritten in Draft 2020-12
(:mod:`.upgrade`). Where these rules differ from the inliner's, and why:
:mod:`kernelindex_sdk.schema.inlining`.

:func:`to_schema` writes a normal form back as a plain, self-contained JSON Schema that
accepts exactly what the original accepts (its recursion targets under ``$defs``), so
``normalize`` is itself a schema transformation the diff's laws can be tested on
(``diff(S, normalize(S))`` is empty).
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from kernelindex_sdk.base.pointers import pointer_of
from kernelindex_sdk.base.recordformat import DRAFT_2020_12
from kernelindex_sdk.errors import UnresolvableReference
from kernelindex_sdk.schema import inlining
from kernelindex_sdk.schema.dialects import DRAFT_2019_09, NAMES, dialect_of
from kernelindex_sdk.schemadiff import unions
from kernelindex_sdk.schemadiff._forms import (
    ALL_TYPES,
    EXTERNAL,
    Branch,
    Norm,
    Opaque,
    Recur,
    Undecidable,
    Where,
    _Union,
    _Writer,
    canonical,
    is_true,
    resolved,
)
from kernelindex_sdk.schemadiff.patterns import compiles, matches
from kernelindex_sdk.schemadiff.upgrade import as_2020_12

__all__ = ["Normalizer", "UnresolvableRef", "true_norm", "value_types"]

_TYPE_NAMES = frozenset({*ALL_TYPES, "integer"})

#: Keywords that apply to one type only, by the type they apply to.
_STRING = frozenset({"minLength", "maxLength", "pattern", "format"})
_NUMBER = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
_ARRAY = frozenset({"items", "minItems", "maxItems", "uniqueItems"})
_OBJECT = frozenset(
    {"properties", "required", "additionalProperties", "propertyNames", "minProperties",
     "maxProperties", "dependentRequired", "patternProperties"}
)  # fmt: skip
#: The keywords of each type's branch.
_APPLIES = {
    "string": _STRING,
    "number": _NUMBER,
    "integer": _NUMBER,
    "array": _ARRAY,
    "object": _OBJECT,
}
#: Keywords that count (characters, items, members): non-negative integers.
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
#: Annotations and identifiers: no effect on what a schema accepts. (A ``$ref`` by
#: the name an anchor gives is refused: a fragment must be a JSON pointer.)
_IGNORED = frozenset(
    {"title", "description", "examples", "default", "$comment", "deprecated", "readOnly",
     "writeOnly", "contentEncoding", "contentMediaType", "contentSchema", "$schema", "$defs",
     "definitions", "$vocabulary", "$id", *inlining.NAMING_KEYWORDS}
)  # fmt: skip


class UnresolvableRef(UnresolvableReference):
    """A ``$ref`` to a URI none of the schemas given holds (nothing is ever fetched):
    the SDK's :class:`~kernelindex_sdk.errors.UnresolvableReference`, located."""

    def __init__(self, where: Where, ref: str) -> None:
        self.where = where
        super().__init__(
            where.uri, ref, f"{where.label()}: $ref {ref!r} cannot be resolved offline"
        )


@dataclass(frozen=True, slots=True)
class _Respelled(Where):
    """A schema object's place whose keywords were renamed to their Draft 2020-12
    spelling (:mod:`.upgrade`): a place below it names the keyword as written."""

    renamed: tuple[tuple[str, str], ...] = ()

    def at(self, *tokens: str | int) -> Where:
        if tokens and isinstance(tokens[0], str):
            first = dict(self.renamed).get(tokens[0], tokens[0])
            tokens = (first, *tokens[1:])
        return Where(self.uri, pointer_of(tokens, self.pointer))


class _Meet(Recur):
    """A conjunction (``allOf``, a ``$ref`` beside keywords) one of whose parts is a
    recursion: the normal form of its parts together, made when first read — by then
    every part is complete — rather than when met, when one may not be. Its parts
    (``atoms``: recursions and finished normal forms) are what it is the meet of: one
    node per set of parts (:func:`conjoin`), so the conjunction of two recursive
    schemas, whose members' conjunctions lead back to it, is a finite cyclic graph,
    compared by co-induction as a plain recursion is, and written back under
    ``$defs``."""

    def __init__(self, where: Where, atoms: tuple[Norm, ...]) -> None:
        super().__init__(where, f"m{next(_MEET_NAMES)}", [], "")
        object.__setattr__(self, "atoms", atoms)
        object.__setattr__(self, "_busy", False)

    atoms: tuple[Norm, ...]
    _busy: bool

    @property
    def target(self) -> Norm:
        if self._holder:
            return self._holder[0]
        if self._busy:
            raise Undecidable(
                self.where,
                "an allOf (or a $ref beside keywords) leads back to itself on the same value:"
                " it means no schema",
            )
        object.__setattr__(self, "_busy", True)
        try:
            result = resolved(self.atoms[0])
            for atom in self.atoms[1:]:
                result = _meet(result, resolved(atom))
        finally:
            object.__setattr__(self, "_busy", False)
        node = Norm(result.branches, result.where, recursive=True)
        self._holder.append(node)
        return node


#: Names of :class:`_Meet` nodes (unique in the process, so keys of two sides differ).
_MEET_NAMES = itertools.count()
#: Each meet by the identities of its parts (a recursion: its target's holder).
_MEETS: weakref.WeakValueDictionary[frozenset[int], _Meet] = weakref.WeakValueDictionary()


def _atoms(node: Norm) -> tuple[Norm, ...]:
    """The parts a node is the conjunction of (a meet's, an eager conjunction's)."""
    if isinstance(node, _Meet):
        return node.atoms
    parts: tuple[Norm, ...] | None = node.__dict__.get("_parts")
    return parts if parts is not None else (node,)


def _identity(node: Norm) -> int:
    return id(node._holder) if isinstance(node, Recur) and not isinstance(node, _Meet) else id(node)


def _pending(node: Norm, seen: set[int] | None = None) -> bool:
    """Whether ``node``'s branches cannot be read yet (a recursion still being read)."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return False
    seen.add(id(node))
    if isinstance(node, _Meet):
        return not node._holder and any(_pending(a, seen) for a in node.atoms)
    if isinstance(node, Recur):
        return not node._holder or _pending(node._holder[0], seen)
    return isinstance(node, _Union) and any(_pending(m, seen) for m in node.members)


def _deferred(node: Norm) -> bool:
    """Whether a conjunction with ``node`` waits until it is read (:class:`_Meet`)."""
    return isinstance(node, Recur | _Union)


def value_types(value: Any) -> frozenset[str]:
    """The branch types a JSON value belongs to (``1`` is an ``integer`` and a ``number``)."""
    if value is None:
        return frozenset({"null"})
    if isinstance(value, bool):
        return frozenset({"boolean"})
    if isinstance(value, int):
        return frozenset({"integer", "number"})
    if isinstance(value, float):
        return frozenset({"integer", "number"} if value.is_integer() else {"number"})
    if isinstance(value, str):
        return frozenset({"string"})
    if isinstance(value, list):
        return frozenset({"array"})
    return frozenset({"object"})


@cache
def asserted_formats() -> frozenset[str]:
    """Formats the reference engine's checker asserts; any other is an annotation."""
    from jsonschema import Draft202012Validator

    return frozenset(Draft202012Validator.FORMAT_CHECKER.checkers)


# --------------------------------------------------------------------------- normalizing


#: Numbers each normalizer (so the names of two sides' recursion targets differ).
_NORMALIZERS = itertools.count()


class Normalizer:
    """Normalizes the schemas of one side, resolving ``$ref`` in ``documents``.

    ``documents``: the contents of every document a ``$ref`` may reach, by URI (no
    fragment); nothing else is ever consulted. Targets of ``$ref`` are normalized once
    each (a kind reaches ``common.schema.json#/$defs/slug`` many times).
    """

    def __init__(self, documents: Mapping[str, Any], *, formats: bool = True) -> None:
        self._documents = documents
        #: Whether ``format`` asserts (else an annotation, dropped: see the module's doc).
        self._formats = formats
        self._done: dict[tuple[str, str], Norm] = {}
        self._active: set[tuple[str, str]] = set()
        #: Targets being normalized that a $ref led back into: where their normal form
        #: goes once complete, for the :class:`Recur`\ s standing for it.
        self._holders: dict[tuple[str, str], list[Norm]] = {}
        #: Names of recursion targets: this normalizer's own (see :class:`Recur`).
        self._names: dict[tuple[str, str], str] = {}
        self._serial = next(_NORMALIZERS)
        #: Each document's dialect (a key of :data:`~kernelindex_sdk.schema.dialects.DIALECTS`).
        self._dialects: dict[str, str] = {}
        #: The document normalized from (where evaluation begins), and whether a normal
        #: form in ``_done`` depends on it (a ``$recursiveRef`` read as a ``$ref``).
        self._entry = ""
        self._entry_bound = False
        #: The URIs of the external schemas met (a ``$ref`` into no document given).
        self.externals: set[str] = set()

    def document(self, uri: str) -> Norm:
        """The normal form of the whole document at ``uri``."""
        if uri != self._entry and self._entry_bound:
            self._done.clear()  # what was normalized for another entry may differ
            self._entry_bound = False
        self._entry = uri
        before = set(self._done)
        try:
            root = self._target(Where(uri), inlining.resolved(uri, ""))
            _complete(root)
            return root
        except (Undecidable, RecursionError):
            # What was completed inside a failed attempt may hold a Recur whose target
            # never completed: forget it, so another kind does not reach it.
            for key in set(self._done) - before:
                del self._done[key]
            self._holders.clear()
            raise

    def _dialect(self, where: Where, document: str, contents: Any) -> str:
        """The dialect of ``document`` (one the diff reads, or :class:`Undecidable`)."""
        dialect = self._dialects.get(document)
        if dialect is None:
            found = dialect_of(contents)
            if found is None:
                known = ", ".join(NAMES.values())
                raise Undecidable(
                    Where(document),
                    f"dialect {contents.get('$schema')!r}: not one of {known}",
                )
            dialect = self._dialects[document] = found
        return dialect

    def _target(self, where: Where, reference: inlining.Reference) -> Norm:
        """The schema ``reference`` points at (found as the inliner finds it). A chain of
        ``$ref``\\ s each to another ``$ref`` alone is followed in a loop, not by
        recursion: a chain of any length is read (each link still a target of its own)."""
        chain: list[tuple[tuple[str, str], Where, str]] = []
        try:
            result = self._followed(where, reference, chain)
            for key, at, uri in reversed(chain):
                self._active.discard(key)
                result = self._finished(key, at, uri, result)
        finally:
            for key, _, _ in chain:
                self._active.discard(key)
        return result

    def _followed(
        self,
        where: Where,
        reference: inlining.Reference,
        chain: list[tuple[tuple[str, str], Where, str]],
    ) -> Norm:
        """The normal form at the end of a chain of plain ``$ref``\\ s, each link
        (its key, where it was met, its URI) added to ``chain`` and left active."""
        while True:
            uri = reference.uri
            try:
                node = inlining.target(self._documents, reference, uri)
            except inlining.NotAPointer:
                raise Undecidable(
                    where, f"$ref {uri!r}: only JSON-pointer fragments are compared"
                ) from None
            except inlining.Unresolvable:
                if reference.document in self._documents:
                    raise UnresolvableRef(where, uri) from None  # a pointer to nothing
                return self._external(where, uri)
            key = document, pointer = reference.key
            done = self._done.get(key)
            if done is not None:
                return done
            if key in self._active:
                holder = self._holders.setdefault(key, [])
                name = self._names.setdefault(key, f"r{self._serial}_{len(self._names)}")
                return Recur(where, name, holder, uri)
            self._dialect(where, document, self._documents[document])
            self._active.add(key)
            if _plain_ref(node, pointer):
                chain.append((key, where, uri))
                where = Where(document, pointer).at("$ref")
                reference = inlining.resolved(document, node["$ref"])
                continue
            try:
                result = self.schema(node, Where(document, pointer), base=document)
            finally:
                self._active.discard(key)
            return self._finished(key, where, uri, result)

    def _finished(self, key: tuple[str, str], where: Where, uri: str, result: Norm) -> Norm:
        """The normal form of target ``key`` (``result``, read), remembered and handed
        to the recursions that wait for it."""
        document, pointer = key
        waiting = self._holders.pop(key, None)
        if isinstance(result, Recur) and result.name == self._names.get(key):
            raise Undecidable(where, f"$ref {uri!r} leads back to itself through nothing but $refs")
        if _deferred(result):
            # A meet (or union) of parts not all complete yet: read once they are, so it
            # stands for itself here (its target is marked recursive when made).
            if waiting is not None:
                waiting.append(result)
            self._done[key] = result
            return result
        if not pointer or waiting is not None:
            result = Norm(
                result.branches,
                result.where,
                root=document if not pointer else result.root,
                recursive=waiting is not None or result.recursive,
            )
        if waiting is not None:
            waiting.append(result)
        self._done[key] = result
        return result

    def _external(self, where: Where, uri: str) -> Norm:
        """The schema at ``uri``, in a document not given: unknown but for its URI, so
        a constraint of its own on every type, compared by that URI (see the module's
        doc); every one met is in :attr:`externals`."""
        self.externals.add(uri)
        constraint = Opaque(EXTERNAL, {EXTERNAL: uri}, where)
        return Norm(tuple(Branch(t, {}, where, {}, (constraint,)) for t in ALL_TYPES), where)

    def schema(self, schema: Any, where: Where, *, base: str) -> Norm:
        """The normal form of one schema (a dict or a boolean) at ``where``."""
        if schema is True:
            return true_norm(where)
        if schema is False:
            return Norm((), where)
        if not isinstance(schema, dict):
            raise Undecidable(where, "not a schema (an object or a boolean)")
        dialect = self._dialects.get(base, DRAFT_2020_12)
        if dialect == DRAFT_2019_09 and "$recursiveRef" in schema:
            schema = self._recursive_ref(schema, where, base)
        schema, renamed = as_2020_12(schema, dialect)
        if "unevaluatedProperties" in schema and any(k in schema for k in _IN_PLACE):
            schema = self._unevaluated_properties(schema, where, base, renamed)
        if "unevaluatedProperties" in schema or "unevaluatedItems" in schema:
            schema = _evaluated_here(schema, where, renamed)
        if renamed:
            where = _Respelled(where.uri, where.pointer, tuple(renamed.items()))
        for keyword in inlining.CONTEXT_KEYWORDS:
            if keyword in schema:
                raise Undecidable(where.at(keyword), f"{keyword} is not compared")
        if "$id" in schema and where.pointer:
            raise Undecidable(where.at("$id"), "an $id below a document's root is not compared")
        parts: list[Norm] = [self._own(schema, where, base)]
        if "$ref" in schema and not isinstance(schema["$ref"], str):
            raise Undecidable(where.at("$ref"), "$ref is not a string")
        if "$ref" in schema:
            found = self._target(where.at("$ref"), inlining.resolved(base, schema["$ref"]))
            if _only_ref(schema):
                return found  # a plain $ref: the target, where it is written
            parts.append(found)
        for index, member in enumerate(_list(schema, "allOf", where)):
            parts.append(self.schema(member, where.at("allOf", index), base=base))
        opaque: list[tuple[frozenset[str] | None, Opaque]] = []
        for keyword in ("anyOf", "oneOf"):
            if keyword not in schema:
                continue
            members = [
                self.schema(m, where.at(keyword, i), base=base)
                for i, m in enumerate(_list(schema, keyword, where))
            ]
            if keyword == "anyOf":  # a member twice (one $ref twice) adds nothing
                members = list({id(m): m for m in members}.values())
            if keyword == "anyOf" and any(not _pending(m) and is_true(m) for m in members):
                continue  # a member accepts every value: so does the anyOf
            if keyword == "anyOf" and any(_pending(m) for m in members):
                parts.append(_Union(where, tuple(members)))  # anyOf [{"$ref": "#"}, ...]
            elif not any(_pending(m) for m in members) and _as_union(keyword, members):
                parts.append(Norm(tuple(b for m in members for b in m.branches), where))
            else:
                value = {keyword: [_written_out(m, keyword) for m in members]}
                opaque.append((None, Opaque(keyword, value, where.at(keyword))))
        opaque.extend(self._opaque(schema, where, base))
        if len(parts) == 2 and not opaque and is_true(parts[0]):
            return parts[1]  # nothing to conjoin with (and a union may not be read yet)
        result = parts[0]
        for part in parts[1:]:
            result = conjoin(result, part)
        if opaque:
            result = _with_opaque(result, opaque, where)
        return result

    def _unevaluated_properties(
        self, schema: dict[str, Any], where: Where, base: str, renamed: dict[str, str]
    ) -> dict[str, Any]:
        """``unevaluatedProperties: S`` beside ``allOf``/``$ref`` as the keywords it
        amounts to. A member that fails fails the whole schema, so the members a valid
        record has evaluated do not depend on the record: every name a ``properties``
        of the schema or of a member (through ``allOf`` and ``$ref``, at any depth)
        declares, every ``patternProperties`` pattern, and — where one of them has
        ``additionalProperties`` (or ``unevaluatedProperties``) — every member. So
        ``S`` applies to exactly the members no ``properties``/``patternProperties``
        of the set names: the schema with those names and patterns declared (``true``:
        the members themselves still say what they accept) and ``additionalProperties:
        S``; or nothing, when every member is evaluated. (An ``anyOf``, ``oneOf``,
        ``if`` or ``dependentSchemas`` whose members evaluate members makes it depend
        on which of them match: :class:`Undecidable`, as is a ``$dynamicRef``.)"""
        found = _Evaluated()
        self._evaluates(schema, where, base, found, set(), top=True)
        out = {k: v for k, v in schema.items() if k != "unevaluatedProperties"}
        if found.every:
            return out
        for keyword, extra in (("properties", found.names), ("patternProperties", found.patterns)):
            own = schema.get(keyword, {})
            if not isinstance(own, dict):
                raise Undecidable(where.at(keyword), f"{keyword} is not an object")
            if extra - set(own):
                out[keyword] = {**dict.fromkeys(sorted(extra), True), **own}
        out["additionalProperties"] = schema["unevaluatedProperties"]
        renamed["additionalProperties"] = "unevaluatedProperties"
        return out

    def _evaluates(
        self, schema: Any, where: Where, base: str, found: _Evaluated, seen: set[Any], *, top: bool
    ) -> None:
        """Adds to ``found`` the members ``schema`` evaluates when valid (see
        :meth:`_unevaluated_properties`)."""
        if not isinstance(schema, dict):
            return  # true evaluates nothing; false is never valid
        dialect = self._dialects.get(base, DRAFT_2020_12)
        if dialect not in (DRAFT_2019_09, DRAFT_2020_12):
            raise Undecidable(
                where,
                f"unevaluatedProperties reaching a {NAMES.get(dialect, dialect)} schema:"
                " which members it evaluates is not compared",
            )
        for keyword in ("$dynamicRef", "$recursiveRef"):
            if keyword in schema:
                raise Undecidable(
                    where.at(keyword),
                    f"unevaluatedProperties beside {keyword}: which members it evaluates"
                    " depends on where evaluation began",
                )
        for keyword, into in (("properties", found.names), ("patternProperties", found.patterns)):
            if isinstance(schema.get(keyword), dict):
                into.update(schema[keyword])
        if "additionalProperties" in schema or (not top and "unevaluatedProperties" in schema):
            found.every = True
        for index, member in enumerate(_list(schema, "allOf", where)):
            self._evaluates(member, where.at("allOf", index), base, found, seen, top=False)
        ref = schema.get("$ref")
        if isinstance(ref, str):
            reference = inlining.resolved(base, ref)
            if reference.key not in seen:
                seen.add(reference.key)
                try:
                    node = inlining.target(self._documents, reference, reference.uri)
                except inlining.Declined:
                    return  # said where the $ref itself is normalized
                document, pointer = reference.key
                self._dialect(where, document, self._documents[document])
                self._evaluates(node, Where(document, pointer), document, found, seen, top=False)
        varying: list[tuple[str | int, ...]] = []
        for keyword in ("anyOf", "oneOf"):
            varying += [(keyword, i) for i in range(len(_list(schema, keyword, where)))]
        varying += [(k,) for k in ("if", "then", "else") if k in schema]
        if isinstance(schema.get("dependentSchemas"), dict):
            varying += [("dependentSchemas", k) for k in schema["dependentSchemas"]]
        for tokens in varying:
            sub: Any = schema
            for token in tokens:
                sub = sub[token]
            some = _Evaluated()
            self._evaluates(sub, where.at(*tokens), base, some, set(seen), top=False)
            if some.every or some.names or some.patterns:
                shown = ", ".join(repr(n) for n in sorted(some.names)[:4]) or "every member"
                raise Undecidable(
                    where.at(*tokens),
                    f"unevaluatedProperties beside {tokens[0]}, whose subschema evaluates"
                    f" {shown}: which members are evaluated depends on which subschemas"
                    " match; not compared",
                )

    def _recursive_ref(self, schema: dict[str, Any], where: Where, base: str) -> dict[str, Any]:
        """A 2019-09 ``$recursiveRef: "#"`` as the ``$ref`` it amounts to here: to its own
        document's root, when that root has no ``$recursiveAnchor: true`` or is where
        evaluation begins (the outermost dynamic scope); else :class:`Undecidable`."""
        at = where.at("$recursiveRef")
        if schema["$recursiveRef"] != "#" or "$ref" in schema:
            raise Undecidable(at, 'only a $recursiveRef "#" without a $ref beside it is compared')
        anchored = self._documents[base].get("$recursiveAnchor") is True
        if anchored and base != self._entry:
            raise Undecidable(
                at,
                "$recursiveRef into a document with $recursiveAnchor, reached from another:"
                " what it refers to depends on where evaluation began",
            )
        self._entry_bound = self._entry_bound or anchored
        rest = {k: v for k, v in schema.items() if k != "$recursiveRef"}
        return {**rest, "$ref": "#"}

    def _own(self, schema: dict[str, Any], where: Where, base: str) -> Norm:
        """The branches a schema's own type-specific keywords (and type, enum) make."""
        declared = schema.get("type")
        if declared is None:
            types: list[str] = list(ALL_TYPES)
        else:
            listed = [declared] if isinstance(declared, str) else declared
            if not isinstance(listed, list) or not all(t in _TYPE_NAMES for t in listed):
                raise Undecidable(where.at("type"), f"type {declared!r} is not a JSON type")
            types = list(dict.fromkeys(listed))
            if "number" in types and "integer" in types:
                types.remove("integer")  # the same keywords: integers are numbers
        values: tuple[Any, ...] | None = None
        if "const" in schema:
            values = (schema["const"],)
        if "enum" in schema:
            listed_values = _list(schema, "enum", where)
            values = tuple(v for v in listed_values if values is None or _among(v, values))
        keywords, places = self._keywords(schema, where, base)
        branches = []
        for t in types:
            kw: dict[str, Any] = {}
            if values is not None:
                kept = _dedupe(v for v in values if t in value_types(v))
                if not kept:
                    continue
                kw["enum"] = kept
            applies = _APPLIES.get(t, frozenset())
            kw.update((k, v) for k, v in keywords.items() if _source(k) in applies)
            at = {k: w for k, w in places.items() if k in kw}
            if "enum" in kw:
                at["enum"] = where.at("const" if "const" in schema else "enum")
            branches.append(Branch(t, kw, where, at))
        return Norm(tuple(branches), where)

    def _keywords(
        self, schema: dict[str, Any], where: Where, base: str
    ) -> tuple[dict[str, Any], dict[str, Where]]:
        """Type-specific keywords, normalized, with where each was written."""
        kw: dict[str, Any] = {}
        places: dict[str, Where] = {}

        def put(name: str, value: Any, keyword: str) -> None:
            kw[name] = value
            places[name] = where.at(keyword)

        for name in _COUNTS:
            if name in schema:
                put(name, _count(schema[name], where.at(name)), name)
        for name, inclusive, exclusive in (
            ("lower", "minimum", "exclusiveMinimum"),
            ("upper", "maximum", "exclusiveMaximum"),
        ):
            bounds = [(schema[k], k == exclusive, k) for k in (inclusive, exclusive) if k in schema]
            for value, _, k in bounds:
                if not _is_number(value):
                    raise Undecidable(where.at(k), f"{k} is not a number")
            if bounds:
                pick = _tighter if name == "lower" else _tighter_upper
                chosen = bounds[0]
                for other in bounds[1:]:
                    chosen = other if pick((other[0], other[1]), (chosen[0], chosen[1])) else chosen
                put(name, (chosen[0], chosen[1]), chosen[2])
        if "multipleOf" in schema:
            if not _is_number(schema["multipleOf"]) or schema["multipleOf"] <= 0:
                raise Undecidable(where.at("multipleOf"), "multipleOf is not a positive number")
            put("multipleOf", frozenset({schema["multipleOf"]}), "multipleOf")
        if isinstance(schema.get("pattern"), str):
            put("pattern", frozenset({schema["pattern"]}), "pattern")
        if (
            self._formats
            and isinstance(schema.get("format"), str)
            and schema["format"] in asserted_formats()
        ):
            put("format", frozenset({schema["format"]}), "format")
        if schema.get("uniqueItems") is True:
            put("uniqueItems", True, "uniqueItems")
        if "required" in schema:
            put("required", frozenset(_list(schema, "required", where)), "required")
        if "dependentRequired" in schema:
            put("dependentRequired", _dependencies(schema, where), "dependentRequired")
        if "prefixItems" not in schema and "items" in schema:
            put("items", self.schema(schema["items"], where.at("items"), base=base), "items")
        if "propertyNames" in schema:
            sub = self.schema(schema["propertyNames"], where.at("propertyNames"), base=base)
            put("propertyNames", sub, "propertyNames")
        if "patternProperties" in schema and not _structural(schema):
            return kw, places  # properties and additionalProperties go with it, opaque
        if "properties" in schema:
            properties = schema["properties"]
            if not isinstance(properties, dict):
                raise Undecidable(where.at("properties"), "properties is not an object")
            put(
                "properties",
                {
                    name: self.schema(sub, where.at("properties", name), base=base)
                    for name, sub in properties.items()
                },
                "properties",
            )
        if "additionalProperties" in schema:
            sub = self.schema(
                schema["additionalProperties"], where.at("additionalProperties"), base=base
            )
            put("additionalProperties", sub, "additionalProperties")
        if "patternProperties" in schema:
            self._patterns(schema, where, base, kw.get("additionalProperties"), put)
        return kw, places

    def _patterns(
        self, schema: dict[str, Any], where: Where, base: str, others: Norm | None, put: Any
    ) -> None:
        """``patternProperties`` as a dict of regex → normal form. A pattern whose schema
        accepts everything constrains nothing when ``additionalProperties`` does not
        either, and is dropped (then, with none left, the keyword)."""
        patterns = {
            regex: self.schema(sub, where.at("patternProperties", regex), base=base)
            for regex, sub in schema["patternProperties"].items()
        }
        if others is None or (not _pending(others) and is_true(others)):
            patterns = {r: sub for r, sub in patterns.items() if _pending(sub) or not is_true(sub)}
        if patterns:
            put("patternProperties", patterns, "patternProperties")

    def _opaque(
        self, schema: dict[str, Any], where: Where, base: str
    ) -> Iterator[tuple[frozenset[str] | None, Opaque]]:
        """The constraints kept whole, each with the types it applies to (None: all)."""

        def norm(value: Any, *tokens: str | int) -> Any:
            return _written_out(self.schema(value, where.at(*tokens), base=base), str(tokens[0]))

        def parts(*keywords: str) -> dict[str, Norm]:
            return {
                k: self.schema(schema[k], where.at(k), base=base) for k in keywords if k in schema
            }

        value: dict[str, Any]
        if "not" in schema:
            inner = parts("not")
            value = {"not": _written_out(inner["not"], "not")}
            yield None, Opaque("not", value, where.at("not"), inner)
        if "if" in schema and ("then" in schema or "else" in schema):
            inner = parts("if", "then", "else")
            value = {k: _written_out(sub, k) for k, sub in inner.items()}
            yield None, Opaque("if", value, where.at("if"), inner)
        if "patternProperties" in schema and not _structural(schema):
            value = {}
            for name in ("properties", "patternProperties"):
                if name in schema:
                    value[name] = {k: norm(v, name, k) for k, v in schema[name].items()}
            if "additionalProperties" in schema:
                value["additionalProperties"] = norm(
                    schema["additionalProperties"], "additionalProperties"
                )
            yield (
                frozenset({"object"}),
                Opaque("patternProperties", value, where.at("patternProperties")),
            )
        if "prefixItems" in schema:
            value = {
                "prefixItems": [
                    norm(s, "prefixItems", i)
                    for i, s in enumerate(_list(schema, "prefixItems", where))
                ]
            }
            if "items" in schema:
                value["items"] = norm(schema["items"], "items")
            yield frozenset({"array"}), Opaque("prefixItems", value, where.at("prefixItems"))
        if "contains" in schema:
            value = {"contains": norm(schema["contains"], "contains")}
            value.update({k: schema[k] for k in ("minContains", "maxContains") if k in schema})
            yield frozenset({"array"}), Opaque("contains", value, where.at("contains"))
        if "dependentSchemas" in schema:
            value = {
                "dependentSchemas": {
                    k: norm(v, "dependentSchemas", k) for k, v in schema["dependentSchemas"].items()
                }
            }
            yield (
                frozenset({"object"}),
                Opaque("dependentSchemas", value, where.at("dependentSchemas")),
            )


#: Keywords that apply subschemas to the same instance: the members (items) they
#: evaluate count as evaluated for ``unevaluatedProperties`` (``unevaluatedItems``).
_IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref",
             "dependentSchemas", "$dynamicRef", "$recursiveRef")  # fmt: skip


@dataclass
class _Evaluated:
    """What a schema evaluates for ``unevaluatedProperties``: member names, patterns,
    or every member."""

    names: set[str] = field(default_factory=set)
    patterns: set[str] = field(default_factory=set)
    every: bool = False


def _evaluated_here(
    schema: dict[str, Any], where: Where, renamed: dict[str, str]
) -> dict[str, Any]:
    """``unevaluatedProperties``/``unevaluatedItems`` spelled as the keyword it amounts
    to in a schema object that applies no subschema in place (no ``allOf``, ``$ref``,
    ``if``...): the members no ``properties``/``patternProperties`` evaluates are those
    ``additionalProperties`` would apply to, so ``unevaluatedProperties: S`` is
    ``additionalProperties: S`` — or nothing, beside an ``additionalProperties``, which
    evaluates every other member. Likewise ``unevaluatedItems`` is ``items`` (after
    ``prefixItems``), or nothing beside ``items``. Beside an in-place applicator (or
    ``contains``, for items) it depends on what those evaluate: :class:`Undecidable`."""
    out = dict(schema)
    applied = [k for k in _IN_PLACE if k in schema]
    for keyword, plain, beside in (
        ("unevaluatedProperties", "additionalProperties", ()),
        ("unevaluatedItems", "items", ("contains",)),
    ):
        if keyword not in out:
            continue
        blocking = [*applied, *(k for k in beside if k in schema)]
        if blocking:
            raise Undecidable(
                where.at(keyword),
                f"{keyword} beside {', '.join(blocking)}: which members those evaluate is"
                " not compared",
            )
        value = out.pop(keyword)
        if plain not in out:
            out[plain] = value
            renamed[plain] = keyword
    return out


def _written_out(node: Norm, keyword: str) -> Any:
    """``node`` written out to be kept inside a constraint compared whole; a recursion
    it reaches is written as a ``$ref`` that remembers its node (:class:`_Ref`): the
    ``$defs`` it needs go at the root of any schema it is written into, and two such
    constraints are compared by unfolding them (:func:`equivalent`)."""
    del keyword  # (named by the callers: where the constraint is kept)
    return _Writer().norm(node)


def _complete(root: Norm) -> None:
    """Reads every node ``root`` reaches, so that a meet that means no schema (an
    ``allOf`` leading back to itself on the same value) is :class:`Undecidable` here,
    where the document is read, not later while it is compared."""
    seen: set[int] = set()
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Norm):
            node = resolved(item)
            if node is not item:
                stack.append(node)
                continue
            stack.extend(node.branches)
        elif isinstance(item, Branch):
            for value in item.keywords.values():
                if isinstance(value, Norm):
                    stack.append(value)
                elif isinstance(value, dict):
                    stack.extend(value.values())
            for constraint in item.opaque:
                stack.extend(constraint.refs)


def true_norm(where: Where) -> Norm:
    """``true``: a free branch of every type."""
    return Norm(tuple(Branch(t, {}, where) for t in ALL_TYPES), where)


def _only_ref(schema: dict[str, Any]) -> bool:
    """A ``$ref`` with nothing beside it but annotations."""
    return all(k == "$ref" or k in _IGNORED or not _is_keyword(k) for k in schema)


def _plain_ref(node: Any, pointer: str) -> bool:
    """Whether a target is a ``$ref`` alone, whose normal form is its own target's
    (:meth:`Normalizer.schema` returns that): no ``$id`` below a document's root, which
    is refused there."""
    return (
        isinstance(node, dict)
        and isinstance(node.get("$ref"), str)
        and _only_ref(node)
        and not (pointer and ("$id" in node or "id" in node))
    )


#: Every keyword that asserts something (the rest is ignored, as validators do).
_ASSERTING = frozenset(
    _STRING | _NUMBER | _ARRAY | _OBJECT
    | {"type", "enum", "const", "$ref", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
       "prefixItems", "contains", "minContains", "maxContains", "patternProperties",
       "dependentRequired", "dependentSchemas", *inlining.CONTEXT_KEYWORDS}
)  # fmt: skip


def _is_keyword(name: str) -> bool:
    return name in _ASSERTING


def _source(name: str) -> str:
    """The keyword a normalized key stands for (``lower`` is ``minimum``)."""
    return {"lower": "minimum", "upper": "maximum"}.get(name, name)


def _list(schema: dict[str, Any], keyword: str, where: Where) -> list[Any]:
    """``schema[keyword]`` as the array it must be (absent: empty)."""
    value = schema.get(keyword, [])
    if not isinstance(value, list):
        raise Undecidable(where.at(keyword), f"{keyword} is not an array")
    return value


def _dependencies(schema: dict[str, Any], where: Where) -> frozenset[tuple[str, str]]:
    """``dependentRequired`` as (member present, member then required) pairs."""
    value = schema["dependentRequired"]
    if not isinstance(value, dict) or not all(
        isinstance(names, list) and all(isinstance(n, str) for n in names)
        for names in value.values()
    ):
        raise Undecidable(
            where.at("dependentRequired"), "dependentRequired is not an object of arrays of names"
        )
    return frozenset((member, name) for member, names in value.items() for name in names)


def _count(value: Any, where: Where) -> int:
    if isinstance(value, bool) or not _is_number(value) or value < 0 or value != int(value):
        raise Undecidable(where, "not a non-negative integer")
    return int(value)


def _is_number(value: Any) -> bool:
    """A JSON number: an int of any size (a schema file keeps them exact), a finite float."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _among(value: Any, values: Iterable[Any]) -> bool:
    key = canonical(value)
    return any(canonical(v) == key for v in values)


def _dedupe(values: Iterable[Any]) -> tuple[Any, ...]:
    seen: dict[str, Any] = {}
    for value in values:
        seen.setdefault(canonical(value), value)
    return tuple(seen.values())


def _tighter(a: tuple[float, bool], b: tuple[float, bool]) -> bool:
    """Whether lower bound ``a`` admits less than ``b``."""
    return a[0] > b[0] or (a[0] == b[0] and a[1] and not b[1])


def _tighter_upper(a: tuple[float, bool], b: tuple[float, bool]) -> bool:
    return a[0] < b[0] or (a[0] == b[0] and a[1] and not b[1])


def _overlap(a: str, b: str) -> bool:
    return a == b or {a, b} == {"number", "integer"}


#: The most branches a union of members is spelled out in (a ``conjoin`` of two
#: unions multiplies them); a larger one is compared whole.
UNION_LIMIT = 64


def _as_union(keyword: str, members: list[Norm]) -> bool:
    """Whether an ``anyOf``/``oneOf`` is the union of its members' branches: always for
    ``anyOf`` (a value matches some member), for ``oneOf`` only when no value can match
    two members (:func:`.unions.exclusive`: a union of types, of objects told apart by
    a discriminator or a member one requires and another forbids, of disjoint enums or
    ranges...)."""
    if sum(len(m.branches) for m in members) > UNION_LIMIT:
        return False
    if _disjoint(members) or keyword == "anyOf":
        return True
    return unions.exclusive(members)


def _disjoint(members: list[Norm]) -> bool:
    """Whether no value can match two of ``members`` (each admits other types)."""
    seen: list[str] = []
    for member in members:
        types = {b.type for b in member.branches}
        if any(_overlap(t, s) for t in types for s in seen):
            return False
        seen.extend(types)
    return True


# --------------------------------------------------------------------------- conjunction


def conjoin(a: Norm, b: Norm) -> Norm:
    """What both ``a`` and ``b`` accept (``allOf``), in normal form: a :class:`_Meet`
    when either is a recursion (or a union holding one), made once per set of parts."""
    if not (_deferred(a) or _deferred(b)):
        return _meet(a, b)
    for one, other in ((a, b), (b, a)):
        if not _deferred(other) and is_true(other):
            return one
    atoms = _joined_atoms(a, b)
    key = frozenset(_identity(n) for n in atoms)
    found = _MEETS.get(key)
    if found is None:
        found = _MEETS[key] = _Meet(a.where, atoms)
    return found


def _meet(a: Norm, b: Norm) -> Norm:
    """``conjoin`` of two nodes whose branches can be read now."""
    branches: list[Branch] = []
    for x in a.branches:
        for y in b.branches:
            if not _overlap(x.type, y.type):
                continue
            merged = _conjoin_branches(x, y, "integer" if x.type != y.type else x.type)
            if merged is not None:
                branches.append(merged)
    root = a.root if is_true(b) else b.root if is_true(a) else None
    out = Norm(tuple(branches), a.where if a.branches or not b.branches else b.where, root)
    # Remembered: should it meet a recursion, the meet is of these parts (a finite set),
    # not of this node, made anew each time.
    object.__setattr__(out, "_parts", _joined_atoms(a, b))
    return out


def _joined_atoms(a: Norm, b: Norm) -> tuple[Norm, ...]:
    """The parts of ``a`` and ``b`` together, each once (by identity) and without those
    that accept every value: an ``allOf`` of one ``$ref`` twice, nested level under
    level, stays one part per distinct schema rather than doubling at every level."""
    atoms: dict[int, Norm] = {}
    for node in (*_atoms(a), *_atoms(b)):
        if _deferred(node) or not is_true(node):
            atoms.setdefault(_identity(node), node)
    return tuple(atoms.values()) or (a,)


def _conjoin_branches(x: Branch, y: Branch, type_: str) -> Branch | None:
    if ("patternProperties" in x.keywords or "patternProperties" in y.keywords) and not (
        _mergeable(x, y)
    ):
        # Not one object schema: the patterned side's members kept whole, as a constraint.
        x, y = (
            (_members_whole(x), y) if "patternProperties" in x.keywords else (x, _members_whole(y))
        )
        return _conjoin_branches(x, y, type_)
    kw: dict[str, Any] = {}
    for name in (*x.keywords, *(k for k in y.keywords if k not in x.keywords)):
        if name in x.keywords and name in y.keywords:
            value = _merge(name, x, y)
        else:
            value = (x if name in x.keywords else y).keywords[name]
        kw[name] = value
    if "enum" in kw:
        kept = tuple(v for v in kw["enum"] if type_ in value_types(v))
        if not kept:
            return None  # no value of this type is allowed: the branch accepts nothing
        kw["enum"] = kept
    if "patternProperties" in x.keywords or "patternProperties" in y.keywords:
        _merge_patterned(kw, x, y)
    elif (
        "properties" in x.keywords
        or "properties" in y.keywords
        or ("additionalProperties" in x.keywords and "additionalProperties" in y.keywords)
    ):
        _merge_properties(kw, x, y)
    places = {**y.places, **x.places}
    opaque = x.opaque + tuple(o for o in y.opaque if o.key not in {p.key for p in x.opaque})
    where = x.where if len(x.places) >= len(y.places) else y.where
    return Branch(type_, kw, where, places, opaque)


def _merge(name: str, x: Branch, y: Branch) -> Any:
    a, b = x.keywords[name], y.keywords[name]
    if name == "enum":
        listed = {canonical(v) for v in b}
        return tuple(v for v in a if canonical(v) in listed)
    if name.startswith("min"):
        return max(a, b)
    if name.startswith("max"):
        return min(a, b)
    if name == "lower":
        return a if _tighter(a, b) else b
    if name == "upper":
        return a if _tighter_upper(a, b) else b
    if name in ("pattern", "format", "multipleOf", "required", "dependentRequired"):
        return a | b
    if name == "uniqueItems":
        return True
    if name in ("items", "propertyNames", "additionalProperties"):
        return conjoin(a, b)
    if name in ("properties", "patternProperties"):
        return a  # merged with additionalProperties in _merge_properties, _merge_patterned
    raise AssertionError(name)


def _merge_properties(kw: dict[str, Any], x: Branch, y: Branch) -> None:
    """``properties`` of a conjunction: a key is what each side says of it (its own
    property schema, else its ``additionalProperties``), and so are other keys."""
    px: Mapping[str, Norm] = x.keywords.get("properties", {})
    py: Mapping[str, Norm] = y.keywords.get("properties", {})
    ax: Norm | None = x.keywords.get("additionalProperties")
    ay: Norm | None = y.keywords.get("additionalProperties")
    merged: dict[str, Norm] = {}
    for name in (*px, *(k for k in py if k not in px)):
        left, right = px.get(name, ax), py.get(name, ay)
        parts = [p for p in (left, right) if p is not None]
        merged[name] = parts[0] if len(parts) == 1 else conjoin(parts[0], parts[1])
    if merged:
        kw["properties"] = merged
    if ax is not None and ay is not None:
        kw["additionalProperties"] = conjoin(ax, ay)


def _with_opaque(
    node: Norm, opaque: list[tuple[frozenset[str] | None, Opaque]], where: Where
) -> Norm:
    if _deferred(node):  # a meet not read yet: the constraints are one more part of it
        kept = [
            Branch(t, {}, where, {}, tuple(o for types, o in opaque if types is None or t in types))
            for t in ALL_TYPES
        ]
        return conjoin(node, Norm(tuple(kept), where))
    branches = []
    for branch in node.branches:
        extra = tuple(
            o
            for types, o in opaque
            if (types is None or branch.type in types)
            and o.key not in {p.key for p in branch.opaque}
        )
        branches.append(
            Branch(branch.type, branch.keywords, branch.where, branch.places, branch.opaque + extra)
        )
    return Norm(tuple(branches), node.where, node.root)


# --------------------------------------------------------------------------- patternProperties


def _structural(schema: dict[str, Any]) -> bool:
    """Whether a ``patternProperties`` is compared member by member: an object of
    schemas whose every regex Python reads (:func:`.patterns.compiles`); otherwise it is
    kept whole with the ``properties`` and ``additionalProperties`` beside it."""
    value = schema["patternProperties"]
    return isinstance(value, dict) and all(
        compiles(regex) and isinstance(sub, (dict, bool)) for regex, sub in value.items()
    )


class Unmatched(Exception):
    """Whether a ``patternProperties`` regex matches a member name cannot be told
    (:func:`.patterns.matches` is None): what depends on it is not decided."""

    def __init__(self, regex: str, name: str) -> None:
        self.regex = regex
        self.name = name
        super().__init__(f"whether pattern {regex!r} matches member {name!r} is not told")


def _free(node: Norm | None) -> bool:
    """``node`` is absent or accepts everything (a pending recursion is not read)."""
    return node is None or (not _pending(node) and is_true(node))


def _matched(branch: Branch, name: str) -> list[str]:
    """The regexes of ``branch``'s ``patternProperties`` that match ``name``; a match that
    cannot be told is :class:`Unmatched`."""
    found = []
    for regex in branch.keywords.get("patternProperties", {}):
        hit = matches(regex, name)
        if hit is None:
            raise Unmatched(regex, name)
        if hit:
            found.append(regex)
    return found


def member_parts(branch: Branch, name: str) -> list[Norm]:
    """The schemas a member ``name`` must meet in an object ``branch``: its
    ``properties`` entry and every ``patternProperties`` schema whose regex matches it;
    with neither, ``additionalProperties`` (none: any value). :class:`Unmatched` where a
    match cannot be told."""
    kw = branch.keywords
    properties: Mapping[str, Norm] = kw.get("properties", {})
    patterns: Mapping[str, Norm] = kw.get("patternProperties", {})
    parts = [properties[name]] if name in properties else []
    parts += [patterns[regex] for regex in _matched(branch, name)]
    if not parts and "additionalProperties" in kw:
        parts.append(kw["additionalProperties"])
    return parts


#: Members' conjoined schemas, per branch and name (the same node each time: a walk
#: through a recursive schema meets it again, and tells it by its identity).
_MEMBERS: weakref.WeakKeyDictionary[Branch, dict[str, Norm | None]] = weakref.WeakKeyDictionary()


def member_schema(branch: Branch, name: str) -> Norm | None:
    """The one schema a member ``name`` must meet in ``branch`` (:func:`member_parts`
    conjoined; None: any value). Several parts conjoined make a node marked
    ``recursive`` so that a walk meeting it again below itself assumes it
    (co-induction; what the parts hold is walked in full at the first meeting)."""
    known = _MEMBERS.setdefault(branch, {})
    if name in known:
        return known[name]
    parts = member_parts(branch, name)
    node: Norm | None = parts[0] if len(parts) == 1 else None
    if len(parts) > 1:
        node = parts[0]
        for part in parts[1:]:
            node = conjoin(node, part)
        node = Norm(node.branches, node.where, recursive=True)
    known[name] = node
    return node


def _mergeable(x: Branch, y: Branch) -> bool:
    """Whether the members of two object branches, one with ``patternProperties`` at
    least, conjoin into one object schema (:func:`_merge_patterned`): a regex only one
    side has would otherwise lift the other's ``additionalProperties`` from the names it
    matches, so that other side must have none (or a free one); and each declared name
    a side has no entry for must be told to match its patterns or not."""
    px: Mapping[str, Norm] = x.keywords.get("patternProperties", {})
    py: Mapping[str, Norm] = y.keywords.get("patternProperties", {})
    if set(px) - set(py) and not _free(y.keywords.get("additionalProperties")):
        return False
    if set(py) - set(px) and not _free(x.keywords.get("additionalProperties")):
        return False
    names = {*x.keywords.get("properties", {}), *y.keywords.get("properties", {})}
    try:
        for name in names:
            _matched(x, name)
            _matched(y, name)
    except Unmatched:
        return False
    return True


def _fallback(branch: Branch, name: str) -> Norm | None:
    """What ``branch`` asks of member ``name`` beyond its patterns (which the merged
    schema applies itself): its ``properties`` entry, else ``additionalProperties`` when
    no pattern matches."""
    properties: Mapping[str, Norm] = branch.keywords.get("properties", {})
    if name in properties:
        return properties[name]
    if _matched(branch, name):
        return None
    others: Norm | None = branch.keywords.get("additionalProperties")
    return others


def _merge_patterned(kw: dict[str, Any], x: Branch, y: Branch) -> None:
    """``properties``, ``patternProperties`` and ``additionalProperties`` of a conjunction
    :func:`_mergeable` allows: each pattern of either side (of both: conjoined), each
    declared name what each side asks of it beyond the patterns, and the rest both
    sides' ``additionalProperties``."""
    px: Mapping[str, Norm] = x.keywords.get("patternProperties", {})
    py: Mapping[str, Norm] = y.keywords.get("patternProperties", {})
    patterns = {r: conjoin(px[r], py[r]) if r in py else px[r] for r in px}
    patterns.update((r, sub) for r, sub in py.items() if r not in px)
    kw["patternProperties"] = patterns
    merged: dict[str, Norm] = {}
    names = {*x.keywords.get("properties", {}), *y.keywords.get("properties", {})}
    for name in sorted(names):
        parts = [p for p in (_fallback(x, name), _fallback(y, name)) if p is not None]
        if not parts:
            parts = [true_norm(x.where)]  # the patterns say it all; still a declared name
        merged[name] = parts[0] if len(parts) == 1 else conjoin(parts[0], parts[1])
    kw.pop("properties", None)
    if merged:
        kw["properties"] = merged
    ax: Norm | None = x.keywords.get("additionalProperties")
    ay: Norm | None = y.keywords.get("additionalProperties")
    kw.pop("additionalProperties", None)
    if ax is not None or ay is not None:
        kw["additionalProperties"] = ax if ay is None else ay if ax is None else conjoin(ax, ay)


def _members_whole(branch: Branch) -> Branch:
    """``branch`` with its ``properties``, ``patternProperties`` and
    ``additionalProperties`` kept whole, as one opaque constraint (what a conjunction
    that cannot merge them keeps)."""
    names = ("properties", "patternProperties", "additionalProperties")
    kw = branch.keywords
    value: dict[str, Any] = {}
    for name in names[:2]:
        if name in kw:
            value[name] = {k: _written_out(sub, name) for k, sub in kw[name].items()}
    if "additionalProperties" in kw:
        value["additionalProperties"] = _written_out(kw["additionalProperties"], names[2])
    kept = Opaque("patternProperties", value, branch.place("patternProperties"))
    return Branch(
        branch.type,
        {k: v for k, v in kw.items() if k not in names},
        branch.where,
        {k: w for k, w in branch.places.items() if k not in names},
        (*branch.opaque, kept),
    )
