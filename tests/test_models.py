"""The attrs models and their converter: wire shape, strictness, and located errors.

* The seeds structure and unstructure to themselves.
* Every model class matches its schema object field for field (wire names, required
  fields, JSON types, enums), walked through ``bundled_schema``.
* Structuring errors are :class:`Problem` objects with RFC 6901 pointers (law 4),
  and, where the schema engine reports the same mistake, at the same pointer.
"""

from __future__ import annotations

import copy
import json
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import attrs
import pytest
from conftest import seed_paths

from kernelindex_sdk.canonical import canonicalize
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.models import (
    API_VERSION,
    KINDS,
    BenchmarkRun,
    Bundle,
    Hardware,
    Metadata,
    ModelError,
    Workload,
    WorkloadSpec,
    structure,
    unstructure,
    wire_name,
)
from kernelindex_sdk.schema.bundled import bundled_schema
from kernelindex_sdk.schema.registry import default_registry
from kernelindex_sdk.validating.validation import validate

MEMBERS = ("run", "protocol", "workload", "environment", "implementation")


def workload() -> dict[str, Any]:
    """A small valid Workload record."""
    return {
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": {"name": "geglu-fwd", "labels": {"team/owner": "kernels"}},
        "spec": {
            "kernel": "geglu",
            "pass": "forward",
            "parameters": {"batch": 8, "hidden": 4096, "approximate": "tanh", "bias": False},
            "dtype": "bf16",
            "settings": {"nested": {"list": [1, 2.5, None, "x"]}},
        },
    }


def problems_of(data: Any, cls: type[Any]) -> list[Problem]:
    with pytest.raises(ModelError) as raised:
        structure(data, cls)
    assert str(raised.value)  # one line per problem, never empty
    return raised.value.problems


def located(problems: list[Problem]) -> list[tuple[str, str]]:
    return sorted((p.pointer, p.message) for p in problems)


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("path", seed_paths(), ids=lambda p: p.name)
def test_seed_round_trips(path: Path) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    bundle = structure(document, Bundle)
    assert unstructure(bundle) == document
    assert canonicalize(unstructure(bundle)) == canonicalize(document)
    for member in MEMBERS:
        if member in document:
            record = document[member]
            model = structure(record, KINDS[record["kind"]])
            assert unstructure(model) == record


def test_workload_round_trips_with_open_maps() -> None:
    record = workload()
    model = structure(record, Workload)
    assert isinstance(model.spec, WorkloadSpec)
    assert model.spec.pass_ == "forward"
    assert model.spec.parameters["bias"] is False
    assert unstructure(model) == record
    assert json.dumps(unstructure(model), sort_keys=True) == json.dumps(record, sort_keys=True)


def test_absent_optionals_are_left_out_and_envelope_is_filled_in() -> None:
    model = Workload(
        metadata=Metadata(name="w"),
        spec=WorkloadSpec(kernel="k", pass_="full", parameters={}, dtype="fp32"),
    )
    assert unstructure(model) == {
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": {"name": "w"},
        "spec": {"kernel": "k", "pass": "full", "parameters": {}, "dtype": "fp32"},
    }


def test_empty_containers_are_kept() -> None:
    """An empty map or list is data (the seeds carry ``software: {}``), not absence."""
    record = workload()
    record["spec"]["settings"] = {}
    record["metadata"]["labels"] = {}
    assert unstructure(structure(record, Workload)) == record


def test_arrays_come_back_as_lists(seed_bundle: dict[str, Any]) -> None:
    run = structure(seed_bundle["run"], BenchmarkRun)
    assert isinstance(run.spec.measurements, tuple)
    assert isinstance(unstructure(run)["spec"]["measurements"], list)


@pytest.mark.parametrize(
    ("attribute", "wire"),
    [
        ("name", "name"),
        ("primary_statistic", "primaryStatistic"),
        ("latency_ns", "latencyNs"),
        ("flush_l2_cache", "flushL2Cache"),
        ("pass_", "pass"),
        ("api_version", "apiVersion"),
    ],
)
def test_wire_name(attribute: str, wire: str) -> None:
    assert wire_name(attribute) == wire


