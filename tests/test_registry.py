"""The schema registry (routing, offline resolution, new versions) and bundled schemas."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import seed_paths
from jsonschema import Draft202012Validator

from kernelindex_sdk.errors import UnknownKind, UnresolvableReference
from kernelindex_sdk.models import API_VERSION, KINDS
from kernelindex_sdk.schema.bundled import bundled_schema
from kernelindex_sdk.schema.registry import (
    BUNDLE_KIND,
    SchemaRegistry,
    default_registry,
    packaged_schema_root,
)
from kernelindex_sdk.validating.engine import JsonschemaEngine
from kernelindex_sdk.validating.validation import ValidationSession, validate

V1ALPHA2 = "kernelindex.dev/v1alpha2"
RECORD_KINDS = sorted(k for k in KINDS if k != BUNDLE_KIND)


def write_schema(root: Path, version: str, name: str, contents: dict[str, Any]) -> Path:
    directory = root / "kernelindex.dev" / version
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(json.dumps(contents, indent=2), encoding="utf-8")
    return path


def write_thing(root: Path, properties: dict[str, Any], defs: dict[str, Any] | None = None) -> Path:
    """The schema of a ``Thing`` kind in version ``v1test``: ``properties`` beside its
    ``kind``, and ``defs`` as its ``$defs`` where given."""
    contents: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://kernelindex.dev/schemas/v1test/thing.schema.json",
        "type": "object",
        "properties": {"kind": {"const": "Thing"}, **properties},
    }
    if defs is not None:
        contents["$defs"] = defs
    return write_schema(root, "v1test", "thing.schema.json", contents)


@pytest.fixture
def two_versions(tmp_path: Path) -> Iterator[SchemaRegistry]:
    """A schema tree with v1alpha1 (as shipped) and a fake v1alpha2 made from it by
    changing only the ``$id``s and the apiVersion constant: no code changes."""
    shipped = packaged_schema_root() / "kernelindex.dev" / "v1alpha1"
    for path in sorted(shipped.glob("*.schema.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        write_schema(tmp_path, "v1alpha1", path.name, contents)
        newer = copy.deepcopy(contents)
        newer["$id"] = newer["$id"].replace("/v1alpha1/", "/v1alpha2/")
        if "apiVersion" in newer.get("$defs", {}):
            newer["$defs"]["apiVersion"]["const"] = V1ALPHA2
        write_schema(tmp_path, "v1alpha2", path.name, newer)
    yield SchemaRegistry.from_directory(tmp_path)


def seeds() -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in seed_paths()]


def as_version(document: dict[str, Any], api_version: str) -> dict[str, Any]:
    """A bundle (or record) with every record's apiVersion set to ``api_version``."""
    out = copy.deepcopy(document)
    for record in [out] if "kind" in out else out.values():
        record["apiVersion"] = api_version
    return out


# --------------------------------------------------------------------------- routing


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_routes_every_kind(kind: str) -> None:
    registry = default_registry()
    if kind == BUNDLE_KIND:
        entry = registry.bundle(API_VERSION)
        with pytest.raises(UnknownKind):  # a record claiming to be a Bundle is no record
            registry.route(API_VERSION, kind)
    else:
        entry = registry.route(API_VERSION, kind)
        assert entry.contents["properties"]["kind"]["const"] == kind
    assert (entry.api_version, entry.kind) == (API_VERSION, kind)
    assert entry.contents["title"] == kind
    assert registry.resources.contents(entry.id) == entry.contents


def test_known_lists_record_kinds() -> None:
    assert default_registry().known() == [f"{API_VERSION}/{k}" for k in RECORD_KINDS]
    assert default_registry().api_versions() == [API_VERSION]


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        (API_VERSION, "BenchmarkPotato"),
        ("kernelindex.dev/v9", "BenchmarkRun"),
        (API_VERSION, "benchmarkrun"),  # routing is exact; find() is the lenient one
        (None, "BenchmarkRun"),
        (API_VERSION, 5),
    ],
)
def test_unknown_pair_lists_known_kinds(api_version: object, kind: object) -> None:
    with pytest.raises(UnknownKind) as raised:
        default_registry().route(api_version, kind)
    error = raised.value
    assert (error.api_version, error.kind) == (api_version, kind)
    assert error.known == default_registry().known()
    for known in RECORD_KINDS:
        assert known in str(error)
    assert API_VERSION in str(error)


@pytest.mark.parametrize(
    "spelling", ["BenchmarkRun", "benchmarkrun", "BENCHMARKRUN", "bEnChMaRkRuN"]
)
def test_find_is_case_insensitive(spelling: str) -> None:
    assert default_registry().find(spelling).kind == "BenchmarkRun"


