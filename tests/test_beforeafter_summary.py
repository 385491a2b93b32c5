"""``compare --against ... --summary``: a summary of before/after pairs in the verdicts'
own terms.

Its ratio reads as every before/after ratio does: candidate ÷ reference (below 1 the
candidate is faster); ``faster`` and ``slower`` count verdicts; ``fast_p`` keeps
KernelBench's definition (the speed-up reference ÷ candidate). Laws on generated
records: a set against itself has geomean 1 and nothing faster or slower; scaling one
side by ``k`` gives ``1/k`` (or ``k``), every pair with a ratio judged; and for any two
sets the summary's verdict counts are the verdict table's, its overall geomean the gate
line's.
"""

from __future__ import annotations

import io
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import attrs
import pytest
from beforeafter_records import RunSpec, records_for, resolved, run_sets, scaled, write_jsonl
from hypothesis import given
from hypothesis import strategies as st
from strategies import law_settings

from kernelindex_sdk.cli.compare_cmd import run_compare
from kernelindex_sdk.cli.compare_options import CompareOptions
from kernelindex_sdk.compare.beforeafter import before_after, lineage
from kernelindex_sdk.compare.summary import summarize_pairs


def one(**fields: Any) -> list[dict[str, Any]]:
    return records_for(RunSpec(**fields))


def test_figures_over_the_pairs() -> None:
    ref = resolved(
        [
            one(seq=1, value=100_000),
            one(seq=2, value=100_000),
            one(seq=3, value=100_000),
            one(seq=4, value=100_000),  # no candidate: missing (absent)
            one(seq=5, value=100_000),  # candidate fails: missing (failed)
        ],
        "ref",
    )
    cand = resolved(
        [
            one(seq=1, value=50_000, implementation="liger-0.5.1"),  # 2× faster
            one(seq=2, value=200_000, implementation="liger-0.5.1"),  # 2× slower
            one(seq=3, value=12_500, implementation="liger-0.5.1"),  # 8× faster
            one(seq=5, status="oom", implementation="liger-0.5.1"),
            one(seq=6, value=1, implementation="liger-0.5.1"),  # no reference: not counted
        ],
        "cand",
    )
    result = before_after(ref, cand)
    [summary] = summarize_pairs(result, [0.0, 1.0, 3.0])
    assert summary.baseline == "liger 0.5.0" and summary.implementation == "liger 0.5.1"
    assert summary.workloads == 3 and summary.universe == 5 and summary.pairs == 4
    assert summary.geomean == pytest.approx(0.5)  # (0.5 × 2 × 0.125) ** (1/3): c ÷ r
    assert summary.geomean == result.overall.geomean  # the gate line's
    # Verdicts: seq 1 and 3 faster, seq 2 slower, seq 5 slower (a new OOM).
    assert summary.verdicts == {"slower": 2, "unsure": 0, "faster": 2, "same": 0}
    assert (summary.faster, summary.slower) == (2, 2)
    assert summary.faster_share == summary.slower_share == pytest.approx(2 / 4)
    assert (summary.failed, summary.absent, summary.missing) == (1, 1, 2)
    # fast_p: KernelBench's, on the speed-up reference ÷ candidate (2×, 0.5×, 8×).
    assert summary.fast_p(0.0) == pytest.approx(3 / 5)
    assert summary.fast_p(1.0) == pytest.approx(2 / 5)
    assert summary.fast_p(3.0) == pytest.approx(1 / 5)


def test_one_summary_per_gpu_metric_and_lineage() -> None:
    ref = resolved(
        [one(seq=1), one(seq=1, gpu="a100"), one(seq=1, implementation="huggingface")], "r"
    )
    cand = resolved(
        [
            one(seq=1, implementation="liger-0.5.1"),
            one(seq=1, gpu="a100", implementation="liger-0.5.1"),
            one(seq=1, implementation="huggingface"),
        ],
        "c",
    )
    summaries = summarize_pairs(before_after(ref, cand))
    assert len(summaries) == 3
    assert {s.workloads for s in summaries} == {1}


