"""The one ``$ref`` inliner: a schema with every ``$ref`` replaced by what it points to.

Two engines want a schema without references: the reference engine
(:func:`kernelindex_sdk.bundled.inlined_schema`; python-jsonschema walks such a schema
2–3× faster than one whose references it resolves as it goes) and the fast engine
(:mod:`kernelindex_sdk.fastengine`, which compiles the flat schema with jsonschema-rs).
Both ask :func:`inline`, so what is inlined, and what is declined, is written once.

**What it makes.** A ``$ref`` with nothing beside it (but ``$defs``, ``$schema``, the
root's ``$id`` and the caller's ``dropped`` keywords) is its target. A boolean target
stands as ``{"allOf": [target]}``: python-jsonschema loses the instance path of a
boolean schema in a subschema's place, not under an applicator. A ``$ref`` beside
other keywords becomes ``"allOf": [target]``, so both apply (see ``ref_beside``).
``$defs`` are dropped (nothing refers to them any more), and so is the ``$id`` of a
document and the ``$schema`` of every document but the root (the result is no longer
that file). Each target is inlined once and then shared, not copied, wherever it is
referenced again; so is data (``enum``, ``const``, annotations).

**What it declines** (:class:`Declined`, whose message says which), wherever in the
schema or the schemas it reaches:

* a recursive ``$ref`` (one that leads back into a schema it is inside): no finite
  inlining exists;
* ``$anchor``, ``$dynamicAnchor``, ``$dynamicRef``, ``$recursiveAnchor`` and
  ``$recursiveRef`` (:data:`DECLINED_KEYWORDS`): their targets depend on where they are
  evaluated from, or on names rather than JSON pointers;
* ``unevaluatedProperties`` and ``unevaluatedItems``: their verdicts read the
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
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Literal
from urllib.parse import unquote, urldefrag, urljoin

from kernelindex_sdk.pointers import pointed_at
from kernelindex_sdk.registry import SchemaRegistry
from kernelindex_sdk.wire import DRAFT_2020_12

__all__ = [
    "DECLINED_KEYWORDS", "SCHEMAS", "SCHEMA_LISTS", "SCHEMA_MAPS", "Declined", "documents_of",
    "inline", "resolved", "subschemas",
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

#: Keywords that name or reach a schema by something other than a JSON pointer, or
#: whose verdicts read the annotations of the schemas beside them: never inlined.
DECLINED_KEYWORDS = frozenset(
    {
        "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveAnchor", "$recursiveRef",
        "unevaluatedProperties", "unevaluatedItems",
    }
)  # fmt: skip

#: What :func:`subschemas` returns for a keyword whose value holds no subschema.
DATA: Any = object()


class Declined(ValueError):
    """The schema cannot be inlined exactly (the message says why); callers keep
    resolving references instead."""


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


@functools.lru_cache(maxsize=1024)
def resolved(base: str, ref: str) -> tuple[str, str]:
    """``ref`` against ``base``, split into document and fragment: the same few pairs
    recur in every schema that is inlined (``urljoin`` is slow)."""
    document, fragment = urldefrag(urljoin(base, ref))
    return document, fragment


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
        self._inlined: dict[str, Any] = {}

    def run(self, root_id: str) -> Any:
        self._root = self._documents[root_id]
        return self._schema(self._root, root_id, (f"{root_id}#",), whole=True)

    def _target(self, ref: str, document: str, fragment: str) -> Any:
        """What ``ref`` (``document`` and ``fragment``, resolved) points at."""
        if document not in self._documents:
            raise Declined(f"$ref {ref!r}: {document} is not among the schemas given")
        node: Any = self._documents[document]
        if fragment:
            if not fragment.startswith("/"):
                raise Declined(f"$ref {ref!r}: only JSON-pointer fragments are inlined")
            # Percent-decoded whole, then split: as ``referencing`` (the resolving
            # engine) reads a fragment, so both reach the same schema.
            try:
                node = pointed_at(node, unquote(fragment))
            except LookupError:
                raise Declined(f"$ref {ref!r} points at nothing") from None
        return node

    def _schema(self, node: Any, base: str, seen: tuple[str, ...], whole: bool = False) -> Any:
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
                out[key] = value if found is DATA else found
            else:
                out[key] = value  # data shared, not copied
        if ref is not None and not self._in_place:
            out["allOf"] = [*out.get("allOf", []), self._inlined_target(ref, base, seen)]
        return out

    def _inlined_target(self, ref: str, base: str, seen: tuple[str, ...]) -> Any:
        document, fragment = resolved(base, ref)
        key = f"{document}#{fragment}"
        if key in seen:
            raise Declined(f"recursive $ref {ref!r}: not inlined")
        inlined = self._inlined.get(key)
        if inlined is None:
            target = self._target(ref, document, fragment)
            whole = target is self._documents[document]
            inlined = self._inlined[key] = self._schema(target, document, (*seen, key), whole)
        return inlined


#: Keywords that may hold subschemas (the rest hold data).
_HOLDING = SCHEMA_MAPS | SCHEMA_LISTS | SCHEMAS
#: What may stand beside a ``$ref`` that is still its target alone.
_BESIDE_ALONE = frozenset({"$ref", "$defs", "$schema"})
