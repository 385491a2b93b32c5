"""What ``schema diff`` compares: a schema file, a folder of them, or an installed apiVersion.

Each side of a diff is a :class:`SchemaSet`: the schemas whose kinds are compared, and a
:class:`~kernelindex_sdk.schema.registry.SchemaRegistry` of every document their ``$ref``\\ s
may reach — the folder's own files (a file's folder, for one file), or the installed
registry. Nothing outside it is ever read or fetched. A folder is walked as ``validate``
walks one (:func:`kernelindex_sdk.reading.sources.walk`), and what it cannot read — a folder
that cannot be listed or searched, a schema file that cannot be opened — is a
:class:`SchemaInputError` in the walk's own words, never passed over.

A kind's **apiVersion** is read off the schema itself (the ``const`` its ``apiVersion``
property resolves to; a bundle's, that of its ``run``), as records carry it, and
otherwise off the folder layout ``<group>/<version>/`` that ``schema export`` writes;
its **kind** as the registry reads it (``properties.kind.const``, or
``bundle.schema.json``). Kinds of two sides are matched by apiVersion and kind, or by
kind alone between two single versions that differ (``v1alpha1`` against ``v1alpha2``).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag

from kernelindex_sdk.base.recordformat import DRAFT_2020_12
from kernelindex_sdk.errors import IntakeError, KernelIndexError, NotARegularFile
from kernelindex_sdk.reading.sources import FileSource, load_file, walk
from kernelindex_sdk.reading.sources import path_error as _path_error
from kernelindex_sdk.schema.dialects import NAMES, dialect_of, id_keyword, validator_class
from kernelindex_sdk.schema.inlining import Unresolvable, resolved, target
from kernelindex_sdk.schema.registry import (
    BUNDLE_KIND,
    SchemaEntry,
    SchemaRegistry,
    default_registry,
)
from kernelindex_sdk.schema.registry import kind_of as _kind_of
from kernelindex_sdk.schemadiff._forms import to_schema
from kernelindex_sdk.schemadiff.normal import Normalizer
from kernelindex_sdk.validating.engine import python_regex

__all__ = ["SchemaInputError", "SchemaSet", "ecma_regex", "load", "match", "normalized"]

#: What names a schema file in a folder.
SCHEMA_SUFFIX = ".schema.json"


class SchemaInputError(KernelIndexError):
    """A side of a diff that cannot be read: exit 2, one line."""


@dataclass(frozen=True)
class SchemaSet:
    """One side of a diff: the kinds compared and the registry their refs resolve in."""

    #: How the side was named (a path or an apiVersion), for messages.
    label: str
    registry: SchemaRegistry
    kinds: tuple[SchemaEntry, ...]
    #: A single schema file was given: its kind is the only one compared.
    single: bool = False
    _documents: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def documents(self) -> Mapping[str, Any]:
        """The contents of every document a ``$ref`` may reach, by URI (no fragment)."""
        if not self._documents:
            for entry in self.registry.all_entries:
                self._documents[urldefrag(entry.id)[0]] = entry.contents
        return self._documents


def load(side: str | os.PathLike[str] | SchemaRegistry) -> SchemaSet:
    """A side of a diff from a file, a folder, an apiVersion, or a registry."""
    if isinstance(side, SchemaRegistry):
        return SchemaSet("registry", side, side.entries)
    text = os.fspath(side)
    path = Path(text)
    try:
        mode = os.stat(text).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return _installed(text)  # no such path: an apiVersion, or nothing
    except (OSError, ValueError) as error:
        # There, perhaps, but not to be looked at (a folder above it cannot be
        # searched): said as `validate` says it.
        raise SchemaInputError(str(_path_error(text, error).problem)) from None
    if stat.S_ISDIR(mode):
        files = _schema_files(text)
        if not files:
            raise SchemaInputError(f"{text}: no *.schema.json files in this folder")
        registry = _registry(files)
        _refuse_unreached(text, registry)
        return SchemaSet(text, registry, registry.entries)
    if stat.S_ISREG(mode):
        siblings = [p for p in sorted(path.parent.glob("*.schema.json")) if not _same(p, path)]
        # The siblings are there for the file's $refs: one that cannot be read is left
        # out (a $ref into it is then unresolvable), and does not stop the diff.
        registry = _registry([path], siblings)
        chosen = next(e for e in registry.all_entries if e.path.resolve() == path.resolve())
        return SchemaSet(text, registry, (chosen,), single=True)
    raise SchemaInputError(f"{text}: not a regular file or a folder")


def _installed(text: str) -> SchemaSet:
    registry = default_registry()
    versions = registry.api_versions()
    chosen = [v for v in versions if text in (v, v.rsplit("/", 1)[-1])]
    if not chosen:
        raise SchemaInputError(
            f"{text}: neither a schema file, a folder of schema files nor an apiVersion"
            f" of the installed registry ({', '.join(versions)})"
        )
    kinds = tuple(e for e in registry.entries if e.api_version == chosen[0])
    return SchemaSet(chosen[0], registry, kinds)


def _same(one: Path, other: Path) -> bool:
    """Whether two paths are one file (not, if ``one`` cannot be looked at)."""
    try:
        return one.samefile(other)
    except OSError:
        return False


def _schema_files(folder: str) -> list[Path]:
    """The ``*.schema.json`` files under ``folder``, any depth, walked as ``validate``
    walks a folder (:func:`kernelindex_sdk.reading.sources.walk`: names starting with ``.``
    left out, links followed). A folder that cannot be listed or searched, or an entry
    that may be or may hold a schema and cannot be read, stops the diff with the walk's
    own words: a schema left out would make a kind look removed, or the verdict
    "compatible" without ever reading it."""
    files: list[Path] = []
    for found in walk(folder):
        if isinstance(found, FileSource):
            if found.path.endswith(SCHEMA_SUFFIX):
                files.append(Path(found.path))
        elif not _passed_over(found):
            raise SchemaInputError(str(found.problem))
    return sorted(files)


def _passed_over(problem: IntakeError) -> bool:
    """Whether a walk's problem is about an entry that holds no schema: a FIFO, device
    or socket, or a dangling link, by a name other than ``*.schema.json``."""
    where = problem.problem.source or ""
    if where.endswith(SCHEMA_SUFFIX):
        return False
    if isinstance(problem, NotARegularFile):
        return True
    try:
        os.stat(where)
    except FileNotFoundError:
        return os.path.islink(where)  # a dangling link leads nowhere, to no folder either
    except OSError:
        pass
    return False


def _registry(files: list[Path], optional: Sequence[Path] = ()) -> SchemaRegistry:
    """A registry of these files (and of those ``optional`` files that can be read):
    ids, kinds and apiVersions as the module says."""
    loaded: list[tuple[Path, str, dict[str, Any]]] = []
    seen: dict[str, Path] = {}
    for path in [*files, *optional]:
        try:
            contents = _read(path)
        except SchemaInputError:
            if path in optional:
                continue
            raise
        own = path.resolve().as_uri()
        named = id_keyword(dialect_of(contents) or DRAFT_2020_12)  # checked by _read
        declared = contents.get(named)
        uri = resolved(own, declared).document if isinstance(declared, str) else own
        if declared != uri:  # so that relative refs resolve where this file is
            contents = {**contents, named: uri}
        if uri in seen:
            if path in optional:  # a sibling copy of the file compared, say
                continue
            raise SchemaInputError(f"{path}: $id {uri!r} is also the $id of {seen[uri]}")
        seen[uri] = path
        loaded.append((path, uri, contents))
    documents = {uri: contents for _, uri, contents in loaded}
    entries: list[SchemaEntry] = []
    support: list[SchemaEntry] = []
    for path, uri, contents in loaded:
        kind = _kind_of(path, contents)
        api_version = _declared_version(contents, uri, documents, kind) or _layout_version(path)
        entry = SchemaEntry(api_version, kind or path.name, uri, path, contents)
        (entries if kind else support).append(entry)
    routes: dict[tuple[str, str], SchemaEntry] = {}
    for entry in entries:
        other = routes.setdefault((entry.api_version, entry.kind), entry)
        if other is not entry and entry.path not in optional:
            raise SchemaInputError(
                f"{entry.path}: a second schema for {entry.api_version} {entry.kind}"
                f" (the first: {other.path})"
            )
    return SchemaRegistry(tuple(entries), tuple(support), routes)


def _refuse_unreached(folder: str, registry: SchemaRegistry) -> None:
    """A folder's schema files that name no kind and that no kind's ``$ref`` reaches
    (at any depth) would never be compared: the diff fails closed on them rather than
    report a verdict that never read them (with no kind at all, "0 kinds compared")."""
    reached = _reached(registry)
    lost = [e.path for e in registry.support if urldefrag(e.id)[0] not in reached]
    if not lost:
        return
    shown = ", ".join(str(p) for p in lost[:4]) + (
        f" and {len(lost) - 4} more" if len(lost) > 4 else ""
    )
    what = "a schema file names" if len(lost) == 1 else f"{len(lost)} schema files name"
    raise SchemaInputError(
        f"{folder}: {what} no kind (no properties.kind.const) and no kind's $ref reaches"
        f" {'it' if len(lost) == 1 else 'them'}, so nothing would compare"
        f" {'it' if len(lost) == 1 else 'them'}: {shown}"
    )


def _reached(registry: SchemaRegistry) -> set[str]:
    """The documents (URIs without fragment) the kinds of ``registry`` are or reach by
    ``$ref``, at any depth (every ``$ref`` string counts, wherever it is written)."""
    documents = {urldefrag(e.id)[0]: e.contents for e in registry.all_entries}
    todo = [urldefrag(e.id)[0] for e in registry.entries]
    reached: set[str] = set()
    while todo:
        uri = todo.pop()
        if uri in reached or uri not in documents:
            continue
        reached.add(uri)
        stack: list[Any] = [documents[uri]]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str):
                    todo.append(resolved(uri, ref).document)
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return reached


def _read(path: Path) -> dict[str, Any]:
    """A schema file's contents: strict JSON (integers of any size kept exact, as JSON
    Schema reads a bound), an object, a schema of a dialect it knows."""
    try:
        contents = load_file(path, big_integers=True)
    except IntakeError as error:
        raise SchemaInputError(str(error.problem)) from None
    if not isinstance(contents, dict):
        raise SchemaInputError(f"{path}: not a JSON Schema document (an object)")
    _check_schema(path, contents)
    return contents


def _check_schema(path: Path, contents: dict[str, Any]) -> None:
    """Refuse a file that is not a schema of its own dialect (``"required": 5``, a
    pattern that does not compile): the diff reads only well-formed schemas.
    (``definitions`` in a Draft 2020-12 file is a place to keep subschemas, as any
    unknown keyword is: its members are checked as schemas.)"""
    # A dialect not known is checked as Draft 2020-12 here, and is undecided later.
    dialect = dialect_of(contents) or DRAFT_2020_12
    try:
        problem = _meta_problem(json.dumps(contents, sort_keys=True), dialect)
    except RecursionError:
        raise SchemaInputError(
            f"{path}: nested too deeply to be checked against the {NAMES[dialect]}"
            " meta-schema (deeper than Python's recursion limit lets it go)"
        ) from None
    if problem is not None:
        raise SchemaInputError(f"{path}: not a {NAMES[dialect]} schema: {problem}")


@lru_cache(maxsize=256)
def _meta_problem(text: str, dialect: str = DRAFT_2020_12) -> str | None:
    """What the dialect's meta-schema finds wrong with a schema, by its text
    (remembered: checking against the meta-schema costs more than the diff of a small
    schema)."""
    from jsonschema.exceptions import best_match

    cls = validator_class(dialect)
    meta = cls(cls.META_SCHEMA, format_checker=_meta_formats(dialect))
    error = best_match(meta.iter_errors(json.loads(text)))
    if error is None:
        return None
    where = "".join(f"/{p}" for p in error.absolute_path)
    return f"{where or '/'}: {' '.join(error.message.split())[:200]}"


@lru_cache(maxsize=8)
def _meta_formats(dialect: str) -> Any:
    """The dialect's format checker, but for ``regex``, which JSON Schema reads as
    ECMA-262 (:func:`ecma_regex`), not as Python's ``re`` does."""
    from jsonschema import FormatChecker

    checker = FormatChecker()
    checker.checkers = {**validator_class(dialect).FORMAT_CHECKER.checkers}
    checker.checks("regex")(ecma_regex)
    return checker