@given(run_sets())
@law_settings(100)
def test_law_a_set_against_itself(specs: list[RunSpec]) -> None:
    runs = resolved([records_for(s) for s in specs])
    for summary in summarize_pairs(before_after(runs, runs)):
        assert summary.missing == summary.failed  # everything pairs
        assert summary.faster == summary.slower == 0
        if summary.workloads:
            assert summary.geomean == pytest.approx(1.0, rel=1e-12)
            assert summary.faster_share == 0


@given(run_sets(), st.integers(min_value=2, max_value=9), st.booleans())
@law_settings(100)
def test_law_scaling_one_side_by_k_gives_k(specs: list[RunSpec], k: int, up: bool) -> None:
    sets = [records_for(s) for s in specs]
    base = resolved(sets, "base")
    bigger = resolved([scaled(records, k) for records in sets], "scaled")
    # The reference k times slower: the candidate is k times faster, and the reverse.
    result = before_after(bigger, base) if up else before_after(base, bigger)
    expected = 1 / k if up else k  # candidate ÷ reference
    summaries = summarize_pairs(result)
    assert sum(s.universe for s in summaries) == sum(
        1 for key in {(r.key, lineage(r)) for r in base} if _passed(base, key)
    )
    for summary in summaries:
        # k ≥ 2 is past the threshold and every recorded noise (spreads under half
        # the value): each pair with a ratio is judged, the same way.
        assert (summary.faster if up else summary.slower) == summary.workloads
        assert (summary.slower if up else summary.faster) == 0
        if summary.workloads:
            assert summary.geomean == pytest.approx(expected, rel=1e-9)


def _passed(runs: list[Any], key: Any) -> bool:
    """Whether the newest run of a pair key passed (the universe counts those)."""
    found = [r for r in runs if (r.key, lineage(r)) == key]
    return bool(max(found, key=lambda r: (r.observed_key, r.digest)).passed)


# --------------------------------------------------------------------------- the CLI


@pytest.fixture
def sides(tmp_path: Path) -> tuple[Path, Path]:
    ref = [one(seq=1, value=100_000), one(seq=2, value=100_000), one(seq=3)]
    cand = [
        one(seq=1, value=50_000, implementation="liger-0.5.1"),
        one(seq=2, value=200_000, implementation="liger-0.5.1"),
    ]
    write_jsonl(tmp_path / "ref.jsonl", ref)
    write_jsonl(tmp_path / "cand.jsonl", cand)
    return tmp_path / "ref.jsonl", tmp_path / "cand.jsonl"


def run(sides: tuple[Path, Path], **options: Any) -> tuple[int, str, str]:
    ref, cand = sides
    out, err = io.StringIO(), io.StringIO()
    status = run_compare(
        CompareOptions((str(cand),), against=(str(ref),), summary=True, **options),
        out=out,
        err=err,
    )
    return status, out.getvalue(), err.getvalue()


def test_json_says_the_direction_and_counts_verdicts(sides: tuple[Path, Path]) -> None:
    status, out, err = run(sides, format="json", fast_p=(0.4, 1.0))
    assert status == 1 and "exit 1: 1 slower" in err  # the gate still decides
    report = json.loads(out)
    assert report["ratioDirection"] == "candidate / reference"
    assert report["fastPSpeedup"] == "reference / candidate"
    [summary] = report["summaries"]
    assert summary["workloads"] == 2 and summary["missing"] == 1 and summary["universe"] == 3
    assert summary["geomeanRatio"] == pytest.approx(1.0)
    assert summary["verdicts"] == {"slower": 1, "unsure": 0, "faster": 1, "same": 0}
    assert summary["fasterShare"] == summary["slowerShare"] == 0.5
    assert summary["fastP"] == {"0.4": pytest.approx(2 / 3), "1": pytest.approx(1 / 3)}
    assert report["overall"] == {
        "pairs": 2,
        "verdicts": {"slower": 1, "unsure": 0, "faster": 1, "same": 0},
        "geomeanRatio": pytest.approx(1.0),
        "ratios": 2,
    }
    assert set(summary) == {
        "gpu", "hardware", "candidateHardware", "metric", "implementation",
        "implementationDigest", "provider", "baseline", "pairs", "verdicts", "workloads",
        "geomeanRatio", "fasterShare", "faster", "slowerShare", "slower", "fastP",
        "missing", "failed", "absent", "universe",
    }  # fmt: skip


