"""The one ``$ref`` inliner (``kernelindex_sdk.schema.inlining``) and its two callers.

* Every shipped schema and every schema-diff fixture inlines, for the reference engine
  (``bundled.inlined_schema``) and for the fast engine (``fastengine._prepare``), to
  exactly what the two inliners it replaced made (``tests/fixtures/inlined/``, written
  by the old code).
* The callers differ only by the parameters they pass: the fast engine's flat schema is
  the reference's with annotations dropped.
* What it declines, it declines for both callers, in the root or in a document reached.

That the resolving engine agrees with the inlined one on every example file is
``test_inlined_schema.py``'s ``test_every_example_gets_the_same_problems_both_ways``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from test_schema_diff import CASE_FILES

from kernelindex_sdk.base.pointers import pointed_at
from kernelindex_sdk.base.recordformat import DRAFT_2020_12
from kernelindex_sdk.schema.bundled import inlined_schema
from kernelindex_sdk.schema.inlining import (
    DECLINED_KEYWORDS,
    Declined,
    Reference,
    _joined_simply,
    documents_of,
    inline,
    resolved,
)
from kernelindex_sdk.schema.registry import SchemaRegistry, default_registry
from kernelindex_sdk.validating import fastengine

ROOT = Path(__file__).resolve().parent.parent
BEFORE = json.loads(
    (ROOT / "tests" / "fixtures" / "inlined" / "before-one-inliner.json").read_text("utf-8")
)["digests"]


def _registry(root: Path, files: dict[str, Any]) -> SchemaRegistry:
    """``files`` (name → schema) as https://example.dev/v1/<name>."""
    directory = root / "example.dev" / "v1"
    directory.mkdir(parents=True)
    for name, schema in files.items():
        body = schema
        if isinstance(schema, dict):
            body = {"$schema": DRAFT_2020_12, "$id": f"https://example.dev/v1/{name}", **schema}
        (directory / name).write_text(json.dumps(body), encoding="utf-8")
    return SchemaRegistry.from_directory(root)


def _results(tag: str, registry: SchemaRegistry) -> dict[str, str]:
    """What both callers make of every schema of ``registry``, as the fixture hashes it."""
    found = {}
    for entry in registry.all_entries:
        found[f"{tag} ref {entry.id}"] = json.dumps(inlined_schema(entry.id, registry))
        try:
            flat, formats = fastengine._prepare(registry, entry.id)
            fast = json.dumps([flat, sorted(formats)], sort_keys=True)
        except fastengine.Unsupported:
            fast = "Unsupported"
        found[f"{tag} fast {entry.id}"] = fast
    return {key: hashlib.sha256(text.encode()).hexdigest()[:16] for key, text in found.items()}


def _fixture_sides() -> list[tuple[str, dict[str, Any]]]:
    sides = []
    for path in CASE_FILES:
        case = json.loads(path.read_text("utf-8"))
        for side in ("old", "new"):
            schema = case[side]
            files = schema.get("files", {"thing.schema.json": schema})
            sides.append((f"{path.stem}-{side}", files))
    return sides


def test_every_shipped_schema_inlines_as_before() -> None:
    found = _results("shipped", default_registry())
    assert found == {key: BEFORE[key] for key in found}


@pytest.mark.parametrize(("tag", "files"), _fixture_sides(), ids=lambda v: str(v)[:60])
def test_every_schema_diff_fixture_inlines_as_before(
    tmp_path: Path, tag: str, files: dict[str, Any]
) -> None:
    if not any(key.startswith(f"{tag} ") for key in BEFORE):
        # Added after the one inliner (Draft 4's `id` is no registry's $id, say).
        pytest.skip(f"{tag}: a fixture added after the one inliner")
    found = _results(tag, _registry(tmp_path / tag, files))
    known = {key: value for key, value in found.items() if key in BEFORE}
    assert known == {key: BEFORE[key] for key in known}


