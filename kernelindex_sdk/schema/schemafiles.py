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

from kernelindex_sdk.base.fileio import ExistingFiles, atomic_write_many
from kernelindex_sdk.schema.bundled import bundled_schema
from kernelindex_sdk.schema.registry import SchemaEntry, SchemaRegistry, default_registry

__all__ = ["ForeignFiles", "export_schemas", "schema_bytes"]


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
    is. A file there with other content — an older export, an edited schema — is
    replaced only with ``force``: otherwise
    :class:`~kernelindex_sdk.base.fileio.ExistingFiles` names every such file and nothing
    is written. Even with ``force``, only a file that is a schema of the same kind (an
    earlier export's, :func:`_exported_schema`) is replaced: anything else there is
    :class:`ForeignFiles`. Never the schemas being read: a folder whose files would
    be the packaged ones (a checkout's own ``schemas/``; exporting ``--bundled`` over
    them would leave the package unable to load its schemas) is
    :class:`~kernelindex_sdk.base.outputs.OutputOverInput`, nothing written. Raises
    ``OSError`` when a file cannot be written.
    """
    reg = registry if registry is not None else default_registry()
    target = Path(directory)
    entries = reg.entries if bundled else reg.all_entries
    files = []
    ids: dict[Path, SchemaEntry] = {}
    for entry in entries:
        group, version = entry.api_version.split("/")
        out = target / group / version / entry.path.name
        data = (
            schema_bytes(entry.kind, entry.api_version, bundled=True, registry=reg)
            if bundled
            else entry.path.read_bytes()
        )
        files.append((out, data))
        ids[out] = entry
    _check_targets(files, ids, reg, force)
    atomic_write_many(files, replace=force)
    return [out for out, _ in files]


class ForeignFiles(ExistingFiles):
    """Files where the export would write that are no kernelindex schema of that kind:
    not replaced, even with ``force`` (the export did not write them)."""


def _check_targets(
    files: list[tuple[Path, bytes]],
    entries: dict[Path, SchemaEntry],
    reg: SchemaRegistry,
    force: bool,
) -> None:
    """Refuse an export over the packaged schemas themselves, and (with ``force``)
    over files that no export wrote."""
    from kernelindex_sdk.base.outputs import OutputOverInput, same_input

    packaged = [str(entry.path) for entry in reg.all_entries]
    for out, _ in files:
        source = same_input(out, packaged)
        if source is not None:
            raise OutputOverInput(
                f"{out}: is the packaged schema {source}, which this export reads;"
                " export to another folder. Nothing written"
            )
    if force:
        foreign = [out for out, data in files if not _replaceable(out, data, entries[out])]
        if foreign:
            raise ForeignFiles(foreign)


def _replaceable(path: Path, data: bytes, entry: SchemaEntry) -> bool:
    """Whether ``force`` may write ``data`` at ``path``: nothing there, the same
    bytes, or a schema of the same kind (:func:`_exported_schema`)."""
    try:
        held = path.read_bytes()
    except FileNotFoundError:
        return True
    except OSError:
        return False  # what cannot be read cannot be recognised
    return held == data or _exported_schema(held, entry)


def _exported_schema(held: bytes, entry: SchemaEntry) -> bool:
    """Whether ``held`` is a schema an export writes for ``entry``'s kind, packaged or
    bundled, of this version or another: a JSON Schema object of the same ``title``
    whose ``$id``, where it has one (bundled files have none), is the entry's."""
    try:
        value = json.loads(held)
    except ValueError:
        return False
    return (
        isinstance(value, dict)
        and "$schema" in value
        and value.get("title") == entry.contents.get("title")
        and value.get("$id", entry.id) == entry.id
    )