def test_find_bundle_and_versions() -> None:
    registry = default_registry()
    assert registry.find("bundle").kind == BUNDLE_KIND
    assert registry.find("workload", "v1alpha1").api_version == API_VERSION
    assert registry.find("workload", API_VERSION).api_version == API_VERSION
    with pytest.raises(UnknownKind):
        registry.find("workload", "v1alpha2")
    with pytest.raises(UnknownKind):
        registry.find("potato")


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("Run", "BenchmarkRun"),  # a word of the kind (#32: suggested nothing)
        ("protocl", "BenchmarkProtocol"),
        ("Enviroment", "ExecutionEnvironment"),
        ("workloads", "Workload"),
        ("Bundel", "Bundle"),
    ],
)
def test_unknown_kind_suggests_the_closest(given: str, meant: str) -> None:
    from click.testing import CliRunner

    from kernelindex_sdk.cli.app import cli

    with pytest.raises(UnknownKind) as raised:
        default_registry().find(given)
    assert str(raised.value).endswith(f"; did you mean {meant!r}?")
    result = CliRunner().invoke(cli, ["schema", "show", given])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and f"did you mean {meant!r}?" in result.stderr


def test_unknown_kind_far_from_all_suggests_nothing() -> None:
    with pytest.raises(UnknownKind) as raised:
        default_registry().find("potato")
    assert "did you mean" not in str(raised.value)


def test_common_definitions_are_support_not_kinds() -> None:
    registry = default_registry()
    assert [e.path.name for e in registry.support] == ["common.schema.json"]
    assert sorted(e.kind for e in registry) == sorted(KINDS)
    # What a $ref may point into: every kind's file, then the support files.
    assert registry.all_entries == (*registry.entries, *registry.support)
    assert registry.all_entries[-1].path.name == "common.schema.json"


# --------------------------------------------------------------------------- offline


@pytest.fixture
def remote_ref_registry(tmp_path: Path) -> SchemaRegistry:
    write_thing(tmp_path, {"spec": {"$ref": "https://example.com/x.json"}})
    return SchemaRegistry.from_directory(tmp_path)


@pytest.mark.usefixtures("no_network")
def test_unregistered_ref_fails_offline(remote_ref_registry: SchemaRegistry) -> None:
    entry = remote_ref_registry.route("kernelindex.dev/v1test", "Thing")
    for engine in (
        JsonschemaEngine(remote_ref_registry),
        JsonschemaEngine(remote_ref_registry, inline=False),
    ):
        with pytest.raises(UnresolvableReference, match=r"https://example\.com/x\.json") as raised:
            engine.is_valid(entry.id, {"kind": "Thing", "spec": {}})
        assert (raised.value.schema, raised.value.ref) == (entry.id, "https://example.com/x.json")
        with pytest.raises(UnresolvableReference, match=r"https://example\.com/x\.json"):
            engine.problems(entry.id, {"kind": "Thing", "spec": {}})


@pytest.mark.usefixtures("no_network")
def test_bundling_an_unregistered_ref_fails_offline(remote_ref_registry: SchemaRegistry) -> None:
    with pytest.raises(UnresolvableReference, match=r"https://example\.com/x\.json"):
        bundled_schema("thing", registry=remote_ref_registry)


@pytest.mark.usefixtures("no_network")
def test_shipped_schemas_validate_offline() -> None:
    for document in seeds():
        assert validate(document) == []


# --------------------------------------------------------------------------- new versions


def test_new_version_is_routed_without_code_change(two_versions: SchemaRegistry) -> None:
    registry = two_versions
    assert registry.api_versions() == [API_VERSION, V1ALPHA2]
    for kind in RECORD_KINDS:
        entry = registry.route(V1ALPHA2, kind)
        assert entry.id.endswith(f"/v1alpha2/{entry.path.name}")
        assert registry.route(API_VERSION, kind).id.endswith(f"/v1alpha1/{entry.path.name}")
    assert registry.bundle(V1ALPHA2).id.endswith("/v1alpha2/bundle.schema.json")
    assert f"{V1ALPHA2}/Workload" in registry.known()
    assert registry.find("workload").api_version == V1ALPHA2  # newest by default
    assert registry.find("workload", "v1alpha1").api_version == API_VERSION


