"""Before/after (``compare --against``): noise, pairing, verdicts, laws, the CLI gate.

The laws run on generated records (``beforeafter_records``) and on nvbench's sample
from ``shared/`` (skipped where absent): a set against itself has no faster or slower;
scaling one side well past the threshold and the noise makes every pair with a value
slower (or faster); swapping the sides mirrors every verdict and inverts every ratio;
neither input order nor the split across files changes a verdict.
"""

from __future__ import annotations

import io
import itertools
import json
import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import shared_data
from beforeafter_records import (
    RunSpec,
    index_of,
    records_for,
    resolved,
    run_sets,
    scaled,
    write_jsonl,
)
from hypothesis import given
from hypothesis import strategies as st
from strategies import law_settings

from kernelindex_sdk.cli.beforeafter_cmd import UsageError, parse_fail_on, parse_threshold
from kernelindex_sdk.cli.compare_cmd import run_compare
from kernelindex_sdk.cli.compare_options import CompareOptions
from kernelindex_sdk.compare import load_records, resolve_runs
from kernelindex_sdk.compare.beforeafter import (
    EXACT,
    FASTER,
    SAME,
    SLOWER,
    UNSURE,
    BeforeAfter,
    Outcome,
    before_after,
    gate,
    judge,
    lineage,
)
from kernelindex_sdk.compare.noise import NONE, QUANTILES, SAMPLES, STDDEV, noise_of, of_samples
from kernelindex_sdk.compare.records import RecordIndex
from kernelindex_sdk.compare.runs import Resolver, refresh_runs

KERNELINDEX = (sys.executable, "-m", "kernelindex_sdk.cli.main")
JSONL = ("--layout", "jsonl")
GATE = ("--fail-on", "slower", "--fail-on", "unsure", "--threshold", "0.05")
MIRROR = {SLOWER: FASTER, FASTER: SLOWER, SAME: SAME, UNSURE: UNSURE}


def one(**fields: Any) -> list[dict[str, Any]]:
    return records_for(RunSpec(**fields))


def resolve_one(**fields: Any) -> Any:
    [run] = resolved([one(**fields)])
    return run


# --------------------------------------------------------------------------- noise


def test_noise_quantiles_are_p20_to_p80() -> None:
    noise = noise_of(resolve_one(value=100, spread=5, noise="quantiles"))
    assert (noise.kind, noise.low, noise.high) == (QUANTILES, 95, 105)
    assert noise.label == "p20–p80"


def test_noise_stddev_is_mean_plus_minus_one_deviation_with_the_count() -> None:
    noise = noise_of(resolve_one(value=100, spread=7, noise="stddev"))
    assert (noise.kind, noise.low, noise.high, noise.samples) == (STDDEV, 93, 107, 20)
    assert noise.label == "mean ± stddev (n=20)"


@pytest.mark.parametrize(
    ("form", "why"),
    [
        ("collapsed", "collapsed quantiles"),
        ("one-sample", "one sample"),
        ("none", "no spread recorded"),
    ],
)
def test_no_noise_says_why(form: str, why: str) -> None:
    noise = noise_of(resolve_one(noise=form))
    assert (noise.kind, noise.why, noise.known) == (NONE, why, False)
    assert noise.interval(42.0) == (42.0, 42.0)


def test_the_collapsed_quantiles_flag_is_no_noise_even_with_a_spread() -> None:
    records = one(noise="quantiles")
    records[-1]["spec"]["qualityFlags"] = ["collapsed_quantiles"]
    [run] = resolved([records])
    assert noise_of(run).why == "collapsed quantiles"