def ecma_regex(instance: object) -> bool:
    """Whether a string is an ECMA-262 regular expression (a ``pattern`` may be any):
    as the ``regress`` engine (ECMA-262's grammar) reads it, with or without the
    ``u`` flag; without ``regress``, as Python reads it once
    :func:`~kernelindex_sdk.validating.engine.python_regex` has rewritten ECMA's own spellings,
    and ``\\p{…}``/``\\P{…}`` (which Python lacks) taken on trust."""
    if not isinstance(instance, str):
        return True
    try:
        import regress
    except ImportError:
        try:
            re.compile(python_regex(instance))
        except re.error:
            return "\\p{" in instance or "\\P{" in instance
        return True
    for flags in ("u", ""):
        try:
            regress.Regex(instance, flags)
        except regress.RegressError:
            continue
        return True
    return False


def _declared_version(
    contents: Mapping[str, Any], uri: str, documents: Mapping[str, Any], kind: str | None
) -> str | None:
    """The apiVersion a kind's schema demands of its records, when it states one."""
    member = "run" if kind == BUNDLE_KIND else "apiVersion"
    node: Any = contents.get("properties", {}).get(member)
    base = uri
    for _ in range(8):  # a few $ref hops at most; anything longer is not a plain constant
        if not isinstance(node, Mapping):
            return None
        if member == "run" and node is not contents and "properties" in node:
            return _declared_version(node, base, documents, None)
        if isinstance(node.get("const"), str):
            return str(node["const"])
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return None
        reference = resolved(base, ref)
        try:
            node, base = target(documents, reference, ref), reference.document
        except Unresolvable:
            return None
    return None