@pytest.mark.usefixtures("no_network")
def test_new_version_validates_through_a_session(two_versions: SchemaRegistry) -> None:
    session = ValidationSession(registry=two_versions)
    for document in seeds():
        newer = as_version(document, V1ALPHA2)
        (item,) = session.check_document(newer)
        assert item.valid, item.problems
        assert item.kind == BUNDLE_KIND
        for member in ("run", "protocol", "environment"):
            (record_item,) = session.check_document(newer[member])
            assert record_item.valid, record_item.problems
        # The old version is still there, and the versions do not mix.
        assert session.check_document(document)[0].valid
        mixed = copy.deepcopy(newer)
        mixed["protocol"]["apiVersion"] = API_VERSION
        (mixed_item,) = session.check_document(mixed)
        assert [p.pointer for p in mixed_item.problems] == ["/protocol/apiVersion"]


def test_new_version_schema_is_applied(two_versions: SchemaRegistry) -> None:
    record = as_version(seeds()[0]["environment"], V1ALPHA2)
    record["spec"]["hardware"]["architecture"] = "ampere"
    (item,) = ValidationSession(registry=two_versions).check_document(record)
    assert [p.pointer for p in item.problems] == ["/spec/hardware/architecture"]


def test_default_registry_does_not_know_the_new_version() -> None:
    record = as_version(seeds()[0]["environment"], V1ALPHA2)
    (problem,) = validate(record)
    assert problem.code == "unknown-kind"
    assert API_VERSION in problem.message


# --------------------------------------------------------------------------- bundled schemas


def all_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            elif key not in ("const", "enum"):
                yield from all_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from all_refs(item)


def resolve_local(schema: dict[str, Any], ref: str) -> Any:
    node: Any = schema
    for token in ref.removeprefix("#").split("/")[1:]:
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_bundled_schema_is_self_contained(kind: str) -> None:
    schema = bundled_schema(kind)
    Draft202012Validator.check_schema(schema)
    assert "$id" not in schema
    assert json.dumps(schema).count('"$id"') == 0
    refs = list(all_refs(schema))
    assert refs, "every kind reaches the common definitions"
    for ref in refs:
        assert ref.startswith("#/"), ref
        resolve_local(schema, ref)  # raises KeyError if dangling
    # Validating needs no registry: a bare validator has nothing to resolve against.
    Draft202012Validator(schema).is_valid({})


def test_bundle_inlines_each_file_once() -> None:
    schema = bundled_schema("Bundle")
    files = sorted(k for k in schema["$defs"] if k.endswith(".schema.json"))
    assert files == [
        "benchmark-protocol.schema.json",
        "benchmark-run.schema.json",
        "common.schema.json",
        "execution-environment.schema.json",
        "implementation.schema.json",
        "workload.schema.json",
    ]
    run = schema["$defs"]["benchmark-run.schema.json"]
    assert run["properties"]["spec"] == {"$ref": "#/$defs/benchmark-run.schema.json/$defs/spec"}
    assert run["properties"]["metadata"] == {"$ref": "#/$defs/common.schema.json/$defs/metadata"}


def test_kind_own_definitions_stay_local() -> None:
    schema = bundled_schema("workload")
    assert schema["properties"]["spec"] == {"$ref": "#/$defs/spec"}
    assert schema["title"] == "Workload"


def test_bundled_schema_is_a_fresh_copy_each_time() -> None:
    first = bundled_schema("BenchmarkRun")
    first["$defs"]["spec"]["properties"].clear()
    first["$defs"]["common.schema.json"]["$defs"].clear()
    assert bundled_schema("BenchmarkRun")["$defs"]["spec"]["properties"]
    assert default_registry().find("BenchmarkRun").contents["$defs"]["spec"]["properties"]
    assert bundled_schema("Bundle")["$defs"]["common.schema.json"]["$defs"]


def test_bundled_schema_unknown_kind() -> None:
    with pytest.raises(UnknownKind):
        bundled_schema("potato")
    with pytest.raises(UnknownKind):
        bundled_schema("Workload", "v1alpha2")


