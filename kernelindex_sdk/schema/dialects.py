"""The JSON Schema dialects a schema file may be written in, told apart by ``$schema``.

One definition of which ``$schema`` URI means which dialect, and of which
python-jsonschema validator class reads it: the reference engine validates a schema
of another dialect with that dialect's own class (Draft 7's ``items`` array, Draft 4's
boolean ``exclusiveMinimum``), and the schema diff brings each dialect's keywords to
the Draft 2020-12 form it compares. A schema without ``$schema`` is Draft 2020-12, as
everywhere in kernelindex.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from kernelindex_sdk.base.recordformat import DRAFT_2020_12

__all__ = [
    "DIALECTS",
    "DRAFT_4",
    "DRAFT_6",
    "DRAFT_7",
    "DRAFT_2019_09",
    "NAMES",
    "dialect_of",
    "id_keyword",
    "validator_class",
]

DRAFT_4 = "http://json-schema.org/draft-04/schema#"
DRAFT_6 = "http://json-schema.org/draft-06/schema#"
DRAFT_7 = "http://json-schema.org/draft-07/schema#"
DRAFT_2019_09 = "https://json-schema.org/draft/2019-09/schema"

#: Each dialect, by the ``$schema`` its meta-schema declares, and the name of the
#: python-jsonschema class that validates by it (oldest first).
DIALECTS: Mapping[str, str] = {
    DRAFT_4: "Draft4Validator",
    DRAFT_6: "Draft6Validator",
    DRAFT_7: "Draft7Validator",
    DRAFT_2019_09: "Draft201909Validator",
    DRAFT_2020_12: "Draft202012Validator",
}

#: What each dialect is called in messages.
NAMES: Mapping[str, str] = {
    DRAFT_4: "Draft 4",
    DRAFT_6: "Draft 6",
    DRAFT_7: "Draft 7",
    DRAFT_2019_09: "Draft 2019-09",
    DRAFT_2020_12: "Draft 2020-12",
}

#: Spellings seen in the wild for the same dialect: with or without the empty
#: fragment, and over https.
_SPELLINGS: dict[str, str] = {}
for _uri in DIALECTS:
    _bare = _uri.rstrip("#")
    for _scheme in ("http://", "https://"):
        _rest = _bare.split("://", 1)[1]
        _SPELLINGS[_scheme + _rest] = _uri
        _SPELLINGS[_scheme + _rest + "#"] = _uri


def dialect_of(contents: Any) -> str | None:
    """The dialect (a key of :data:`DIALECTS`) of a schema document: its ``$schema``,
    else Draft 2020-12; None for a ``$schema`` none of them is."""
    if not isinstance(contents, Mapping) or "$schema" not in contents:
        return DRAFT_2020_12
    declared = contents["$schema"]
    return _SPELLINGS.get(declared) if isinstance(declared, str) else None


def id_keyword(dialect: str) -> str:
    """The keyword that names a schema's URI: ``id`` in Draft 4, ``$id`` since."""
    return "id" if dialect == DRAFT_4 else "$id"


@cache
def validator_class(dialect: str) -> Any:
    """python-jsonschema's validator class for ``dialect``."""
    import jsonschema

    return getattr(jsonschema, DIALECTS[dialect])