def _layout_version(path: Path) -> str:
    """``group/version`` from a file's folder and the one above it."""
    return f"{path.parent.parent.name}/{path.parent.name}"


def match(
    old: SchemaSet, new: SchemaSet
) -> tuple[list[tuple[SchemaEntry, SchemaEntry]], list[SchemaEntry], list[SchemaEntry]]:
    """(pairs of kinds to compare, kinds only OLD has, kinds only NEW has)."""
    if old.single and new.single:
        return [(old.kinds[0], new.kinds[0])], [], []
    for side in (old, new):
        if side.single and side.kinds[0].kind == side.kinds[0].path.name:
            raise SchemaInputError(
                f"{side.label}: names no kind (no properties.kind.const), so it matches"
                " nothing in the other side; compare it with one schema file"
            )
    versions_old = {e.api_version for e in old.kinds}
    versions_new = {e.api_version for e in new.kinds}
    by_kind = not versions_old & versions_new and len(versions_old) == len(versions_new) == 1

    def key(entry: SchemaEntry) -> tuple[str, str]:
        return ("", entry.kind) if by_kind else (entry.api_version, entry.kind)

    olds = {key(e): e for e in old.kinds}
    news = {key(e): e for e in new.kinds}
    if old.single:
        news = {k: e for k, e in news.items() if k in olds}
    if new.single:
        olds = {k: e for k, e in olds.items() if k in news}
    pairs = [(olds[k], news[k]) for k in olds if k in news]
    return (
        pairs,
        [e for k, e in olds.items() if k not in news],
        [e for k, e in news.items() if k not in olds],
    )


def normalized(side: SchemaSet) -> SchemaSet:
    """The same kinds, each schema replaced by its normal form, in Draft 2020-12:
    self-contained, no ``$ref`` (but, in a recursive schema, to its own ``$defs``),
    accepting exactly what it accepted (``diff(S, normalized(S))`` is empty)."""
    normalizer = Normalizer(side.documents)
    entries = []
    for entry in side.kinds:
        schema = to_schema(normalizer.document(urldefrag(entry.id)[0]))
        body = schema if isinstance(schema, dict) else {"allOf": [schema]}
        contents = {"$schema": DRAFT_2020_12, "$id": entry.id, **body}
        entries.append(SchemaEntry(entry.api_version, entry.kind, entry.id, entry.path, contents))
    routes = {(e.api_version, e.kind): e for e in entries}
    registry = SchemaRegistry(tuple(entries), (), routes)
    return SchemaSet(f"normalized {side.label}", registry, tuple(entries), side.single)