def _mutations(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Valid and invalid variants of a seed bundle, formats and conditionals included."""
    yield document
    edits: list[tuple[tuple[str, ...], Any]] = [
        (("run", "spec", "observedAt"), "2024-13-03T15:38:37Z"),  # format date-time
        (("run", "spec", "observedAt"), "2024-02-30T15:38:37Z"),  # no such day
        (("protocol", "spec", "harness", "repository"), "https://exa mple.com"),  # format uri
        (("protocol", "spec", "harness", "repository"), "urn:isbn:0451450523"),  # valid uri
        (("run", "spec", "status"), "failed"),  # conditional: reason and no result
        (("run", "spec", "reason"), "x"),  # conditional: a passed run has no reason
        (("run", "spec", "memory"), {"peakBytes": {"median": 1}, "primaryStatistic": "median"}),
        (("run", "metadata", "name"), "Upper"),
        (("run", "spec", "timing", "latencyNs"), {}),
        (("run", "spec", "qualityFlags"), ["a", "a"]),
        (("environment", "spec", "hardware", "architecture"), "gfx90a"),
        (("environment", "spec", "software"), {"-bad": "1"}),
        (("environment", "extra"), 1),
        (("protocol", "spec", "measurement"), {"primaryStatistic": "median"}),  # anyOf
    ]
    for path, value in edits:
        changed = copy.deepcopy(document)
        node = changed
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        yield changed
    failed = copy.deepcopy(document)
    failed["run"]["spec"].update(status="oom", reason="out of memory")
    del failed["run"]["spec"]["timing"]
    del failed["run"]["spec"]["measurements"]
    yield failed


@pytest.mark.parametrize("path", seed_paths(), ids=lambda p: p.name)
def test_bundled_schema_accepts_what_the_registry_accepts(path: Path) -> None:
    registry = default_registry()
    engine = JsonschemaEngine(registry)
    document = json.loads(path.read_text(encoding="utf-8"))
    validators = {
        kind: Draft202012Validator(
            bundled_schema(kind), format_checker=Draft202012Validator.FORMAT_CHECKER
        )
        for kind in KINDS
    }
    outcomes = []
    for variant in _mutations(document):
        expected = engine.is_valid(registry.find(BUNDLE_KIND).id, variant)
        assert validators[BUNDLE_KIND].is_valid(variant) == expected
        outcomes.append(expected)
        for record in variant.values():
            if isinstance(record, dict) and record.get("kind") in KINDS:
                entry = registry.find(record["kind"])
                assert validators[entry.kind].is_valid(record) == engine.is_valid(entry.id, record)
    assert True in outcomes and False in outcomes


def test_bundled_schema_for_a_new_version(two_versions: SchemaRegistry) -> None:
    newest = bundled_schema("workload", registry=two_versions)
    assert newest["$defs"]["common.schema.json"]["$defs"]["apiVersion"]["const"] == V1ALPHA2
    older = bundled_schema("workload", "v1alpha1", registry=two_versions)
    assert older["$defs"]["common.schema.json"]["$defs"]["apiVersion"]["const"] == API_VERSION
    bundle = as_version(seeds()[0], V1ALPHA2)
    assert Draft202012Validator(bundled_schema("bundle", registry=two_versions)).is_valid(bundle)
    older_bundle = bundled_schema("bundle", "v1alpha1", registry=two_versions)
    assert not Draft202012Validator(older_bundle).is_valid(bundle)


def test_bundled_names_never_collide(tmp_path: Path) -> None:
    """A kind whose own $defs already use a file's name gets that file under another key,
    and a "$ref" inside const/enum data is data, left alone."""
    write_schema(
        tmp_path,
        "v1test",
        "common.schema.json",
        {
            "$id": "https://kernelindex.dev/schemas/v1test/common.schema.json",
            "$defs": {"name": {"type": "string"}},
        },
    )
    write_thing(
        tmp_path,
        {
            "name": {"$ref": "common.schema.json#/$defs/name"},
            "local": {"$ref": "#/$defs/common.schema.json"},
            "data": {"const": {"$ref": "not-a-reference"}},
            "$ref": {"enum": [{"$ref": "#/nowhere"}]},
        },
        defs={"common.schema.json": {"type": "integer"}},
    )
    registry = SchemaRegistry.from_directory(tmp_path)
    schema = bundled_schema("Thing", registry=registry)
    properties = schema["properties"]
    assert properties["name"] == {"$ref": "#/$defs/common.schema.json-2/$defs/name"}
    assert properties["local"] == {"$ref": "#/$defs/common.schema.json"}
    assert properties["data"] == {"const": {"$ref": "not-a-reference"}}
    assert properties["$ref"] == {"enum": [{"$ref": "#/nowhere"}]}
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"kind": "Thing", "name": "x", "local": 1})
    assert not validator.is_valid({"kind": "Thing", "name": 1})
    assert not validator.is_valid({"kind": "Thing", "local": "x"})


def test_from_directory_takes_str_and_refuses_an_empty_or_missing_folder(tmp_path: Path) -> None:
    from kernelindex_sdk.errors import SchemaDirectoryError
    from kernelindex_sdk.schema.registry import packaged_schema_root

    registry = SchemaRegistry.from_directory(str(packaged_schema_root()))
    assert {e.kind for e in registry.entries} >= {"BenchmarkRun", "Bundle"}
    with pytest.raises(SchemaDirectoryError, match="not a directory"):
        SchemaRegistry.from_directory(tmp_path / "missing")
    with pytest.raises(SchemaDirectoryError, match="no schemas"):
        SchemaRegistry.from_directory(tmp_path)
