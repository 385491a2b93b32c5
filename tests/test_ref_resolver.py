"""The one ``$ref`` resolver (``kernelindex_sdk.schema.inlining``) and the two walkers that read it.

The inliner (for both engines) and the schema diff's normal form
(``schemadiff.normal``) resolve a ``$ref`` through the same functions — joining,
fragment rules, the target's key, what is declined — since #33; before, the normal
form had its own copies. Held here:

* **As before**: every shipped schema (``schemas/`` and ``schemas-released/``) and
  every side of every schema-diff fixture gives the same inlined schema (reference and
  fast engine) and the same normal form, or the same "undecided" reason, as the code
  before the shared resolver made (digests in ``tests/fixtures/inlined/one-resolver.json``,
  written by that code with :func:`snapshot`).
* **The shared rules**: how a ``$ref`` joins, what names its target, and which failure
  each walker sees first, the inliner as :class:`Declined`, the diff in its own words.

That the resolving engine agrees with the inlined one on every example file is
``test_inlined_schema.py``'s ``test_every_example_gets_the_same_problems_both_ways``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

import pytest

from kernelindex_sdk.base.recordformat import DRAFT_2020_12
from kernelindex_sdk.schema import inlining
from kernelindex_sdk.schema.dialects import dialect_of, id_keyword
from kernelindex_sdk.schema.inlining import Declined, NotAPointer, Reference, Unresolvable, inline
from kernelindex_sdk.schema.registry import SchemaRegistry, default_registry
from kernelindex_sdk.schemadiff._forms import Undecidable, Where, to_schema
from kernelindex_sdk.schemadiff.normal import Normalizer, UnresolvableRef
from kernelindex_sdk.validating import fastengine

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "examples" / "schema-diff"
SNAPSHOT = ROOT / "tests" / "fixtures" / "inlined" / "one-resolver.json"
#: A recursion target's name in a normal form: ``r<normalizer>_<n>``; the first
#: number counts normalizers made in this process, so it is left out.
_RECUR_NAME = re.compile(r'(["/])r\d+_(\d+)"')


def _sides() -> Iterator[tuple[str, dict[str, Any]]]:
    """Each set of documents read together, by URI: the two shipped registries, and
    each fixture side (its files at ``https://example.dev/v1/<name>``, or their own ``$id``)."""
    for tag, registry in (
        ("shipped", default_registry()),
        ("released", SchemaRegistry.from_directory(ROOT / "schemas-released")),
    ):
        yield tag, {urldefrag(e.id)[0]: e.contents for e in registry.all_entries}
    for path in sorted(CASES.glob("*.json")):
        case = json.loads(path.read_text("utf-8"))
        for side in ("old", "new"):
            files = case[side].get("files", {"thing.schema.json": case[side]})
            documents: dict[str, Any] = {}
            for name, schema in files.items():
                keyword = id_keyword(dialect_of(schema) or DRAFT_2020_12)
                declared = schema.get(keyword)
                uri = f"https://example.dev/v1/{name}"
                if isinstance(declared, str):
                    uri = urldefrag(urljoin(uri, declared))[0]
                documents[uri] = {**schema, keyword: uri}
            yield f"{path.stem}-{side}", documents


def _normalizer(documents: Mapping[str, Any]) -> Normalizer:
    return Normalizer(documents)


def _digest(results: dict[str, Any]) -> str:
    text = json.dumps(results, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def snapshot() -> dict[str, str]:
    """Per side, a digest of what each walker makes of each document: the reference
    engine's inlined schema, the fast engine's (with its formats), the normal form
    written back (:func:`to_schema`), each failure by its class (the diff's with its
    message, which the user reads)."""
    found: dict[str, str] = {}
    for tag, documents in _sides():
        inlined: dict[str, Any] = {}
        fast: dict[str, Any] = {}
        forms: dict[str, Any] = {}
        normalizer = _normalizer(documents)
        for uri in documents:
            try:
                inlined[uri] = inline(documents, uri)
            except Declined:
                inlined[uri] = "Declined"
            try:
                flat, formats = fastengine._flatten(documents, uri)
                fast[uri] = [flat, sorted(formats)]
            except fastengine.Unsupported:
                fast[uri] = "Unsupported"
            try:
                text = json.dumps(to_schema(normalizer.document(uri)), sort_keys=True)
                forms[uri] = _RECUR_NAME.sub(r'\1r_\2"', text)
            except (Undecidable, UnresolvableRef) as error:
                forms[uri] = f"{type(error).__name__}: {error}"
        found[f"{tag} inline"] = _digest(inlined)
        found[f"{tag} fast"] = _digest(fast)
        found[f"{tag} normal"] = _digest(forms)
    return found


def test_every_shipped_schema_and_fixture_side_reads_as_before() -> None:
    before = json.loads(SNAPSHOT.read_text("utf-8"))["digests"]
    found = snapshot()
    # Every side the snapshot knows is still read, and read as before; fixture cases
    # added after the snapshot (#34's) have no "before" to hold them to.
    assert len(before) > 500
    assert sorted(set(before) - set(found)) == []
    changed = sorted(key for key in before if found[key] != before[key])
    assert changed == []


# --------------------------------------------------------------------------- the rules


def test_a_ref_joins_to_its_document_and_names_its_target_by_pointer() -> None:
    base = "https://example.dev/v1/thing.schema.json"
    assert inlining.resolved(base, "common.schema.json#/$defs/a%20b") == Reference(
        "https://example.dev/v1/common.schema.json#/$defs/a%20b",
        "https://example.dev/v1/common.schema.json",
        "/$defs/a%20b",
        ("https://example.dev/v1/common.schema.json", "/$defs/a b"),
    )
    # Two spellings of one place are one target (a recursion is met whichever is used).
    assert (
        inlining.resolved(base, "#/$defs/a%20b").key == inlining.resolved(base, "#/$defs/a b").key
    )
    assert inlining.resolved(base, "#").key == inlining.resolved(base, "").key == (base, "")


_DOCUMENTS = {"https://x.dev/a": {"$defs": {"a b": {"type": "string"}, "t/u": True}}}


@pytest.mark.parametrize(
    ("ref", "found"),
    [
        ("#/$defs/a%20b", {"type": "string"}),
        ("#/$defs/t~1u", True),
        ("", _DOCUMENTS["https://x.dev/a"]),
        ("b", Unresolvable),
        ("b#name", Unresolvable),  # the document first, then the fragment
        ("#name", NotAPointer),
        ("#/$defs/none", Unresolvable),
    ],
)
def test_what_a_ref_points_at(ref: str, found: Any) -> None:
    reference = inlining.resolved("https://x.dev/a", ref)
    if isinstance(found, type):
        with pytest.raises(found, match=re.escape(repr(ref))):
            inlining.target(_DOCUMENTS, reference, ref)
    else:
        assert inlining.target(_DOCUMENTS, reference, ref) == found


@pytest.mark.parametrize(
    ("ref", "error", "said"),
    [
        ("#/$defs/none", UnresolvableRef, "cannot be resolved offline"),
        ("#name", Undecidable, "only JSON-pointer fragments are compared"),
    ],
)
def test_the_diff_words_what_the_inliner_declines(
    ref: str, error: type[Exception], said: str
) -> None:
    """The diff meets each failure of :func:`target` where the inliner does, and says
    it located, with the URI the ``$ref`` names."""
    uri = "https://x.dev/a"
    documents = {uri: {**_DOCUMENTS[uri], "properties": {"p": {"$ref": ref}}}}
    with pytest.raises(error) as raised:
        Normalizer(documents).document(uri)
    assert said in str(raised.value)
    assert repr(inlining.resolved(uri, ref).uri) in str(raised.value)
    assert raised.value.where == Where(uri, "/properties/p/$ref")  # type: ignore[attr-defined]
    with pytest.raises(Declined):
        inline(documents, uri)


def test_a_ref_into_a_document_not_given_is_an_external_schema_to_the_diff() -> None:
    """Where the inliner declines a document it was not given, the diff keeps the
    ``$ref`` as an external schema known by its absolute URI (never fetched)."""
    uri = "https://x.dev/a"
    documents = {uri: {**_DOCUMENTS[uri], "properties": {"p": {"$ref": "b#/c"}}}}
    form = to_schema(Normalizer(documents).document(uri))
    assert "https://x.dev/b#/c" in json.dumps(form)
    with pytest.raises(Declined):
        inline(documents, uri)