def test_text_markdown_and_csv_say_the_direction(sides: tuple[Path, Path]) -> None:
    status, out, err = run(sides)
    assert status == 1
    lines = out.splitlines()
    assert lines[0].split()[:9] == [
        "gpu", "metric", "reference", "candidate", "pairs", "geomean", "c÷r", "faster", "slower"
    ]  # fmt: skip
    assert lines[1].split()[-7:] == ["1.000×", "50.0%", "(1)", "50.0%", "(1)", "33.3%", "1"]
    assert lines[2] == (
        "all pairs: 2 pairs: 1 slower, 0 unsure, 1 faster, 0 same; geomean ratio 1.000×"
        " (candidate ÷ reference)"
    )
    assert "candidate ÷ reference" in err  # the gate line
    assert "speed-up reference ÷ candidate above p" in out  # fast_p, KernelBench's
    status, out, _ = run(sides, format="markdown")
    assert out.startswith("| gpu | metric | reference | candidate | pairs | geomean c÷r |")
    assert "candidate ÷ reference" in out
    status, out, _ = run(sides, format="csv")
    assert out.splitlines()[0].startswith(
        "gpu,metric,reference,candidate,pairs,slower,unsure,faster,same,workloads,geomean_ratio,"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "junit"}, "--format junit does not apply with --summary"),
        ({"format": "github"}, "--format github does not apply with --summary"),
        ({"fast_p": (math.inf,)}, "--fast-p"),
    ],
)
def test_usage_errors(sides: tuple[Path, Path], options: dict[str, Any], message: str) -> None:
    status, out, err = run(sides, **options)
    assert status == 2 and out == "" and message in err and len(err.splitlines()) == 1


def test_fast_p_without_summary_is_a_usage_error(sides: tuple[Path, Path]) -> None:
    ref, cand = sides
    err = io.StringIO()
    options = CompareOptions((str(cand),), against=(str(ref),), fast_p=(1.0,))
    assert run_compare(options, out=io.StringIO(), err=err) == 2
    assert "--fast-p needs --summary" in err.getvalue()


@given(run_sets(), run_sets(first=3))
@law_settings(30)
def test_law_the_summary_agrees_with_the_verdicts_and_the_gate_line(
    reference: list[RunSpec], candidate: list[RunSpec]
) -> None:
    """For any two sets, through the command: the summary's faster and slower counts
    (summed over its lines) are the verdict table's, and its overall geomean is the
    gate line's (to the digits the line prints)."""
    with tempfile.TemporaryDirectory() as folder:
        ref, cand = Path(folder, "ref.jsonl"), Path(folder, "cand.jsonl")
        write_jsonl(ref, [records_for(s) for s in reference])
        write_jsonl(cand, [records_for(s) for s in candidate])
        verdicts_out, summary_out, summary_err = io.StringIO(), io.StringIO(), io.StringIO()
        plain = CompareOptions((str(cand),), against=(str(ref),), format="json")
        run_compare(plain, out=verdicts_out, err=io.StringIO())
        options = attrs.evolve(plain, summary=True)
        run_compare(options, out=summary_out, err=summary_err)
    table = json.loads(verdicts_out.getvalue())["summary"]
    summary = json.loads(summary_out.getvalue())
    lines = summary["summaries"]
    for verdict in ("faster", "slower", "unsure", "same"):
        assert sum(line["verdicts"][verdict] for line in lines) == table["verdicts"][verdict]
    assert sum(line["faster"] for line in lines) == table["verdicts"]["faster"]
    assert sum(line["slower"] for line in lines) == table["verdicts"]["slower"]
    assert summary["overall"]["geomeanRatio"] == table["geomeanRatio"]
    gate = summary_err.getvalue().splitlines()[-1]
    shown = table["geomeanRatio"]
    assert f"geomean ratio {'n/a' if shown is None else f'{shown:.3f}×'}" in gate