def test_kinds_are_the_registered_kinds() -> None:
    registered = {e.kind for e in default_registry() if e.api_version == API_VERSION}
    assert set(KINDS) == registered
    for kind, cls in KINDS.items():
        if kind != "Bundle":
            assert attrs.fields_dict(cls)["kind"].default == kind
            assert attrs.fields_dict(cls)["api_version"].default == API_VERSION


# --------------------------------------------------------------------------- models = schemas


def _deref(root: Mapping[str, Any], node: Any) -> Any:
    while isinstance(node, Mapping) and "$ref" in node:
        target: Any = root
        for token in node["$ref"].removeprefix("#").split("/")[1:]:
            target = target[token.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def _strip_none(tp: Any) -> Any:
    if get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) < len(get_args(tp)):
            return args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007
    return tp


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _json_types(tp: Any) -> set[str]:
    """The JSON types a scalar annotation admits (int | float is just "number")."""
    members = get_args(tp) if get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
    found = {_JSON_TYPES[m] for m in members}
    if "number" in found:
        found.discard("integer")
    return found


def _agree(root: Mapping[str, Any], tp: Any, node: Any, where: str, seen: list[str]) -> None:
    """Assert that annotation ``tp`` describes exactly what schema ``node`` accepts."""
    node = _deref(root, node)
    tp = _strip_none(tp)
    seen.append(where)
    if attrs.has(tp):
        assert node.get("type") == "object", where
        assert node.get("additionalProperties") is False, where
        hints = typing.get_type_hints(tp)
        fields = {wire_name(f.name): f for f in attrs.fields(tp)}
        assert set(fields) == set(node["properties"]), where
        on_wire_always = {w for w, f in fields.items() if f.default is not None}
        assert on_wire_always == set(node.get("required", [])), where
        for wire, field in fields.items():
            _agree(root, hints[field.name], node["properties"][wire], f"{where}/{wire}", seen)
    elif get_origin(tp) is tuple:
        assert node.get("type") == "array", where
        _agree(root, get_args(tp)[0], node["items"], f"{where}/*", seen)
    elif get_origin(tp) in (Mapping, dict):
        key_type, value_type = get_args(tp)
        assert node.get("type") == "object", where
        assert "properties" not in node, where
        if value_type is Any:
            assert node.get("additionalProperties", True) is True, where
        else:
            _agree(root, value_type, node["additionalProperties"], f"{where}/*", seen)
        if get_origin(key_type) is Literal:
            names = _deref(root, node["propertyNames"])
            assert set(get_args(key_type)) == set(names["enum"]), where
    elif get_origin(tp) is Literal:
        allowed = set(node["enum"]) if "enum" in node else {node["const"]}
        assert set(get_args(tp)) == allowed, where
    else:
        expected = node["type"]
        expected = {expected} if isinstance(expected, str) else set(expected)
        assert _json_types(tp) == expected, where


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_model_matches_schema_field_for_field(kind: str) -> None:
    schema = bundled_schema(kind)
    seen: list[str] = []
    _agree(schema, KINDS[kind], schema, kind, seen)
    assert len(seen) > 5


# --------------------------------------------------------------------------- law 4: errors


_DELETE = object()

