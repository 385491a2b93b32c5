"""The one ``$ref`` resolver, and the one inliner: every ``$ref`` replaced by its target.

Two engines want a schema without references: the reference engine
(:func:`kernelindex_sdk.schema.bundled.inlined_schema`; python-jsonschema walks such a schema
much faster than one whose references it resolves as it goes) and the fast engine
(:mod:`kernelindex_sdk.validating.fastengine`, which compiles the flat schema with jsonschema-rs).
Both ask :func:`inline`, so what is inlined, and what is declined, is written once.

**What it makes.** A ``$ref`` with nothing beside it (but ``$defs``, ``$schema``, the
root's ``$id`` and the caller's ``dropped`` keywords) is its target. A boolean target
stands as ``{"allOf": [target]}``: python-jsonschema loses the instance path of a
boolean schema in a subschema's place, not under an applicator. A ``$ref`` beside
other keywords becomes ``"allOf": [target]``, so both apply (see ``ref_beside``).
``$defs`` are dropped (nothing refers to them any more), and so is the ``$id`` of a
document and the ``$schema`` of every document but the root (the result is no longer
that file). Each target is inlined once and then shared, not copied, wherever it is
referenced again; so is data (``enum``, ``const``, annotations). An ``allOf`` or
``anyOf`` that refers to one target twice holds it once (the same verdicts, in time
linear, not exponential, in a diamond of such references).

**What it declines** (:class:`Declined`, whose message says which), wherever in the
schema or the schemas it reaches:

* a recursive ``$ref`` (one that leads back into a schema it is inside): no finite
  inlining exists;
* ``$anchor``, ``$dynamicAnchor``, ``$recursiveAnchor`` (:data:`NAMING_KEYWORDS`),
  ``$dynamicRef`` and ``$recursiveRef``: their targets depend on where they are
  evaluated from, or on names rather than JSON pointers;
* ``unevaluatedProperties`` and ``unevaluatedItems`` (with the two above,
  :data:`CONTEXT_KEYWORDS`): their verdicts read the
  annotations of the schemas beside them, and python-jsonschema counts what a ``$ref``
  evaluates even where the target fails, what an ``allOf`` evaluates only where it
  passes — no rewrite of a ``$ref`` is exact there;
* a document in another dialect than Draft 2020-12 (its ``$schema``);
* an ``$id`` below a document's root (an embedded resource);
* a ``$ref`` that is not a string, whose fragment is not a JSON pointer, whose document
  is not among those given (nothing is ever fetched), or that points at nothing;
* a value that is neither an object nor a boolean where a keyword holds one schema
  (a keyword that holds a map or a list of schemas but does not is taken as data);
* with ``ref_beside="in_place"`` (the default), a ``$ref`` beside ``allOf``: its
  ``allOf`` would have to take the target as a member, which moves the error paths of
  the members.

**Where a caller needs another rule**, it says so: ``dropped`` (keywords left out of
the result — the fast engine drops annotations, which assert nothing), ``visit`` (called
with every schema object before it is inlined; it may raise to decline more — the fast
engine refuses keywords jsonschema-rs might read differently — or collect what it
sees), and ``ref_beside`` (``"appended"``: the target joins an ``allOf`` beside it as its
last member, and a ``$ref`` beside other keywords adds ``allOf`` last; the verdicts are
the same, not the order of errors, which the fast engine never reports).

**Resolving a** ``$ref``, for the inliner and for the schema diff's normal form
(:mod:`kernelindex_sdk.schemadiff.normal`, which reads these rules from here):
:func:`resolved` joins it to its document's URI (RFC 3986); :attr:`Reference.key`
names its target by document and percent-decoded JSON pointer (two spellings of one
place are one target, so a recursion is met either way); :func:`target` finds it
among the documents given — nothing is ever fetched, a fragment must be a JSON pointer
(:class:`NotAPointer`), anything else unfound is :class:`Unresolvable`.

Why the diff's other rules are not parameters of :func:`inline`: it builds a normal
form, not an inlined schema. A recursive ``$ref`` is compared by co-induction (a
normal form may be a cyclic graph; an engine needs a finite schema); a ``$ref`` into
a document not given (:class:`Unresolvable` for its document) is an external schema,
known by its URI and compared by it (an engine needs its content); another dialect
is rewritten into Draft 2020-12 (:mod:`kernelindex_sdk.schemadiff.upgrade`, any
spelling of its ``$schema``), where the engines, which validate the result as Draft
2020-12, decline any ``$schema`` but that URI as written; :data:`NAMING_KEYWORDS` are
ignored (a ``$ref`` by such a name is refused anyway), ``unevaluated*`` is rewritten
where its own schema object decides it; and what it cannot compare it reports,
located, in its own words ("undecided"), not as :class:`Declined`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple

from kernelindex_sdk.base.pointers import pointed_at
from kernelindex_sdk.base.recordformat import DRAFT_2020_12
from kernelindex_sdk.schema.registry import SchemaRegistry

__all__ = [
    "CONTEXT_KEYWORDS", "DECLINED_KEYWORDS", "NAMING_KEYWORDS", "SCHEMAS", "SCHEMA_LISTS",
    "SCHEMA_MAPS", "Declined", "NotAPointer", "Reference", "Unresolvable", "documents_of",
    "inline", "resolved", "subschemas", "target",
]  # fmt: skip

# Draft 2020-12 keywords whose values hold subschemas. Anything else (const, enum,
# default, examples, unknown keywords) is data: a "$ref" inside it is left alone.
#: name → schema maps.
SCHEMA_MAPS = frozenset(
    {"$defs", "definitions", "properties", "patternProperties", "dependentSchemas"}
)
#: lists of schemas ("items" as a list is the pre-2020 tuple form).
SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
#: one schema each.
SCHEMAS = frozenset(
    {
        "not", "if", "then", "else", "items", "additionalItems", "contains",
        "additionalProperties", "propertyNames", "unevaluatedItems",
        "unevaluatedProperties", "contentSchema",
    }
)  # fmt: skip

#: Keywords that name a schema by something other than a JSON pointer.
NAMING_KEYWORDS = ("$anchor", "$dynamicAnchor", "$recursiveAnchor")
#: Keywords whose meaning depends on more than the schema object they sit in: where
#: evaluation began (``$dynamicRef``, ``$recursiveRef``), or what the schemas beside
#: them evaluate (``unevaluated*``).
CONTEXT_KEYWORDS = ("unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef")
#: Never inlined: both of the above.
DECLINED_KEYWORDS = frozenset(NAMING_KEYWORDS + CONTEXT_KEYWORDS)

#: What :func:`subschemas` returns for a keyword whose value holds no subschema.
DATA: Any = object()


class Declined(ValueError):
    """The schema cannot be inlined exactly (the message says why); callers keep
    resolving references instead."""


class Unresolvable(Declined):
    """A ``$ref`` into a document not among those given, or to nothing in one."""


class NotAPointer(Declined):
    """A ``$ref`` whose fragment is not a JSON pointer (an ``$anchor``'s name, say)."""


def subschemas(key: str, value: Any, visit: Callable[[Any], Any]) -> Any:
    """The value of keyword ``key`` with each subschema it holds replaced by
    ``visit(subschema)``: a map of them, a list, or one. :data:`DATA` when the keyword
    holds none (data, annotations, unknown keywords), which each walker copies its way."""
    if key in SCHEMA_MAPS and isinstance(value, Mapping):
        return {name: visit(sub) for name, sub in value.items()}
    if key in SCHEMA_LISTS and isinstance(value, list):
        return [visit(sub) for sub in value]
    if key in SCHEMAS:
        return visit(value)
    return DATA


class Reference(NamedTuple):
    """A ``$ref`` resolved against the URI of the document it is written in."""

    #: The URI it names (what messages quote).
    uri: str
    #: That URI without its fragment: the ``$id`` of the document it points into.
    document: str
    #: The fragment, as written (percent-encoded).
    fragment: str
    #: Its target: the document and the fragment percent-decoded whole (to be split
    #: as a JSON pointer), as ``referencing`` (the resolving engine) reads a
    #: fragment, so both reach the same schema.
    key: tuple[str, str]


@functools.lru_cache(maxsize=1024)
def resolved(base: str, ref: str) -> Reference:
    """``ref`` joined to ``base`` (RFC 3986), split into document and fragment: the
    same few pairs recur in every schema that is read (``urljoin`` is slow).

    The shapes every shipped schema uses are joined by :func:`_joined_simply`, as
    ``urljoin`` and ``urldefrag`` join them, without importing :mod:`urllib.parse`
    (a large share of ``kernelindex validate one.json``'s start-up); tests/test_inlining.py
    holds it to them."""
    simple = _joined_simply(base, ref)
    if simple is not None:
        uri, document, fragment = simple
        return Reference(uri, document, fragment, (document, fragment))
    from urllib.parse import unquote, urldefrag, urljoin

    uri = urljoin(base, ref)
    document, fragment = urldefrag(uri)
    return Reference(uri, document, fragment, (document, unquote(fragment)))


#: Characters of a base URI :func:`_joined_simply` takes (no ``%``, ``?``, ``;``, ``@``,
#: ``[``, whitespace: each means something to urllib's parser).
_URI_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/:")
#: Characters of a relative reference's one path segment (no ``:``: a scheme's mark).
_SEGMENT_CHARS = _URI_CHARS - {"/", ":"}
#: What urllib removes from a URI (or, at its start, strips) before parsing it.
_REMOVED = ("\t", "\r", "\n", "%")


def _joined_simply(base: str, ref: str) -> tuple[str, str, str] | None:
    """``(uri, document, fragment)`` of ``ref`` joined to ``base`` as ``urljoin`` and
    ``urldefrag`` give them, with the fragment needing no percent-decoding — for an
    ``http(s)://host/path`` base (any fragment) and a ``#fragment``, ``name``, or
    ``name#fragment`` reference; None for anything else, which urllib then joins."""
    document = base.partition("#")[0]
    if not document.startswith(("https://", "http://")) or not _URI_CHARS.issuperset(document):
        return None
    path = document[document.index("//") + 2 :]
    slash = path.find("/")
    if slash <= 0 or ":" in path or "//" in path:
        return None
    path = path[slash:] + "/"
    if "/./" in path or "/../" in path:
        return None
    segment, mark, fragment = ref.partition("#")
    if any(c in fragment for c in _REMOVED):
        return None
    if segment:
        if segment in (".", "..") or not _SEGMENT_CHARS.issuperset(segment):
            return None
        document = document[: document.rindex("/") + 1] + segment
    elif not mark:
        return None  # an empty reference: urljoin gives the base, fragment and all
    return (f"{document}#{fragment}" if fragment else document), document, fragment


def target(documents: Mapping[str, Any], reference: Reference, ref: str) -> Any:
    """What ``reference`` (the ``$ref`` ``ref``, resolved) points at among
    ``documents`` (by URI without fragment). Raises, in this order,
    :class:`Unresolvable` for a document not given, :class:`NotAPointer` for a
    fragment that is no JSON pointer, :class:`Unresolvable` for one that reaches nothing."""
    document, fragment = reference.document, reference.fragment
    if document not in documents:
        raise Unresolvable(f"$ref {ref!r}: {document} is not among the schemas given")
    node: Any = documents[document]
    if fragment:
        if not fragment.startswith("/"):
            raise NotAPointer(f"$ref {ref!r}: only JSON-pointer fragments are inlined")
        try:
            node = pointed_at(node, reference.key[1])
        except LookupError:
            raise Unresolvable(f"$ref {ref!r} points at nothing") from None
    return node


def documents_of(registry: SchemaRegistry) -> dict[str, Any]:
    """Every schema document of ``registry`` (its kinds' and the support schemas they
    reference) by ``$id``: what a ``$ref`` may point into."""
    return {entry.id: entry.contents for entry in registry.all_entries}


def inline(
    documents: Mapping[str, Any],
    root_id: str,
    *,
    dropped: frozenset[str] = frozenset(),
    visit: Callable[[dict[str, Any]], None] | None = None,
    ref_beside: Literal["in_place", "appended"] = "in_place",
) -> Any:
    """The schema ``documents[root_id]`` with every ``$ref`` inlined (see the module
    docstring for what it makes and what it declines with :class:`Declined`).

    ``documents``: every schema a ``$ref`` may point into, by ``$id`` (its URI without
    fragment). Nothing else is consulted.
    """
    if root_id not in documents:
        raise Declined(f"unknown schema {root_id}")
    return _Inliner(documents, dropped, visit, ref_beside).run(root_id)


class _Inliner:
    def __init__(
        self,
        documents: Mapping[str, Any],
        dropped: frozenset[str],
        visit: Callable[[dict[str, Any]], None] | None,
        ref_beside: Literal["in_place", "appended"],
    ) -> None:
        self._documents = documents
        self._dropped = dropped
        self._dropped_at_root = dropped | {"$id"}
        self._dropped_in_document = dropped | {"$id", "$schema"}
        self._visit = visit
        self._in_place = ref_beside == "in_place"
        self._root: Any = None
        #: Each ``$ref`` target inlined once, then shared wherever it is referenced
        #: again (schemas reuse a few definitions many times). Sound although the
        #: recursion check depends on the path: a target that inlined without error
        #: reaches no schema on a cycle through itself, so no path can make it fail.
        self._inlined: dict[tuple[str, str], Any] = {}

    def run(self, root_id: str) -> Any:
        self._root = self._documents[root_id]
        return self._schema(self._root, root_id, ((root_id, ""),), whole=True)

    def _schema(
        self, node: Any, base: str, seen: tuple[tuple[str, str], ...], whole: bool = False
    ) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            raise Declined(f"not a schema: {node!r:.40}")
        if self._visit is not None:
            self._visit(node)
        if not DECLINED_KEYWORDS.isdisjoint(node):
            raise Declined(f"{sorted(DECLINED_KEYWORDS & set(node))}: not inlined")
        if "$id" in node and not whole:
            raise Declined(f"embedded $id {node['$id']!r}: not inlined")
        if node.get("$schema", DRAFT_2020_12) != DRAFT_2020_12:
            raise Declined(f"$schema {node['$schema']!r}: not inlined")
        ref = node.get("$ref")
        if ref is not None and not isinstance(ref, str):
            raise Declined("$ref is not a string: not inlined")
        # Left out of the result: $defs everywhere, a document's $id, and the $schema
        # of a document inlined into another.
        skip = self._dropped
        if whole:
            skip = self._dropped_at_root if node is self._root else self._dropped_in_document
        if ref is not None and _BESIDE_ALONE.union(skip).issuperset(node):
            target = self._inlined_target(ref, base, seen)
            return target if isinstance(target, Mapping) else {"allOf": [target]}
        out: dict[str, Any] = {}
        walk = None
        for key, value in node.items():
            if key == "$ref":
                if self._in_place:
                    if "allOf" in node:
                        raise Declined("$ref beside allOf: not inlined")
                    out["allOf"] = [self._inlined_target(value, base, seen)]
            elif key == "$defs" or key in skip:
                continue
            elif key in _HOLDING:
                walk = walk or functools.partial(self._schema, base=base, seen=seen)
                found = subschemas(key, value, walk)
                out[key] = value if found is DATA else _once(key, found)
            else:
                out[key] = value  # data shared, not copied
        if ref is not None and not self._in_place:
            out["allOf"] = [*out.get("allOf", []), self._inlined_target(ref, base, seen)]
        return out

    def _inlined_target(self, ref: str, base: str, seen: tuple[tuple[str, str], ...]) -> Any:
        reference = resolved(base, ref)
        key = reference.key
        if key in seen:
            raise Declined(f"recursive $ref {ref!r}: not inlined")
        inlined = self._inlined.get(key)
        if inlined is None:
            node = target(self._documents, reference, ref)
            whole = not key[1]  # the document itself
            inlined = self._inlined[key] = self._schema(node, key[0], (*seen, key), whole)
        return inlined


def _once(key: str, found: Any) -> Any:
    """An ``allOf``/``anyOf`` with each inlined target once: two ``$ref``\\ s to one
    target inline to one shared object, and a validator checks each member, so a chain
    of ``allOf: [{"$ref": A}, {"$ref": A}]`` nested level under level would be judged in
    time exponential in its depth. The same member twice adds nothing to either (it
    would to a ``oneOf``: that keeps every member)."""
    if key not in ("allOf", "anyOf") or not isinstance(found, list) or len(found) < 2:
        return found
    kept = list({id(member): member for member in found}.values())
    return kept if len(kept) < len(found) else found


#: Keywords that may hold subschemas (the rest hold data).
_HOLDING = SCHEMA_MAPS | SCHEMA_LISTS | SCHEMAS
#: What may stand beside a ``$ref`` that is still its target alone.
_BESIDE_ALONE = frozenset({"$ref", "$defs", "$schema"})
