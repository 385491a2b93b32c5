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

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator

from kernelindex_sdk.engine import JsonschemaEngine
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.registry import SchemaRegistry

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


def inline_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (self-contained: local ``#/...`` refs only) with every ``$ref`` inlined.

    Raises :class:`_CannotInline` for a cycle or a ref that is not a local JSON pointer.
    """
    root = dict(schema)

    def resolve(ref: str) -> Any:
        if not ref.startswith("#"):
            raise _CannotInline(ref)
        node: Any = root
        for token in ref[1:].split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise _CannotInline(ref)
        return node

    def walk(node: Any, trail: tuple[str, ...]) -> Any:
        if not isinstance(node, Mapping):
            return node  # a boolean schema
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                if key != "$defs":  # definitions are inlined where they are used
                    out[key] = {name: walk(sub, trail) for name, sub in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [walk(sub, trail) for sub in value]
            elif key in _SCHEMAS:
                out[key] = walk(value, trail)
            elif key != "$ref":
                out[key] = value
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return out
        if ref in trail:
            raise _CannotInline(f"cycle through {ref}")
        target = walk(resolve(ref), (*trail, ref))
        if not out or set(out) <= {"description", "title", "$comment"}:
            return target
        return {"allOf": [target, out]}

    out = walk(root, ())
    if not isinstance(out, dict):  # pragma: no cover - a root is always an object here
        raise _CannotInline("root")
    out.pop("$id", None)
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
        validator: Draft202012Validator | None = None
        entry = next((e for e in self._registry.entries if e.id == schema_id), None)
        if entry is not None:
            try:
                from kernelindex_sdk.bundled import bundled_schema

                schema = inline_refs(
                    bundled_schema(entry.kind, entry.api_version, registry=self._registry)
                )
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
