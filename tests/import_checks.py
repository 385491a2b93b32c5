"""Checks every importer's tests share: what was written validates, provenance is honest.

``validate_strict`` runs exactly what ``kernelindex validate --strict-refs`` runs on a
folder; ``check_provenance`` holds a spec's provenance to the rule docs/format.md
states (a field with a known origin is there; an ``unknown`` one is absent, or holds
the placeholder ``unknown`` where the schema requires a value).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import kernelindex_sdk as ki
from kernelindex_sdk.base.pointers import unescape_token
from kernelindex_sdk.reading.sources import documents
from kernelindex_sdk.validating.pipeline import Pipeline

_ABSENT = object()


def validate_strict(*paths: Path) -> list[str]:
    """Every problem ``validate --strict-refs`` reports for ``paths``, one line each."""
    check = Pipeline([str(p) for p in paths], strict_refs=True)
    problems = [str(problem) for item in check for problem in item.problems]
    return problems + [str(problem) for problem in check.late]


def records_in(*paths: Path) -> Iterator[dict[str, Any]]:
    """Every record in bundle files and JSON Lines streams under ``paths``."""
    for document in documents([str(p) for p in paths]):
        assert not isinstance(document, ki.IntakeError), document
        value = document.value
        members = (
            [
                value[k]
                for k in ("run", "protocol", "workload", "environment", "implementation")
                if k in value
            ]
            if "run" in value
            else [value]
        )
        yield from members


def resolve(spec: Mapping[str, Any], pointer: str) -> Any:
    """The value at ``pointer`` in ``spec``, or a marker when there is none."""
    node: Any = spec
    for token in pointer.split("/")[1:]:
        key = unescape_token(token)
        if not isinstance(node, Mapping) or key not in node:
            return _ABSENT
        node = node[key]
    return node


def check_provenance(record: Mapping[str, Any]) -> None:
    """A record's provenance names fields that are there, and unknown ones that are not."""
    spec = record["spec"]
    for pointer, entry in spec.get("provenance", {}).items():
        found = resolve(spec, pointer)
        assert not pointer.startswith("/provenance"), pointer
        if entry["origin"] == "unknown":
            assert found is _ABSENT or found == "unknown", (pointer, found)
        else:
            assert found is not _ABSENT, (record["metadata"]["name"], pointer)
