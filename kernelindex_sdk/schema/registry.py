"""The offline schema registry: packaged schema files, addressed by ``$id``.

Every schema file under ``schemas/<group>/<version>/`` is loaded into one
:class:`referencing.Registry`, so ``$ref`` between files resolves by ``$id`` and
nothing is ever fetched over the network (a ``$ref`` to an unknown URI fails with
:class:`~kernelindex_sdk.errors.UnresolvableReference` instead, when it is met).

Routing is derived from the files, not written in code: the directory names give the
``apiVersion`` (``kernelindex.dev/v1alpha1``), each kind schema states its kind as
``properties.kind.const``, and ``bundle.schema.json`` is the version's bundle. Adding
``v1alpha2`` beside ``v1alpha1`` therefore needs only new schema files.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelindex_sdk.base.frozenvalue import FACTORY, FrozenValue
from kernelindex_sdk.base.recordformat import DRAFT_2020_12
from kernelindex_sdk.errors import SchemaDirectoryError, UnknownKind
from kernelindex_sdk.schema.versionstatus import VersionStatus, read_statuses

if TYPE_CHECKING:  # imported when first used: only the reference engine needs it
    from referencing import Registry

#: The dialect of every schema without a ``$schema`` of its own.
DRAFT202012_URI = DRAFT_2020_12  # one definition: kernelindex_sdk.base.recordformat

BUNDLE_FILE = "bundle.schema.json"
#: The name bundles go by in ``schema list`` / ``schema show``.
BUNDLE_KIND = "Bundle"


def packaged_schema_root() -> Path:
    """Where the schema tree lives: inside the installed package, else the checkout.

    Missing, it is :class:`SchemaDirectoryError` (not a bare ``FileNotFoundError``, which
    the CLI would report as a failed write to standard output)."""
    here = Path(__file__).resolve().parent.parent  # the package, then the checkout
    for candidate in (here / "schemas", here.parent / "schemas"):
        if candidate.is_dir():
            return candidate
    raise SchemaDirectoryError(f"kernelindex schemas not found next to {here}")


class SchemaEntry(FrozenValue):
    """One schema file: what it describes and where it came from. (Both classes here
    are frozen dataclasses to :mod:`dataclasses`: :mod:`kernelindex_sdk.base.frozenvalue`.)"""

    __match_args__ = __slots__ = ("api_version", "kind", "id", "path", "contents")
    _field_options_ = {"contents": {"repr": False, "compare": False}}  # noqa: RUF012 - read once, by FrozenValue
    api_version: str
    kind: str
    id: str
    path: Path
    contents: Mapping[str, Any]

    def __init__(
        self, api_version: str, kind: str, id: str, path: Path, contents: Mapping[str, Any]
    ) -> None:
        _set = object.__setattr__
        _set(self, "api_version", api_version)
        _set(self, "kind", kind)
        _set(self, "id", id)
        _set(self, "path", path)
        _set(self, "contents", contents)


class SchemaRegistry(FrozenValue):
    """All schemas of all versions, routed by (apiVersion, kind)."""

    __match_args__ = ("entries", "support", "_routes", "statuses")
    __slots__ = (*__match_args__, "_lazy")
    _field_options_ = {  # noqa: RUF012 - read once, by FrozenValue
        "_routes": {"repr": False, "compare": False},
        "statuses": {"default_factory": dict, "compare": False},
        "_lazy": {"default_factory": dict, "init": False, "repr": False, "compare": False},
    }
    entries: tuple[SchemaEntry, ...]
    #: Shared definitions and any other schema file that is not a kind.
    support: tuple[SchemaEntry, ...]
    _routes: Mapping[tuple[str, str], SchemaEntry]
    #: apiVersion → status, from each group's ``versions.json`` (unlisted: served).
    statuses: Mapping[str, VersionStatus]
    _lazy: dict[str, Any]

    def __init__(
        self,
        entries: tuple[SchemaEntry, ...],
        support: tuple[SchemaEntry, ...],
        _routes: Mapping[tuple[str, str], SchemaEntry],
        statuses: Mapping[str, VersionStatus] = FACTORY,
    ) -> None:
        _set = object.__setattr__
        _set(self, "entries", entries)
        _set(self, "support", support)
        _set(self, "_routes", _routes)
        _set(self, "statuses", {} if statuses is FACTORY else statuses)
        _set(self, "_lazy", {})

    @property
    def all_entries(self) -> tuple[SchemaEntry, ...]:
        """Every schema file: the kinds' (:attr:`entries`), then :attr:`support`, what a
        ``$ref`` may point into."""
        return (*self.entries, *self.support)

    @property
    def resources(self) -> Registry[Any]:
        """Every schema as a :class:`referencing.Registry`, by ``$id`` (built on first use)."""
        resources = self._lazy.get("resources")
        if resources is None:
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012

            pairs = [
                (e.id, Resource.from_contents(e.contents, default_specification=DRAFT202012))
                for e in self.all_entries
            ]
            resources = self._lazy["resources"] = Registry().with_resources(pairs).crawl()
        return resources

    @classmethod
    def from_directory(cls, root: str | os.PathLike[str]) -> SchemaRegistry:
        """Load every ``*.schema.json`` below ``root/<group>/<version>/``.

        Raises :class:`~kernelindex_sdk.errors.SchemaDirectoryError` when ``root`` is
        not a directory or holds no schema (an empty registry would route nothing and
        report every record as of an unknown kind), or when a schema file cannot be
        read, is not a JSON object or has no ``$id`` (a packaged folder overwritten by
        hand or by an export): one line naming the file, never a traceback.
        """
        entries: list[SchemaEntry] = []
        support: list[SchemaEntry] = []
        root = Path(root)
        try:
            if not root.is_dir():
                raise SchemaDirectoryError(f"{root}: not a directory of schemas")
            found = sorted(root.glob("*/*/*.schema.json"))
        except (OSError, ValueError) as error:  # a name too long, a NUL byte, no permission
            raise SchemaDirectoryError(f"{root}: cannot be read: {_reason(error)}") from None
        if not found:
            raise SchemaDirectoryError(
                f"{root}: no schemas (expected <group>/<version>/*.schema.json below it)"
            )
        for path in found:
            contents = _read_schema(path)
            try:
                schema_id = _id_of(contents)
            except ValueError as error:
                raise SchemaDirectoryError(f"{path}: cannot read: {error}") from None
            if schema_id is None:
                raise SchemaDirectoryError(f"{path}: schema has no $id")
            api_version = f"{path.parent.parent.name}/{path.parent.name}"
            kind = kind_of(path, contents)
            entry = SchemaEntry(api_version, kind or path.name, schema_id, path, contents)
            (entries if kind else support).append(entry)
        routes = {(e.api_version, e.kind): e for e in entries}
        statuses = read_statuses(root, {e.api_version for e in entries})
        return cls(tuple(entries), tuple(support), routes, statuses)

    def route(self, api_version: object, kind: object) -> SchemaEntry:
        """The schema for a record; :class:`UnknownKind` lists the known pairs otherwise.

        ``Bundle`` is not a record kind (a bundle has no ``kind`` member), so a record
        claiming it is routed nowhere.
        """
        if isinstance(api_version, str) and isinstance(kind, str) and kind != BUNDLE_KIND:
            entry = self._routes.get((api_version, kind))
            if entry is not None:
                return entry
        raise UnknownKind(api_version, kind, self.known())

    def bundle(self, api_version: object) -> SchemaEntry:
        """The bundle schema of an ``apiVersion`` (a bundle is routed by its run)."""
        entry = (
            self._routes.get((api_version, BUNDLE_KIND)) if isinstance(api_version, str) else None
        )
        if entry is None:
            raise UnknownKind(api_version, BUNDLE_KIND, self.known())
        return entry

    def known(self) -> list[str]:
        """``apiVersion/Kind`` for every record kind (bundles aside), sorted."""
        return sorted(f"{v}/{k}" for v, k in self._routes if k != BUNDLE_KIND)

    def api_versions(self) -> list[str]:
        """Every apiVersion with schemas, sorted."""
        return sorted({e.api_version for e in self.entries})

    def status(self, api_version: str) -> VersionStatus:
        """Whether ``api_version`` is served or deprecated (:mod:`.versionstatus`)."""
        if not isinstance(api_version, str):
            raise TypeError(
                f"status() takes an apiVersion (a str), not {type(api_version).__name__}"
            )
        return self.statuses.get(api_version) or VersionStatus(api_version)

    def find(self, kind: str, api_version: str | None = None) -> SchemaEntry:
        """A kind's schema by name (case-insensitive), newest version unless one is given."""
        if not isinstance(kind, str):
            raise TypeError(f"find() takes a kind name (a str), not {type(kind).__name__}")
        if api_version is not None and not isinstance(api_version, str):
            raise TypeError(
                f"find(api_version=...) takes a str or None, not {type(api_version).__name__}"
            )
        matches = [
            e
            for e in self.entries
            if e.kind.lower() == kind.lower()
            and (
                api_version is None or api_version in (e.api_version, e.api_version.split("/")[-1])
            )
        ]
        if not matches:
            every = sorted(f"{e.api_version}/{e.kind}" for e in self.entries)
            raise UnknownKind(api_version, kind, every, lookup=True)
        return max(matches, key=lambda e: _version_key(e.api_version))

    def __iter__(self) -> Iterator[SchemaEntry]:
        return iter(self.entries)