#: (where to change the seed bundle, new value, pointer expected, message fragment)
BUNDLE_ERRORS = [
    pytest.param("/run/spec/bogus", 1, "/run/spec/bogus", "unknown field 'bogus'", id="unknown"),
    pytest.param("/bogus", {}, "/bogus", "unknown field 'bogus'", id="unknown-top"),
    pytest.param(
        "/run/spec/primary_statistic", "x", "/run/spec/primary_statistic", "unknown field",
        id="snake-case-is-unknown",
    ),
    pytest.param(
        "/run/spec/status", _DELETE, "/run/spec", "missing required field 'status'", id="missing"
    ),
    pytest.param(
        "/run/metadata", _DELETE, "/run", "missing required field 'metadata'", id="missing-top"
    ),
    pytest.param(
        "/run/spec/observedAt", 5, "/run/spec/observedAt", "expected string, got number",
        id="type",
    ),
    pytest.param(
        "/run/spec/status", "exploded", "/run/spec/status", "'exploded' is not one of",
        id="enum",
    ),
    pytest.param(
        "/run/spec/status", 3, "/run/spec/status", "expected one of 'passed'", id="enum-type"
    ),
    pytest.param(
        "/run/kind", "Workload", "/run/kind", "'Workload' is not one of 'BenchmarkRun'",
        id="kind",
    ),
    pytest.param(
        "/run/apiVersion", "kernelindex.dev/v9", "/run/apiVersion", "is not one of",
        id="api-version",
    ),
    pytest.param(
        "/run/spec/measurements/1/unit", "furlong", "/run/spec/measurements/1/unit",
        "'furlong' is not one of", id="enum-in-list",
    ),
    pytest.param(
        "/run/spec/measurements/1/extra", 1, "/run/spec/measurements/1/extra",
        "unknown field 'extra'", id="unknown-in-list",
    ),
    pytest.param(
        "/run/spec/measurements/0/value", "7", "/run/spec/measurements/0/value",
        "expected number, got string", id="type-in-list",
    ),
    pytest.param(
        "/run/spec/measurements", {"0": {}}, "/run/spec/measurements",
        "expected array, got object", id="object-for-array",
    ),
    pytest.param(
        "/run/spec/qualityFlags", "abc", "/run/spec/qualityFlags", "expected array, got string",
        id="string-for-array",
    ),
    pytest.param(
        "/environment/spec/hardware", None, "/environment/spec/hardware",
        "expected object, got null", id="null-for-object",
    ),
    pytest.param(
        "/environment/spec/hardware/count", 1.5, "/environment/spec/hardware/count",
        "expected integer, got number", id="float-for-integer",
    ),
    pytest.param(
        "/environment/spec/hardware/memoryBytes", True, "/environment/spec/hardware/memoryBytes",
        "expected integer, got boolean", id="bool-for-integer",
    ),
    pytest.param(
        "/run/spec/timing/latencyNs/median", True, "/run/spec/timing/latencyNs/median",
        "expected integer, got boolean", id="bool-in-summary",
    ),
    pytest.param(
        "/run/spec/timing/latencyNs/p50", 1, "/run/spec/timing/latencyNs/p50",
        "'p50' is not one of", id="bad-statistic-key",
    ),
    pytest.param(
        "/environment/spec/software/torch", 2.4, "/environment/spec/software/torch",
        "expected string, got number", id="number-for-string-in-map",
    ),
    pytest.param(
        "/run/metadata/labels/team~1owner", 5, "/run/metadata/labels/team~1owner",
        "expected string, got number", id="slash-in-key",
    ),
    pytest.param(
        "/run/spec/sourceNative/metrics/ms~0p50", "1", "/run/spec/sourceNative/metrics/ms~0p50",
        "expected number, got string", id="tilde-in-key",
    ),
    pytest.param(
        "/protocol/spec/measurement/quantiles", [0.5, "x"],
        "/protocol/spec/measurement/quantiles/1", "expected number, got string",
        id="index-in-array",
    ),
    pytest.param(
        "/run/spec/a~1b~0c", 1, "/run/spec/a~1b~0c", "unknown field 'a/b~c'",
        id="unknown-key-escaped",
    ),
]  # fmt: skip


def mutated(document: dict[str, Any], at: str, value: Any) -> dict[str, Any]:
    """A copy of ``document`` with the value at pointer ``at`` set (or deleted)."""
    out = copy.deepcopy(document)
    *head, last = at.split("/")[1:]
    parent: Any = out
    for token in head:
        parent = parent[int(token)] if isinstance(parent, list) else parent[token]
    last = last.replace("~1", "/").replace("~0", "~")
    if value is _DELETE:
        del parent[last]
    else:
        parent[last] = value
    return out


@pytest.mark.parametrize(("at", "value", "pointer", "message"), BUNDLE_ERRORS)
def test_structure_errors_are_located(
    seed_bundle: dict[str, Any], at: str, value: Any, pointer: str, message: str
) -> None:
    document = mutated(seed_bundle, at, value)
    (problem,) = problems_of(document, Bundle)
    assert problem.pointer == pointer
    assert message in problem.message
    assert problem.code == "model"
    assert "\n" not in problem.message


