"""The compare library: keys, grouping, newest runs, baselines, ratios, sweeps, units.

Everything here runs on the hand-made sets in ``tests/examples/compare`` (see
``make_examples.py`` there) or on records built in the test, through the library API
— the CLI has its own acceptance tests in ``test_compare_cli.py``.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from profiles import long_profile

from kernelindex_sdk.canonical import digest
from kernelindex_sdk.compare import (
    REFERENCE_PROVIDERS,
    differences,
    explain,
    find_sweeps,
    group_runs,
    hardware_identity,
    load_records,
    panels,
    resolve_runs,
    select,
)
from kernelindex_sdk.compare.records import RecordIndex
from kernelindex_sdk.compare.runs import ResolvedRun, parse_timestamp_or_epoch
from kernelindex_sdk.compare.units import number, pick_unit, quantity, spread, times
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.schema.registry import default_registry
from kernelindex_sdk.validating.engine import JsonschemaEngine
from kernelindex_sdk.validating.fastengine import default_engine

EXAMPLES = Path(__file__).resolve().parent / "examples" / "compare"


def load(*names: str) -> tuple[list[ResolvedRun], RecordIndex, list[Problem]]:
    problems: list[Problem] = []
    loaded = load_records([str(EXAMPLES / n) for n in names], on_problem=problems.append)
    runs, _ = resolve_runs(loaded.index)
    return runs, loaded.index, problems


# --------------------------------------------------------------------------- loading


def test_loading_indexes_runs_and_referenced_records() -> None:
    runs, index, problems = load("two-implementations")
    assert problems == []
    assert len(runs) == 2
    kinds = sorted(r["kind"] for r in index.records.values())
    # Two environments (same GPU, different software), one of everything else per run.
    assert kinds == [
        "BenchmarkProtocol",
        "ExecutionEnvironment",
        "ExecutionEnvironment",
        "Implementation",
        "Implementation",
        "Workload",
    ]
    for run in runs:
        assert run.digest == digest(index.runs[run.digest].record)
        assert run.workload is not None and run.workload.kernel == "geglu"


def test_invalid_items_are_reported_and_skipped_whole() -> None:
    loaded_problems: list[Problem] = []
    loaded = load_records([str(EXAMPLES / "invalid")], on_problem=loaded_problems.append)
    assert loaded.invalid == 1 and loaded.unreadable == 0
    assert len(loaded.index.runs) == 1
    [problem] = loaded_problems
    assert problem.source is not None and problem.source.endswith("bad.json")
    assert problem.pointer == "/spec"


def test_unreadable_input_is_counted_not_raised(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    problems: list[Problem] = []
    loaded = load_records(
        [str(tmp_path / "broken.json"), str(tmp_path / "missing.json")],
        on_problem=problems.append,
    )
    assert loaded.unreadable == 2
    assert [p.code for p in problems] == ["malformed-json", "unreadable-file"]


def test_the_same_run_given_twice_is_one_run(tmp_path: Path) -> None:
    runs, _, _ = load("oom", "oom")
    assert len(runs) == 2  # not 4: duplicates by digest are one measurement


# --------------------------------------------------------------------------- keys


def test_hardware_identity_ignores_software_but_not_hardware() -> None:
    runs, _, _ = load("two-implementations")
    assert len({r.environment_digest for r in runs}) == 2
    assert len({r.hardware for r in runs}) == 1
    other = {"vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "PCIe"}
    assert hardware_identity(other) != hardware_identity({**other, "formFactor": "SXM5"})
    # Key order is not identity: the canonical form is hashed.
    assert hardware_identity(dict(reversed(list(other.items())))) == hardware_identity(other)


def test_a_missing_environment_never_joins_a_group(tmp_path: Path) -> None:
    records = [json.loads(line) for line in (EXAMPLES / "oom" / "records.jsonl").open()]
    without_env = [r for r in records if r["kind"] != "ExecutionEnvironment"]
    path = tmp_path / "no-env.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in without_env), encoding="utf-8")
    loaded = load_records([str(path)])
    runs, resolver = resolve_runs(loaded.index)
    assert resolver.missing == {"ExecutionEnvironment": 2}
    assert {r.hardware for r in runs} == {f"environment {runs[0].environment_digest}"}
    assert runs[0].gpu.startswith("environment sha256:")


def test_memory_and_speed_runs_never_share_a_group() -> None:
    runs, _, _ = load("memory", "oom")
    comparison = group_runs(runs)
    metrics = sorted(g.metric for g in comparison.groups)
    assert metrics == ["latency", "peak_memory"]
    for group in comparison.groups:
        assert len({r.metric for row in group.rows for r in row.runs}) == 1


def test_an_oom_run_takes_its_metric_from_its_protocol() -> None:
    runs, _, _ = load("oom")
    oom = next(r for r in runs if r.status == "oom")
    assert oom.metric == "latency" and oom.value is None


# --------------------------------------------------------------------------- grouping


def test_two_implementations_one_group_speedup() -> None:
    runs, _, _ = load("two-implementations")
    [group] = group_runs(runs).groups
    assert [row.label for row in group.rows] == ["huggingface", "liger 0.5.0"]
    assert group.baseline == "huggingface"
    assert group.rows[0].is_baseline and group.rows[0].ratio == 1.0
    assert group.rows[1].ratio == pytest.approx(2.0)
    assert group.ratio_name == "speed-up"
    assert len(group.environments) == 2


def test_memory_ratio_is_a_memory_saving() -> None:
    runs, _, _ = load("memory")
    [group] = group_runs(runs).groups
    assert group.ratio_name == "memory saving"
    liger = group.rows[1]
    assert liger.ratio == pytest.approx((2 << 30) / (1280 << 20))
    assert liger.newest.p80 == 1300 << 20


def test_oom_run_has_no_number_and_no_ratio() -> None:
    runs, _, _ = load("oom")
    [group] = group_runs(runs).groups
    liger = group.rows[1]
    assert liger.newest.status == "oom"
    assert liger.newest.value is None and liger.ratio is None
    assert liger.newest.reason == "CUDA out of memory (tried 2 GiB)"


def test_newest_run_wins_and_older_are_counted() -> None:
    runs, _, _ = load("reruns")
    [group] = group_runs(runs).groups
    liger = group.rows[1]
    assert liger.older == 2
    # 2024-06-01T08:00+02:00 is 06:00Z: between the other two.
    assert [r.observed_at for r in liger.runs] == [
        "2025-06-01T00:00:00Z",
        "2024-06-01T08:00:00+02:00",
        "2024-01-01T00:00:00.000Z",
    ]
    assert liger.ratios == pytest.approx((2.5, 100 / 60, 1.25))
    assert group.older == 2 and group.runs == 4


def test_baseline_override_and_missing_baseline() -> None:
    runs, _, _ = load("two-implementations")
    [group] = group_runs(runs, baseline="liger").groups
    assert group.rows[0].label == "liger 0.5.0" and group.rows[0].is_baseline
    assert group.rows[1].ratio == pytest.approx(0.5)
    [group] = group_runs(runs, baseline="triton").groups
    assert group.baseline is None
    assert all(row.ratio is None and not row.is_baseline for row in group.rows)


def test_a_baseline_without_a_passed_run_gives_no_ratios() -> None:
    runs, _, _ = load("oom")
    [group] = group_runs(runs, baseline="liger").groups
    assert group.baseline == "liger"
    assert all(row.ratio is None for row in group.rows)
    assert [row.is_baseline for row in group.rows] == [True, False]


def test_reference_providers_are_data_in_preference_order() -> None:
    assert REFERENCE_PROVIDERS[:2] == ("huggingface", "torch")
    runs, _, _ = load("two-implementations")
    [group] = group_runs(runs, reference_providers=("liger",)).groups
    assert group.baseline == "liger"


def test_groups_are_ordered_by_kernel_pass_metric_gpu_shape() -> None:
    runs, _, _ = load("sweep")
    comparison = group_runs(runs)
    shapes = [
        (g.first.workload.parameters["hidden"], g.first.workload.parameters["seq"])
        for g in comparison.groups
        if g.first.workload is not None
    ]
    assert shapes == [(2048, 1024), (4096, 1024), (4096, 2048), (4096, 4096)]


# --------------------------------------------------------------------------- select


def test_select_filters_by_kernel_pass_metric_and_gpu() -> None:
    runs, _, _ = load("not-comparable", "memory")
    assert {r.kernel for r in select(runs, kernels=["swiglu"])} == {"swiglu"}
    assert select(runs, passes=["backward"]) == []
    assert {r.metric for r in select(runs, metrics=["peak_memory"])} == {"peak_memory"}
    assert {r.gpu for r in select(runs, gpus=["a100"])} == {"NVIDIA A100 SXM4-80GB"}
    assert {r.gpu for r in select(runs, gpus=["H100 80GB-HBM3"])} == {"NVIDIA H100 80GB HBM3"}


def test_select_matches_other_gpu_names() -> None:
    runs, index, _ = load("not-comparable")
    _, resolver = resolve_runs(index)
    names = resolver.gpu_names()
    picked = select(runs, gpus=["sm_80"], gpu_names=names)
    assert {r.gpu for r in picked} == {"NVIDIA A100 SXM4-80GB"}
    assert select(runs, gpus=["example-h100"], gpu_names=names)[0].kernel == "geglu"


# --------------------------------------------------------------------------- explaining


def test_differences_name_workload_and_hardware() -> None:
    runs, index, _ = load("not-comparable")
    a, b = sorted(runs, key=lambda r: r.kernel or "")
    found = differences(a, b, index.lookup)
    assert [d.part for d in found] == ["workload", "environment hardware"]
    assert found[0].detail == "kernel geglu vs swiglu"
    assert found[1].detail == "NVIDIA H100 80GB HBM3 vs NVIDIA A100 SXM4-80GB"
    assert str(found[0]) == "workload differs (kernel geglu vs swiglu)"
    assert differences(a, a, index.lookup) == []


def test_differences_spell_out_parameters_protocol_and_metric() -> None:
    runs, index, _ = load("sweep", "memory")
    by_shape = {
        (r.workload.parameters["seq"], r.workload.parameters["hidden"], r.metric): r
        for r in runs
        if r.workload and r.provider == "huggingface"
    }
    short, long_ = by_shape[(1024, 4096, "latency")], by_shape[(2048, 4096, "latency")]
    [found] = differences(short, long_, index.lookup)
    assert str(found) == "workload differs (seq 1024 vs 2048)"
    memory = by_shape[(1024, 4096, "peak_memory")]
    found = differences(short, memory, index.lookup)
    assert [d.part for d in found] == ["protocol", "metric"]
    assert found[0].detail.startswith("example-do-bench-forward vs example-memory-forward: ")
    assert "measurement.timer cuda_events vs —" in found[0].detail
    assert found[1].detail == "latency vs peak memory"


def test_differences_fall_back_to_digests_without_records() -> None:
    runs, _, _ = load("not-comparable")
    a, b = runs
    found = differences(a, b, lambda digest, kind: None)
    assert found[0].detail.startswith("sha256:") and " vs sha256:" in found[0].detail


def test_explain_compares_every_group_with_the_first() -> None:
    runs, index, _ = load("sweep")
    explanation = explain(group_runs(runs), index.lookup)
    assert not explanation.comparable
    assert explanation.differences[0] == ()
    assert [str(d) for d in explanation.differences[1]] == [
        "workload differs (hidden 2048 vs 4096)"
    ]
    runs, index, _ = load("two-implementations")
    assert explain(group_runs(runs), index.lookup).comparable


# --------------------------------------------------------------------------- sweeps


def test_find_sweeps_two_sweeps_sharing_a_point() -> None:
    points = [
        {"seq": 1024, "hidden": 4096},
        {"seq": 2048, "hidden": 4096},
        {"seq": 4096, "hidden": 4096},
        {"seq": 1024, "hidden": 2048},
    ]
    sweeps, leftover = find_sweeps(points)
    assert [(s.name, s.fixed, s.members) for s in sweeps] == [
        ("seq", (("hidden", 4096),), (0, 1, 2)),
        ("hidden", (("seq", 1024),), (0, 3)),
    ]
    assert leftover == []


def test_find_sweeps_leaves_one_off_shapes_over() -> None:
    points = [{"seq": 1, "hidden": 1}, {"seq": 2, "hidden": 2}]
    assert find_sweeps(points) == ([], [0, 1])


def test_find_sweeps_a_grid_is_covered_once_per_row() -> None:
    points = [{"a": a, "b": b} for a in (1, 2) for b in (10, 20, 30)]
    sweeps, leftover = find_sweeps(points)
    assert [s.name for s in sweeps] == ["b", "b"] and leftover == []


def test_find_sweeps_tells_true_from_one() -> None:
    sweeps, _ = find_sweeps([{"flag": True}, {"flag": 1}])
    assert [s.name for s in sweeps] == ["flag"]


def test_panels_of_the_sweep_set() -> None:
    runs, _, _ = load("sweep")
    found, unplaced = panels(group_runs(runs))
    assert unplaced == 0
    assert [(p.x_name, p.x_values) for p in found] == [
        ("seq", (1024, 2048, 4096)),
        ("hidden", (2048, 4096)),
    ]
    seq = found[0]
    assert seq.subtitle == "NVIDIA H100 80GB HBM3 · batch=8, dtype=bf16, hidden=4096"
    assert seq.title == "GeGLU MLP · forward · latency"
    hf, liger = seq.series
    assert hf.is_baseline and [p.x for p in hf.points] == [1024, 2048, 4096]
    assert [p.x for p in liger.points] == [1024, 2048]
    assert [(f.x, f.status) for f in liger.failures] == [(4096, "oom")]
    assert not seq.categorical


def test_categorical_sweeps_and_leftovers(tmp_path: Path) -> None:
    records = [json.loads(line) for line in (EXAMPLES / "oom" / "records.jsonl").open()]
    workload = next(r for r in records if r["kind"] == "Workload")
    hf_run = next(
        r for r in records if r["kind"] == "BenchmarkRun" and "hf" in r["metadata"]["name"]
    )
    lines = [r for r in records if r["kind"] != "BenchmarkRun"]
    for model in ("llama", "qwen"):
        w = copy.deepcopy(workload)
        w["metadata"]["name"] += f"-{model}"
        w["spec"]["parameters"]["model"] = model
        run = copy.deepcopy(hf_run)
        run["metadata"]["name"] += f"-{model}"
        run["spec"]["workloadDigest"] = digest(w)
        lines += [w, run]
    path = tmp_path / "models.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    loaded = load_records([str(path)])
    runs, _ = resolve_runs(loaded.index)
    found, _ = panels(group_runs(runs))
    [panel] = found
    assert panel.categorical and panel.x_name == "model"
    assert panel.x_values == ("llama", "qwen")


# --------------------------------------------------------------------------- units


def test_units_pick_one_readable_unit() -> None:
    assert pick_unit([999.0, 100.0], "latency") == ("ns", 1.0)
    assert pick_unit([70_513_954.0, None], "latency") == ("ms", 1e6)
    assert pick_unit([2 << 30], "peak_memory") == ("GiB", 1024.0**3)
    assert pick_unit([], "latency") == ("ns", 1.0)
    assert quantity(70_513_954, ("ms", 1e6)) == "70.51 ms"
    assert spread(None, 1.0, ("ns", 1.0)) == "—"
    assert spread(1200.0, 1300.0, ("µs", 1e3)) == "1.200–1.300 µs"
    assert times(None) == "n/a" and times(2.0) == "2.00×"
    assert [number(x) for x in (1234.4, 123.44, 12.344, 1.2344, 0.012344, 0)] == [
        "1234", "123.4", "12.34", "1.234", "0.01234", "0.000",
    ]  # fmt: skip


def test_parse_timestamp_or_epoch_orders_offsets_and_fractions() -> None:
    parse = parse_timestamp_or_epoch
    assert parse("2024-06-01T08:00:00+02:00") < parse("2024-06-01T07:00:00Z")
    assert parse("2024-06-01T07:00:00.5Z") > parse("2024-06-01T07:00:00Z")
    assert parse("2016-12-31T23:59:60Z").second == 59
    assert parse("garbage").year == 1970


# --------------------------------------------------------------------------- fast validity


def _all_example_items() -> Iterator[Any]:
    """Every distinct item of the example sets, once (the sets share many records)."""
    seen: set[str] = set()
    for path in sorted(EXAMPLES.rglob("*.json*")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines() if path.suffix == ".jsonl" else [text]
        for item in map(json.loads, lines):
            key = json.dumps(item)  # exact: key order and 1 vs 1.0 vs true kept apart
            if key not in seen:
                seen.add(key)
                yield item


def _mutations(value: Any) -> Iterator[Any]:
    """The value with one leaf at a time replaced by something likely invalid."""
    if isinstance(value, dict):
        for key in value:
            for bad in (None, "", -1, "not a digest", {"x": 1}):
                changed = dict(value)
                changed[key] = bad
                yield changed
            for sub in _mutations(value[key]):
                yield {**value, key: sub}
            yield {k: v for k, v in value.items() if k != key}
    elif isinstance(value, list) and value:
        yield []
        for sub in _mutations(value[0]):
            yield [sub, *value[1:]]


@pytest.mark.hypothesis_long
def test_default_engine_agrees_with_the_reference() -> None:
    """compare validates with the SDK's default engine: same verdicts as the reference.

    Every item, and every 4th of its mutations (every one under HYPOTHESIS_PROFILE=long:
    the reference takes ~2 ms an instance and there are ~4800).
    """
    registry = default_registry()
    fast, reference = default_engine(registry), JsonschemaEngine(registry)
    stride = 1 if long_profile() else 4
    checked = 0
    for item in _all_example_items():
        api = "kernelindex.dev/v1alpha1"
        is_bundle = "run" in item and "kind" not in item
        entry = registry.bundle(api) if is_bundle else registry.route(api, item["kind"])
        schema_id = entry.id
        for instance in [item, *itertools.islice(_mutations(item), 0, None, stride)]:
            assert fast.is_valid(schema_id, instance) == reference.is_valid(schema_id, instance)
            checked += 1
    assert checked > 1000