def test_noise_of_raw_samples() -> None:
    noise = of_samples([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert noise.kind == SAMPLES and noise.samples == 6
    assert noise.low == pytest.approx(2.0) and noise.high == pytest.approx(5.0)
    assert of_samples([3.0]).why == "one sample"
    assert of_samples([3.0, 3.0]).kind == NONE


# --------------------------------------------------------------------------- verdicts


def pair_of(ref: dict[str, Any], cand: dict[str, Any], threshold: float = 0.05) -> Any:
    [a] = resolved([one(**ref)])
    [b] = resolved([one(**cand)])
    return judge(a, b, threshold)


def test_a_change_below_the_threshold_is_same_whatever_the_noise() -> None:
    pair = pair_of({"value": 100_000, "spread": 1}, {"value": 104_000, "spread": 1})
    assert pair.verdict == SAME and pair.ratio == pytest.approx(1.04)
    assert "below the 5 % threshold" in pair.reason


def test_a_larger_change_is_slower_only_beyond_the_noise() -> None:
    clear = pair_of({"value": 100_000, "spread": 2_000}, {"value": 120_000, "spread": 2_000})
    assert clear.verdict == SLOWER and "do not overlap" in clear.reason
    # The intervals overlap, but +20 % is more than either run's ±15 % / ±12.5 %.
    apart = pair_of({"value": 100_000, "spread": 15_000}, {"value": 120_000, "spread": 15_000})
    assert apart.verdict == SLOWER
    assert "beyond the recorded relative noise (±15.0 %)" in apart.reason
    noisy = pair_of({"value": 100_000, "spread": 25_000}, {"value": 120_000, "spread": 25_000})
    assert noisy.verdict == UNSURE and "within the noise" in noisy.reason
    assert "relative noise ±25.0 %" in noisy.reason


@pytest.mark.parametrize("noise", ["stddev", "quantiles"])
def test_a_change_past_the_relative_noise_is_a_verdict_as_nvbench_decides(noise: str) -> None:
    """nvbench's compare: a state at -20 % with 14 % relative noise (127,632 samples)
    is FAST. The noise intervals overlap (80 ± 11.2 against 100 ± 14), yet the change
    is larger than the relative noise either run recorded."""
    ref = {"value": 100_000, "spread": 14_000, "noise": noise, "samples": 127_632}
    cand = {"value": 80_000, "spread": 11_200, "noise": noise, "samples": 127_632}
    pair = pair_of(ref, cand)
    assert pair.verdict == FASTER and pair.ratio == pytest.approx(0.8)
    assert "beyond the recorded relative noise (±14.0 %)" in pair.reason
    assert pair_of(cand, ref).verdict == SLOWER  # and the mirror


def test_the_larger_relative_noise_decides_not_the_smaller() -> None:
    """Where nvbench takes the smaller of the two noises, the larger decides here: a
    run with a wide spread keeps a change within it undecided (Liger's rope re-run at
    -9.4 % whose older run recorded a p20-p80 reaching 55 % away)."""
    pair = pair_of({"value": 100_000, "spread": 30_000}, {"value": 90_000, "spread": 1_000})
    assert pair.verdict == UNSURE and "relative noise ±30.0 %" in pair.reason
    faster = pair_of({"value": 120_000}, {"value": 100_000})
    assert faster.verdict == FASTER and faster.ratio == pytest.approx(100 / 120)


def test_without_noise_on_either_side_the_threshold_decides_and_says_so() -> None:
    pair = pair_of({"noise": "collapsed"}, {"noise": "one-sample", "value": 150_000})
    assert pair.verdict == SLOWER
    assert "no noise recorded" in pair.reason and "collapsed quantiles" in pair.reason


def test_memory_is_better_lower_too() -> None:
    pair = pair_of(
        {"metric": "peak_memory", "value": 1 << 30, "spread": 1},
        {"metric": "peak_memory", "value": 1 << 31, "spread": 1},
    )
    assert pair.verdict == SLOWER and pair.ratio == 2.0


def test_a_new_failure_is_a_regression_and_a_fix_is_faster() -> None:
    broke = pair_of({}, {"status": "oom"})
    assert (broke.verdict, broke.ratio) == (SLOWER, None)
    assert "candidate oom: CUDA out of memory" in broke.reason
    assert pair_of({"status": "oom"}, {}).verdict == FASTER
    assert pair_of({"status": "oom"}, {"status": "oom"}).verdict == SAME


def test_the_threshold_is_a_parameter() -> None:
    pair = pair_of({"value": 100_000, "spread": 1}, {"value": 104_000, "spread": 1}, 0.01)
    assert pair.verdict == SLOWER


# --------------------------------------------------------------------------- pairing


def test_lineage_pairs_across_versions_and_exact_does_not() -> None:
    ref = resolved([one(implementation="liger-0.5.0", value=100_000)])
    cand = resolved([one(implementation="liger-0.5.1", value=150_000)])
    result = before_after(ref, cand)
    [pair] = result.pairs
    assert pair.verdict == SLOWER and pair.ratio == 1.5
    exact = before_after(ref, cand, pair_by=EXACT)
    assert exact.pairs == ()
    [lonely] = exact.unpaired_candidate
    assert lonely.near is not None and lonely.near.digest == ref[0].digest
    assert [d.part for d in lonely.differences] == ["implementation"]


def test_another_entry_point_is_another_lineage() -> None:
    ref = resolved([one(implementation="liger-0.5.0")])
    cand = resolved([one(implementation="liger-rms")])
    result = before_after(ref, cand)
    assert result.pairs == () and len(result.unpaired_candidate) == 1


def test_unpaired_runs_are_listed_with_what_differs() -> None:
    ref = resolved([one(gpu="h100")])
    cand = resolved([one(gpu="a100", at=5)])
    result = before_after(ref, cand)
    assert result.pairs == ()
    [lonely] = result.unpaired_candidate
    assert [str(d) for d in lonely.differences] == [
        "environment hardware differs (NVIDIA A100 SXM4-80GB vs NVIDIA H100 80GB HBM3)"
    ]
    assert len(result.unpaired_reference) == 1
    # Nothing paired is not a pass: the gate fails, and says why.
    assert gate(result) == Outcome(1, "no run pairs (2 unpaired): nothing was compared")


def test_another_implementation_on_the_same_key_is_the_closest_miss() -> None:
    ref = resolved([one(implementation="huggingface")])
    cand = resolved([one(implementation="liger-0.5.0", at=5)])
    [lonely] = before_after(ref, cand).unpaired_candidate
    assert [str(d) for d in lonely.differences] == [
        "implementation differs (liger 0.5.0 vs huggingface)"
    ]


def test_the_newest_run_of_a_side_is_used_and_the_others_are_kept() -> None:
    ref = resolved([one(at=10, value=100_000), one(at=20, value=200_000)])
    cand = resolved([one(at=30, value=200_000)])
    [pair] = before_after(ref, cand).pairs
    assert pair.reference.value == 200_000 and pair.verdict == SAME
    assert [r.value for r in pair.reference_others] == [100_000]


def test_regressions_come_first_worst_first() -> None:
    ref = resolved([one(seq=s, spread=1) for s in (1, 2, 3, 4)])
    cand = resolved(
        [
            one(seq=1, value=100_000, spread=1),
            one(seq=2, value=150_000, spread=1),
            one(seq=3, value=300_000, spread=1),
            one(seq=4, value=50_000, spread=1),
        ]
    )
    result = before_after(ref, cand)
    assert [(p.verdict, p.ratio) for p in result.pairs] == [
        (SLOWER, 3.0),
        (SLOWER, 1.5),
        (FASTER, 0.5),
        (SAME, 1.0),
    ]
    assert result.overall.counts == {SLOWER: 2, UNSURE: 0, FASTER: 1, SAME: 1}
    assert result.overall.geomean == pytest.approx((3.0 * 1.5 * 0.5) ** 0.25)
    assert gate(result).status == 1 and gate(result).reason == "2 slower"
    # fail_on is read once: an iterator works as well as a tuple.
    assert gate(result, iter([SLOWER, FASTER])) == gate(result, (SLOWER, FASTER))
    assert gate(result, iter([SLOWER, FASTER])).reason == "2 slower, 1 faster"


# --------------------------------------------------------------------------- laws


def verdicts(result: BeforeAfter) -> list[tuple[str, str, str, float | None]]:
    return [(p.reference.digest, p.candidate.digest, p.verdict, p.ratio) for p in result.pairs]


def unpaired(result: BeforeAfter) -> tuple[list[str], list[str]]:
    return (
        sorted(r.digest for u in result.unpaired_reference for r in (u.run, *u.others)),
        sorted(r.digest for u in result.unpaired_candidate for r in (u.run, *u.others)),
    )


@given(run_sets())
@law_settings(200)
def test_law_a_set_against_itself_has_no_faster_or_slower(specs: list[RunSpec]) -> None:
    runs = resolved([records_for(s) for s in specs])
    result = before_after(runs, runs)
    assert result.overall.counts[SLOWER] == result.overall.counts[FASTER] == 0
    assert result.unpaired_reference == result.unpaired_candidate == ()
    assert gate(result).status == 0


@given(run_sets(), st.booleans())
@law_settings(200)
def test_law_scaling_one_side_past_threshold_and_noise(specs: list[RunSpec], up: bool) -> None:
    sets = [records_for(s) for s in specs]
    # Well past: beyond the threshold and beyond every interval's width (high / low).
    widest = max((s.value + s.spread) / (s.value - s.spread) for s in specs)
    factor = int(2 * widest) + 2
    base = resolved(sets, "base")
    bigger = resolved([scaled(records, factor) for records in sets], "scaled")
    result = before_after(base, bigger) if up else before_after(bigger, base)
    expected = SLOWER if up else FASTER
    assert len(result.pairs) == len({(r.key, lineage(r)) for r in base})
    assert result.unpaired_reference == result.unpaired_candidate == ()
    with_value = [p for p in result.pairs if p.reference.passed and p.candidate.passed]
    assert all(p.verdict == expected for p in with_value), [p.reason for p in with_value]


@given(run_sets(), run_sets(first=3))
@law_settings(200)
def test_law_swapping_the_sides_mirrors_verdicts(a: list[RunSpec], b: list[RunSpec]) -> None:
    first = resolved([records_for(s) for s in a], "a")
    second = resolved([records_for(s) for s in b], "b")
    forward, backward = before_after(first, second), before_after(second, first)
    mirrored = {(c, r): (MIRROR[v], q) for r, c, v, q in verdicts(backward)}
    assert len(mirrored) == len(forward.pairs)
    for ref, cand, verdict, ratio in verdicts(forward):
        back_verdict, back_ratio = mirrored[(ref, cand)]
        assert verdict == back_verdict
        if ratio is None:
            assert back_ratio is None
        else:
            assert back_ratio is not None and ratio * back_ratio == pytest.approx(1, rel=1e-15)
    assert unpaired(forward) == tuple(reversed(unpaired(backward)))


@given(run_sets(), run_sets(first=3), st.randoms(use_true_random=False))
@law_settings(200)
def test_law_input_order_does_not_matter(
    a: list[RunSpec], b: list[RunSpec], rnd: random.Random
) -> None:
    first = resolved([records_for(s) for s in a], "a")
    second = resolved([records_for(s) for s in b], "b")
    result = before_after(first, second)
    rnd.shuffle(first)
    rnd.shuffle(second)
    again = before_after(first, second)
    assert verdicts(again) == verdicts(result) and unpaired(again) == unpaired(result)
    assert again.by_kernel_gpu == result.by_kernel_gpu


@given(run_sets(max_size=6), run_sets(max_size=6, first=3), st.randoms(use_true_random=False))
@law_settings(30)
def test_law_the_split_across_files_does_not_matter(
    tmp_path_factory: pytest.TempPathFactory,
    a: list[RunSpec],
    b: list[RunSpec],
    rnd: random.Random,
) -> None:
    folder = tmp_path_factory.mktemp("split")

    def load(specs: list[RunSpec], name: str, parts: int) -> list[Any]:
        sets = [records_for(s) for s in specs]
        rnd.shuffle(sets)
        paths = []
        for index in range(parts):
            path = folder / f"{name}-{parts}-{index}.jsonl"
            if sets[index::parts]:  # an empty file is no JSON Lines document
                write_jsonl(path, sets[index::parts])
                paths.append(str(path))
        loaded = load_records(paths)
        assert loaded.invalid == loaded.unreadable == 0
        return resolve_runs(loaded.index)[0]

    whole = before_after(load(a, "a", 1), load(b, "b", 1))
    split = before_after(load(a, "a", 3), load(b, "b", 2))
    assert verdicts(split) == verdicts(whole) and unpaired(split) == unpaired(whole)


# --------------------------------------------------------------------------- shared data


@pytest.fixture(scope="module")
def nvbench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """nvbench's sample imported to JSON Lines, and its records."""
    sample = shared_data.require("nvbench", "test_ref.json")
    out = tmp_path_factory.mktemp("nvbench")
    subprocess.run(
        [*KERNELINDEX, "import", "nvbench", str(sample), "--out", str(out / "ref"), *JSONL],
        check=True,
        capture_output=True,
    )
    [path] = (out / "ref").glob("*.jsonl")
    return path, [json.loads(line) for line in path.open(encoding="utf-8")]


def _scaled_file(
    records: list[dict[str, Any]], factor: float, path: Path, every: int = 1, start: int = 0
) -> None:
    """The records with every ``every``-th passed run from ``start`` on scaled by ``factor``."""
    out = json.loads(json.dumps(records))
    passed = [r for r in out if r["kind"] == "BenchmarkRun" and r["spec"]["status"] == "passed"]
    for record in passed[start::every]:
        spec = record["spec"]
        spec["timing"]["latencyNs"] = {
            k: round(v * factor) for k, v in spec["timing"]["latencyNs"].items()
        }
        for measurement in spec.get("measurements", ()):
            measurement["value"] = round(measurement["value"] * factor)
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")


def test_nvbench_states_made_slower_and_faster(
    nvbench: tuple[Path, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """As nvbench's own test_cmp.json does: some states slower, some faster, the rest
    as they were; each verdict follows its state's change."""
    path, records = nvbench
    slower = tmp_path / "slower" / "nvbench.jsonl"
    _scaled_file(records, 3.0, slower, every=3, start=0)
    mixed = tmp_path / "mixed" / "nvbench.jsonl"
    _scaled_file([json.loads(line) for line in slower.open(encoding="utf-8")], 1 / 3, mixed, 3, 1)
    status, report, _ = gate_json(str(mixed), against=(str(path),))
    assert status == 1
    found: dict[str, int] = {}
    for pair in report["pairs"]:
        if pair["ratio"] is None:  # skipped on both sides
            assert pair["verdict"] == "same"
            continue
        expected = {3.0: "slower", 1 / 3: "faster", 1.0: "same"}
        factor = min(expected, key=lambda f: abs(f - pair["ratio"]))
        assert pair["verdict"] == expected[factor], pair["reason"]
        found[expected[factor]] = found.get(expected[factor], 0) + 1
    assert found == {"slower": 30, "faster": 29, "same": 29}
    assert report["summary"]["verdicts"]["slower"] == 30


def gate_json(*args: str, against: tuple[str, ...], **options: Any) -> tuple[int, Any, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_compare(
        CompareOptions(args, against=against, format="json", **options), out=out, err=err
    )
    return status, json.loads(out.getvalue()), err.getvalue()


def test_nvbench_against_itself(nvbench: tuple[Path, list[dict[str, Any]]]) -> None:
    path, _ = nvbench
    status, report, _ = gate_json(str(path), against=(str(path),))
    assert status == 0
    verdicts = report["summary"]["verdicts"]
    assert verdicts["slower"] == verdicts["faster"] == 0
    assert report["summary"]["pairs"] == 126 and report["summary"]["geomeanRatio"] == 1.0


@pytest.mark.parametrize(("factor", "verdict", "code"), [(3.0, "slower", 1), (1 / 3, "faster", 0)])
def test_nvbench_scaled_well_past_the_noise(
    nvbench: tuple[Path, list[dict[str, Any]]],
    tmp_path: Path,
    factor: float,
    verdict: str,
    code: int,
) -> None:
    path, records = nvbench
    changed = tmp_path / "changed" / "nvbench.jsonl"
    _scaled_file(records, factor, changed)
    status, report, err = gate_json(str(changed), against=(str(path),))
    assert status == code
    passed = [
        p
        for p in report["pairs"]
        if p["reference"]["status"] == p["candidate"]["status"] == "passed"
    ]
    assert len(passed) == 88 and {p["verdict"] for p in passed} == {verdict}
    for pair in passed:
        assert pair["ratio"] == pytest.approx(factor, rel=1e-3)
        assert pair["reference"]["digest"] != pair["candidate"]["digest"]
    assert f"exit {code}:" in err


@pytest.mark.parametrize("factor", [3.0, 1 / 3])
def test_nvbench_summary_over_pairs_is_the_scale(
    nvbench: tuple[Path, list[dict[str, Any]]], tmp_path: Path, factor: float
) -> None:
    """``--against ... --summary`` on nvbench's sample and a copy with every passed state
    ``factor`` times slower: the geometric-mean ratio (candidate ÷ reference) is
    ``factor`` on every line, every passed pair judged; against itself, 1 and nothing
    faster or slower."""
    path, records = nvbench
    changed = tmp_path / "changed" / "nvbench.jsonl"
    _scaled_file(records, factor, changed)
    status, report, _ = gate_json(str(changed), against=(str(path),), summary=True)
    assert status == (1 if factor > 1 else 0)
    assert report["ratioDirection"] == "candidate / reference" and report["summaries"]
    assert sum(s["workloads"] for s in report["summaries"]) == 88
    for summary in report["summaries"]:
        assert summary["geomeanRatio"] == pytest.approx(factor, rel=1e-3)
        judged = summary["faster"] if factor < 1 else summary["slower"]
        assert judged == summary["workloads"]
    status, report, _ = gate_json(str(path), against=(str(path),), summary=True)
    assert status == 0
    for summary in report["summaries"]:
        assert summary["geomeanRatio"] == 1.0 and summary["fasterShare"] == 0.0
        assert summary["slower"] == 0


# --------------------------------------------------------------------------- the CLI gate


@pytest.fixture
def sides(tmp_path: Path) -> tuple[Path, Path]:
    """A reference and a candidate: one pair slower, one same, one unsure, one unpaired."""
    ref = [
        one(seq=1, value=100_000, spread=1_000),
        one(seq=2, value=100_000, spread=1_000),
        one(seq=3, value=100_000, spread=30_000),
    ]
    cand = [
        one(seq=1, value=130_000, spread=1_000, implementation="liger-0.5.1"),
        one(seq=2, value=101_000, spread=1_000, implementation="liger-0.5.1"),
        one(seq=3, value=120_000, spread=30_000, implementation="liger-0.5.1"),
        one(seq=3, gpu="a100", implementation="liger-0.5.1"),
    ]
    write_jsonl(tmp_path / "ref.jsonl", ref)
    write_jsonl(tmp_path / "cand.jsonl", cand)
    return tmp_path / "ref.jsonl", tmp_path / "cand.jsonl"


def test_json_report_shape(sides: tuple[Path, Path]) -> None:
    ref, cand = sides
    status, report, _ = gate_json(str(cand), against=(str(ref),))
    assert status == 1
    assert [p["verdict"] for p in report["pairs"]] == ["slower", "unsure", "same"]
    first = report["pairs"][0]
    assert first["ratio"] == 1.3 and first["reason"]
    assert first["reference"]["digest"].startswith("sha256:")
    assert first["candidate"]["source"] == f"{cand}:5"
    assert first["candidate"]["noise"] == {
        "kind": "quantiles",
        "low": 129_000,
        "high": 131_000,
        "samples": None,
        "why": None,
        "label": "p20–p80",
    }
    assert report["unpaired"]["reference"] == []
    [lonely] = report["unpaired"]["candidate"]
    assert lonely["near"]["differences"][0]["part"] == "environment hardware"
    summary = report["summary"]
    assert summary["verdicts"] == {"slower": 1, "unsure": 1, "faster": 0, "same": 1}
    assert summary["exitStatus"] == 1 and summary["outcome"] == "1 slower"
    assert summary["unpairedRuns"] == {"reference": 0, "candidate": 1}
    assert [(g["kernel"], g["gpu"]) for g in summary["byKernelGpu"]] == [
        ("geglu", "NVIDIA H100 80GB HBM3")
    ]


def test_fail_on_unsure_and_threshold(sides: tuple[Path, Path]) -> None:
    ref, cand = sides
    status, report, _ = gate_json(str(cand), against=(str(ref),), threshold="50%")
    assert status == 0 and report["summary"]["verdicts"]["same"] == 3
    status, report, _ = gate_json(
        str(cand), against=(str(ref),), threshold="50%", fail_on=("slower,unsure",)
    )
    assert status == 0
    status, report, _ = gate_json(str(cand), against=(str(ref),), fail_on=("unsure",))
    assert status == 1 and report["summary"]["outcome"] == "1 unsure"


def text_gate(*args: str, against: tuple[str, ...], **options: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_compare(CompareOptions(args, against=against, **options), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def test_text_report(sides: tuple[Path, Path]) -> None:
    ref, cand = sides
    status, out, _ = text_gate(str(cand), against=(str(ref),))
    assert status == 1
    lines = out.splitlines()
    assert lines[0].startswith("SLOWER    1.300×  geglu · forward · latency · NVIDIA H100")
    assert "reference  100.0 µs (p20–p80 99.00–101.0 µs)  liger 0.5.0" in out
    assert "candidate  130.0 µs (p20–p80 129.0–131.0 µs)  liger 0.5.1" in out
    assert "unpaired candidate runs: 1 (no reference run measures the same)" in out
    # A same pair is one line.
    [same] = [line for line in lines if line.startswith("SAME")]
    assert same.endswith("· liger 0.5.1 · seq=2, bf16  (+1.0 %: below the 5 % threshold)")
    assert lines[lines.index(same) + 1] == ""
    assert "environment hardware differs (NVIDIA A100 SXM4-80GB vs NVIDIA H100 80GB HBM3)" in out
    assert lines[-1].endswith("exit 1: 1 slower")
    assert lines[-1].startswith("3 pairs: 1 slower, 1 unsure, 0 faster, 1 same; geomean ratio")


def test_markdown_github_junit_csv(sides: tuple[Path, Path]) -> None:
    ref, cand = sides
    _, markdown, _ = text_gate(str(cand), against=(str(ref),), format="markdown")
    assert markdown.startswith("### ❌ Before/after: 1 slower\n")
    assert "| **slower** | 1.300× |" in markdown and "<details><summary>1 pair the same" in markdown
    _, github, _ = text_gate(str(cand), against=(str(ref),), format="github")
    errors = [line for line in github.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1
    assert errors[0].startswith(f"::error file={cand},line=5,title=kernelindex compare%3A slower")
    assert "+30.0 %25" in errors[0]  # GitHub's escaping of workflow-command data
    assert sum(line.startswith("::warning ") for line in github.splitlines()) == 1
    _, junit, _ = text_gate(str(cand), against=(str(ref),), format="junit")
    suite = ET.fromstring(junit.split("\n", 1)[1])
    assert suite.get("tests") == "3" and suite.get("failures") == "1"
    # Case names never hold the verdict or the version: CI follows a case's history.
    names = [case.get("name") or "" for case in suite.iter("testcase")]
    assert names[0] == "geglu · forward · latency · NVIDIA H100 80GB HBM3 · liger · seq=1, bf16"
    _, again, _ = text_gate(str(ref), against=(str(ref),), format="junit")
    same = ET.fromstring(again.split("\n", 1)[1])
    assert sorted(names) == sorted(case.get("name") or "" for case in same.iter("testcase"))
    _, table, _ = text_gate(str(cand), against=(str(ref),), format="csv")
    rows = table.splitlines()
    assert rows[0].startswith("verdict,ratio,reason,")
    assert [r.split(",")[0] for r in rows[1:]] == ["slower", "unsure", "same", "unpaired candidate"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"threshold": "5"}, "did you mean 5%?"),
        ({"threshold": "fast"}, "is not a number"),
        ({"fail_on": ("slower,worse",)}, "'worse': not a verdict"),
        ({"baseline": "huggingface"}, "--baseline does not apply with --against"),
        ({"pair_by": "name"}, "--pair-by 'name'"),
    ],
)
def test_usage_errors_are_exit_2(
    sides: tuple[Path, Path], options: dict[str, Any], message: str
) -> None:
    ref, cand = sides
    status, out, err = text_gate(str(cand), against=(str(ref),), **options)
    assert status == 2 and out == ""
    assert message in err and len(err.splitlines()) == 1


def test_unreadable_input_is_exit_2(sides: tuple[Path, Path], tmp_path: Path) -> None:
    ref, cand = sides
    status, _, err = text_gate(str(cand), against=(str(ref), str(tmp_path / "missing.json")))
    assert status == 2 and "missing.json" in err


def test_invalid_records_are_exit_1_even_without_regression(
    sides: tuple[Path, Path], tmp_path: Path
) -> None:
    ref, _ = sides
    bad = tmp_path / "bad.jsonl"
    write_jsonl(bad, [one(seq=2, value=100_000, spread=1_000)])  # pairs: same
    with bad.open("a", encoding="utf-8") as handle:
        handle.write('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkRun"}\n')
    status, out, _ = text_gate(str(bad), against=(str(ref),))
    assert status == 1
    assert out.splitlines()[-1].endswith("exit 1: 1 invalid item skipped")


def test_ci_formats_need_against(sides: tuple[Path, Path]) -> None:
    ref, _ = sides
    status, _, err = text_gate(str(ref), against=(), format="github")
    assert status == 2 and len(err.splitlines()) == 1
    assert "--format github needs --against REFERENCE" in err and "unknown" not in err


def test_the_command_line(sides: tuple[Path, Path]) -> None:
    ref, cand = sides
    done = subprocess.run(
        [*KERNELINDEX, "compare", "--against", str(ref), str(cand), *GATE],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[-1].endswith("exit 1: 1 slower, 1 unsure")


def test_parsers() -> None:
    assert parse_threshold("5%") == pytest.approx(0.05)
    assert parse_threshold(" 0.1 ") == 0.1
    assert parse_fail_on(("slower, unsure", "slower")) == ("slower", "unsure")
    assert parse_fail_on(()) == ("slower",)
    with pytest.raises(UsageError):
        parse_threshold("-1%")
    with pytest.raises(UsageError):
        parse_threshold("nan")


def test_a_full_disk_is_one_line_and_exit_2(sides: tuple[Path, Path]) -> None:
    ref, cand = sides
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*KERNELINDEX, "compare", "--against", str(ref), str(cand)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "kernelindex: error: cannot write output: No space left on device"
    ]


# --------------------------------------------------------------------------- Liger re-runs


@pytest.fixture(scope="module")
def liger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    csv_path = shared_data.require("liger", "all_benchmark_data.csv")
    out = tmp_path_factory.mktemp("liger")
    subprocess.run(
        [*KERNELINDEX, "import", "liger", str(csv_path), "--out", str(out), *JSONL],
        check=True,
        capture_output=True,
    )
    return out


@pytest.mark.slow
def test_liger_reruns_false_alarms_as_documented(liger: Path) -> None:
    """docs/compare.md's measurement: the CSV's 16 true re-runs (the point two sweeps of
    rope and llama4_rope share, measured twice seconds apart), older → newer."""
    runs, _ = resolve_runs(load_records([str(liger)]).index)
    by_key: dict[Any, list[Any]] = {}
    for run in runs:
        by_key.setdefault((run.key, lineage(run, EXACT)), []).append(run)
    found: dict[str, int] = {}
    for group in by_key.values():
        group.sort(key=lambda r: (r.observed_key, r.digest))
        for older, newer in itertools.pairwise(group):
            verdict = judge(older, newer).verdict
            found[verdict] = found.get(verdict, 0) + 1
    assert found == {SAME: 14, UNSURE: 1, FASTER: 1}


def test_a_real_rerun_stays_unsure_by_the_larger_noise(liger: Path) -> None:
    """Liger's ``rope`` backward, liger 0.2.1, measured twice seconds apart (the point
    two sweeps share): -9.4 %, the older run's p20-p80 reaching 55 % from its median.
    By nvbench's smaller noise (the newer run's 7 %) it would be a false ``faster``;
    by the larger it stays ``unsure``."""
    runs, _ = resolve_runs(load_records([str(liger)]).index)
    found = [
        r
        for r in runs
        if r.kernel == "rope"
        and r.pass_ == "backward"
        and r.metric == "latency"
        and r.implementation_label == "liger 0.2.1"
    ]
    by_key: dict[Any, list[Any]] = {}
    for run in found:
        by_key.setdefault(run.key, []).append(run)
    [(older, newer)] = [
        sorted(group, key=lambda r: r.observed_key) for group in by_key.values() if len(group) == 2
    ]
    pair = judge(older, newer)
    assert pair.verdict == UNSURE and pair.ratio == pytest.approx(0.9058, abs=1e-4)
    assert "relative noise ±55.0 %" in pair.reason


@pytest.mark.slow
def test_liger_against_itself(liger: Path) -> None:
    status, report, _ = gate_json(str(liger), against=(str(liger),))
    assert status == 0
    summary = report["summary"]
    assert summary["verdicts"]["slower"] == summary["verdicts"]["faster"] == 0
    assert summary["unpairedRuns"] == {"reference": 0, "candidate": 0}
    # 2,448 runs; the 16 re-runs and the versions of one lineage are "others" of a pair.
    others = sum(len(p["reference"]["others"]) for p in report["pairs"])
    assert summary["pairs"] + others == 2448


def test_referenced_records_may_come_with_the_other_side(tmp_path: Path) -> None:
    """The reference file holds runs only; their workload, protocol, environment and
    implementation records come with the candidate (the reference is resolved again
    once they are there)."""
    ref_sets = [one(seq=1, value=100_000, spread=100), one(seq=2, value=100_000, spread=100)]
    cand_sets = [
        one(seq=1, value=200_000, spread=100, implementation="liger-0.5.1"),
        one(seq=2, value=100_000, spread=100, implementation="liger-0.5.1"),
        *([r for r in records if r["kind"] != "BenchmarkRun"] for records in ref_sets),
    ]
    (tmp_path / "ref.jsonl").write_text(
        "".join(json.dumps(records[-1]) + "\n" for records in ref_sets), encoding="utf-8"
    )
    write_jsonl(tmp_path / "cand.jsonl", cand_sets)
    status, report, err = gate_json(
        str(tmp_path / "cand.jsonl"), against=(str(tmp_path / "ref.jsonl"),)
    )
    assert status == 1, err
    assert [p["verdict"] for p in report["pairs"]] == ["slower", "same"]
    assert "not given" not in err


@given(run_sets(), st.randoms(use_true_random=False))
@law_settings(100)
def test_law_refreshing_runs_is_resolving_them(specs: list[RunSpec], rnd: random.Random) -> None:
    """Runs resolved without (some of) their referenced records, then refreshed once
    those are given, are exactly the runs resolved with them: ``--against`` lets go of
    the reference's parsed records before the candidate's records come."""
    sets = [records_for(s) for s in specs]
    everything = index_of(sets)
    partial = index_of(sets)
    for digest in list(partial.records):
        if rnd.random() < 0.7:
            del partial.records[digest]
    early, _ = resolve_runs(partial)
    refreshed, resolver = refresh_runs(early, everything)
    expected, expected_resolver = resolve_runs(everything)
    assert refreshed == expected
    assert resolver.missing == expected_resolver.missing
    # And refreshing against too little again changes nothing.
    assert refresh_runs(early, partial)[0] == early


def test_runs_resolved_as_they_are_read_and_refreshed_are_the_runs(tmp_path: Path) -> None:
    """``--against`` resolves each run as it is read (``RecordIndex.on_run``), before
    records that come later in the file, then refreshes them: the same runs as
    resolving the whole index, repeats counted once."""
    sets = [one(seq=1), one(seq=2, status="oom"), one(seq=3, gpu="a100")]
    runs_first = [records[-1] for records in sets] + [records[0] for records in sets]
    runs_first += [r for records in sets for r in records[1:-1]] + [sets[0][-1]]
    (tmp_path / "a.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in runs_first), encoding="utf-8"
    )
    whole = load_records([str(tmp_path)])
    index = RecordIndex()
    resolver = Resolver(index)
    early: list[Any] = []
    index.on_run = lambda stored: early.append(resolver.resolve(stored))
    streamed = load_records([str(tmp_path)], index=index)
    assert streamed.index.runs == {} and len(early) == 3
    assert streamed.index.duplicate_runs == whole.index.duplicate_runs == 1
    assert resolver.missing  # read before their records
    refreshed, again = refresh_runs(early, streamed.index)
    expected, expected_resolver = resolve_runs(whole.index)
    assert refreshed == expected and again.missing == expected_resolver.missing == {}


def test_text_from_records_is_escaped_in_every_format(tmp_path: Path) -> None:
    """A reason (free text in a record) with a newline and a forged annotation stays
    inside its own line in every format."""
    forged = "boom\n::error file=x.py,line=1::forged\x1b[2J"
    cand_records = one(seq=1, status="oom")
    cand_records[-1]["spec"]["reason"] = forged
    write_jsonl(tmp_path / "ref.jsonl", [one(seq=1)])
    write_jsonl(tmp_path / "cand.jsonl", [cand_records])
    ref, cand = str(tmp_path / "ref.jsonl"), str(tmp_path / "cand.jsonl")
    for form in ("text", "markdown", "csv", "github", "junit", "json"):
        status, out, _ = text_gate(cand, against=(ref,), format=form)
        assert status == 1, form
        assert "\x1b" not in out and "\n::error file=x.py" not in out, form
    _, github, _ = text_gate(cand, against=(ref,), format="github")
    [annotation] = [line for line in github.splitlines() if line.startswith("::error")]
    # GitHub's own escaping of a workflow command's data: the runner decodes %0A inside
    # the annotation's message; the log line stays one line, so nothing is forged.
    assert "boom%0A::error file=x.py" in annotation
