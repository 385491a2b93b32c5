"""Writing the schemas out for tools that are not kernelindex: validators, editors.

Two layouts, both under ``DIR/<group>/<version>/``:

* **as packaged** — every schema file byte for byte, ``common.schema.json`` included.
  The files reach each other by ``$id`` and relative ``$ref``: ajv loads them by ``$id``
  (``-r``); check-jsonschema resolves them by location, offline, given the folder as
  ``--base-uri file:///ABSOLUTE/DIR/<group>/<version>/`` (the trailing ``/`` matters;
  docs/ci.md).
* **bundled** — one self-contained file per kind (``Bundle`` included), every schema
  it references inlined under ``$defs`` (:func:`~kernelindex_sdk.schema.bundled.bundled_schema`).
  Plain ``jsonschema``, check-jsonschema without ``--base-uri`` and editors take a
  bundled file as it is, offline.

Either way the exported schemas check the *shape* of a record. What only kernelindex
checks — that a bundle's members hash to the run's digests, ordered statistics,
units that fit the metric, timestamps not in the future, references across files
(``--strict-refs``) — needs ``kernelindex validate``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kernelindex_sdk.base.fileio import atomic_write_many
from kernelindex_sdk.schema.bundled import bundled_schema
from kernelindex_sdk.schema.registry import SchemaRegistry, default_registry

__all__ = ["export_schemas", "schema_bytes"]


def schema_bytes(
    kind: str,
    api_version: str | None = None,
    *,
    bundled: bool = False,
    registry: SchemaRegistry | None = None,
) -> bytes:
    """The schema of ``kind`` as a file's bytes: the packaged file, or the bundled form.

    Raises :class:`~kernelindex_sdk.errors.UnknownKind` for a kind the registry lacks.
    """
    reg = registry if registry is not None else default_registry()
    entry = reg.find(kind, api_version)
    if not bundled:
        return entry.path.read_bytes()
    schema = bundled_schema(entry.kind, entry.api_version, registry=reg)
    return (json.dumps(schema, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def export_schemas(
    directory: str | os.PathLike[str],
    *,
    bundled: bool = False,
    force: bool = False,
    registry: SchemaRegistry | None = None,
) -> list[Path]:
    """Write the schemas under ``directory/<group>/<version>/``; return the paths written.

    The files are written as one batch (:func:`~kernelindex_sdk.base.fileio.atomic_write_many`):
    each whole or absent, and a file that already holds the same bytes is left as it
    is. A file there with other content — a checkout's own ``schemas/``, an edited
    schema — is replaced only with ``force``: otherwise
    :class:`~kernelindex_sdk.base.fileio.ExistingFiles` names every such file and nothing
    is written (exporting ``--bundled`` over a checkout's sources once left the
    package unable to load its own schemas). Raises ``OSError`` when a file cannot be
    written.
    """
    reg = registry if registry is not None else default_registry()
    target = Path(directory)
    entries = reg.entries if bundled else reg.all_entries
    files = []
    for entry in entries:
        group, version = entry.api_version.split("/")
        out = target / group / version / entry.path.name
        data = (
            schema_bytes(entry.kind, entry.api_version, bundled=True, registry=reg)
            if bundled
            else entry.path.read_bytes()
        )
        files.append((out, data))
    atomic_write_many(files, replace=force)
    return [out for out, _ in files]
