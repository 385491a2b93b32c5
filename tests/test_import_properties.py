"""Every record an importer writes validates — for inputs we have never seen (#16).

hypothesis draws nvbench files (any axis types and values, devices of any SM version
and name, states skipped, empty, with infinite noise or odd summaries) and KernelBench
files (null entries, missing or negative numbers, any GPU name, odd level and problem
names), and Liger rows under ``--provenance`` and declared versions. For each:

* every run kept, with the records it references, passes ``ki.validate`` (schemas and
  semantic rules), and every environment's and protocol's provenance is honest;
* every entry read is accounted for: kept, a duplicate, or refused in exactly one line.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from import_checks import check_provenance
from liger_rows import row, write_csv
from profiles import examples

import kernelindex_sdk as ki
from bench_adapters import kernelbench, nvbench
from bench_adapters.common.importing import Conversion
from bench_adapters.liger import convert as convert_liger

MEMBERS = ("protocol", "workload", "environment", "implementation")
PROPERTY = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

text = st.text(min_size=0, max_size=12)
names = st.text(min_size=1, max_size=16)


def assert_everything_valid(conversion: Conversion) -> None:
    summary = conversion.summary
    assert summary.read == summary.runs + summary.duplicates + summary.refused
    assert len(summary.problems) == summary.refused
    for problem in summary.problems:
        assert "\n" not in str(problem)
    for entry in conversion.runs:
        bundle = {"run": entry.run}
        for member, ref in zip(MEMBERS, entry.refs, strict=True):
            bundle[member] = conversion.records[ref]
            if member in ("protocol", "environment"):
                check_provenance(conversion.records[ref])
        assert ki.validate(bundle) == [], bundle


def either(
    hostile: bool, good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    """In a hostile document anything (good or bad), else only plausible values: half the
    documents exercise refusals, the other half the records that are kept."""
    return good | bad if hostile else good


plausible_seconds = st.floats(1e-9, 10, allow_nan=False).map(repr)
any_number_text = (
    st.floats(allow_nan=True, allow_infinity=True).map(repr)
    | st.integers(-(2**60), 2**60).map(str)
    | text
)

# --------------------------------------------------------------------------- nvbench

SM_VERSIONS = st.sampled_from([600, 700, 890, 900, 1000, 1210])
TAGS = [
    ("nv/cold/time/gpu/mean", "float64"),
    ("nv/cold/time/gpu/stdev/relative", "float64"),
    ("nv/cold/time/gpu/min", "float64"),
    ("nv/cold/time/gpu/max", "float64"),
    ("nv/cold/sample_size", "int64"),
    ("nv/batch/time/gpu/mean", "float64"),
    ("nv/cpu_only/time/cpu/mean", "float64"),
    ("nv/other", "string"),
]


@st.composite
def nvbench_files(draw: st.DrawFn) -> dict[str, Any]:
    hostile = draw(st.booleans())
    device_count = draw(st.integers(1, 2))
    devices = []
    for ident in range(device_count):
        device: dict[str, Any] = {
            "id": ident,
            "name": draw(st.sampled_from(["NVIDIA H100 80GB HBM3", "Quadro GV100"]) | names),
            "sm_version": draw(either(hostile, SM_VERSIONS, st.integers(-5, 20000))),
        }
        for key in ("global_memory_size", "number_of_sms", "l2_cache_size"):
            if draw(st.booleans()):
                device[key] = draw(either(hostile, st.integers(1, 2**50), st.integers(-1, 0)))
        if draw(st.booleans()):
            device["ecc_state"] = draw(st.booleans())
        devices.append(device)
    kinds = ["int64", "float64", "string", "type"] + (["mystery"] if hostile else [])
    axes = draw(
        st.lists(
            st.tuples(
                st.from_regex(r"[A-Za-z][A-Za-z0-9{}]{0,8}", fullmatch=True), st.sampled_from(kinds)
            ),
            max_size=3,
            unique_by=lambda axis: axis[0].lower(),
        )
    )
    values_of = {
        "int64": either(
            hostile, st.integers(0, 2**20).map(str), st.integers(-(2**55), 2**55).map(str) | text
        ),
        "float64": either(hostile, plausible_seconds, any_number_text),
        "string": text,
        "type": st.sampled_from(["F32", "I8", "BF16"]) | names,
        "mystery": st.integers(-(2**53) + 1, 2**53 - 1) | text | st.none(),
    }
    states = []
    for _ in range(draw(st.integers(0, 4))):
        values = [
            {
                "name": name,
                "type": "string" if kind == "type" else kind,
                "value": draw(values_of[kind]),
            }
            for name, kind in axes
        ]
        summaries = None
        if draw(st.integers(0, 3)):
            chosen = draw(st.lists(st.sampled_from(TAGS), max_size=6, unique=True))
            if not hostile:
                chosen = [TAGS[0], *[tag for tag in chosen if tag != TAGS[0]]]
            summaries = [
                {
                    "tag": tag,
                    "data": [
                        {
                            "name": "value",
                            "type": kind,
                            "value": draw(
                                either(hostile, st.integers(1, 10**6).map(str), any_number_text)
                                if kind == "int64"
                                else either(hostile, plausible_seconds, any_number_text)
                            ),
                        }
                    ],
                }
                for tag, kind in chosen
            ]
        state: dict[str, Any] = {
            "name": draw(text),
            "min_samples": 10,
            "max_noise": draw(st.sampled_from([0.005, 0.5, -1.0])),
            "device": draw(
                either(hostile, st.integers(0, device_count - 1), st.just(device_count))
            ),
            "axis_values": values or None,
            "summaries": summaries,
            "is_skipped": draw(st.integers(0, 3)) == 0,
        }
        if state["is_skipped"] and draw(st.booleans()):
            state["skip_reason"] = draw(text)
        states.append(state)
    return {
        "meta": {
            "argv": draw(st.lists(text, min_size=0, max_size=3)),
            "version": {"json": {"major": 1, "minor": 0, "patch": 0, "string": "1.0.0"}},
        },
        "devices": devices,
        "benchmarks": [
            {
                "name": draw(names),
                "axes": [
                    {
                        "name": name,
                        "type": kind,
                        "flags": "",
                        "values": [{"input_string": "F32", "description": "float"}],
                    }
                    for name, kind in axes
                ],
                "states": states,
            }
        ],
    }


@PROPERTY
@given(
    nvbench_files(),
    st.lists(st.sampled_from(["cuda=12.4", "observed-at=2025-01-01T00:00:00Z"]), unique=True),
)
def test_every_record_the_nvbench_importer_keeps_validates(
    document: dict[str, Any], declared: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        conversion = nvbench.convert([path], declarations=declared)
    assert_everything_valid(conversion)


# --------------------------------------------------------------------------- KernelBench


@st.composite
def kernelbench_entries(draw: st.DrawFn, hostile: bool) -> Any:
    if draw(st.integers(0, 4)) == 0:
        return None
    good = st.floats(0, 1e4, allow_nan=False) | st.integers(0, 10**6)
    bad = st.floats(-1, 1e4, allow_nan=False) | st.integers(-5, 10**6) | text | st.none()
    entry: dict[str, Any] = {}
    for key in ("mean", "std", "min", "max"):
        if hostile and draw(st.integers(0, 5)) == 0:
            continue
        entry[key] = draw(either(hostile, good, bad))
    if not hostile and "min" in entry and "max" in entry and entry["min"] > entry["max"]:
        entry["min"], entry["max"] = entry["max"], entry["min"]
    if draw(st.integers(0, 3)):
        entry["num_trials"] = draw(either(hostile, st.integers(1, 1000), st.integers(-1, 0) | text))
    if not hostile or draw(st.integers(0, 5)):
        entry["hardware"] = draw(st.sampled_from(["NVIDIA A10", "NVIDIA H100 80GB HBM3"]) | names)
    if draw(st.booleans()):
        entry["device"] = draw(text)
    return entry


@st.composite
def kernelbench_files(draw: st.DrawFn) -> dict[str, Any]:
    hostile = draw(st.booleans())
    return draw(
        st.dictionaries(
            st.sampled_from(["level1", "level_2", "Level3"]) | names,
            st.dictionaries(
                st.sampled_from(["1_Square_matrix_multiplication_.py", "19_ReLU.py"]) | names,
                kernelbench_entries(hostile),
                max_size=4,
            ),
            max_size=3,
        )
    )


@PROPERTY
@given(
    kernelbench_files(),
    st.sampled_from(["A10G_Modal", "H100_Modal", "timings"]),
    st.sampled_from(["torch", "torch_compile_inductor_max-autotune", "torch_compile_x"]),
    st.lists(
        st.sampled_from(["torch=2.5.0", "timer=wall_clock", "warmup=3", "gpu=NVIDIA L4"]),
        unique=True,
    ),
)
def test_every_record_the_kernelbench_importer_keeps_validates(
    document: dict[str, Any], folder_name: str, implementation: str, declared: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / folder_name / f"baseline_time_{implementation}.json"
        path.parent.mkdir()
        path.write_text(json.dumps(document), encoding="utf-8")
        conversion = kernelbench.convert([path.parent], declarations=declared)
    assert_everything_valid(conversion)


# --------------------------------------------------------------------------- Liger


@PROPERTY
@given(
    st.sampled_from(["NVIDIA H100 80GB HBM3", "AMD Instinct MI300X", "Tesla T4", "Mystery GPU"]),
    st.lists(st.sampled_from(["torch=2.4.0", "cuda=12.4", "triton=3.1"]), unique=True),
    st.booleans(),
)
def test_every_environment_the_liger_importer_writes_with_provenance_validates(
    gpu: str, declared: list[str], provenance: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write_csv(Path(folder) / "rows.csv", [row(gpu_name=gpu)])
        conversion = convert_liger([path], provenance=provenance, declarations=declared)
    assert conversion.summary.clean
    (environment,) = [r for r in conversion.records.values() if r["kind"] == "ExecutionEnvironment"]
    assert ("provenance" in environment["spec"]) == (provenance or bool(declared))
    check_provenance(environment)
    for mapped in conversion.runs:
        bundle = {"run": mapped.run}
        bundle.update(zip(MEMBERS, (conversion.records[r] for r in mapped.refs), strict=True))
        assert ki.validate(bundle) == []