@pytest.mark.parametrize("entry", default_registry().all_entries, ids=lambda e: e.id[-40:])
def test_the_callers_differ_only_by_their_parameters(entry: Any) -> None:
    """One inliner, one answer: the reference's schema is :func:`inline` with no
    parameter, the fast engine's is :func:`inline` with annotations dropped (its
    keyword checks decline, never rewrite; no shipped $ref stands beside an allOf)."""
    registry = default_registry()
    documents = documents_of(registry)
    assert inlined_schema(entry.id, registry) == inline(documents, entry.id)
    flat, _ = fastengine._prepare(registry, entry.id)
    assert flat == inline(documents, entry.id, dropped=fastengine._DROPPED)


def _declines(files: dict[str, Any], tmp_path: Path) -> tuple[bool, bool, str]:
    registry = _registry(tmp_path, files)
    thing = "https://example.dev/v1/thing.schema.json"
    try:
        inline(documents_of(registry), thing)
        message = ""
    except Declined as error:
        message = str(error)
    try:
        fastengine._prepare(registry, thing)
        fast_declined = False
    except fastengine.Unsupported:
        fast_declined = True
    return inlined_schema(thing, registry) is None, fast_declined, message


@pytest.mark.parametrize("keyword", sorted(DECLINED_KEYWORDS))
@pytest.mark.parametrize("where", ["root", "referenced"])
def test_every_declined_keyword_is_declined_for_both_callers(
    tmp_path: Path, keyword: str, where: str
) -> None:
    value: Any = {"type": "string"} if keyword.startswith("uneval") else "#x"
    declining = {"properties": {"a": {keyword: value}}}
    files = (
        {"thing.schema.json": declining}
        if where == "root"
        else {
            "thing.schema.json": {"properties": {"b": {"$ref": "defs.schema.json"}}},
            "defs.schema.json": declining,
        }
    )
    reference, fast, message = _declines(files, tmp_path)
    assert reference and fast
    assert keyword in message


@pytest.mark.parametrize(
    ("files", "said"),
    [
        ({"thing.schema.json": {"$ref": "#/properties/a", "properties": {"a": {"$ref": "#"}}}},
         "recursive $ref"),
        ({"thing.schema.json": {"properties": {"a": {"$ref": "#/$defs/b"}},
                                "$defs": {"b": {"items": {"$ref": "#/$defs/b"}}}}},
         "recursive $ref"),
        ({"thing.schema.json": {"properties": {"a": {"$ref": "#name"}}}},
         "only JSON-pointer fragments"),
        ({"thing.schema.json": {"properties": {"a": {"$ref": "other.schema.json"}}}},
         "is not among the schemas given"),
        ({"thing.schema.json": {"properties": {"a": {"$ref": "#/$defs/none"}}}},
         "points at nothing"),
        ({"thing.schema.json": {"properties": {"a": {"$id": "https://x.dev/a", "type": "string"}}}},
         "embedded $id"),
        ({"thing.schema.json": {"properties": {"a": {"$ref": 5}}}}, "$ref is not a string"),
        ({"thing.schema.json": {"properties": {"a": {"$ref": "defs.schema.json"}}},
          "defs.schema.json": {"$schema": "http://json-schema.org/draft-07/schema#",
                               "type": "string"}},
         "$schema"),
    ],
    ids=["recursive-root", "recursive-def", "anchor-fragment", "unknown-document",
         "points-at-nothing", "embedded-id", "ref-not-a-string", "other-dialect"],
)  # fmt: skip
def test_the_declined_list(tmp_path: Path, files: dict[str, Any], said: str) -> None:
    reference, fast, message = _declines(files, tmp_path)
    assert reference and fast
    assert said in message


