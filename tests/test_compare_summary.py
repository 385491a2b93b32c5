"""``compare --summary``: one line per GPU, metric and implementation (issue #28).

The library (:mod:`kernelindex_sdk.compare.summary`) on records built here with the
generator of ``tests/examples/compare``; its laws as property tests (a set against
itself is 1.0× and never faster; scaling one side scales the geometric mean; nothing
depends on the order of the records or how they are split across files); the command
in-process and as real processes; and the shared KernelBench and Liger data, where
the figures are checked against a computation straight from the source files.
"""

from __future__ import annotations

import io
import json
import math
import random
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
import shared_data
from beforeafter_records import RunSpec, records_for, write_jsonl
from click.testing import CliRunner
from compare_corpus import Outcome, corpus, write
from hypothesis import given
from hypothesis import strategies as st
from strategies import law_settings

from kernelindex_sdk.canonical import digest
from kernelindex_sdk.cli.app import cli
from kernelindex_sdk.cli.compare_cmd import run_compare
from kernelindex_sdk.cli.compare_options import CompareOptions
from kernelindex_sdk.cli.report import REPORTERS
from kernelindex_sdk.compare import group_runs, load_records, resolve_runs, select
from kernelindex_sdk.compare.summary import Summary, check_thresholds, summarize

EXAMPLES = Path(__file__).resolve().parent / "examples" / "compare"
KERNELINDEX = [sys.executable, "-m", "kernelindex_sdk.cli.main"]


def run_cli(*args: str) -> str:
    """``kernelindex ARGS...`` as a real process; its standard output (exit 0 asserted)."""
    proc = subprocess.run([*KERNELINDEX, *args], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def summaries_of(directory: Path, thresholds: Sequence[float] = (1.0,)) -> list[Summary]:
    loaded = load_records([str(directory)])
    assert loaded.invalid == loaded.unreadable == 0
    runs, _ = resolve_runs(loaded.index)
    return summarize(group_runs(runs), thresholds)


def as_json(summaries: Sequence[Summary]) -> str:
    out = io.StringIO()
    REPORTERS["compare --summary", "json"](out, (1.0,)).write(summaries)
    return out.getvalue()


# --------------------------------------------------------------------------- the figures


def test_figures_on_a_hand_made_set(tmp_path: Path) -> None:
    """2×, 1.5× and 0.5× faster, one OOM, one workload without a run."""
    baseline = [100_000, 90_000, 50_000, 70_000, 80_000]
    outcomes: list[Outcome] = [50_000, 60_000, 100_000, "oom", None]
    write(tmp_path, corpus(baseline, outcomes))
    (summary,) = summaries_of(tmp_path, [0, 1, 1.5])
    ratios = [b / o for b, o in zip(baseline, outcomes, strict=True) if isinstance(o, int)]
    assert (summary.gpu, summary.metric, summary.baseline) == (
        "NVIDIA H100 80GB HBM3",
        "latency",
        "huggingface",
    )
    assert summary.implementation == "liger 0.5.0"
    assert summary.workloads == len(ratios) == 3
    assert summary.geomean == pytest.approx(math.prod(ratios) ** (1 / 3), rel=1e-12)
    assert summary.faster == sum(r > 1 for r in ratios) == 2
    assert summary.faster_share == pytest.approx(2 / 3)
    assert (summary.failed, summary.absent, summary.missing, summary.universe) == (1, 1, 2, 5)
    # fast_p counts a failed run and a missing one as not fast: over all five workloads.
    assert summary.fast_p(0) == 3 / 5
    assert summary.fast_p(1) == 2 / 5
    assert summary.fast_p(1.5) == 1 / 5  # 1.5× is not *more* than 1.5×


def test_a_group_without_a_passed_baseline_counts_for_nobody(tmp_path: Path) -> None:
    records = corpus([100_000, 100_000], [50_000, 50_000])
    baseline_runs = [r for r in records if r["metadata"]["name"] == "hf-2"]
    baseline_runs[0]["spec"] = {
        **{
            k: v for k, v in baseline_runs[0]["spec"].items() if k not in ("timing", "measurements")
        },
        "status": "failed",
        "reason": "crashed",
    }
    write(tmp_path, records)
    (summary,) = summaries_of(tmp_path)
    assert (summary.workloads, summary.universe, summary.missing) == (1, 1, 0)


def test_two_implementations_with_one_label_are_told_apart(tmp_path: Path) -> None:
    """Same provider and version, another backend: two summaries, labels with digests."""
    records = corpus([100_000], [50_000])
    (liger,) = [
        r for r in records if r["kind"] == "Implementation" and r["spec"]["provider"] == "liger"
    ]
    cuda = {**liger, "spec": {**liger["spec"], "backend": "cuda"}}
    (liger_run,) = [r for r in records if r["metadata"]["name"] == "liger-1"]
    cuda_run = {
        **liger_run,
        "metadata": {**liger_run["metadata"], "name": "liger-cuda-1"},
        "spec": {**liger_run["spec"], "implementationDigest": digest(cuda)},
    }
    write(tmp_path, [*records, cuda, cuda_run])
    found = summaries_of(tmp_path)
    assert len(found) == 2
    labels = {s.implementation for s in found}
    assert labels == {f"liger 0.5.0 ({s.implementation_digest[:19]})" for s in found}


def test_thresholds_are_checked() -> None:
    assert check_thresholds([1.5, 1, 1.0, 0]) == (0.0, 1.0, 1.5)
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="finite number"):
            check_thresholds([bad])


