"""``kernelindex import kernelbench``: KernelBench's baseline timings as records (#16).

On the real sample (``../shared/kernelbench/H100_Modal``, read where it lies; skipped
without it) and on our own fixtures (``tests/examples/kernelbench``) for the messier
history the sample does not show: an ``A10G`` folder holding ``NVIDIA A10`` entries, an
A100 folder holding 40 GB and 80 GB cards, ``null`` entries, entries without hardware
or without a mean, odd file names, and a JSON file that is no timing file.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import shared_data
from import_checks import check_provenance, records_in, validate_strict

from bench_adapters.cli import run_source_import
from bench_adapters.common.importing import Conversion, UnreadableSource
from bench_adapters.common.provenance import DeclarationError
from bench_adapters.kernelbench import RESERVED, convert, import_paths
from bench_adapters.kernelbench.files import agrees, folder_gpu, implementation_of
from bench_adapters.kernelbench.mapping import load_mapping
from kernelindex_sdk.compare import group_runs, load_records, resolve_runs

EXAMPLES = Path(__file__).resolve().parent / "examples" / "kernelbench"
A10G = EXAMPLES / "A10G_Modal"
A100 = EXAMPLES / "A100_Modal"
ODD = EXAMPLES / "odd"


@pytest.fixture(scope="module")
def sample() -> Path:
    return shared_data.require("kernelbench", "H100_Modal")


@pytest.fixture(scope="module")
def converted(sample: Path) -> Conversion:
    return convert([sample])


@pytest.fixture(scope="module")
def fixtures() -> Conversion:
    return convert([A10G, A100, ODD])


def runs_of(conversion: Conversion) -> list[dict[str, Any]]:
    return [entry.run for entry in conversion.runs]


def run_at(conversion: Conversion, external_id: str) -> dict[str, Any]:
    (run,) = [
        r for r in runs_of(conversion) if r["spec"]["sourceNative"]["externalId"] == external_id
    ]
    return run


def record(conversion: Conversion, run: dict[str, Any], member: str) -> dict[str, Any]:
    return conversion.records[run["spec"][f"{member}Digest"]]


# --------------------------------------------------------------------------- the sample


def test_every_entry_of_the_sample_is_a_run(converted: Conversion) -> None:
    summary = converted.summary
    assert (summary.read, summary.runs, summary.refused) == (500, 500, 0)
    assert (summary.environments, summary.implementations, summary.workloads) == (1, 2, 250)


def test_ms_become_ns_with_the_mean_as_primary(converted: Conversion) -> None:
    run = run_at(
        converted, "H100_Modal/baseline_time_torch/level1/1_Square_matrix_multiplication_.py"
    )
    spec = run["spec"]
    assert spec["timing"] == {
        "latencyNs": {"mean": 2_660_000},
        "primaryStatistic": "mean",
        "samples": 100,
    }
    assert {m["statistic"]: m["value"] for m in spec["measurements"]} == {
        "stddev": 19_900,
        "min": 2_650_000,
        "max": 2_860_000,
    }
    assert spec["sourceNative"]["metrics"] == {
        "mean": 2.66,
        "std": 0.0199,
        "min": 2.65,
        "max": 2.86,
        "num_trials": 100,
    }
    workload = record(converted, run, "workload")["spec"]
    assert workload == {
        "kernel": "square_matrix_multiplication",
        "pass": "forward",
        "parameters": {"level": 1, "problem": 1},
        "dtype": "unspecified",
    }


def test_the_implementations_come_from_the_file_names(converted: Conversion) -> None:
    implementations = {
        r["spec"]["provider"]: r["spec"]
        for r in converted.records.values()
        if r["kind"] == "Implementation"
    }
    assert implementations["torch"]["backend"] == "pytorch"
    assert implementations["torch_compile_inductor_default"]["backend"] == "inductor"


def test_what_the_files_do_not_say_is_unknown(converted: Conversion) -> None:
    run = runs_of(converted)[0]
    protocol = record(converted, run, "protocol")["spec"]
    assert protocol["measurement"]["timer"] == "unknown"
    assert "warmupIterations" not in protocol["measurement"]
    assert protocol["provenance"]["/measurement/warmupIterations"]["origin"] == "unknown"
    environment = record(converted, run, "environment")["spec"]
    assert environment["software"] == {}
    for component in ("torch", "cuda"):
        assert environment["provenance"][f"/software/{component}"]["origin"] == "unknown"
    assert environment["hardware"]["deviceName"] == "NVIDIA H100 80GB HBM3"
    assert environment["provenance"]["/hardware/architecture"]["origin"] == "catalog"
    assert run["spec"]["observedAt"] == "1970-01-01T00:00:00.000Z"
    assert run["spec"]["qualityFlags"] == ["observed_at_unknown"]


def test_compare_puts_torch_compile_against_eager_per_problem_and_gpu(
    sample: Path, tmp_path: Path
) -> None:
    summary = import_paths([sample], tmp_path, layout="jsonl")
    assert summary.clean and validate_strict(tmp_path) == []
    loaded = load_records([str(tmp_path)])
    runs, _ = resolve_runs(loaded.index)
    comparison = group_runs(runs)
    assert len(comparison.groups) == 250  # one per problem on the one GPU
    for group in comparison.groups:
        assert group.baseline == "torch"
        assert {row.provider for row in group.rows} == {"torch", "torch_compile_inductor_default"}
        eager, compiled = group.rows  # the baseline first
        assert eager.is_baseline and compiled.ratio == pytest.approx(
            eager.newest.value / compiled.newest.value
        )


# --------------------------------------------------------------------------- our fixtures


def test_odd_entries_are_refused_one_line_each(tmp_path: Path) -> None:
    err = io.StringIO()
    out = tmp_path / "out"
    assert (
        run_source_import("kernelbench", [str(A10G), str(A100), str(ODD)], str(out), err=err) == 1
    )
    lines = err.getvalue().splitlines()
    torch = str(A10G / "baseline_time_torch.json")
    refused = [line[len(torch) + 2 :] for line in lines if line.startswith(torch + ": ")]
    assert refused == [
        "/level1/3_Batched_matrix_multiplication.py: no hardware: the entry does not say which "
        "GPU ran it (declare it with --set gpu=NAME; the folder name is not used)",
        "/level1/4_Matrix_vector_multiplication_.py: no mean: the entry holds no timing",
        refused[2],
        "/level1/7_Negative.py/mean: mean = -1.0 ms is not a time",
        "/level1/8_Text.py/mean: expected a number, got 'fast'",
        "/level3: expected an object of problems, got string",
    ]
    assert refused[2].startswith(
        "/level1/5_Matrix_scalar_multiplication.py: statistics out of order"
    )
    assert any("notes.json: not a KernelBench timing file name" in line for line in lines)
    (odd,) = [line for line in lines if line.startswith(str(ODD / "baseline_time.json"))]
    assert "does not say what was timed" in odd and "--set implementation" in odd
    assert validate_strict(out) == []
    for written in records_in(out):
        if written["kind"] != "BenchmarkRun":
            check_provenance(written)


def test_the_environment_is_each_entrys_own_never_the_folders(fixtures: Conversion) -> None:
    a10 = run_at(
        fixtures, "A10G_Modal/baseline_time_torch/level1/1_Square_matrix_multiplication_.py"
    )
    hardware = record(fixtures, a10, "environment")["spec"]["hardware"]
    assert hardware["product"] == "NVIDIA A10" and hardware["deviceName"] == "NVIDIA A10"
    assert "hardware_differs_from_folder" in a10["spec"]["qualityFlags"]
    a10g = run_at(
        fixtures, "A10G_Modal/baseline_time_torch/level1/6_Matmul_with_large_K_dimension_.py"
    )
    assert "hardware_differs_from_folder" not in a10g["spec"]["qualityFlags"]
    cards = {
        record(fixtures, r, "environment")["spec"]["hardware"].get("formFactor")
        for r in runs_of(fixtures)
        if r["spec"]["sourceNative"]["externalId"].startswith("A100_Modal/")
        and r["spec"]["status"] == "passed"
    }
    assert cards == {"SXM4-40GB", "SXM4-80GB"}  # one A100 folder, two environments


def test_a_null_entry_is_a_run_that_failed(fixtures: Conversion) -> None:
    mixed = run_at(
        fixtures, "A100_Modal/baseline_time_torch/level1/3_Batched_matrix_multiplication.py"
    )
    assert mixed["spec"]["status"] == "failed"
    assert "null" in mixed["spec"]["reason"]
    assert "hardware_unknown" in mixed["spec"]["qualityFlags"]
    environment = record(fixtures, mixed, "environment")["spec"]
    assert environment["hardware"] == {"vendor": "unknown", "product": "unknown"}
    assert environment["provenance"]["/hardware/product"]["origin"] == "unknown"


def test_a_null_entry_in_a_one_gpu_file_sits_beside_its_neighbours(tmp_path: Path) -> None:
    folder = tmp_path / "L4_Modal"
    folder.mkdir()
    entry = {"mean": 1.0, "std": 0.1, "min": 0.9, "max": 1.2, "num_trials": 100,
             "hardware": "NVIDIA L4", "device": "cuda:0"}  # fmt: skip
    for name, problem in (("torch", entry), ("torch_compile_inductor_default", None)):
        text = json.dumps({"level1": {"1_A.py": problem}})
        (folder / f"baseline_time_{name}.json").write_text(text)
    conversion = convert([folder])
    failed, passed = sorted(runs_of(conversion), key=lambda r: r["spec"]["status"])
    assert failed["spec"]["status"] == "failed"
    assert "hardware_from_other_entries" in failed["spec"]["qualityFlags"]
    # The same environment: compare shows the failure beside the eager run.
    assert failed["spec"]["environmentDigest"] == passed["spec"]["environmentDigest"]
    import_paths([folder], tmp_path / "out")
    runs, _ = resolve_runs(load_records([str(tmp_path / "out")]).index)
    (group,) = group_runs(runs).groups
    assert {row.newest.status for row in group.rows} == {"passed", "failed"}


def test_declarations_fill_what_the_files_do_not_say(tmp_path: Path) -> None:
    declared = ["torch=2.5.0", "cuda=12.4", "timer=cuda_events", "warmup=3", "gpu=NVIDIA A10",
                "dtype=fp32", "implementation=torch"]  # fmt: skip
    conversion = convert([A10G, ODD], declarations=declared)
    assert conversion.summary.refused == 5  # the entry without hardware is the caller's A10 now
    run = run_at(
        conversion, "A10G_Modal/baseline_time_torch/level1/3_Batched_matrix_multiplication.py"
    )
    environment = record(conversion, run, "environment")["spec"]
    assert environment["software"] == {"cuda": "12.4", "torch": "2.5.0"}
    assert environment["provenance"]["/hardware/product"] == {
        "origin": "caller",
        "detail": "--set gpu=NVIDIA A10",
    }
    protocol = record(conversion, run, "protocol")["spec"]
    assert protocol["measurement"] == {
        "timer": "cuda_events",
        "primaryStatistic": "mean",
        "warmupIterations": 3,
    }
    assert protocol["provenance"]["/measurement/timer"]["origin"] == "caller"
    assert record(conversion, run, "workload")["spec"]["dtype"] == "fp32"
    odd = run_at(conversion, "odd/baseline_time/level1/1_Square_matrix_multiplication_.py")
    assert record(conversion, odd, "implementation")["spec"]["provider"] == "torch"


@pytest.mark.parametrize(
    "bad",
    [
        "timer=sundial",
        "warmup=three",
        "dtype=FP 32",
        "implementation=jax",
        "=1",
        "x",
        # issue #32: a typo of a key, a version with a newline, an unknown dtype
        "tim=cuda_events",
        "torch=2.5\n0",
        "dtype=fp33",
    ],
)
def test_a_bad_declaration_is_a_usage_error(tmp_path: Path, bad: str) -> None:
    with pytest.raises(DeclarationError):
        convert([A100], declarations=[bad])
    err = io.StringIO()
    assert (
        run_source_import("kernelbench", [str(A100)], str(tmp_path), declarations=[bad], err=err)
        == 2
    )
    assert err.getvalue().count("\n") == 1


def test_a_file_that_is_not_levels_stops_the_import(tmp_path: Path) -> None:
    err = io.StringIO()
    out = tmp_path / "out"
    paths = [str(A100), str(EXAMPLES / "not_levels.json")]
    assert run_source_import("kernelbench", paths, str(out), err=err) == 2
    assert "expected an object of levels, got array" in err.getvalue()
    assert not out.exists()
    with pytest.raises(UnreadableSource):
        convert([EXAMPLES / "not_levels.json"])


@pytest.mark.parametrize(
    ("stem", "backend", "mode"),
    [
        ("torch", None, None),
        ("torch_compile", None, None),
        ("torch_compile_inductor_default", "inductor", "default"),
        (
            "torch_compile_inductor_max-autotune-no-cudagraphs",
            "inductor",
            "max-autotune-no-cudagraphs",
        ),
        ("torch_compile_cudagraphs", "cudagraphs", None),
        ("torch_compile_aot_eager_default", "aot_eager", "default"),
        ("torch_compile_newbackend_fast", "newbackend", "fast"),
    ],
)
def test_file_names_name_the_implementation(
    stem: str, backend: str | None, mode: str | None
) -> None:
    found = implementation_of(stem, load_mapping())
    assert (found.compiled, found.backend, found.mode) == (stem != "torch", backend, mode)


def test_folder_gpus_are_compared_word_by_word() -> None:
    assert folder_gpu("results/timing/A10G_Modal/baseline_time_torch.json") == "A10G"
    assert folder_gpu("results/timing/timing_files/baseline_time_torch.json") is None
    assert folder_gpu("baseline_time_torch.json") in (None, folder_gpu("./x.json"))
    assert agrees("A100", "NVIDIA A100-SXM4-40GB") and agrees("A100-80GB", "NVIDIA A100-SXM4-80GB")
    assert not agrees("A10G", "NVIDIA A10") and not agrees("A100-80GB", "NVIDIA A100-SXM4-40GB")


def test_reserved_keys_are_the_commands() -> None:
    from click.testing import CliRunner

    from bench_adapters.cli import import_group

    result = CliRunner().invoke(import_group, ["kernelbench", "--help"])
    assert result.exit_code == 0
    for key in RESERVED:
        assert key in result.output
