"""The Liger importer against ground truth: the four seeds, and every row of Liger's CSV.

The shared data (``../shared/seeds``, ``../shared/liger/all_benchmark_data.csv``) is
read where it lies and never copied into the repository; tests that need it skip
cleanly when it is absent. Also here: the layouts, determinism, idempotent
re-import, atomic writes, strict mode and the data-quality count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import shared_data

from bench_adapters.liger import (
    COLLAPSED_QUANTILES,
    JSONL_NAME,
    LAYOUTS,
    Conversion,
    OutputError,
    bundle_file_name,
    convert,
    import_csv,
)
from bench_adapters.liger.writer import Layout, pretty
from kernelindex_sdk.canonical import digest
from kernelindex_sdk.validating.validation import validate

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "tests" / "examples" / "liger"
LIGER_ROWS = 2448


def shared_path(*parts: str) -> Path:
    return shared_data.require(*parts)


@pytest.fixture(scope="module")
def liger_csv() -> Path:
    return shared_path("liger", "all_benchmark_data.csv")


@pytest.fixture(scope="module")
def full(liger_csv: Path) -> Conversion:
    return convert([liger_csv])


def seed_files() -> list[Path]:
    seeds = shared_data.find("seeds")
    return sorted(seeds.glob("*.json")) if seeds is not None else []


def runs_by_external_id(conversion: Conversion) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for mapped in conversion.runs:
        external_id = mapped.run["spec"]["sourceNative"]["externalId"]
        assert external_id not in found, f"two runs share the externalId {external_id}"
        found[external_id] = mapped.run
    return found


def snapshot(directory: Path) -> dict[str, tuple[bytes, int, int]]:
    return {
        path.name: (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino)
        for path in sorted(directory.iterdir())
    }


# --- exactness against the seeds ---------------------------------------------------


@pytest.mark.parametrize("seed", seed_files(), ids=lambda path: path.name)
def test_seed_reproduced_exactly(seed: Path, full: Conversion) -> None:
    """Protocol and environment equal the seed's (metadata included); the run equals the
    seed's run in every field except workloadDigest and implementationDigest."""
    bundle = json.loads(seed.read_text("utf-8"))
    expected_run = bundle["run"]
    run = runs_by_external_id(full)[expected_run["spec"]["sourceNative"]["externalId"]]

    spec = run["spec"]
    assert full.records[spec["protocolDigest"]] == bundle["protocol"]
    assert full.records[spec["environmentDigest"]] == bundle["environment"]

    def without_our_digests(value: dict[str, Any]) -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json.dumps(value))
        del copy["spec"]["workloadDigest"], copy["spec"]["implementationDigest"]
        return copy

    assert without_our_digests(run) == without_our_digests(expected_run)
    # Our own two references resolve to records of the right kind.
    assert full.records[spec["workloadDigest"]]["kind"] == "Workload"
    assert full.records[spec["implementationDigest"]]["kind"] == "Implementation"


def test_all_four_seeds_are_checked() -> None:
    if not seed_files():
        pytest.skip("shared seeds not present")
    assert len(seed_files()) == 4


def test_seed_workload_slugs_and_parameters(full: Conversion) -> None:
    """The workloads behind the seeds carry the normalized parameters their slugs name."""
    runs = runs_by_external_id(full)
    expected = {
        "geglu/backward/liger/nvidia-a100-sxm4-80gb/"
        "batch8-hidden4096-intermediate11008-seq4096-bf16/2024-09-03-15-38-37": (
            {"batch": 8, "hidden": 4096, "intermediate": 11008, "seq": 4096},
            {"hidden_act": "gelu_pytorch_tanh"},
        ),
        "relu_squared/backward/liger/nvidia-h100-80gb-hbm3/"
        "hidden512-rows4096-bf16/2026-03-27-06-09-42": ({"hidden": 512, "rows": 4096}, None),
    }
    for external_id, (parameters, settings) in expected.items():
        workload = full.records[runs[external_id]["spec"]["workloadDigest"]]
        assert workload["spec"]["parameters"] == parameters
        assert workload["spec"]["dtype"] == "bf16"
        assert workload["spec"].get("settings") == settings


# --- coverage of the whole CSV -----------------------------------------------------


def test_every_row_imports(full: Conversion) -> None:
    summary = full.summary
    assert summary.rows_read == LIGER_ROWS
    assert summary.rows_refused == 0 and summary.problems == []
    assert summary.runs + summary.duplicate_rows == LIGER_ROWS
    assert summary.warnings == []


