"""A validation engine that answers "valid?" fast and "what is wrong?" exactly.

``compare`` validates every record it loads, and a whole Liger import is thousands of
bundles. The reference :class:`~kernelindex_sdk.engine.JsonschemaEngine` resolves
every ``$ref`` through ``referencing`` on every instance, which costs about 5 ms per
bundle (measured): 12 s for the Liger CSV, far from "within seconds". With every
``$ref`` inlined into one self-contained schema the same check takes about 1 ms.

:class:`InlinedEngine` therefore answers :meth:`~InlinedEngine.is_valid` with a
validator built on the inlined schema, and delegates :meth:`~InlinedEngine.problems`
(called only for invalid instances) to the reference engine, so every message and
pointer is exactly what ``kernelindex validate`` prints. Inlining a ``$ref`` that has
no siblings by its target, and one with siblings by ``allOf: [target, siblings]``, is
how Draft 2020-12 defines ``$ref`` to apply, so the two validators accept the same
instances. Where a schema cannot be inlined (a cycle, a non-pointer fragment), the
engine falls back to the reference validator for that schema: slower, never wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urldefrag, urljoin

from kernelindex_sdk.engine import JsonschemaEngine
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.registry import SchemaRegistry

if TYPE_CHECKING:  # imported when a validator is built: jsonschema is slow to import
    from jsonschema import Draft202012Validator

#: Draft 2020-12 keywords whose values are maps of name → subschema.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas", "$defs"})
#: Keywords whose values are lists of subschemas.
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
#: Keywords whose value is one subschema.
_SCHEMAS = frozenset(
    {
        "not", "if", "then", "else", "items", "contains", "additionalProperties",
        "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
    }
)  # fmt: skip


class _CannotInline(Exception):
    """The schema uses something :func:`inline_refs` does not handle."""


def inline_refs(
    schema: Mapping[str, Any],
    *,
    base: str = "",
    documents: Callable[[str], Any] | None = None,
) -> dict[str, Any]:
    """``schema`` with every ``$ref`` replaced by what it points to.

    ``base`` is the schema's own URI (its ``$id``); refs to other documents are
    resolved against it and read with ``documents(uri)`` (e.g. a registry's
    ``resources.contents``). Raises :class:`_CannotInline` for a cycle, a fragment
    that is not a JSON pointer, an embedded ``$id``, or a document that cannot be read.
    """
    root_uri = urldefrag(base)[0]

    def document(uri: str) -> Any:
        if uri == root_uri:
            return schema
        if documents is None:
            raise _CannotInline(f"no document {uri!r}")
        try:
            return documents(uri)
        except Exception as error:  # referencing raises its own Unresolvable types
            raise _CannotInline(f"cannot read {uri!r}") from error

    def resolve(target: str) -> Any:
        uri, fragment = urldefrag(target)
        if fragment and not fragment.startswith("/"):
            raise _CannotInline(target)
        node: Any = document(uri)
        for token in fragment.split("/")[1:]:
            token = unquote(token).replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise _CannotInline(target)
        return node

    def walk(node: Any, at: str, trail: tuple[str, ...], top: bool = False) -> Any:
        if not isinstance(node, Mapping):
            return node  # a boolean schema
        if "$id" in node and not top:
            raise _CannotInline(f"embedded $id {node['$id']!r}")
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                if key != "$defs":  # definitions are inlined where they are used
                    out[key] = {name: walk(sub, at, trail) for name, sub in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [walk(sub, at, trail) for sub in value]
            elif key in _SCHEMAS:
                out[key] = walk(value, at, trail)
            elif key not in ("$ref", "$id", "$schema"):
                out[key] = value
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return out
        target = urljoin(at, ref) if at else ref
        if target in trail:
            raise _CannotInline(f"cycle through {target}")
        uri = urldefrag(target)[0]
        whole = not urldefrag(target)[1]  # a whole document: its root $id is its own
        inlined = walk(resolve(target), uri, (*trail, target), top=whole)
        if not out or set(out) <= {"description", "title", "$comment"}:
            return inlined
        return {"allOf": [inlined, out]}

    out = walk(schema, root_uri, (), top=True)
    if not isinstance(out, dict):  # pragma: no cover - a root is always an object here
        raise _CannotInline("root")
    return out


class InlinedEngine:
    """``is_valid`` on inlined schemas, ``problems`` from the reference engine."""

    def __init__(self, registry: SchemaRegistry, reference: JsonschemaEngine | None = None):
        self._registry = registry
        self._reference = reference or JsonschemaEngine(registry)
        self._fast: dict[str, Draft202012Validator | None] = {}

    def _validator(self, schema_id: str) -> Draft202012Validator | None:
        if schema_id in self._fast:
            return self._fast[schema_id]
        from jsonschema import Draft202012Validator

        validator: Draft202012Validator | None = None
        try:
            contents = self._registry.resources.contents
            schema = inline_refs(contents(schema_id), base=schema_id, documents=contents)
            validator = Draft202012Validator(
                schema, format_checker=Draft202012Validator.FORMAT_CHECKER
            )
        except Exception:  # any trouble: the reference validator is always right
            validator = None
        self._fast[schema_id] = validator
        return validator

    def is_valid(self, schema_id: str, instance: Any) -> bool:
        validator = self._validator(schema_id)
        if validator is None:
            return self._reference.is_valid(schema_id, instance)
        return bool(validator.is_valid(instance))

    def problems(self, schema_id: str, instance: Any, pointer: str = "") -> list[Problem]:
        return self._reference.problems(schema_id, instance, pointer)
