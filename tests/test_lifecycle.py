"""The record life cycle for library users: models and plain JSON alike, misuse refused
with TypeError or a documented KernelIndexError — never KeyError or RecursionError."""

from __future__ import annotations

import ast
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

import kernelindex_sdk as ki
from kernelindex_sdk import models as m
from kernelindex_sdk.canonical import digest as json_digest
from kernelindex_sdk.errors import UnreadableFile
from kernelindex_sdk.models.strategies import bundles, records

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "tests" / "examples" / "valid" / "seeds" / "000_0dade080a6775df8.json"


def _seed() -> dict[str, Any]:
    value: dict[str, Any] = json.loads(SEED.read_text("utf-8"))
    return value


# --------------------------------------------------------------------------- models everywhere


def test_models_and_json_give_identical_results() -> None:
    bundle = _seed()
    model = ki.structure(bundle, m.Bundle)
    assert ki.digest(model.run) == ki.digest(bundle["run"]) == json_digest(bundle["run"])
    assert ki.canonicalize(model) == ki.canonicalize(bundle)
    assert ki.validate(model) == ki.validate(bundle) == []
    assert ki.validate([model, bundle]) == []
    assert json.loads(ki.dumps(model)) == bundle


def test_a_model_with_wrong_types_is_reported_with_pointers() -> None:
    environment = ki.structure(_seed()["environment"], m.ExecutionEnvironment)
    broken = attrs.evolve(
        environment,
        spec=attrs.evolve(environment.spec, hardware=attrs.evolve(
            environment.spec.hardware, vendor=1  # type: ignore[arg-type]
        )),
    )  # fmt: skip
    (problem,) = ki.validate(broken)
    assert problem.pointer == "/spec/hardware/vendor"
    assert "expected string" in problem.message


def test_link_fills_the_references_and_keeps_the_type() -> None:
    bundle = _seed()
    run, protocol, environment = bundle["run"], bundle["protocol"], bundle["environment"]
    emptied = {**run, "spec": {**run["spec"], "protocolDigest": "", "environmentDigest": ""}}
    linked = ki.link(emptied, protocol=protocol, environment=environment)
    assert isinstance(linked, dict) and linked == run
    assert emptied["spec"]["protocolDigest"] == ""  # nothing changed in place

    model = ki.structure(emptied, m.BenchmarkRun)
    linked_model = ki.link(
        model,
        protocol=ki.structure(protocol, m.BenchmarkProtocol),
        environment=environment,
    )
    assert isinstance(linked_model, m.BenchmarkRun)
    assert ki.unstructure(linked_model) == run
    with pytest.raises(ki.NotARecord, match="must be a BenchmarkProtocol"):
        ki.link(run, protocol=environment, environment=environment)


def test_dumps_writes_what_loads_reads_back() -> None:
    bundle = _seed()
    compact = ki.dumps(bundle)
    assert "\n" not in compact and ki.loads(compact) == bundle
    indented = ki.dumps(bundle, indent=2)
    assert indented == json.dumps(bundle, indent=2, ensure_ascii=False)
    assert ki.loads(ki.dumps({"é": [1.5, None]}, indent=4)) == {"é": [1.5, None]}