def test_every_record_is_valid(full: Conversion) -> None:
    for mapped in full.runs:
        assert validate(mapped.run) == [], mapped.run["metadata"]["name"]
    for record in full.records.values():
        assert validate(record) == [], record["metadata"]["name"]


def test_every_run_digest_resolves(full: Conversion) -> None:
    kinds = ("BenchmarkProtocol", "Workload", "ExecutionEnvironment", "Implementation")
    for mapped in full.runs:
        spec = mapped.run["spec"]
        fields = ("protocolDigest", "workloadDigest", "environmentDigest", "implementationDigest")
        for field, kind, ref in zip(fields, kinds, mapped.refs, strict=True):
            assert spec[field] == ref
            assert full.records[ref]["kind"] == kind
            assert digest(full.records[ref]) == ref
        assert digest(mapped.run) == mapped.digest


def test_every_record_is_referenced(full: Conversion) -> None:
    referenced = {ref for mapped in full.runs for ref in mapped.refs}
    assert referenced == set(full.records)


def test_coverage_of_metrics_passes_providers_and_gpus(full: Conversion, liger_csv: Path) -> None:
    import csv

    with liger_csv.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    runs = [mapped.run for mapped in full.runs]
    passes = {full.records[run["spec"]["workloadDigest"]]["spec"]["pass"] for run in runs}
    assert passes == {"forward", "backward", "full"}
    assert sum("timing" in run["spec"] for run in runs) == sum(
        row["metric_name"] == "speed" for row in rows
    )
    assert sum("memory" in run["spec"] for run in runs) == sum(
        row["metric_name"] == "memory" for row in rows
    )
    providers = {
        full.records[run["spec"]["implementationDigest"]]["spec"]["provider"] for run in runs
    }
    assert providers == {row["kernel_provider"] for row in rows}
    environments = [r for r in full.records.values() if r["kind"] == "ExecutionEnvironment"]
    assert len(environments) == len({row["gpu_name"] for row in rows})
    for environment in environments:
        assert "architecture" in environment["spec"]["hardware"]


def test_memory_rows_are_mib_converted_to_bytes(full: Conversion) -> None:
    memory_runs = [m.run for m in full.runs if "memory" in m.run["spec"]]
    assert memory_runs
    for run in memory_runs:
        spec = run["spec"]
        metrics = spec["sourceNative"]["metrics"]
        assert set(metrics) == {"mb_20", "mb_50", "mb_80"}
        assert spec["memory"] == {
            "peakBytes": {"median": round(metrics["mb_50"] * 2**20)},
            "primaryStatistic": "median",
        }
        p20, p80 = spec["measurements"]
        assert p20 == {
            "metric": "peak_memory",
            "unit": "bytes",
            "statistic": "p20",
            "value": round(metrics["mb_20"] * 2**20),
        }
        assert p80["statistic"] == "p80" and p80["value"] == round(metrics["mb_80"] * 2**20)
        assert "/memory/" in spec["sourceNative"]["externalId"]
        protocol = full.records[spec["protocolDigest"]]
        assert protocol["metadata"]["name"].startswith("liger-bench-memory-")
        assert protocol["spec"]["measurement"] == {
            "memoryProbe": "torch_cuda_max_memory_allocated",
            "primaryStatistic": "median",
            "quantiles": [0.5, 0.2, 0.8],
        }
        assert "max_memory_allocated" in protocol["spec"]["comparability"]["notes"]


def test_protocols_one_per_metric_and_pass(full: Conversion) -> None:
    protocols = {
        r["metadata"]["name"]: r for r in full.records.values() if r["kind"] == "BenchmarkProtocol"
    }
    assert set(protocols) == {
        f"liger-bench-{kind}-{mode}"
        for kind in ("do-bench", "memory")
        for mode in ("forward", "backward", "full")
    }
    forward = protocols["liger-bench-do-bench-forward"]["spec"]["comparability"]["notes"]
    assert forward.startswith("Timed: the forward pass only, via triton.testing.do_bench")
    for mode, timed in (
        ("forward", "the forward pass only"),
        ("backward", "the backward pass of the module output given a random upstream gradient"),
        ("full", "the forward pass plus the backward pass"),
    ):
        notes = protocols[f"liger-bench-memory-{mode}"]["spec"]["comparability"]["notes"]
        assert timed in notes and "MiB" in notes


