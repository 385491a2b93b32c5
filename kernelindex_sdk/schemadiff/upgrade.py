"""Each dialect's keywords in their Draft 2020-12 spelling: what the diff compares.

The normal form (:mod:`.normal`) is written in Draft 2020-12. A schema object of an
older dialect is first rewritten, one object at a time, into the Draft 2020-12 object
that accepts exactly the same values under Draft 2020-12 as the original does under
its own dialect (python-jsonschema's class for it, :mod:`kernelindex_sdk.schema.dialects`):

* keywords the dialect does not have are dropped — its validator ignores them
  (``const`` in Draft 4, ``if`` before Draft 7, ``prefixItems`` before 2020-12);
* before 2019-09 a ``$ref`` is applied alone: its siblings are dropped;
* Draft 4's boolean ``exclusiveMinimum: true`` makes its ``minimum`` exclusive (and
  ``exclusiveMaximum`` its ``maximum``); ``false`` says nothing; its ``id`` is ``$id``;
* array-form ``items`` is ``prefixItems``, and ``additionalItems`` beside it ``items``
  (beside a single ``items`` schema, ``additionalItems`` is ignored, and dropped);
* ``dependencies`` (before 2019-09) is ``dependentRequired`` for its arrays and
  ``dependentSchemas`` for its schemas;
* formats the dialect's format checker does not assert are dropped (Draft 4 has no
  ``date``; Draft 7 no ``uuid``): to it they are annotations.

Subschemas are left as they are: the normalizer rewrites each when it reaches it, so
a ``$ref``'s JSON pointer still walks the document as written. ``$recursiveRef`` is
the normalizer's (it depends on where evaluation began).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelindex_sdk.base.recordformat import DRAFT_2020_12
from kernelindex_sdk.schema.dialects import (
    DRAFT_4,
    DRAFT_6,
    DRAFT_7,
    DRAFT_2019_09,
    validator_class,
)

__all__ = ["as_2020_12"]

_NOT_BEFORE_2019 = frozenset(
    {"minContains", "maxContains", "dependentRequired", "dependentSchemas", "prefixItems",
     "unevaluatedItems", "unevaluatedProperties", "$dynamicRef", "$recursiveRef"}
)  # fmt: skip
#: Draft 2020-12 keywords each older dialect does not have (its validator ignores them).
_LACKS: Mapping[str, frozenset[str]] = {
    DRAFT_4: _NOT_BEFORE_2019 | {"const", "contains", "propertyNames", "if", "then", "else"},
    DRAFT_6: _NOT_BEFORE_2019 | {"if", "then", "else"},
    DRAFT_7: _NOT_BEFORE_2019,
    DRAFT_2019_09: frozenset({"prefixItems", "$dynamicRef"}),
}
#: Dialects in which ``$ref`` is applied alone.
_REF_ALONE = frozenset({DRAFT_4, DRAFT_6, DRAFT_7})


def as_2020_12(schema: dict[str, Any], dialect: str) -> tuple[dict[str, Any], dict[str, str]]:
    """``schema`` (one object of ``dialect``) as the Draft 2020-12 object meaning the
    same (see the module's doc; the object itself when it is Draft 2020-12), and the
    keyword each renamed one was written as (``prefixItems`` → ``items``), so that a
    place in the normal form names the file's own keyword."""
    renamed: dict[str, str] = {}
    if dialect == DRAFT_2020_12:
        return schema, renamed
    lacks = _LACKS[dialect]
    out = {k: v for k, v in schema.items() if k not in lacks}
    if dialect in _REF_ALONE and "$ref" in out:
        return {"$ref": out["$ref"]}, renamed
    if dialect == DRAFT_4:
        out.pop("$id", None)  # not a keyword of Draft 4
        if isinstance(out.get("id"), str):
            out["$id"] = out.pop("id")
            renamed["$id"] = "id"
        for plain, strict in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            if out.pop(strict, False) is True and plain in out:
                out[strict] = out.pop(plain)
                renamed[strict] = plain
    if "additionalItems" in out:
        extra = out.pop("additionalItems")
        if isinstance(out.get("items"), list):
            out["prefixItems"] = out.pop("items")
            out["items"] = extra
            renamed.update(prefixItems="items", items="additionalItems")
    elif isinstance(out.get("items"), list):
        out["prefixItems"] = out.pop("items")
        renamed["prefixItems"] = "items"
    if dialect != DRAFT_2019_09 and "dependencies" in out:
        dependencies = out.pop("dependencies")
        if isinstance(dependencies, dict):
            names = {k: v for k, v in dependencies.items() if isinstance(v, list)}
            schemas = {k: v for k, v in dependencies.items() if not isinstance(v, list)}
            if names:
                out["dependentRequired"] = names
                renamed["dependentRequired"] = "dependencies"
            if schemas:
                out["dependentSchemas"] = schemas
                renamed["dependentSchemas"] = "dependencies"
    elif "dependencies" in out:
        del out["dependencies"]  # not a keyword of 2019-09
    asserted = validator_class(dialect).FORMAT_CHECKER.checkers
    if isinstance(out.get("format"), str) and out["format"] not in asserted:
        del out["format"]
    return out, renamed