def test_timestamp_and_nanoseconds() -> None:
    moment = datetime(2024, 9, 3, 17, 38, 37, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert ki.timestamp(moment) == "2024-09-03T15:38:37.123Z"
    with pytest.raises(ValueError, match="aware"):
        ki.timestamp(datetime(2024, 1, 1))
    assert ki.nanoseconds(ms=0.2501) == 250100
    assert ki.nanoseconds(ms=70.51395416259766) == 70513954
    assert ki.nanoseconds(s=1, ms=1, us=1, ns=1) == 1_001_001_001
    for bad in ({"ms": -1.0}, {"s": float("nan")}, {"s": float("inf")}, {"s": 2.0**60}):
        with pytest.raises(ValueError):
            ki.nanoseconds(**bad)
    with pytest.raises(TypeError):
        ki.nanoseconds(ms="1")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- misuse


def _cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {"apiVersion": "a", "kind": "b", "spec": {}}
    value["spec"]["self"] = value
    return value


def _deep() -> dict[str, Any]:
    inner: Any = []
    for _ in range(100_000):
        inner = [inner]
    return {"apiVersion": "a", "kind": "b", "spec": {"x": inner}}


@pytest.mark.parametrize("value", [_cyclic(), _deep()], ids=["cyclic", "100k-deep"])
def test_cyclic_or_deep_values_are_problems_not_recursion(value: dict[str, Any]) -> None:
    with pytest.raises(ki.NotJSON):
        ki.digest(value)
    with pytest.raises(ki.NotJSON):
        ki.canonicalize(value)
    (problem,) = ki.validate(value)
    assert problem.code in ("not-json", "nesting-too-deep")
    with pytest.raises(ki.NotJSON):
        ki.dumps(value)


def test_digest_of_what_is_not_a_record() -> None:
    with pytest.raises(ki.NotARecord, match="no apiVersion, kind, spec"):
        ki.digest({})
    with pytest.raises(TypeError):
        ki.digest([1, 2])


def test_loads_takes_text_only() -> None:
    for wrong in ([123, 125], 2**53, None):
        with pytest.raises(TypeError, match="takes str, bytes"):
            ki.loads(wrong)  # type: ignore[arg-type]
    assert ki.loads(bytearray(b"{}")) == {} and ki.loads(memoryview(b"[1]")) == [1]


def test_load_file_of_an_impossible_path() -> None:
    with pytest.raises(UnreadableFile):
        ki.load_file("a\x00b")


def test_values_python_has_and_json_has_not() -> None:
    run = _seed()["run"]
    run["metadata"]["labels"] = {5: "five"}
    run["spec"]["sourceNative"]["metrics"] = {"x": {1, 2}, "y": float("nan")}
    problems = ki.validate(run)
    assert [(p.pointer, p.code) for p in problems] == [
        ("/metadata/labels", "not-json"),
        ("/spec/sourceNative/metrics/x", "not-json"),
        ("/spec/sourceNative/metrics/y", "non-finite-number"),
    ]
    with pytest.raises(ki.NotJSON, match="not a string"):
        ki.dumps({1: 2})


# --------------------------------------------------------------------------- strategies


@settings(max_examples=examples(200), deadline=None)
@given(records("BenchmarkRun"))
def test_shipped_strategies_draw_valid_runs(run: dict[str, Any]) -> None:
    assert ki.validate(run) == []


@settings(max_examples=examples(100), deadline=None)
@given(bundles())
def test_shipped_strategies_draw_valid_bundles(bundle: dict[str, Any]) -> None:
    assert ki.validate(bundle, strict_refs=False) == []
    present = [k for k in ("protocol", "environment") if k in bundle]
    for member in present:
        assert bundle["run"]["spec"][f"{member}Digest"] == ki.digest(bundle[member])


@settings(max_examples=examples(100), deadline=None)
@given(records("Workload", models=True))
def test_shipped_strategies_draw_models_too(workload: m.Workload) -> None:
    assert isinstance(workload, m.Workload) and ki.validate(workload) == []


# --------------------------------------------------------------------------- the surface


def test_one_list_of_names_and_the_typing_imports_agree() -> None:
    tree = ast.parse((ROOT / "kernelindex_sdk" / "__init__.py").read_text("utf-8"))
    typed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    typed.update(alias.asname or alias.name for alias in statement.names)
    assert typed == set(ki.__all__)


_ODD = st.sampled_from(
    [float("nan"), float("inf"), 2**53, -(2**53), (1, 2), {1, 2}, b"x", object()]
)
_KEYS = st.text(max_size=3) | st.integers(0, 3)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=5) | _ODD,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=examples(500), deadline=None)
@given(_VALUES)
def test_the_fast_check_agrees_with_the_precise_walk(value: Any) -> None:
    from kernelindex_sdk.validating.facade import is_strict_json, json_problems

    if is_strict_json(value):
        assert json_problems(value) == []
    else:  # tuples are taken by the precise walk as arrays; all else is a problem
        problems = json_problems(value)
        assert problems or _has_tuple(value)


def _has_tuple(value: Any) -> bool:
    if isinstance(value, tuple):
        return True
    if isinstance(value, dict):
        return any(_has_tuple(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_tuple(v) for v in value)
    return False


def _outcome(function: Any, value: Any) -> Any:
    try:
        return function(value)
    except Exception as error:  # compared: the same type and words either way
        return type(error), str(error)


@settings(max_examples=examples(500), deadline=None)
@given(
    st.one_of(
        records("BenchmarkRun"),
        records("Workload"),
        records("Workload", models=True),
        st.fixed_dictionaries(
            {"apiVersion": _VALUES, "kind": _VALUES, "spec": _VALUES},
            optional={"metadata": _VALUES},
        ),
        _VALUES,
    )
)
def test_the_digest_of_a_plain_record_is_the_digest_of_every_step(value: Any) -> None:
    """``ki.digest`` answers a plain dict holding the identity's members at once; the
    law: its answer (a digest, or the error's type and words) is what every step of
    ``digest_any`` gives, for records, models, broken identities and any other value
    (floats JCS writes otherwise than ``repr``, ints beyond 2**53, keys that are no
    strings, Python types that are no JSON)."""
    from kernelindex_sdk.validating.facade import digest_any

    assert _outcome(ki.digest, value) == _outcome(digest_any, value)
