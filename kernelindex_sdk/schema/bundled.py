"""Self-contained schemas: one kind's schema with every schema it references inlined.

The packaged schemas reach each other by ``$id`` (``"$ref": "common.schema.json#/$defs/name"``),
which needs a resolver that knows every file. Some tools have none:
hypothesis-jsonschema refuses to resolve a ``$ref`` to another document, and
validators that only take one file cannot follow it either. :func:`bundled_schema`
returns a schema that needs no other document::

    {
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "title": "BenchmarkRun", ...,
      "$defs": {
        "spec": {...},                          # the kind's own definitions, unchanged
        "common.schema.json": {...},            # each referenced file, inlined whole
      }
    }

Every ``$ref`` is rewritten to a local pointer: ``common.schema.json#/$defs/name``
becomes ``#/$defs/common.schema.json/$defs/name``, and a ``#/$defs/spec`` inside an
inlined file becomes ``#/$defs/<file>/$defs/spec``. An instance is valid against the
bundled schema exactly when it is valid against the original one.

Limits (none of which the kernelindex schemas use): ``$ref`` fragments must be JSON
pointers (no ``$anchor`` names), ``$dynamicRef`` is not followed, ``$id`` may appear
only at the root of a schema file, and every file is taken to be in the root's dialect
(an inlined file's ``$schema`` is dropped).

:func:`inlined_schema` goes one step further, for the reference validator: no ``$ref``
at all, each replaced by what it points to, so python-jsonschema walks the schema
without resolving a reference (URI joins and registry look-ups would otherwise be
most of the time it takes to explain an invalid record). Where that cannot be exact
it returns None and the caller keeps resolving. It is
:func:`kernelindex_sdk.schema.inlining.inline` with no parameter: what is inlined and
what declined is written there, once, for this and the fast engine.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urldefrag

from kernelindex_sdk.base.pointers import escape_token
from kernelindex_sdk.base.recordformat import DRAFT_2020_12
from kernelindex_sdk.errors import UnresolvableReference
from kernelindex_sdk.schema.inlining import (
    DATA,
    Declined,
    documents_of,
    inline,
    resolved,
    subschemas,
)
from kernelindex_sdk.schema.registry import SchemaRegistry, default_registry

__all__ = ["bundled_schema", "inlined_schema"]


def bundled_schema(
    kind: str, api_version: str | None = None, *, registry: SchemaRegistry | None = None
) -> dict[str, Any]:
    """A self-contained JSON Schema for ``kind`` (``"Bundle"`` included).

    ``kind`` is matched case-insensitively and ``api_version`` (``"v1alpha1"`` or
    ``"kernelindex.dev/v1alpha1"``) defaults to the newest version that has the kind,
    as :meth:`SchemaRegistry.find` does. ``registry`` defaults to
    :func:`~kernelindex_sdk.schema.registry.default_registry`.

    The result is a new ``dict`` on every call (callers may change it). It has no
    ``$id``: it is a different document from the schema file it was made from, and
    must not claim that file's URI. Every referenced schema is inlined once under
    ``$defs``, keyed by the last segment of its ``$id`` (``common.schema.json``).

    Raises :class:`~kernelindex_sdk.errors.UnknownKind` for an unknown kind, and
    :class:`~kernelindex_sdk.errors.UnresolvableReference` for a ``$ref`` to a URI
    the registry does not hold (nothing is ever fetched).
    """
    reg = registry if registry is not None else default_registry()
    entry = reg.find(kind, api_version)
    return _Bundler(reg).bundle(entry.id)


class _Bundler:
    """Inlines the schemas reachable from one root, rewriting refs as it goes."""

    def __init__(self, registry: SchemaRegistry) -> None:
        self._resources = registry.resources
        self._root_id = ""
        #: Document URI (no fragment) → its key under the root's ``$defs``.
        self._keys: dict[str, str] = {}
        self._inlined: dict[str, Any] = {}
        #: Keys of the root's own ``$defs``, which inlined documents must not take.
        self._reserved: set[str] = set()

    def bundle(self, root_id: str) -> dict[str, Any]:
        self._root_id = urldefrag(root_id)[0]
        root = self._contents(root_id)
        if not isinstance(root, Mapping):
            raise ValueError(f"{root_id}: a kind's schema must be an object")
        own_defs = root.get("$defs", {})
        self._keys = {}
        self._inlined = {}
        self._reserved = set(own_defs) if isinstance(own_defs, Mapping) else set()
        out = self._rewrite(root, root_id, at_root=True)
        assert isinstance(out, dict)
        out.pop("$id", None)
        if self._inlined:
            out["$defs"] = {**out.get("$defs", {}), **self._inlined}
        return out

    def _contents(self, uri: str) -> Any:
        # A registry without a retrieve function fetches nothing: an unknown URI is
        # referencing's Unresolvable, the SDK's own error from here on.
        from referencing.exceptions import Unresolvable

        try:
            return self._resources.resolver().lookup(uri).contents
        except Unresolvable:
            raise UnresolvableReference(self._root_id, uri) from None

    def _key_for(self, uri: str) -> str:
        """The ``$defs`` key of a document, inlining it on first use."""
        key = self._keys.get(uri)
        if key is not None:
            return key
        base = uri.rstrip("/").rsplit("/", 1)[-1] or "schema"
        key, n = base, 1
        while key in self._reserved or key in self._inlined:
            n += 1
            key = f"{base}-{n}"
        self._keys[uri] = key
        self._inlined[key] = {}  # reserve the key before recursing (cycles)
        contents = self._contents(uri)
        inlined = self._rewrite(contents, uri, at_root=True)
        if isinstance(inlined, dict):
            inlined.pop("$id", None)
            inlined.pop("$schema", None)
        self._inlined[key] = inlined
        return key

    def _local(self, ref: str, base: str) -> str:
        """The local pointer that stands for ``ref`` (written in document ``base``)."""
        _, target, fragment, _ = resolved(base, ref)
        if fragment and not fragment.startswith("/"):
            raise ValueError(f"{base}: $ref {ref!r}: only JSON-pointer fragments are supported")
        if target == self._root_id:
            return "#" + fragment
        key = self._key_for(target)
        # The fragment stays as written (percent-encoded, as a URI fragment must be).
        return "#/$defs/" + quote(escape_token(key), safe="") + fragment

    def _rewrite(self, node: Any, base: str, *, at_root: bool = False) -> Any:
        """A copy of the schema ``node`` with its refs (and its subschemas' refs) local."""
        if not isinstance(node, Mapping):
            return copy.deepcopy(node)  # a boolean schema
        if "$id" in node and not at_root:
            raise ValueError(f"{base}: embedded $id {node['$id']!r} is not supported")
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                out[key] = self._local(value, base)
            else:
                found = subschemas(key, value, lambda sub: self._rewrite(sub, base))
                # data (const, enum, default, ...) and annotations: copied as they are
                out[key] = copy.deepcopy(value) if found is DATA else found
        return out


def inlined_schema(schema_id: str, registry: SchemaRegistry) -> dict[str, Any] | None:
    """The schema ``schema_id`` with every ``$ref`` replaced by the schema it points to.

    A validator gives the same verdicts and errors on it (the same keywords, instance
    paths and messages) without resolving a single reference: a ``$ref`` alone is its
    target; one beside other keywords becomes ``"allOf": [target]`` in its place, so
    the keywords are still applied in the same order. ``$defs`` are dropped, nothing
    refers to them any more. Targets are shared, not copied, where a schema refers to
    one more than once.

    None when the rewrite cannot be exact: a recursive ``$ref``, a ``$ref`` beside an
    ``allOf``, ``$anchor``/``$dynamicRef`` and their kin, ``unevaluatedProperties`` or
    ``unevaluatedItems``, an embedded ``$id``, a document of the registry in another
    dialect than Draft 2020-12, or a reference the registry cannot resolve (a validator
    resolving it itself raises the same error).
    """
    if not isinstance(schema_id, str):
        raise TypeError(
            f"inlined_schema() takes a schema $id (a str), not {type(schema_id).__name__}"
        )
    for entry in registry.all_entries:
        if entry.contents.get("$schema", DRAFT_2020_12) != DRAFT_2020_12:
            return None
    try:
        inlined = inline(documents_of(registry), schema_id)
    except Declined:
        return None
    return inlined if isinstance(inlined, dict) else None
