"""Noise in plain ``compare``: a ratio whose two runs' noise intervals overlap is marked
within noise (text and markdown ``≈``, json ``withinNoise``, csv ``within_noise``), runs
with collapsed quantiles are flagged (``†``), and a legend says what the marks mean."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from beforeafter_records import RunSpec, records_for, write_jsonl

from kernelindex_sdk.cli.compare_cmd import run_compare
from kernelindex_sdk.cli.compare_options import CompareOptions
from kernelindex_sdk.cli.report.comparison import LEGEND


@pytest.fixture
def records(tmp_path: Path) -> Path:
    """Per shape: huggingface (baseline) and liger; seq 1: overlapping noise; seq 2:
    clearly apart; seq 3: both collapsed (no noise to speak of)."""
    sets = []
    for seq, (hf, liger, form) in {
        1: (100_000, 101_000, "quantiles"),
        2: (100_000, 50_000, "quantiles"),
        3: (100_000, 90_000, "collapsed"),
    }.items():
        for name, value in (("huggingface", hf), ("liger-0.5.0", liger)):
            spec = RunSpec(seq=seq, implementation=name, value=value, spread=2_000, noise=form)
            sets.append(records_for(spec))
    write_jsonl(tmp_path / "runs.jsonl", sets)
    return tmp_path / "runs.jsonl"


def compare(path: Path, **options: Any) -> str:
    out = io.StringIO()
    assert run_compare(CompareOptions((str(path),), **options), out=out, err=io.StringIO()) == 0
    return out.getvalue()


def test_text_marks_ratios_within_noise_and_collapsed_runs(records: Path) -> None:
    lines = compare(records).splitlines()
    rows = {
        line.split()[0]: line
        for line in lines
        if line.startswith("  ") and line.split()[0].isdigit()
    }
    assert rows["1"].endswith("≈0.99×")  # 100 ± 2 vs 101 ± 2: within noise
    assert rows["2"].endswith(" 2.00×")  # 100 ± 2 vs 50 ± 2: apart
    assert "100.0 µs†" in rows["3"] and rows["3"].endswith(" 1.11×")  # no noise known
    assert f"legend: {LEGEND}" in lines


def test_by_shape_shows_collapsed_instead_of_a_spread(records: Path) -> None:
    text = compare(records, by_shape=True)
    assert "100.0 µs†  collapsed" in text
    assert "≈0.99×" in text


def test_json_and_csv_say_within_noise(records: Path) -> None:
    report = json.loads(compare(records, format="json"))
    found = {}
    for group in report["groups"]:
        seq = group["workload"]["parameters"]["seq"]
        for row in group["rows"]:
            newest = row["newest"]
            found[(seq, row["baseline"])] = (newest["withinNoise"], newest["collapsedQuantiles"])
    assert found == {
        (1, True): (None, False),
        (1, False): (True, False),
        (2, True): (None, False),
        (2, False): (False, False),
        (3, True): (None, True),
        (3, False): (None, True),
    }
    rows = list(csv.DictReader(io.StringIO(compare(records, format="csv"))))
    liger = {r["workload"].split()[0]: r for r in rows if r["provider"] == "liger"}
    assert liger["seq=1,"]["within_noise"] == "true" and liger["seq=1,"]["noise"] == "quantiles"
    assert liger["seq=2,"]["within_noise"] == "false"
    assert liger["seq=3,"]["within_noise"] == "" and liger["seq=3,"]["noise"] == "none"


def test_markdown_has_the_marks_and_the_legend(records: Path) -> None:
    text = compare(records, format="markdown")
    assert "≈0.99×" in text and "100.0 µs†" in text
    assert "> legend: ≈ within noise" in text


def test_no_legend_without_marks(tmp_path: Path) -> None:
    sets = [
        records_for(RunSpec(implementation="huggingface", value=100_000, spread=100)),
        records_for(RunSpec(implementation="liger-0.5.0", value=50_000, spread=100)),
    ]
    write_jsonl(tmp_path / "runs.jsonl", sets)
    text = compare(tmp_path / "runs.jsonl")
    assert "legend: ≈" not in text  # no noise mark, no noise legend
    # The fastest implementation's mark has a legend of its own.
    assert "50.00 µs*" in text and "legend: * fastest" in text