# --------------------------------------------------------------------------- laws

latencies = st.lists(st.integers(min_value=1, max_value=10**9), min_size=1, max_size=8)


@law_settings(max_examples=40)
@given(latencies)
def test_a_set_against_itself_is_one_and_never_faster(values: list[int]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        write(Path(folder), corpus(values, values))
        (summary,) = summaries_of(Path(folder), [0, 1])
    assert summary.workloads == len(values)
    assert summary.geomean == 1.0
    assert summary.faster_share == 0 and summary.fast_p(1) == 0
    assert summary.fast_p(0) == 1 and summary.missing == 0


@law_settings(max_examples=40)
@given(latencies, st.integers(min_value=2, max_value=1000))
def test_scaling_one_side_scales_the_geometric_mean(values: list[int], factor: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        write(Path(folder), corpus([v * factor for v in values], values))
        (faster,) = summaries_of(Path(folder))
    with tempfile.TemporaryDirectory() as folder:
        write(Path(folder), corpus(values, [v * factor for v in values]))
        (slower,) = summaries_of(Path(folder))
    assert faster.geomean == pytest.approx(factor, rel=1e-12)
    assert slower.geomean == pytest.approx(1 / factor, rel=1e-12)
    assert faster.faster_share == 1 and slower.faster_share == 0


@law_settings(max_examples=30)
@given(
    latencies,
    st.lists(
        st.one_of(st.integers(min_value=1, max_value=10**9), st.just("oom"), st.none()),
        min_size=8,
        max_size=8,
    ),
    st.integers(min_value=1, max_value=4),
    st.randoms(use_true_random=False),
)
def test_summaries_do_not_depend_on_order_or_files(
    values: list[int], outcomes: list[Outcome], files: int, rnd: random.Random
) -> None:
    records = corpus(values, outcomes[: len(values)])
    with tempfile.TemporaryDirectory() as folder:
        write(Path(folder), records)
        expected = as_json(summaries_of(Path(folder), [0, 1, 2]))
    shuffled = list(records)
    rnd.shuffle(shuffled)
    with tempfile.TemporaryDirectory() as folder:
        write(Path(folder), shuffled, files)
        assert as_json(summaries_of(Path(folder), [0, 1, 2])) == expected


# --------------------------------------------------------------------------- the command


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["compare", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_summary_formats(tmp_path: Path) -> None:
    write(tmp_path, corpus([100_000, 90_000, 50_000], [50_000, "oom", 100_000]))
    code, out, err = invoke(str(tmp_path), "--summary", "--fast-p", "1", "--fast-p", "1.5")
    assert code == 0 and err == ""
    header, row = out.splitlines()[:2]
    assert header.split() == [
        "gpu", "metric", "baseline", "implementation", "workloads", "geomean", "faster",
        "fast_1", "fast_1.5", "missing",
    ]  # fmt: skip
    assert row.split()[-7:] == ["0.5.0", "2", "1.00×", "50.0%", "33.3%", "33.3%", "1"]
    assert out.splitlines()[-1] == "1 summary"

    code, out, _ = invoke(str(tmp_path), "--summary", "--format", "json", "--fast-p", "1.5")
    assert code == 0
    (summary,) = json.loads(out)["summaries"]
    assert {
        "gpu", "metric", "implementation", "baseline", "workloads", "geomeanSpeedup",
        "fasterShare", "fastP", "missing",
    } <= set(summary)  # fmt: skip
    assert summary["fastP"] == {"1.5": pytest.approx(1 / 3)}
    assert summary["geomeanSpeedup"] == pytest.approx(1.0)
    assert (summary["workloads"], summary["missing"], summary["failed"]) == (2, 1, 1)

    code, out, _ = invoke(str(tmp_path), "--summary", "--format", "markdown")
    assert code == 0 and out.startswith("| gpu | metric |") and "|---|" in out

    code, out, _ = invoke(str(tmp_path), "--summary", "--format", "csv")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2 and lines[0].startswith("gpu,metric,baseline")


def test_summary_against_a_chosen_baseline(tmp_path: Path) -> None:
    write(tmp_path, corpus([100_000], [50_000]))
    code, out, _ = invoke(str(tmp_path), "--summary", "--baseline", "liger", "--format", "json")
    (summary,) = json.loads(out)["summaries"]
    assert code == 0
    assert (summary["baseline"], summary["implementation"]) == ("liger", "huggingface")
    assert summary["geomeanSpeedup"] == 0.5


def test_summary_usage_errors(tmp_path: Path) -> None:
    write(tmp_path, corpus([100_000], [50_000]))
    code, out, err = invoke(str(tmp_path), "--fast-p", "1")
    assert (code, out) == (2, "") and "--fast-p needs --summary" in err
    code, out, err = invoke(str(tmp_path), "--summary", "--fast-p", "nan")
    assert (code, out) == (2, "") and "finite number" in err
    assert invoke(str(tmp_path), "--summary", "--fast-p", "-1")[0] == 2


def test_summary_in_a_real_process_with_invalid_input(tmp_path: Path) -> None:
    """Invalid records are reported one line each and left out; exit 1, summary printed."""
    write(tmp_path, corpus([100_000], [50_000]))
    (tmp_path / "bad.json").write_text('{"kind": "BenchmarkRun"}', encoding="utf-8")
    proc = subprocess.run(
        [*KERNELINDEX, "compare", str(tmp_path), "--summary"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "bad.json" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout.splitlines()[-1] == "1 summary"


# --------------------------------------------------------------------------- shared data


def test_kernelbench_is_one_summary_that_matches_its_files(tmp_path: Path) -> None:
    """250 problems: one line instead of 250 tables; every figure recomputed from the
    timing files themselves (torch eager mean ÷ torch.compile mean per problem)."""
    folder = shared_data.require("kernelbench", "H100_Modal")
    subprocess.run(
        [*KERNELINDEX, "import", "kernelbench", str(folder), "--out", str(tmp_path / "kb")],
        check=True, capture_output=True,
    )  # fmt: skip
    proc = subprocess.run(
        [*KERNELINDEX, "compare", str(tmp_path / "kb"), "--summary", "--format", "json",
         "--fast-p", "0", "--fast-p", "1", "--fast-p", "1.5"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (summary,) = json.loads(proc.stdout)["summaries"]

    def means(name: str) -> dict[tuple[str, str], float | None]:
        data = json.loads((folder / name).read_text(encoding="utf-8"))
        return {
            (level, problem): entry["mean"] if entry else None
            for level, problems in data.items()
            for problem, entry in problems.items()
        }

    eager = means("baseline_time_torch.json")
    compiled = means("baseline_time_torch_compile_inductor_default.json")
    universe = [k for k, v in eager.items() if v is not None]
    ratios = [eager[k] / compiled[k] for k in universe if compiled.get(k)]  # type: ignore[operator]
    assert summary["baseline"] == "torch"
    assert summary["implementation"] == "torch_compile_inductor_default"
    assert summary["workloads"] == len(ratios)
    assert summary["missing"] == len(universe) - len(ratios)
    # The records hold whole nanoseconds; the files milliseconds: equal to rounding.
    geomean = math.exp(math.fsum(math.log(r) for r in ratios) / len(ratios))
    assert summary["geomeanSpeedup"] == pytest.approx(geomean, rel=1e-6)
    for p in (0, 1, 1.5):
        fast = sum(r > p for r in ratios) / len(universe)
        assert summary["fastP"][f"{p:g}"] == pytest.approx(fast, abs=1 / len(universe)), p


def test_liger_summary_is_a_page_not_a_thousand_tables(tmp_path: Path) -> None:
    csv_path = shared_data.require("liger", "all_benchmark_data.csv")
    run_cli("import", "liger", str(csv_path), "--out", str(tmp_path), "--layout", "jsonl")
    found = json.loads(run_cli("compare", str(tmp_path), "--summary", "--format", "json"))
    summaries = found["summaries"]
    assert 10 < len(summaries) < 200
    for summary in summaries:
        assert summary["workloads"] + summary["missing"] == summary["universe"] > 0
        if summary["workloads"]:
            assert summary["geomeanSpeedup"] > 0
            assert 0 <= summary["fastP"]["1"] <= summary["fasterShare"] <= 1
    # The same through the library, as text: one line per summary.
    loaded = load_records([str(tmp_path)])
    runs, resolver = resolve_runs(loaded.index)
    text = io.StringIO()
    REPORTERS["compare --summary", "text"](text, (1.0,)).write(summarize(group_runs(runs)))
    assert text.getvalue().splitlines()[-1] == f"{len(summaries)} summaries"
    # GeGLU alone on the A100: liger 0.2.1 against huggingface, every shape and pass.
    geglu = select(runs, kernels=["geglu"], gpus=["a100"], gpu_names=resolver.gpu_names())
    (summary,) = summarize(group_runs(r for r in geglu if r.metric == "latency"))
    assert (summary.implementation, summary.baseline, summary.missing) == (
        "liger 0.2.1",
        "huggingface",
        0,
    )
    assert summary.workloads == len({r.key for r in geglu if r.metric == "latency"})


def test_json_names_the_speedups_direction(tmp_path: Path) -> None:
    """A plain summary's ratio is the speed-up, baseline ÷ implementation; the JSON
    says so, as a summary of pairs says candidate ÷ reference."""
    sets = [
        records_for(RunSpec(implementation="huggingface", value=100_000)),
        records_for(RunSpec(implementation="liger-0.5.0", value=50_000)),
    ]
    write_jsonl(tmp_path / "runs.jsonl", sets)
    out = io.StringIO()
    options = CompareOptions((str(tmp_path / "runs.jsonl"),), summary=True, format="json")
    assert run_compare(options, out=out, err=io.StringIO()) == 0
    report = json.loads(out.getvalue())
    assert report["ratioDirection"] == "baseline / implementation"
    assert report["summaries"][0]["geomeanSpeedup"] == 2.0
