"""``bundled.inlined_schema`` and the reference engine that validates with it.

The reference engine (python-jsonschema) explains every invalid record; it now walks
each schema with its ``$ref``\\ s replaced by their targets instead of resolving them
one by one. That is a speed-up only if nothing it says changes: here the inlined
engine is held to the engine that resolves as the schemas are written — the same
problems, in the same order, and the same verdicts — on every example the project
ships, on any node of a valid bundle replaced by any JSON value, and on hand-made
schemas that use ``$ref`` beside other keywords, ``unevaluatedProperties``, boolean
targets and combinators. Where inlining cannot be exact it must decline.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import seed_paths
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import replaced_at, value_paths

from kernelindex_sdk.base.recordformat import DRAFT_2020_12
from kernelindex_sdk.errors import IntakeError
from kernelindex_sdk.models import unstructure
from kernelindex_sdk.models.strategies import consistent_bundles, json_values
from kernelindex_sdk.reading.intake import Document
from kernelindex_sdk.reading.sources import documents
from kernelindex_sdk.schema.bundled import inlined_schema
from kernelindex_sdk.schema.registry import SchemaRegistry, default_registry
from kernelindex_sdk.validating.engine import JsonschemaEngine

REGISTRY = default_registry()
INLINED = JsonschemaEngine(REGISTRY)
RESOLVED = JsonschemaEngine(REGISTRY, inline=False)
EXAMPLES = Path(__file__).parent / "examples"
KIND_IDS = [entry.id for entry in REGISTRY.all_entries if entry.kind is not None]


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _same_both_ways(schema_id: str, value: Any) -> bool:
    """The inlined engine says exactly what the resolving one says; whether it found
    a problem."""
    problems = RESOLVED.problems(schema_id, value, "/x")
    assert INLINED.problems(schema_id, value, "/x") == problems
    assert INLINED.is_valid(schema_id, value) == RESOLVED.is_valid(schema_id, value)
    return bool(problems)


# --------------------------------------------------------------------------- the rewrite


@pytest.mark.parametrize("entry", REGISTRY.all_entries, ids=lambda e: e.id.rsplit("/", 1)[-1])
def test_every_packaged_schema_inlines_with_no_ref_left(entry: Any) -> None:
    inlined = inlined_schema(entry.id, REGISTRY)
    assert inlined is not None

    def keys(node: Any) -> set[str]:
        """Every key of every object in ``node`` (data keywords' values left out)."""
        if isinstance(node, dict):
            data = ("enum", "const", "default", "examples")
            return set(node).union(*(keys(v) for k, v in node.items() if k not in data))
        if isinstance(node, list):
            return set().union(*map(keys, node))
        return set()

    assert not {"$ref", "$defs"} & keys(inlined)
    if entry.kind is not None:  # not vacuous: every kind's schema reaches others by $ref
        assert "$ref" in keys(entry.contents)


def test_the_bundle_schema_is_its_members_schemas() -> None:
    """A ``$ref`` alone is replaced by its target: the bundle's members are the kinds'
    inlined schemas, shared rather than copied where one is used twice."""
    bundle = inlined_schema(REGISTRY.bundle("kernelindex.dev/v1alpha1").id, REGISTRY)
    assert bundle is not None
    run = inlined_schema(REGISTRY.route("kernelindex.dev/v1alpha1", "BenchmarkRun").id, REGISTRY)
    assert run is not None
    member = bundle["properties"]["run"]
    run.pop("$schema", None)
    run.pop("$id", None)
    assert _text({k: v for k, v in member.items() if k not in ("$schema", "$id")}) == _text(run)
    # The run's four digests refer to one definition: one object, not four copies.
    spec = member["properties"]["spec"]["properties"]
    digests = [spec[f"{name}Digest"] for name in ("protocol", "workload", "environment")]
    assert digests[0] is digests[1] is digests[2] and digests[0]["pattern"]


def _registry(tmp_path: Path, schemas: dict[str, dict[str, Any]]) -> SchemaRegistry:
    """A registry of ``schemas`` (file name → schema) under https://example.dev/v1/."""
    directory = tmp_path / "example.dev" / "v1"
    directory.mkdir(parents=True)
    for name, schema in schemas.items():
        body = {"$schema": DRAFT_2020_12, "$id": f"https://example.dev/v1/{name}", **schema}
        (directory / name).write_text(json.dumps(body), encoding="utf-8")
    return SchemaRegistry.from_directory(tmp_path)


THING = "https://example.dev/v1/thing.schema.json"


def test_a_ref_beside_other_keywords_becomes_allof_in_its_place(tmp_path: Path) -> None:
    registry = _registry(
        tmp_path,
        {
            "thing.schema.json": {
                "type": "object",
                "required": ["a"],
                "$ref": "defs.schema.json#/$defs/named",
                "properties": {"a": {"$ref": "defs.schema.json#/$defs/small"}},
            },
            "defs.schema.json": {
                "$defs": {
                    "named": {"required": ["name"]},
                    "small": {"type": "integer", "maximum": 3},
                }
            },
        },
    )
    inlined = inlined_schema(THING, registry)
    assert inlined is not None
    assert list(inlined) == ["$schema", "type", "required", "allOf", "properties"]  # no $id
    assert inlined["allOf"] == [{"required": ["name"]}]
    assert inlined["properties"]["a"] == {"type": "integer", "maximum": 3}


@pytest.mark.parametrize(
    "schemas",
    [
        # recursive
        {"thing.schema.json": {"properties": {"next": {"$ref": "#"}}}},
        {
            "thing.schema.json": {
                "$ref": "#/$defs/a",
                "$defs": {"a": {"items": {"$ref": "#/$defs/a"}}},
            }
        },
        # a $ref beside an allOf: no place keeps the order
        {
            "thing.schema.json": {
                "allOf": [{"type": "object"}],
                "$ref": "#/$defs/a",
                "$defs": {"a": {"required": ["x"]}},
            }
        },
        # names and dynamic references
        {"thing.schema.json": {"$ref": "#/$defs/a", "$defs": {"a": {"$anchor": "here"}}}},
        {"thing.schema.json": {"$dynamicRef": "#meta"}},
        # an embedded $id
        {"thing.schema.json": {"properties": {"a": {"$id": "https://example.dev/v1/a"}}}},
        # a reference to nothing, or to a document nobody has
        {"thing.schema.json": {"$ref": "#/$defs/missing"}},
        {"thing.schema.json": {"$ref": "https://elsewhere.example/x.json"}},
        # another dialect anywhere in the registry
        {
            "thing.schema.json": {"type": "object"},
            "old.schema.json": {"$schema": "http://json-schema.org/draft-07/schema#"},
        },
    ],
    ids=[
        "recursive-root",
        "recursive-defs",
        "ref-beside-allof",
        "anchor",
        "dynamic-ref",
        "embedded-id",
        "ref-to-nothing",
        "unknown-document",
        "other-dialect",
    ],
)
def test_what_cannot_be_inlined_exactly_is_declined(
    tmp_path: Path, schemas: dict[str, dict[str, Any]]
) -> None:
    assert inlined_schema(THING, _registry(tmp_path, schemas)) is None


def test_a_declined_schema_is_still_validated_by_resolving(tmp_path: Path) -> None:
    registry = _registry(
        tmp_path,
        {
            "thing.schema.json": {
                "type": "object",
                "properties": {"next": {"$ref": "#"}, "n": {"type": "integer"}},
            }
        },
    )
    assert inlined_schema(THING, registry) is None
    engine = JsonschemaEngine(registry)
    assert engine.is_valid(THING, {"next": {"next": {"n": 1}}})
    problems = engine.problems(THING, {"next": {"next": {"n": "1"}}})
    assert [p.pointer for p in problems] == ["/next/next/n"]


# --------------------------------------------------------------------------- differential


def test_every_example_gets_the_same_problems_both_ways() -> None:
    paths = [str(EXAMPLES), *map(str, seed_paths())]
    checked = invalid = 0
    for document in documents(paths):
        if isinstance(document, IntakeError):
            continue
        assert isinstance(document, Document)
        values = document.value if isinstance(document.value, list) else [document.value]
        for value in values:
            for schema_id in [REGISTRY.bundle("kernelindex.dev/v1alpha1").id, *KIND_IDS]:
                invalid += _same_both_ways(schema_id, value)
                checked += 1
    # Not vacuous: many documents, most of them invalid against most schemas.
    assert checked > 500 and invalid > checked // 2


@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_any_value_anywhere_gets_the_same_problems_both_ways(data: st.DataObject) -> None:
    bundle = unstructure(data.draw(consistent_bundles()))
    path = data.draw(st.sampled_from(value_paths(bundle)))
    broken = replaced_at(bundle, path, data.draw(json_values))
    _same_both_ways(REGISTRY.bundle("kernelindex.dev/v1alpha1").id, broken)
    run = broken.get("run") if isinstance(broken, dict) else None
    for schema_id in KIND_IDS:
        _same_both_ways(schema_id, run)


#: Hand-made schemas whose $refs sit where inlining changes the most: beside other
#: keywords (before and after them), under unevaluatedProperties, to boolean schemas,
#: inside combinators whose messages come from their description or their sub-errors.
_DEFS: dict[str, Any] = {
    "$defs": {
        "named": {"type": "object", "properties": {"name": {"type": "string"}}},
        "never": False,
        "always": True,
        "small": {"type": "integer", "maximum": 3, "description": "a small integer"},
        "either": {
            "oneOf": [{"$ref": "#/$defs/small"}, {"type": "string", "pattern": "^x"}],
            "description": "a small integer or an x-word",
        },
        "any": {"anyOf": [{"$ref": "#/$defs/small"}, {"const": "z"}]},
    }
}
_THINGS = [
    # unevaluated*: declined (python-jsonschema reads a $ref's annotations its own way),
    # so these check that the engine then resolves, with the same answers
    {"$ref": "defs.schema.json#/$defs/named", "unevaluatedProperties": False},
    {
        "unevaluatedProperties": {"type": "integer"},
        "$ref": "defs.schema.json#/$defs/named",
        "properties": {"n": {"$ref": "defs.schema.json#/$defs/small"}},
    },
    {
        "properties": {
            "no": {"$ref": "defs.schema.json#/$defs/never"},
            "yes": {"$ref": "defs.schema.json#/$defs/always"},
        }
    },
    {
        "properties": {
            "e": {"$ref": "defs.schema.json#/$defs/either", "title": "e"},
            "a": {"$ref": "defs.schema.json#/$defs/any"},
        },
        "additionalProperties": {"$ref": "defs.schema.json#/$defs/small"},
    },
    {
        "type": "array",
        "prefixItems": [{"$ref": "defs.schema.json#/$defs/small"}],
        "items": {"$ref": "defs.schema.json#/$defs/either"},
        "minItems": 2,
    },
    {
        "if": {"$ref": "defs.schema.json#/$defs/named"},
        "then": {"required": ["name"]},
        "else": {"$ref": "defs.schema.json#/$defs/small"},
    },
    {
        "required": ["name"],
        "$ref": "defs.schema.json#/$defs/named",
        "properties": {"n": {"$ref": "defs.schema.json#/$defs/small"}},
        "additionalProperties": {"$ref": "defs.schema.json#/$defs/never"},
    },
    {"$ref": "defs.schema.json#/$defs/either"},
    {"items": {"$ref": "defs.schema.json#/$defs/never"}, "type": ["array", "object"]},
]


@pytest.mark.parametrize("index", range(len(_THINGS)))
@settings(max_examples=examples(200), deadline=None)
@given(data=st.data())
def test_hand_made_refs_get_the_same_problems_both_ways(
    tmp_path_factory: pytest.TempPathFactory, index: int, data: st.DataObject
) -> None:
    registry = _THING_REGISTRIES.get(index)
    if registry is None:
        registry = _registry(
            tmp_path_factory.mktemp("things"),
            {"thing.schema.json": copy.deepcopy(_THINGS[index]), "defs.schema.json": _DEFS},
        )
        _THING_REGISTRIES[index] = registry
    declined = "unevaluatedProperties" in _THINGS[index]
    assert (inlined_schema(THING, registry) is None) == declined
    inlined, resolved = JsonschemaEngine(registry), JsonschemaEngine(registry, inline=False)
    values = st.one_of(
        json_values,
        st.dictionaries(st.sampled_from(["name", "n", "e", "a", "no", "yes", "q"]), json_values),
        st.lists(st.one_of(st.integers(-2, 6), st.sampled_from(["x1", "y", "z"])), max_size=4),
    )
    value = data.draw(values)
    assert inlined.problems(THING, value) == resolved.problems(THING, value)
    assert inlined.is_valid(THING, value) == resolved.is_valid(THING, value)


_THING_REGISTRIES: dict[int, SchemaRegistry] = {}


def test_a_ref_that_is_not_a_string_is_declined(tmp_path: Path) -> None:
    registry = _registry(tmp_path, {"thing.schema.json": {"properties": {"a": {"$ref": 5}}}})
    assert inlined_schema(THING, registry) is None
