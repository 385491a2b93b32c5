"""Provenance and the other additions to v1alpha1 are optional and additive (#16).

Records that do not use them validate as before and keep their digests (an absent
optional member is not in the canonical form); records that do are checked by the
schemas like any other field. Also here: ``--set`` declarations, and the Liger
importer's opt-in provenance.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from import_checks import check_provenance, records_in
from liger_rows import row, write_csv

import kernelindex_sdk as ki
from bench_adapters.cli import run_liger_import
from bench_adapters.common.provenance import (
    DTYPES,
    DeclarationError,
    ProvenanceMap,
    declared_count,
    declared_dtype,
    declared_timer,
    parse_declarations,
)

SEED = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "examples"
    / "valid"
    / "seeds"
    / "000_0dade080a6775df8.json"
)


@pytest.fixture
def seed() -> dict[str, Any]:
    return json.loads(SEED.read_text(encoding="utf-8"))


def test_records_without_the_new_fields_keep_their_digests(seed: dict[str, Any]) -> None:
    # The published digests, computed before provenance existed.
    assert ki.digest(seed["environment"]) == (
        "sha256:90c9e2764222f592477cfccf3373519add5a1b881563956ad058c4f99e41b6b9"
    )
    assert ki.digest(seed["protocol"]) == (
        "sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8"
    )
    assert ki.validate(seed) == []


def test_an_environment_with_provenance_and_device_facts_validates(seed: dict[str, Any]) -> None:
    environment = copy.deepcopy(seed["environment"])
    before = ki.digest(environment)
    environment["spec"]["hardware"].update(
        computeCapability="8.0",
        multiprocessors=108,
        clockHz=1410000000,
        memoryClockHz=1593000000,
        memoryBusWidthBits=5120,
        memoryBandwidthBytesPerSecond=2039000000000,
        l2CacheBytes=41943040,
        eccEnabled=True,
    )
    environment["spec"]["provenance"] = {
        "/hardware/product": {"origin": "record", "detail": "gpu_name"},
        "/software/driver": {"origin": "unknown"},
        "/software/a~1b": {"origin": "caller", "detail": "--set a/b=1"},
    }
    assert ki.validate(environment) == []
    assert ki.digest(environment) != before  # provenance is part of what the record says
    model = ki.structure(environment, ki.models.ExecutionEnvironment)
    assert ki.unstructure(model) == environment


@pytest.mark.parametrize(
    ("change", "pointer"),
    [
        (
            {"/hardware/product": {"origin": "guessed"}},
            "/spec/provenance/~1hardware~1product/origin",
        ),
        ({"hardware/product": {"origin": "record"}}, "/spec/provenance"),
        (
            {"/hardware/product": {"origin": "record", "why": "x"}},
            "/spec/provenance/~1hardware~1product",
        ),
    ],
)
def test_a_bad_provenance_entry_is_reported_where_it_is(
    seed: dict[str, Any], change: dict[str, Any], pointer: str
) -> None:
    environment = copy.deepcopy(seed["environment"])
    environment["spec"]["provenance"] = change
    problems = ki.validate(environment)
    assert problems and all(p.pointer.startswith(pointer) for p in problems), problems


def test_a_protocol_may_say_its_timer_is_unknown_and_keep_harness_settings(
    seed: dict[str, Any],
) -> None:
    protocol = copy.deepcopy(seed["protocol"])
    protocol["spec"]["measurement"] = {
        "timer": "unknown",
        "primaryStatistic": "mean",
        "harnessSettings": {"min_samples": 10, "max_noise": 0.005, "stopping": "stdrel"},
    }
    protocol["spec"]["provenance"] = {"/measurement/timer": {"origin": "unknown"}}
    assert ki.validate(protocol) == []
    protocol["spec"]["measurement"]["harnessSettings"]["nested"] = {"no": 1}
    assert ki.validate(protocol)


def test_a_run_may_say_how_many_samples_its_statistics_are_over(seed: dict[str, Any]) -> None:
    run = copy.deepcopy(seed["run"])
    run["spec"]["timing"]["samples"] = 100
    assert ki.validate(run) == []
    run["spec"]["timing"]["samples"] = 0
    assert [p.pointer for p in ki.validate(run)] == ["/spec/timing/samples"]


def test_declarations_are_software_or_the_importers_own_keys() -> None:
    declared = parse_declarations(["torch=2.5.0", "timer=cuda_events"], ["timer"])
    assert declared.software == {"torch": "2.5.0"}
    assert declared.reserved == {"timer": "cuda_events"}
    for bad in (
        ["torch"],
        ["=1"],
        ["torch="],
        ["torch=1", "torch=2"],
        ["a b=1"],
        ["x=" + "9" * 129],
    ):
        with pytest.raises(DeclarationError):
            parse_declarations(bad)
    assert declared_timer("wall_clock") == "wall_clock"
    assert declared_count("warmup", "3") == 3
    with pytest.raises(DeclarationError):
        declared_count("warmup", "-3")


KERNELBENCH_KEYS = ("timer", "warmup", "gpu", "dtype", "observed-at", "implementation")


@pytest.mark.parametrize(
    ("item", "says"),
    [
        # A typo of a reserved key is no software component (issue #32).
        ("tim=cuda_events", "--set 'tim': unknown key; did you mean 'timer'? (known: timer,"),
        ("torhc=2.5.0", "did you mean 'torch'?"),
        ("nccl=2.21.5", "declare any other software version as software.NAME=VERSION"),
        ("torch=2.5\n0", "--set torch='2.5\\n0': not a version"),
        ("torch=2.5 0", "not a version"),
        ("software.nccl=2.5\t0", "not a version"),
        ("torch=latest", "not a version"),
        ("software.=1", "not a software component name"),
        ("software.a b=1", "not a software component name"),
        ("software.torch=2.5.0", None),  # one component, two spellings: given twice
    ],
)
def test_an_unknown_key_or_a_value_that_is_not_one_is_refused(item: str, says: str | None) -> None:
    items = ["torch=2.4.0", item] if says is None else [item]
    with pytest.raises(DeclarationError) as caught:
        parse_declarations(items, KERNELBENCH_KEYS)
    message = str(caught.value)
    assert (says or "given twice") in message, message
    if "unknown key" in message:
        for key in (*KERNELBENCH_KEYS, "driver", "cuda", "torch", "triton", "python"):
            assert key in message


def test_any_other_software_is_declared_in_its_explicit_form() -> None:
    declared = parse_declarations(
        [
            "software.nccl=2.21.5",
            "torch=2.5.0+cu124",
            "driver=550.54.15",
            "software.x_y=1:2.3-1~rc1",
        ]
    )
    assert declared.software == {
        "nccl": "2.21.5",
        "torch": "2.5.0+cu124",
        "driver": "550.54.15",
        "x_y": "1:2.3-1~rc1",
    }


def test_a_declared_dtype_is_one_the_importers_write() -> None:
    assert declared_dtype("bf16") == "bf16"
    with pytest.raises(DeclarationError, match="'fp33': not a known dtype"):
        declared_dtype("fp33")
    # The vocabulary is what the importers' own data maps their sources' spellings to.
    data = Path(__file__).resolve().parents[1] / "bench_adapters"
    liger = json.loads((data / "liger" / "data" / "dtypes.json").read_text("utf-8"))
    nvbench = json.loads((data / "nvbench" / "data" / "mapping.json").read_text("utf-8"))
    written = set(liger["dtypes"].values()) | set(nvbench["types"].values())
    assert written == set(DTYPES)


def test_a_provenance_map_escapes_its_pointers_and_sorts_them() -> None:
    provenance = ProvenanceMap()
    provenance.add(("software", "a/b~c"), "caller", "--set a/b~c=1")
    provenance.add(("hardware", "product"), "record")
    assert provenance.as_json() == {
        "/hardware/product": {"origin": "record"},
        "/software/a~1b~0c": {"origin": "caller", "detail": "--set a/b~c=1"},
    }


def test_liger_writes_provenance_only_when_asked(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "rows.csv", [row(), row(gpu_name="Mystery Accelerator")])
    plain, asked = tmp_path / "plain", tmp_path / "asked"
    assert run_liger_import([str(source)], str(plain), layout="jsonl", err=io.StringIO()) == 0
    status = run_liger_import(
        [str(source)],
        str(asked),
        layout="jsonl",
        provenance=True,
        declarations=["cuda=12.4"],
        err=io.StringIO(),
    )
    assert status == 0
    assert all("provenance" not in r["spec"] for r in records_in(plain))
    environments = [r for r in records_in(asked) if r["kind"] == "ExecutionEnvironment"]
    assert len(environments) == 2
    for environment in environments:
        check_provenance(environment)
        provenance = environment["spec"]["provenance"]
        assert provenance["/software/cuda"] == {"origin": "caller", "detail": "--set cuda=12.4"}
        assert provenance["/software/torch"]["origin"] == "unknown"
        assert environment["spec"]["software"] == {"cuda": "12.4"}
    h100 = next(e for e in environments if e["spec"]["hardware"]["product"] == "NVIDIA H100")
    assert h100["spec"]["provenance"]["/hardware/architecture"]["origin"] == "catalog"
    err = io.StringIO()
    bad = ["not a component=1"]
    assert run_liger_import([str(source)], str(tmp_path / "x"), declarations=bad, err=err) == 2
    assert err.getvalue().count("\n") == 1