def test_collapsed_quantiles_counted_not_flagged_by_default(full: Conversion) -> None:
    collapsed = [m for m in full.runs if m.collapsed]
    assert full.summary.collapsed_quantiles == len(collapsed) > 100
    for mapped in full.runs:
        metrics = list(mapped.run["spec"]["sourceNative"]["metrics"].values())
        # The marker is the run's own data: the three quantiles it carries are equal.
        assert mapped.collapsed == (metrics[0] == metrics[1] == metrics[2])
        assert "qualityFlags" not in mapped.run["spec"]


def test_quality_flags_option_marks_collapsed_runs(liger_csv: Path) -> None:
    conversion = convert([liger_csv], quality_flags=True)
    for mapped in conversion.runs:
        flags = mapped.run["spec"].get("qualityFlags")
        assert flags == ([COLLAPSED_QUANTILES] if mapped.collapsed else None)
        assert validate(mapped.run) == []


# --- layouts on disk ---------------------------------------------------------------


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, liger_csv: Path) -> dict[str, Path]:
    """The full CSV imported once per layout (writing thousands of files takes a while)."""
    out: dict[str, Path] = {}
    for layout in LAYOUTS:
        directory = tmp_path_factory.mktemp(layout)
        summary = import_csv([liger_csv], directory, layout=layout)
        assert summary.files_written == (summary.runs if layout == "bundles" else 1)
        out[layout] = directory
    return out


def test_bundles_layout(written: dict[str, Path], full: Conversion) -> None:
    files = sorted(written["bundles"].iterdir())
    assert len(files) == full.summary.runs
    for path in files:
        text = path.read_text("utf-8")
        bundle = json.loads(text)
        assert list(bundle) == ["run", "protocol", "workload", "environment", "implementation"]
        assert text == json.dumps(bundle, indent=2, ensure_ascii=False) + "\n"
        assert path.name == bundle_file_name(bundle["run"], digest(bundle["run"]))
        assert validate(bundle) == []
        spec = bundle["run"]["spec"]
        assert digest(bundle["workload"]) == spec["workloadDigest"]
        assert digest(bundle["implementation"]) == spec["implementationDigest"]


