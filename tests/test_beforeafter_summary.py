"""``compare --against ... --summary``: the plain summary's figures over before/after pairs.

The speed-up reads as plain ``--summary`` reads: reference ÷ candidate (above 1 the
candidate is faster). Laws on generated records: a set against itself has geomean 1 and
no share faster; scaling one side by ``k`` gives ``k`` (or ``1/k``).
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

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
    [summary] = summarize_pairs(before_after(ref, cand), [0.0, 1.0, 3.0])
    assert summary.baseline == "liger 0.5.0" and summary.implementation == "liger 0.5.1"
    assert summary.workloads == 3 and summary.universe == 5
    assert summary.geomean == pytest.approx(2.0)  # (2 × 0.5 × 8) ** (1/3)
    assert summary.faster_share == pytest.approx(2 / 3)
    assert (summary.failed, summary.absent, summary.missing) == (1, 1, 2)
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
    expected = k if up else 1 / k
    summaries = summarize_pairs(result)
    assert sum(s.universe for s in summaries) == sum(
        1 for key in {(r.key, lineage(r)) for r in base} if _passed(base, key)
    )
    for summary in summaries:
        if summary.workloads:
            assert summary.geomean == pytest.approx(expected, rel=1e-9)
            assert summary.faster_share == (1 if up else 0)


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


def test_json_has_the_plain_summary_shape(sides: tuple[Path, Path]) -> None:
    status, out, err = run(sides, format="json", fast_p=(0.4, 1.0))
    assert status == 1 and "exit 1: 1 slower" in err  # the gate still decides
    report = json.loads(out)
    assert report["speedup"] == "reference / candidate"
    [summary] = report["summaries"]
    assert summary["workloads"] == 2 and summary["missing"] == 1 and summary["universe"] == 3
    assert summary["geomeanSpeedup"] == pytest.approx(1.0)
    assert summary["fasterShare"] == 0.5
    assert summary["fastP"] == {"0.4": pytest.approx(2 / 3), "1": pytest.approx(1 / 3)}
    assert set(summary) == {
        "gpu", "hardware", "metric", "ratioKind", "implementation", "implementationDigest",
        "provider", "baseline", "workloads", "geomeanSpeedup", "fasterShare", "faster",
        "fastP", "missing", "failed", "absent", "universe",
    }  # fmt: skip


def test_text_and_markdown_say_the_direction(sides: tuple[Path, Path]) -> None:
    status, out, _ = run(sides)
    assert status == 1
    header = out.splitlines()[0].split()
    assert header[:4] == ["gpu", "metric", "reference", "candidate"]
    assert "reference ÷ candidate" in out and "the candidate is faster" in out
    status, out, _ = run(sides, format="markdown")
    assert out.startswith("| gpu | metric | reference | candidate |")
    assert "reference ÷ candidate" in out


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
