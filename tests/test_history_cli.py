"""``kernelindex history`` as a real process: its formats, its gate and its refusals."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from beforeafter_records import write_jsonl
from history_records import series_records
from store_helpers import kernelindex

#: Ten flat versions, then the newest one (three runs) 50 % slower.
WORSE_NOW = [100_000] * 10 + [150_000] * 3
WORSE_VERSIONS = [f"0.{i}.0" for i in range(10)] + ["0.10.0"] * 3


@pytest.fixture
def worse_now(tmp_path: Path) -> Path:
    path = tmp_path / "runs.jsonl"
    write_jsonl(path, series_records(WORSE_NOW, 1_000, versions=WORSE_VERSIONS))
    return path


def test_the_newest_version_slower_fails_the_gate(worse_now: Path) -> None:
    done = kernelindex("history", worse_now, "--format", "json")
    assert done.returncode == 1, done.stderr
    (series,) = json.loads(done.stdout)["series"]
    (change,) = series["changes"]
    assert change["at"]["version"] == "0.10.0" and change["at"]["index"] == 10
    assert change["direction"] == "slower" and change["ratio"] == pytest.approx(1.5)
    assert [p["version"] for p in series["points"]][8:11] == ["0.8.0", "0.9.0", "0.10.0"]
    assert "1 series is slower at the newest version" in done.stderr
    assert kernelindex("history", worse_now, "--fail-on", "none").returncode == 0
    assert kernelindex("history", worse_now, "--fail-on", "faster").returncode == 0


def test_an_older_change_does_not_fail(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    write_jsonl(path, series_records([100_000] * 6 + [150_000] * 6, 1_000))
    done = kernelindex("history", path)
    assert done.returncode == 0, done.stderr
    assert "change at 0.6.0" in done.stdout and "slower 1.500×" in done.stdout
    assert "1 series, 12 points, 1 changes (1 slower, 0 faster)" in done.stdout


def test_every_format(worse_now: Path) -> None:
    table = kernelindex("history", worse_now, "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(table)))
    assert len(rows) == 11  # the newest version's three runs of one day are one point
    assert [r["change"] for r in rows].index("slower") == 10 and rows[10]["runs"] == "3"
    markdown = kernelindex("history", worse_now, "--format", "markdown", "--points").stdout
    assert "| geglu | forward | seq=1024, bf16 |" in markdown
    assert "new ÷ old" in markdown and "| 0.10.0 |" in markdown
    text = kernelindex("history", worse_now, "--points").stdout
    assert text.count("quantiles") == 11


def test_filters_select_and_a_typo_is_exit_2(worse_now: Path) -> None:
    assert kernelindex("history", worse_now, "--where", "seq=1024").returncode == 1
    for args, said in [
        (("--where", "sq=1024"), "did you mean 'seq'?"),
        (("--where", "seq"), "is not KEY=VALUE"),
        (("--kernel", "gelgu"), "did you mean 'geglu'?"),
        (("--threshold", "5"), "did you mean 5%?"),
        (("--format", "html"), "Invalid value for '--format'"),
    ]:
        done = kernelindex("history", worse_now, *args)
        assert done.returncode == 2, (args, done.stderr)
        assert said in done.stderr and "Traceback" not in done.stderr
    done = kernelindex("history", worse_now, "--gpu", "h100", "--metric", "memory")
    assert done.returncode == 1 and "no run matches the filters" in done.stderr


def test_unreadable_invalid_and_empty_input(tmp_path: Path, worse_now: Path) -> None:
    missing = kernelindex("history", tmp_path / "nothing.jsonl")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text(worse_now.read_text() + '{"kind": "BenchmarkRun"}\n', encoding="utf-8")
    invalid = kernelindex("history", bad, "--fail-on", "none")
    assert invalid.returncode == 1 and "invalid item" in invalid.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = kernelindex("history", empty)
    assert nothing.returncode == 2 and "no .json, .jsonl or .ndjson files" in nothing.stderr


EVIL = "x|y\n<b>**z**</b> [l](http://evil)"


def test_what_records_hold_is_escaped_in_every_format(tmp_path: Path) -> None:
    from kernelindex_sdk.canonical import digest

    sets = series_records([100_000, 100_000, 150_000], 1_000)
    for records in sets:
        workload, run = records[1], records[-1]
        workload["spec"]["parameters"]["label"] = EVIL
        run["spec"]["workloadDigest"] = digest(workload)
    path = tmp_path / "runs.jsonl"
    write_jsonl(path, sets)
    text = kernelindex("history", path, "--points", "--fail-on", "none").stdout
    assert len(text.splitlines()) == 1 + 1 + 3 + 1  # series, change, points, summary
    assert "label=x|y\\n<b>**z**</b>" in text
    markdown = kernelindex("history", path, "--format", "markdown", "--points").stdout
    assert "<b>" not in markdown and "**z**" not in markdown and "[l](http" not in markdown
    assert "&lt;b&gt;" in markdown
    table = kernelindex("history", path, "--format", "csv").stdout
    assert len(table.splitlines()) == 1 + 3
    document = json.loads(kernelindex("history", path, "--format", "json").stdout)
    assert EVIL in document["series"][0]["key"]["workload"]