def test_jsonl_layout_lists_references_first(written: dict[str, Path], full: Conversion) -> None:
    directory = written["jsonl"]
    summary = full.summary
    assert [p.name for p in directory.iterdir()] == [JSONL_NAME]
    lines = (directory / JSONL_NAME).read_text("utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    distinct = summary.protocols + summary.workloads + summary.environments
    assert len(records) == distinct + summary.implementations + summary.runs
    seen: set[str] = set()
    for record in records:
        assert validate(record) == []
        if record["kind"] == "BenchmarkRun":
            spec = record["spec"]
            for field in ("protocol", "workload", "environment", "implementation"):
                assert spec[f"{field}Digest"] in seen
        else:
            assert not any(r["kind"] == "BenchmarkRun" for r in records[: len(seen)])
        value = digest(record)
        assert value not in seen, "a record written twice"
        seen.add(value)


@pytest.mark.parametrize("layout", ["bundles", "jsonl"])
def test_kernelindex_validate_accepts_the_output(written: dict[str, Path], layout: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk.cli.main", "validate", str(written[layout])],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- determinism, idempotence, atomicity -------------------------------------------


@pytest.mark.parametrize("layout", ["bundles", "jsonl"])
def test_same_input_gives_identical_bytes(tmp_path: Path, layout: Layout) -> None:
    inputs = [EXAMPLES / "good.csv", EXAMPLES / "amd.csv", EXAMPLES / "model_config.csv"]
    import_csv(inputs, tmp_path / "a", layout=layout)
    import_csv(inputs, tmp_path / "b", layout=layout)
    import_csv(list(reversed(inputs)), tmp_path / "c", layout=layout)
    a, b, c = ({p.name: p.read_bytes() for p in (tmp_path / d).iterdir()} for d in ("a", "b", "c"))
    assert a == b == c
    assert a


@pytest.mark.parametrize("layout", ["bundles", "jsonl"])
def test_reimport_changes_nothing(tmp_path: Path, layout: Layout) -> None:
    inputs = [EXAMPLES / "good.csv", EXAMPLES / "amd.csv"]
    first = import_csv(inputs, tmp_path, layout=layout)
    before = snapshot(tmp_path)
    second = import_csv(inputs, tmp_path, layout=layout)
    assert snapshot(tmp_path) == before
    assert second.files_written == 0
    assert second.files_unchanged == first.files_written == len(before)


def _failing_replace(monkeypatch: pytest.MonkeyPatch, at_call: int) -> None:
    """Make the ``at_call``-th ``os.replace`` fail as a full disk would."""
    real_replace = os.replace
    calls = {"n": 0}

    def flaky_replace(src: Any, dst: Any) -> None:
        calls["n"] += 1
        if calls["n"] == at_call:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", flaky_replace)


def test_failure_before_the_commit_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing_replace(monkeypatch, 1)  # the journal's rename: the commit itself
    with pytest.raises(OutputError, match="No space left on device"):
        import_csv([EXAMPLES / "good.csv"], tmp_path, layout="bundles")
    assert list(tmp_path.iterdir()) == [], "no bundle, no staging folder left"


def test_failure_after_the_commit_is_completed_by_the_next_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing_replace(monkeypatch, 3)  # the commit, one bundle renamed in, then a failure
    with pytest.raises(OutputError, match="No space left on device"):
        import_csv([EXAMPLES / "good.csv"], tmp_path, layout="bundles")
    visible = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert len(visible) == 1, "the bundle renamed before the failure, whole"
    monkeypatch.undo()
    summary = import_csv([EXAMPLES / "amd.csv"], tmp_path, layout="bundles")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert not any(name.startswith(".") for name in names), "the staging folder is gone"
    assert len(names) == 6 + summary.runs, "the committed batch was completed"
    for name in names:
        assert validate(json.loads((tmp_path / name).read_text("utf-8"))) == []


def test_failed_stream_write_keeps_the_old_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_csv([EXAMPLES / "good.csv"], tmp_path, layout="jsonl")
    old = (tmp_path / JSONL_NAME).read_bytes()

    def failing_replace(src: Any, dst: Any) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OutputError):
        import_csv([EXAMPLES / "good.csv", EXAMPLES / "amd.csv"], tmp_path, layout="jsonl")
    assert [p.name for p in tmp_path.iterdir()] == [JSONL_NAME]
    assert (tmp_path / JSONL_NAME).read_bytes() == old


def test_strict_writes_nothing_on_a_bad_row(tmp_path: Path) -> None:
    summary = import_csv([EXAMPLES / "mixed_bad.csv"], tmp_path / "out", strict=True)
    assert summary.stopped
    assert [p.line for p in summary.problems] == [3]
    assert not (tmp_path / "out").exists()


def test_pretty_printer_matches_json_dumps() -> None:
    values: list[Any] = [
        {},
        [],
        {"a": [], "b": {}},
        {"x": {"y": [1, 2.5, "·", None, True, 1e-06, -0.0]}},
        [{"k": "v"}, [1, [2]]],
        "text",
        3,
    ]
    for value in values:
        assert pretty(value) == json.dumps(value, indent=2, ensure_ascii=False)


# --- the example fixtures ----------------------------------------------------------


def test_no_grad_forward_is_a_forward_pass_with_its_own_protocol() -> None:
    conversion = convert([EXAMPLES / "good.csv"])
    (run,) = [m.run for m in conversion.runs if "no-grad-forward" in m.run["metadata"]["title"]]
    workload = conversion.records[run["spec"]["workloadDigest"]]
    protocol = conversion.records[run["spec"]["protocolDigest"]]
    assert workload["spec"]["pass"] == "forward"
    assert protocol["metadata"]["name"] == "liger-bench-do-bench-no-grad-forward"
    assert "torch.no_grad()" in protocol["spec"]["comparability"]["notes"]


def test_summary_counts(tmp_path: Path) -> None:
    summary = import_csv([EXAMPLES / "good.csv"], tmp_path)
    assert (summary.rows_read, summary.runs, summary.rows_refused) == (6, 6, 0)
    assert summary.collapsed_quantiles == 2
    assert summary.environments == 2
    assert summary.protocols == 6
    text = "\n".join(summary.lines())
    for label in (
        "rows read",
        "runs written",
        "protocols",
        "workloads",
        "environments",
        "implementations",
        "rows refused",
        "collapsed quantiles",
    ):
        assert label in text


def test_duplicate_rows_are_written_once(tmp_path: Path) -> None:
    good = EXAMPLES / "good.csv"
    summary = import_csv([good, good], tmp_path)
    assert summary.rows_read == 12
    assert summary.duplicate_rows == 6
    assert summary.runs == summary.files_written == 6


def test_a_single_path_is_accepted(tmp_path: Path) -> None:
    assert convert(EXAMPLES / "good.csv").summary.runs == 6
    assert import_csv(str(EXAMPLES / "good.csv"), tmp_path).files_written == 6
