"""Which apiVersions are served and which are deprecated: a group's ``versions.json``.

A schema group's folder may hold ``versions.json`` beside its version folders::

    schemas/kernelindex.dev/versions.json
    {
      "v1alpha1": {"status": "deprecated", "replacement": "kernelindex.dev/v1alpha2"},
      "v1alpha2": {"status": "served"}
    }

A version the file does not list is served, so a tree without the file (one written
by ``kernelindex schema export``, a test's temporary registry) serves every version.

Why a file of its own and not a keyword in each schema: the status belongs to a
version, not to one kind's schema, and deprecating a version must not change the
bytes of its released schemas (the snapshot check of ``.ci/run`` would see every
released file change). ``kernelindex validate`` warns once per deprecated version it
meets, naming the replacement; ``kernelindex schema list`` shows every status.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kernelindex_sdk.errors import SchemaDirectoryError

__all__ = ["VERSIONS_FILE", "VersionStatus", "read_statuses"]

VERSIONS_FILE = "versions.json"
_STATUSES = ("served", "deprecated")


@dataclass(frozen=True, slots=True)
class VersionStatus:
    """An apiVersion's status: ``served``, or ``deprecated`` with its replacement."""

    api_version: str
    status: Literal["served", "deprecated"] = "served"
    #: The apiVersion to move to (deprecated versions only).
    replacement: str | None = None

    @property
    def deprecated(self) -> bool:
        return self.status == "deprecated"

    def describe(self) -> str:
        """``served``, or ``deprecated, use <replacement>``: what ``schema list`` shows."""
        if self.deprecated:
            return f"deprecated, use {self.replacement}"
        return self.status


def read_statuses(root: Path, api_versions: Iterable[str]) -> dict[str, VersionStatus]:
    """The status of every listed version of the groups under ``root``.

    ``api_versions`` are those the registry found schemas for: a file that names any
    other version, an unknown status, or a deprecated version without a known
    replacement is a :class:`~kernelindex_sdk.errors.SchemaDirectoryError` — a
    registry that cannot say what replaces a version must not load half-right.
    """
    known = set(api_versions)
    statuses: dict[str, VersionStatus] = {}
    for group in sorted({version.split("/")[0] for version in known}):
        path = root / group / VERSIONS_FILE
        if not path.is_file():
            continue
        try:
            listed = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise SchemaDirectoryError(f"{path}: cannot read: {error}") from None
        if not isinstance(listed, Mapping):
            raise SchemaDirectoryError(f"{path}: expected an object of version: status")
        for version, entry in listed.items():
            if version.startswith("$"):  # "$comment"
                continue
            statuses[f"{group}/{version}"] = _status(path, group, version, entry, known)
    return statuses


def _status(path: Path, group: str, version: str, entry: Any, known: set[str]) -> VersionStatus:
    api_version = f"{group}/{version}"
    if api_version not in known:
        raise SchemaDirectoryError(f"{path}: {version!r}: no schemas for {api_version}")
    status = entry.get("status") if isinstance(entry, Mapping) else None
    if status not in _STATUSES:
        raise SchemaDirectoryError(
            f"{path}: {version!r}: status must be one of {', '.join(_STATUSES)}"
        )
    replacement = entry.get("replacement")
    if status == "served":
        if replacement is not None:
            raise SchemaDirectoryError(f"{path}: {version!r}: a served version has no replacement")
        return VersionStatus(api_version)
    if replacement not in known or replacement == api_version:
        raise SchemaDirectoryError(
            f"{path}: {version!r}: a deprecated version names its replacement,"
            f" another apiVersion of this registry (got {replacement!r})"
        )
    return VersionStatus(api_version, "deprecated", replacement)