def _reason(error: Exception) -> str:
    """What went wrong reading a path, without the path again (an ``OSError`` names it)."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error)


def _read_schema(path: Path) -> dict[str, Any]:
    """A schema file's object, or :class:`SchemaDirectoryError` naming the file."""
    try:
        contents = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SchemaDirectoryError(f"{path}: cannot read: {error.strerror or error}") from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise SchemaDirectoryError(f"{path}: not a JSON schema file: {error}") from None
    if not isinstance(contents, dict):
        raise SchemaDirectoryError(f"{path}: not a JSON schema (not an object)")
    return contents


def _id_of(contents: Any) -> str | None:
    """The schema's ``$id``, as :mod:`referencing` reads it (without importing it for
    2020-12); None for a document that is no schema (not an object). A ``$schema``
    that is not a string is a ``ValueError``."""
    if not isinstance(contents, dict):
        return None
    dialect = contents.get("$schema", DRAFT202012_URI)
    if dialect == DRAFT202012_URI:
        schema_id = contents.get("$id")
        return schema_id if isinstance(schema_id, str) else None
    if not isinstance(dialect, str):
        raise ValueError(f"$schema must be a URI (a string), not {type(dialect).__name__}")
    from referencing import Resource
    from referencing.jsonschema import DRAFT202012

    resource: Any = Resource.from_contents(contents, default_specification=DRAFT202012)
    schema_id = resource.id()
    return schema_id if isinstance(schema_id, str) else None


def kind_of(path: Path, contents: Mapping[str, Any]) -> str | None:
    """The kind a schema file describes, read off the schema itself."""
    if path.name == BUNDLE_FILE:
        return BUNDLE_KIND
    properties = contents.get("properties")
    kind = properties.get("kind") if isinstance(properties, dict) else None
    const = kind.get("const") if isinstance(kind, dict) else None
    return const if isinstance(const, str) else None


def _version_key(api_version: str) -> tuple[int, int, int]:
    """Order Kubernetes-style versions: v1alpha1 < v1alpha2 < v1beta1 < v1."""
    version = api_version.rsplit("/", 1)[-1]
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (0, 0, 0)
    stage = {"alpha": 0, "beta": 1, None: 2}[m.group(2)]
    return (int(m.group(1)), stage, int(m.group(3) or 0))


@cache
def default_registry() -> SchemaRegistry:
    """The registry of the schemas shipped with this package (loaded once)."""
    return SchemaRegistry.from_directory(packaged_schema_root())