#: Cases where the schema engine sees the same mistake and must put it at the same place
#: (an unknown apiVersion is not one: validation cannot route the record at all).
SAME_POINTER_AS_SCHEMA = {
    "unknown", "unknown-top", "snake-case-is-unknown", "missing", "missing-top", "type",
    "enum", "enum-type", "kind", "enum-in-list", "unknown-in-list",
    "type-in-list", "object-for-array", "string-for-array", "null-for-object",
    "float-for-integer", "bool-for-integer", "bool-in-summary", "number-for-string-in-map",
    "slash-in-key", "tilde-in-key", "index-in-array", "unknown-key-escaped",
}  # fmt: skip


@pytest.mark.parametrize(
    ("at", "value", "pointer", "message"),
    [case for case in BUNDLE_ERRORS if case.id in SAME_POINTER_AS_SCHEMA],
)
def test_model_and_schema_errors_point_at_the_same_place(
    seed_bundle: dict[str, Any], at: str, value: Any, pointer: str, message: str
) -> None:
    document = mutated(seed_bundle, at, value)
    schema_pointers = {p.pointer for p in validate(document)}
    assert pointer in schema_pointers


def test_every_problem_is_reported_not_only_the_first(seed_bundle: dict[str, Any]) -> None:
    document = copy.deepcopy(seed_bundle)
    document["run"]["spec"]["bogus"] = 1
    del document["run"]["spec"]["observedAt"]
    document["run"]["spec"]["measurements"][0]["unit"] = "furlong"
    document["environment"]["spec"]["hardware"]["count"] = "2"
    document["environment"]["spec"]["software"] = {"torch": 2, "a/b": None, "ok": "1.0"}
    assert [p.pointer for p in sorted(problems_of(document, Bundle), key=lambda p: p.pointer)] == [
        "/environment/spec/hardware/count",
        "/environment/spec/software/a~1b",
        "/environment/spec/software/torch",
        "/run/spec",
        "/run/spec/bogus",
        "/run/spec/measurements/0/unit",
    ]


def test_open_map_reports_every_bad_entry() -> None:
    record = workload()
    record["spec"]["parameters"] = {"a/b": None, "c~d": [1], "ok": 1}
    assert located(problems_of(record, Workload)) == [
        ("/spec/parameters/a~1b", "expected number or string or boolean, got null"),
        ("/spec/parameters/c~0d", "expected number or string or boolean, got array"),
    ]


def test_wire_name_in_missing_field_message() -> None:
    record = workload()
    del record["spec"]["pass"]
    assert located(problems_of(record, Workload)) == [("/spec", "missing required field 'pass'")]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (5, "expected object, got number"),
        ([], "expected object, got array"),
        (None, "expected object, got null"),
        ("record", "expected object, got string"),
    ],
)
def test_not_an_object_at_the_top(data: Any, message: str) -> None:
    assert located(problems_of(data, Workload)) == [("", message)]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("kernel", 7),
        ("kernel", ["geglu"]),
        ("dtype", True),
        ("parameters", [["batch", 8]]),
        ("settings", "none"),
    ],
)
def test_no_coercion(field: str, value: Any) -> None:
    record = workload()
    record["spec"][field] = value
    (problem,) = problems_of(record, Workload)
    assert problem.pointer == f"/spec/{field}"


@pytest.mark.parametrize("value", [0, 1, 2.5, -0.0, True, "x"])
def test_scalars_keep_their_json_type(value: Any) -> None:
    record = workload()
    record["spec"]["parameters"] = {"p": value}
    out = unstructure(structure(record, Workload))["spec"]["parameters"]["p"]
    assert type(out) is type(value) and out == value


def test_integer_fields_accept_integers_only() -> None:
    hardware = {"vendor": "nvidia", "product": "H100", "count": 8, "memoryBytes": 2**40}
    assert structure(hardware, Hardware).count == 8
    for bad in (8.0, "8", True):
        with pytest.raises(ModelError):
            structure({**hardware, "count": bad}, Hardware)


def test_explicit_null_for_optional_field_is_rejected() -> None:
    hardware = {"vendor": "nvidia", "product": "H100", "formFactor": None}
    with pytest.raises(ModelError) as caught:
        structure(hardware, Hardware)
    assert [(p.pointer, p.message) for p in caught.value.problems] == [
        ("/formFactor", "expected a value, got null")
    ]