def test_a_ref_beside_allof_is_the_callers_rule(tmp_path: Path) -> None:
    """The reference declines it (the members' error paths would move); the fast
    engine, which reports no errors, takes the target as a last member."""
    files = {
        "thing.schema.json": {
            "allOf": [{"required": ["a"]}],
            "$ref": "#/$defs/b",
            "$defs": {"b": {"required": ["b"]}},
        }
    }
    registry = _registry(tmp_path, files)
    thing = "https://example.dev/v1/thing.schema.json"
    assert inlined_schema(thing, registry) is None
    flat, _ = fastengine._prepare(registry, thing)
    assert flat == {"allOf": [{"required": ["a"]}, {"required": ["b"]}]}


def test_a_pointer_reaches_what_rfc_6901_says() -> None:
    document = {"a/b": [{"~c": 1}], "": {"0": 2}}
    assert pointed_at(document, "") is document
    assert pointed_at(document, "/a~1b/0/~0c") == 1
    assert pointed_at(document, "//0") == 2
    for nowhere in ("/a~1b/1", "/a~1b/-", "/a~1b/x", "/a", "/a~1b/0/~0c/d"):
        with pytest.raises(LookupError):
            pointed_at(document, nowhere)


# ------------------------------------------------- joining references without urllib

_BASES = [
    "https://kernelindex.dev/schemas/v1alpha1/benchmark-run.schema.json",
    "https://kernelindex.dev/schemas/v1alpha1/bundle.schema.json#shell",
    "http://h/a/", "https://h", "https://h/", "HTTPS://h/a", "https://h:8080/a", "https://u@h/a",
    "https://h/a//b", "https://h/./a", "https://h/a/../b", "https://h/a;p", "https://h/a?q=1",
    "https://h/a%20b", "https://[::1]/a", "urn:x:y", "file:///a/b", "", "https://h/a b",
    "https://h/\ta", "tag:h,2026:a", "https://h/a#",
]  # fmt: skip
_REFS = [
    "#/$defs/spec", "common.schema.json#/$defs/uri", "benchmark-run.schema.json", "#", "",
    "x#", "#a#b", "#/a%2Fb", "#/a b", "#\t/a", " #/a", ".", "..", "./x", "../x", "a/b", "a:b",
    "//h2/x", "/abs", "?q", "x?q#f", "x;p", "#/é", "https://other/x#/y", "X.JSON#/a:b",
]  # fmt: skip
_PIECES = [*"ab/.:#%?;@[] \t\né-~_", "//", "..", "#/", "https://h/", "$defs"]


def _by_urllib(base: str, ref: str) -> Reference:
    from urllib.parse import unquote, urldefrag, urljoin

    uri = urljoin(base, ref)
    document, fragment = urldefrag(uri)
    return Reference(uri, document, fragment, (document, unquote(fragment)))


@settings(max_examples=examples(1000))
@given(
    st.sampled_from(_BASES)
    | st.lists(st.sampled_from(_PIECES), max_size=6).map(lambda p: "https://h/" + "".join(p)),
    st.sampled_from(_REFS) | st.lists(st.sampled_from(_PIECES), max_size=6).map("".join),
)
def test_references_join_as_urllib_joins_them(base: str, ref: str) -> None:
    assert _outcome(resolved.__wrapped__, base, ref) == _outcome(_by_urllib, base, ref)


def _outcome(join: Any, base: str, ref: str) -> object:
    """The reference, or the error (type and message) joining raised."""
    try:
        return join(base, ref)
    except ValueError as error:  # urllib's, for a malformed host
        return (type(error), str(error))


def test_the_shipped_schemas_references_join_without_urllib() -> None:
    registry = default_registry()
    pairs = 0
    for entry in registry.all_entries:
        for ref in _refs(entry.contents):
            assert _joined_simply(entry.id, ref) is not None, (entry.id, ref)
            pairs += 1
    assert pairs > 20


def _refs(value: Any) -> list[str]:
    """Every ``$ref`` in a schema."""
    if isinstance(value, dict):
        found = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return found + [ref for member in value.values() for ref in _refs(member)]
    if isinstance(value, list):
        return [ref for member in value for ref in _refs(member)]
    return []
