"""``kernelindex import nvbench``: nvbench's JSON (format 1.0.0) as records (#16).

On the real sample (``../shared/nvbench/test_ref.json``, read where it lies; skipped
without it) and on our own fixtures for what the sample does not show
(``tests/examples/nvbench``): typed and power-of-two axes, states without summaries,
infinite noise, a device that cannot be read, a CPU-only measurement, a newer
nvbench's min/max tags, local paths in argv, and formats this importer does not read.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import shared_data
from click.testing import CliRunner
from import_checks import check_provenance, records_in, validate_strict

from bench_adapters.cli import import_group, run_source_import
from bench_adapters.common.importing import Conversion, UnreadableSource
from bench_adapters.nvbench import JSONL_NAME, RESERVED, convert, import_files
from kernelindex_sdk.compare import group_runs, load_records, resolve_runs

EXAMPLES = Path(__file__).resolve().parent / "examples" / "nvbench"
EDGE = EXAMPLES / "edge_cases.json"


@pytest.fixture(scope="module")
def sample() -> Path:
    return shared_data.require("nvbench", "test_ref.json")


@pytest.fixture(scope="module")
def converted(sample: Path) -> Conversion:
    return convert([sample])


@pytest.fixture(scope="module")
def edge() -> Conversion:
    return convert([EDGE])


def runs_of(conversion: Conversion) -> list[dict[str, Any]]:
    return [entry.run for entry in conversion.runs]


def referenced(conversion: Conversion, run: dict[str, Any], kind: str) -> dict[str, Any]:
    field = {"BenchmarkProtocol": "protocol", "Workload": "workload"}.get(kind)
    field = field or {"ExecutionEnvironment": "environment"}.get(kind, "implementation")
    return conversion.records[run["spec"][f"{field}Digest"]]


def by_state(conversion: Conversion, name: str) -> dict[str, Any]:
    (run,) = [r for r in runs_of(conversion) if r["metadata"]["labels"]["nvbench/state"] == name]
    return run


# --------------------------------------------------------------------------- the sample


def test_every_state_of_the_sample_is_a_run(sample: Path, converted: Conversion) -> None:
    data = json.loads(sample.read_text(encoding="utf-8"))
    states = [s for b in data["benchmarks"] for s in b["states"]]
    summary = converted.summary
    assert summary.read == len(states) == 126
    assert summary.clean and summary.runs == 126 and summary.refused == 0
    assert summary.statuses == {"passed": 88, "skipped": 38}
    skipped = {s["name"]: s["skip_reason"] for s in states if s["is_skipped"]}
    for run in runs_of(converted):
        name = run["metadata"]["labels"]["nvbench/state"]
        if name in skipped:
            assert run["spec"]["status"] == "skipped"
            assert run["spec"]["reason"] == skipped[name]


def test_the_cold_mean_noise_and_samples_are_the_files(sample: Path, converted: Conversion) -> None:
    data = json.loads(sample.read_text(encoding="utf-8"))
    state = data["benchmarks"][2]["states"][0]
    values = {s["tag"]: s["data"][0]["value"] for s in state["summaries"]}
    run = by_state(converted, state["name"])
    mean = float(values["nv/cold/time/gpu/mean"])
    noise = float(values["nv/cold/time/gpu/stdev/relative"])
    timing = run["spec"]["timing"]
    assert timing == {
        "latencyNs": {"mean": round(mean * 1e9)},
        "primaryStatistic": "mean",
        "samples": int(values["nv/cold/sample_size"]),
    }
    assert run["spec"]["measurements"] == [
        {
            "metric": "latency",
            "unit": "ns",
            "statistic": "stddev",
            "value": round(noise * mean * 1e9),
        }
    ]
    metrics = run["spec"]["sourceNative"]["metrics"]
    for tag in (
        "nv/batch/time/gpu/mean",
        "nv/cold/time/cpu/mean",
        "nv/cold/bw/global/bytes_per_second",
    ):
        assert metrics[tag] == float(values[tag])  # kept, unchanged


def test_each_device_is_an_environment_that_says_where_its_fields_came_from(
    converted: Conversion,
) -> None:
    environments = [r for r in converted.records.values() if r["kind"] == "ExecutionEnvironment"]
    hardware = {e["spec"]["hardware"]["deviceName"]: e["spec"] for e in environments}
    assert set(hardware) == {"Quadro GV100", "Quadro GP100"}
    gv100 = hardware["Quadro GV100"]
    assert gv100["hardware"] == {
        "vendor": "nvidia",
        "product": "NVIDIA Quadro GV100",
        "architecture": "sm_70",
        "deviceName": "Quadro GV100",
        "computeCapability": "7.0",
        "memoryBytes": 34086060032,
        "multiprocessors": 80,
        "clockHz": 1627000000,
        "memoryClockHz": 850000000,
        "memoryBusWidthBits": 4096,
        "memoryBandwidthBytesPerSecond": 870400000000,
        "l2CacheBytes": 6291456,
        "eccEnabled": False,
    }
    assert gv100["software"] == {
        "nvbench": "0.1.0",
        "nvbench-git-sha": "348acbd6eb752a87e15c28fe1ad1cb827eaaadec",
    }
    provenance = gv100["provenance"]
    assert provenance["/software/driver"]["origin"] == "unknown"
    assert provenance["/software/cuda"]["origin"] == "unknown"
    assert provenance["/hardware/architecture"] == {
        "origin": "record",
        "detail": "device sm_version",
    }
    assert provenance["/software/nvbench"]["origin"] == "file"
    for environment in environments:
        check_provenance(environment)
    assert hardware["Quadro GP100"]["hardware"]["architecture"] == "sm_60"


def test_the_protocol_states_nvbenchs_settings(converted: Conversion) -> None:
    (protocol,) = [r for r in converted.records.values() if r["kind"] == "BenchmarkProtocol"]
    measurement = protocol["spec"]["measurement"]
    assert measurement["timer"] == "cuda_events"
    assert measurement["primaryStatistic"] == "mean"
    assert measurement["harnessSettings"] == {
        "max_noise": 0.005,
        "min_samples": 10,
        "min_time": 0.5,
        "skip_time": -1.0,
        "timeout": 15.0,
    }
    assert "isolated launch" in protocol["spec"]["comparability"]["notes"]
    check_provenance(protocol)


def test_axes_become_typed_parameters(converted: Conversion) -> None:
    workloads = {
        json.dumps(r["spec"]["parameters"], sort_keys=True): r["spec"]
        for r in converted.records.values()
        if r["kind"] == "Workload"
    }
    pow2 = workloads['{"block_size": 256, "num_blocks": 1024}']
    assert pow2["kernel"] == "copy_sweep_grid_shape" and pow2["pass"] == "forward"
    assert workloads['{"duration": 0.00030000000000000003}']["kernel"] == "single_float64_axis"
    assert workloads['{"t": "U8"}']["dtype"] == "uint8"  # one type axis: the dtype
    assert workloads['{"in": "I8", "out": "F32"}']["dtype"] == "unspecified"  # two types


def test_argv_is_kept_without_local_paths(converted: Conversion) -> None:
    run = runs_of(converted)[0]
    assert run["metadata"]["labels"]["nvbench/argv"] == "nvbench.example.axes --json test_ref.json"


def test_the_sample_writes_records_validate_accepts_and_again_changes_nothing(
    sample: Path, tmp_path: Path
) -> None:
    first = import_files([sample], tmp_path, layout="jsonl")
    assert first.files_written == 1
    assert validate_strict(tmp_path) == []
    again = import_files([sample], tmp_path, layout="jsonl")
    assert (again.files_written, again.files_unchanged) == (0, 1)
    for record in records_in(tmp_path):
        check_provenance(record) if record["kind"] != "BenchmarkRun" else None


def test_compare_never_puts_the_two_devices_in_one_table(sample: Path, tmp_path: Path) -> None:
    import_files([sample], tmp_path)
    loaded = load_records([str(tmp_path)])
    runs, _ = resolve_runs(loaded.index)
    comparison = group_runs(runs)
    seen: dict[str, set[str]] = {}
    for group in comparison.groups:
        gpus = {run.gpu for row in group.rows for run in row.runs}
        assert len(gpus) == 1, gpus
        seen.setdefault(group.key.workload, set()).update(gpus)
    assert any(len(gpus) == 2 for gpus in seen.values())  # same workload, two tables


# --------------------------------------------------------------------------- our fixtures


def test_odd_states_are_refused_one_line_each(tmp_path: Path) -> None:
    err = io.StringIO()
    status = run_source_import("nvbench", [str(EDGE)], str(tmp_path / "out"), err=err)
    assert status == 1
    refused = [line for line in err.getvalue().splitlines() if line.startswith(str(EDGE))]
    assert [line.split(": ")[1] for line in refused] == [
        "/benchmarks/0/states/4/device",
        "/benchmarks/0/states/5/device",
        "/benchmarks/0/states/6/axis_values/0/value",
        "/benchmarks/0/states/7/summaries",
        "/benchmarks/0/states/8",
        "/benchmarks/2/states",
    ]
    assert "device 1 cannot be read (/devices/1/sm_version" in refused[0]
    assert "statistics out of order" in refused[4]
    assert validate_strict(tmp_path / "out") == []


def test_skipped_and_empty_states_are_kept_as_runs(edge: Conversion) -> None:
    skipped = by_state(edge, "Device=0 Elements{io}=2^20 Alpha=0.5 Mode=fast T=F32")
    assert skipped["spec"]["status"] == "skipped"
    assert skipped["spec"]["reason"] == "Not enough memory: 2^20 elements"
    no_reason = by_state(edge, "Device=0 Elements{io}=2^10 Alpha=1 Mode=fast T=F32")
    assert no_reason["spec"]["reason"] == "nvbench skipped this state (no reason given)"
    empty = by_state(edge, "Device=0 Elements{io}=2^10 Alpha=0.5 Mode=fast T=BF16")
    assert empty["spec"]["status"] == "failed"
    assert "nv/cold/time/gpu/mean" in empty["spec"]["reason"]
    assert "timing" not in empty["spec"]


def test_newer_tags_infinite_noise_and_typed_axes(edge: Conversion) -> None:
    full = by_state(edge, "Device=0 Elements{io}=2^10 Alpha=0.5 Mode=fast T=F32")
    assert full["spec"]["timing"]["latencyNs"] == {"mean": 2500}
    assert {m["statistic"]: m["value"] for m in full["spec"]["measurements"]} == {
        "stddev": 25,  # the absolute stdev, where nvbench wrote one
        "min": 2400,
        "max": 3100,
    }
    workload = referenced(edge, full, "Workload")["spec"]
    assert workload["parameters"] == {"elements_io": 1024, "alpha": 0.5, "mode": "fast", "t": "F32"}
    assert workload["dtype"] == "fp32"
    one_sample = by_state(edge, "Device=0 Elements{io}=2^20 Alpha=0.5 Mode=fast T=BF16")
    assert one_sample["spec"]["qualityFlags"] == [
        "fewer_samples_than_min_samples",
        "native_metrics_dropped",
        "noise_not_finite",
        "observed_at_unknown",
    ]
    assert "measurements" not in one_sample["spec"]
    assert "nv/cold/time/gpu/stdev/relative" not in one_sample["spec"]["sourceNative"]["metrics"]


def test_a_cpu_only_state_gets_its_own_protocol(edge: Conversion) -> None:
    run = by_state(edge, "Device=0")
    protocol = referenced(edge, run, "BenchmarkProtocol")["spec"]["measurement"]
    assert protocol["timer"] == "wall_clock"
    assert run["spec"]["timing"] == {
        "latencyNs": {"mean": 200000},
        "primaryStatistic": "mean",
        "samples": 200,
    }


def test_argv_flags_are_settings_and_paths_are_cut(edge: Conversion) -> None:
    run = runs_of(edge)[0]
    argv = run["metadata"]["labels"]["nvbench/argv"]
    assert argv == "my_bench --json out.json --disable-blocking-kernel --output=out.md"
    assert "someone" not in json.dumps(edge.records) + json.dumps(runs_of(edge))
    protocol = referenced(edge, run, "BenchmarkProtocol")["spec"]["measurement"]
    assert protocol["harnessSettings"]["disable-blocking-kernel"] is True
    environment = referenced(edge, run, "ExecutionEnvironment")["spec"]
    assert environment["software"]["nvbench-git-sha"].endswith("-dirty")


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("older_format.json", "no JSON format version"),
        ("newer_format.json", "format '2.0.0' is not read"),
        ("not_nvbench.json", "not nvbench JSON output"),
    ],
)
def test_another_format_is_refused_in_one_line(tmp_path: Path, name: str, fragment: str) -> None:
    err = io.StringIO()
    out = tmp_path / "out"
    assert run_source_import("nvbench", [str(EDGE), str(EXAMPLES / name)], str(out), err=err) == 2
    (line,) = [line for line in err.getvalue().splitlines() if name in line]
    assert fragment in line
    assert not out.exists()  # nothing written, not even the good file's records
    with pytest.raises(UnreadableSource):
        convert([EXAMPLES / name])


def test_declared_versions_and_time_are_the_callers(tmp_path: Path) -> None:
    conversion = convert(
        [EDGE], declarations=["cuda=12.4", "driver=550.54", "observed-at=2025-01-02T03:04:05Z"]
    )
    run = runs_of(conversion)[0]
    assert run["spec"]["observedAt"] == "2025-01-02T03:04:05Z"
    assert "observed_at_unknown" not in run["spec"].get("qualityFlags", [])
    environment = referenced(conversion, run, "ExecutionEnvironment")["spec"]
    assert environment["software"]["cuda"] == "12.4"
    assert environment["provenance"]["/software/cuda"] == {
        "origin": "caller",
        "detail": "--set cuda=12.4",
    }
    err = io.StringIO()
    bad = ["observed-at=yesterday"]
    assert run_source_import("nvbench", [str(EDGE)], str(tmp_path), declarations=bad, err=err) == 2
    assert err.getvalue().count("\n") == 1 and "observed-at" in err.getvalue()


def test_strict_stops_at_the_first_bad_state_and_writes_nothing(tmp_path: Path) -> None:
    err = io.StringIO()
    out = tmp_path / "out"
    assert run_source_import("nvbench", [str(EDGE)], str(out), strict=True, err=err) == 1
    assert "stopped at the first bad state" in err.getvalue()
    assert not out.exists() or not any(out.iterdir())


def test_a_second_jsonl_import_merges(sample: Path, tmp_path: Path) -> None:
    import_files([EDGE], tmp_path, layout="jsonl")
    summary = import_files([sample], tmp_path, layout="jsonl")
    assert summary.records_kept > 0
    assert validate_strict(tmp_path / JSONL_NAME) == []
    names = {r["metadata"]["name"] for r in records_in(tmp_path) if r["kind"] == "Implementation"}
    assert names == {"nvbench-impl-my-bench", "nvbench-impl-nvbench.example.axes"}


def test_the_command_is_registered_with_its_declarations() -> None:
    result = CliRunner().invoke(import_group, ["nvbench", "--help"])
    assert result.exit_code == 0
    for key in RESERVED:
        assert key in result.output
