"""Which apiVersions are served and which are deprecated, and what ``validate`` says of them.

One idea, one module: a version's status, from where it is declared (a group's
``versions.json``) to where it is reported (``kernelindex validate``'s warning).

**Where it is declared.** A schema group's folder may hold ``versions.json`` beside
its version folders::

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
released file change). ``kernelindex schema list`` shows every status.

**Where it is reported.** ``kernelindex validate`` warns once per deprecated version
it meets — one line on stderr naming the version that replaces it, not one per record
— whatever the number of worker processes. Records are checked where the pipeline's
checker runs: in this process, or in forked workers (``--jobs``) whose memory the
parent never sees. So :class:`VersionWatch` wraps the checker, counts records of
deprecated versions as they pass, and sends the counts back the way references
already travel from workers to the parent: in what ``take_references`` hands over, as
entries under a marker that ``add_references`` takes out again before the session
sees them. A registry with no deprecated version costs nothing, because ``validate``
then does not wrap its checker at all.

This module sits in the registry layer (the registry reads the statuses when it
loads), so :class:`VersionWatch` knows the checker it wraps only by the members it
calls (:class:`_Inner`), not by importing the validation layer above.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

from kernelindex_sdk.base.frozenvalue import FrozenValue
from kernelindex_sdk.errors import Problem, SchemaDirectoryError

__all__ = ["VERSIONS_FILE", "VersionStatus", "VersionWatch", "read_statuses"]

VERSIONS_FILE = "versions.json"
_STATUSES = ("served", "deprecated")


class VersionStatus(FrozenValue):
    """An apiVersion's status: ``served``, or ``deprecated`` with its replacement."""

    __match_args__ = __slots__ = ("api_version", "status", "replacement")
    api_version: str
    status: Literal["served", "deprecated"]
    #: The apiVersion to move to (deprecated versions only).
    replacement: str | None

    def __init__(
        self,
        api_version: str,
        status: Literal["served", "deprecated"] = "served",
        replacement: str | None = None,
    ) -> None:
        object.__setattr__(self, "api_version", api_version)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "replacement", replacement)

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


#: The "digest" under which a worker's counts travel (no real digest looks like it).
_MARK = "kernelindex:deprecated-apiVersion"


class _Statuses(Protocol):
    @property
    def statuses(self) -> Mapping[str, VersionStatus]: ...


class _Inner(Protocol):
    """The members of a pipeline checker (``pipeline.Checker``, a
    ``ValidationSession``) that :class:`VersionWatch` calls or passes on."""

    @property
    def registry(self) -> _Statuses: ...

    @property
    def invalidated(self) -> int: ...

    def prepare(self) -> None: ...

    def check_document(self, value: Any, *, source: str = ..., line: int | None = ...) -> Any: ...

    def passes(self, value: Any, written: bytes | None = None) -> bool: ...

    def take_references(self) -> tuple[list[tuple[str, str]], list[Any]]: ...

    def add_references(self, known: Iterable[tuple[str, str]], pending: Iterable[Any]) -> None: ...

    def finish(self) -> list[Problem]: ...


class VersionWatch:
    """A pipeline checker: ``inner``'s checks, plus counts of deprecated records."""

    def __init__(self, inner: _Inner) -> None:
        self.inner = inner
        #: Deprecated apiVersion → the apiVersion that replaces it.
        self.deprecated = {
            version: status.replacement
            for version, status in inner.registry.statuses.items()
            if status.deprecated
        }
        self.seen: Counter[str] = Counter()
        #: Items invalidated in :meth:`finish` (the session's count, read by the pipeline).
        self.invalidated = 0

    def prepare(self) -> None:
        self.inner.prepare()

    def check_document(
        self, value: Any, *, source: str = "<input>", line: int | None = None
    ) -> Any:
        self._count(value)
        return self.inner.check_document(value, source=source, line=line)

    def passes(self, value: Any, written: bytes | None = None) -> bool:
        if not self.inner.passes(value, written):
            return False  # check_document will count it
        self._count(value)
        return True

    def take_references(self) -> tuple[list[tuple[str, str]], list[Any]]:
        known, pending = self.inner.take_references()
        counts = [(_MARK, f"{n} {version}") for version, n in sorted(self.seen.items())]
        self.seen.clear()
        return [*known, *counts], pending

    def add_references(self, known: Iterable[tuple[str, str]], pending: Iterable[Any]) -> None:
        theirs = []
        for found, kind in known:
            if found == _MARK:
                count, version = kind.split(" ", 1)
                self.seen[version] += int(count)
            else:
                theirs.append((found, kind))
        self.inner.add_references(theirs, pending)

    def finish(self) -> list[Problem]:
        late = self.inner.finish()
        self.invalidated = self.inner.invalidated
        return late

    def warnings(self) -> list[str]:
        """One line per deprecated version met: which replaces it, and how many records."""
        return [
            f"apiVersion {version} is deprecated; use {self.deprecated[version]}"
            f" ({n} record{'s' if n != 1 else ''})"
            for version, n in sorted(self.seen.items())
        ]

    def _count(self, value: Any) -> None:
        """Count the records of deprecated versions in one document (a record, a
        bundle, or an array of them)."""
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict):
                continue
            bundle = "run" in item and "kind" not in item
            records = [m for m in item.values() if isinstance(m, dict)] if bundle else [item]
            for record in records:
                version = record.get("apiVersion")
                if isinstance(version, str) and version in self.deprecated:
                    self.seen[version] += 1
