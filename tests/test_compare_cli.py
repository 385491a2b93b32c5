"""Acceptance tests of ``kernelindex compare`` on the hand-made sets in examples/compare.

Most go through the real CLI in-process (click's CliRunner on ``kernelindex``); a few
call :func:`run_compare` directly, which the command is a thin wrapper of.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner

from kernelindex_sdk.cli.app import cli
from kernelindex_sdk.cli.compare_cmd import run_compare
from kernelindex_sdk.cli.compare_options import CompareOptions
from kernelindex_sdk.cli.report.comparison import CSV_COLUMNS

EXAMPLES = Path(__file__).resolve().parent / "examples" / "compare"
#: ``file[:line]: pointer: message`` as validate prints it.
PROBLEM = re.compile(r"^\S+?(?::\d+)?: /\S*: \S.*$")


@attrs.frozen
class Result:
    code: int
    out: str
    err: str


def compare(*args: str) -> Result:
    runner = CliRunner()
    result = runner.invoke(cli, ["compare", *args], catch_exceptions=False)
    return Result(result.exit_code, result.stdout, result.stderr)


def ex(name: str) -> str:
    return str(EXAMPLES / name)


# --------------------------------------------------------------------------- tables


def test_two_implementations_text_table() -> None:
    result = compare(ex("two-implementations"))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "GeGLU MLP [geglu] · forward · latency · NVIDIA H100 80GB HBM3"
    assert lines[1] == "  workload  batch=8 hidden=4096 seq=1024, bf16"
    assert lines[2] == "  protocol  Example harness · forward pass"
    assert "software differs" in lines[3]
    header, base, liger = lines[4:7]
    assert header.split() == ["implementation", "median", "p20–p80", "speed-up", "observed"]
    assert base.split() == [
        "huggingface", "(baseline)", "100.0", "µs", "98.00–103.0", "µs", "1.00×", "2025-01-01",
    ]  # fmt: skip
    assert liger.split() == [
        "liger",
        "0.5.0",
        "50.00",
        "µs*",  # the fastest implementation
        "49.00–52.00",
        "µs",
        "2.00×",
        "2025-01-01",
    ]
    assert lines[-1] == "1 group, 2 runs"
    assert result.err == ""


def test_oom_run_shows_its_status_never_a_number() -> None:
    result = compare(ex("oom"))
    assert result.code == 0
    [row] = [line for line in result.out.splitlines() if "liger" in line]
    assert row.split()[:3] == ["liger", "0.5.0", "OOM"]
    assert "CUDA out of memory (tried 2 GiB)" in row
    assert row.split()[-2] == "n/a"
    assert not re.search(r"\d+\.\d+ [µm]?s", row)


def test_memory_group_is_labelled_memory_saving() -> None:
    result = compare(ex("memory"))
    assert result.code == 0
    assert "· peak memory ·" in result.out.splitlines()[0]
    header = result.out.splitlines()[3]
    assert "memory saving" in header and "speed-up" not in header
    assert "1.250 GiB" in result.out and "1.60×" in result.out


def test_memory_and_speed_are_separate_groups() -> None:
    result = compare(ex("memory"), ex("oom"))
    headings = [line for line in result.out.splitlines() if line.startswith("GeGLU")]
    assert [h.split(" · ")[2] for h in headings] == ["latency", "peak memory"]
    assert result.out.splitlines()[-1] == "2 groups, 4 runs"


def test_newest_rerun_shown_older_counted_and_all_lists_them() -> None:
    result = compare(ex("reruns"))
    [row] = [line for line in result.out.splitlines() if line.lstrip().startswith("liger")]
    assert "40.00 µs" in row and "2.50×" in row and row.endswith("+2 older")
    assert "2 older re-runs not shown; --all lists them" in result.out

    everything = compare(ex("reruns"), "--all")
    older = [line for line in everything.out.splitlines() if "↳ older run" in line]
    assert len(older) == 2
    assert "60.00 µs" in older[0] and "80.00 µs" in older[1]
    assert everything.out.splitlines()[-1] == "1 group, 4 runs"


def test_baseline_option() -> None:
    result = compare(ex("two-implementations"), "--baseline", "liger")
    lines = result.out.splitlines()
    assert "liger 0.5.0 (baseline)" in lines[5]
    assert "0.50×" in lines[6]
    # A provider in the input but not in the selection: a note, and ratios n/a.
    elsewhere = compare(
        ex("two-implementations"), ex("not-comparable"), "--kernel", "swiglu",
        "--baseline", "huggingface",
    )  # fmt: skip
    assert elsewhere.code == 0
    assert "no selected run is by provider 'huggingface'" in elsewhere.err
    assert "no baseline provider in this group: speed-up n/a" in elsewhere.out
    # A provider nowhere in the input is a typo: a usage error (tests/test_compare_typos.py).
    assert compare(ex("two-implementations"), "--baseline", "cudnn").code == 2


# --------------------------------------------------------------------------- not comparable


def test_two_runs_that_are_not_comparable_say_why() -> None:
    result = compare(ex("not-comparable/a.json"), ex("not-comparable/b.json"))
    assert result.code == 1
    first = result.out.splitlines()[0]
    assert first == (
        "not comparable: workload differs (kernel geglu vs swiglu); environment hardware"
        " differs (NVIDIA H100 80GB HBM3 vs NVIDIA A100 SXM4-80GB)"
    )
    assert "a.json" in result.out.splitlines()[1] and "b.json" in result.out.splitlines()[2]


def test_two_runs_that_are_comparable_make_a_table() -> None:
    result = compare(
        ex("two-implementations/huggingface.json"), ex("two-implementations/liger.json")
    )
    assert result.code == 0 and "2.00×" in result.out


def test_explain_over_many_groups() -> None:
    result = compare(ex("sweep"), "--explain")
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0] == "not comparable: the 8 selected runs fall into 4 groups"
    assert "workload differs (hidden 2048 vs 4096)" in lines[4]
    assert "workload differs (hidden 2048 vs 4096; seq 1024 vs 2048)" in lines[6]
    ok = compare(ex("reruns"), "--explain")
    assert ok.code == 0 and "2.50×" in ok.out


def test_not_comparable_as_json() -> None:
    result = compare(ex("not-comparable"), "--format", "json")
    assert result.code == 1
    report = json.loads(result.out)
    assert report["comparable"] is False
    parts = [d["part"] for d in report["groups"][1]["differsFromFirst"]]
    assert parts == ["workload", "environment hardware"]


# --------------------------------------------------------------------------- formats


def test_json_format_is_base_units_with_digests() -> None:
    result = compare(ex("reruns"), ex("oom"), "--format", "json", "--all")
    assert result.code == 0
    report = json.loads(result.out)
    [group] = report["groups"]  # oom and reruns share workload, protocol and GPU
    assert group["ratioKind"] == "speedup" and group["baseline"] == "huggingface"
    assert group["key"]["metric"] == "latency"
    hf, liger = group["rows"]
    assert hf["baseline"] is True and hf["newest"]["value"] == 100_000
    assert hf["newest"]["unit"] == "ns" and hf["newest"]["ratio"] == 1.0
    assert liger["implementation"]["version"] == "0.5.0"
    assert liger["olderRuns"] == 3 and len(liger["older"]) == 3
    statuses = [liger["newest"]["status"]] + [r["status"] for r in liger["older"]]
    assert sorted(statuses) == ["oom", "passed", "passed", "passed"]
    # Both sets hold the same huggingface run (same spec, other name): one run, not two.
    assert report["summary"] == {"groups": 1, "runs": 5, "olderRuns": 3, "baseline": None}


def test_json_oom_run_has_reason_not_value() -> None:
    report = json.loads(compare(ex("oom"), "--format", "json").out)
    liger = report["groups"][0]["rows"][1]["newest"]
    assert liger["status"] == "oom" and "value" not in liger
    assert liger["reason"] == "CUDA out of memory (tried 2 GiB)" and liger["ratio"] is None


def test_csv_format() -> None:
    result = compare(ex("sweep"), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(result.out)))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) == 8
    oom = [r for r in rows if r["status"] == "oom"]
    assert len(oom) == 1 and oom[0]["value"] == "" and oom[0]["ratio"] == ""
    liger = [r for r in rows if r["provider"] == "liger" and r["status"] == "passed"]
    assert [float(r["ratio"]) for r in liger] == pytest.approx([2.0] * 3, rel=1e-4)
    assert {r["unit"] for r in liger} == {"ns"} and {r["ratio_kind"] for r in rows} == {"speedup"}


def test_markdown_format() -> None:
    result = compare(ex("oom"), "--format", "markdown")
    lines = result.out.splitlines()
    assert lines[0] == "### GeGLU MLP \\[geglu\\] · forward · latency · NVIDIA H100 80GB HBM3"
    assert "| implementation | median | p20–p80 | speed-up | observed | note |" in lines
    assert any(line.startswith("| liger 0.5.0 | OOM | CUDA out of memory") for line in lines)


# --------------------------------------------------------------------------- filters


def test_filters() -> None:
    assert "swiglu" in compare(ex("not-comparable"), "--kernel", "swiglu").out
    gpu = compare(ex("not-comparable"), "--gpu", "a100")
    assert gpu.code == 0 and "NVIDIA A100" in gpu.out and "H100" not in gpu.out
    memory = compare(ex("memory"), ex("oom"), "--metric", "memory")
    assert "peak memory" in memory.out and "latency" not in memory.out
    none = compare(ex("oom"), "--pass", "backward")
    assert none.code == 1 and none.out == ""  # nothing to compare is not a success
    assert "no run matches the filters (2 valid runs loaded)" in none.err


def test_bad_option_values_are_usage_errors() -> None:
    assert compare(ex("oom"), "--pass", "sideways").code == 2
    assert compare(ex("oom"), "--format", "yaml").code == 2
    assert compare().code == 2


# --------------------------------------------------------------------------- bad input


def test_invalid_records_reported_like_validate_and_skipped() -> None:
    result = compare(ex("invalid"))
    assert result.code == 1
    problems = [line for line in result.err.splitlines() if not line.startswith("kernelindex")]
    assert problems and all(PROBLEM.match(p) for p in problems), problems
    assert problems[0].startswith(ex("invalid/bad.json") + ": /spec: ")
    assert "1 invalid item skipped" in result.err
    assert "1 group, 1 run" in result.out


def test_unreadable_input_exits_2_without_traceback(tmp_path: Path) -> None:
    (tmp_path / "garbage.json").write_bytes(b"\xff\xfe not json")
    (tmp_path / "array.json").write_text("[1, {}, []]", encoding="utf-8")
    result = compare(str(tmp_path), ex("oom"), str(tmp_path / "missing.json"))
    assert result.code == 2
    assert "Traceback" not in result.err
    assert "garbage.json" in result.err and "missing.json" in result.err
    assert "array.json: /0: not a kernelindex record" in result.err
    assert "1 group, 2 runs" in result.out  # the good input is still compared


def test_no_valid_runs_at_all(tmp_path: Path) -> None:
    lines = (EXAMPLES / "oom" / "records.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "no-runs.jsonl").write_text(lines[0] + "\n", encoding="utf-8")
    result = compare(str(tmp_path))
    assert result.code == 1 and result.out == ""
    assert "no valid run to compare" in result.err


def test_runs_without_their_records_are_grouped_by_digest(tmp_path: Path) -> None:
    lines = (EXAMPLES / "oom" / "records.jsonl").read_text(encoding="utf-8").splitlines()
    runs_only = [line for line in lines if '"kind": "BenchmarkRun"' in line]
    (tmp_path / "runs.jsonl").write_text("\n".join(runs_only) + "\n", encoding="utf-8")
    result = compare(str(tmp_path))
    assert result.code == 0
    assert "runs reference records not given" in result.err
    assert "(record not given)" in result.out
    assert "implementation sha256:" in result.out


# --------------------------------------------------------------------------- run_compare


def test_run_compare_without_click() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = run_compare(CompareOptions((ex("memory"),), format="json"), out=out, err=err)
    assert code == 0 and err.getvalue() == ""
    assert json.loads(out.getvalue())["groups"][0]["ratioKind"] == "memory_saving"


def test_progress_bar_goes_to_stderr_only() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = run_compare(CompareOptions((ex("sweep"),), progress=True), out=out, err=err)
    assert code == 0
    assert "compare: loading" not in out.getvalue()
    # Short loads finish before the bar's first draw; whatever was drawn is erased.
    assert err.getvalue().strip(" \r") == ""


def test_progress_bar_draws_on_a_slow_load(monkeypatch: pytest.MonkeyPatch) -> None:
    from kernelindex_sdk.base import progress

    class Eager(progress.Progress):
        """Draws at once (a real bar waits a moment, so short loads show none)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **{**kwargs, "delay": 0.0})

    monkeypatch.setattr(progress, "Progress", Eager)
    out, err = io.StringIO(), io.StringIO()
    run_compare(CompareOptions((ex("two-implementations"),), progress=True), out=out, err=err)
    assert "compare: loading bytes [" in err.getvalue()
    assert "compare: loading" not in out.getvalue()


def test_real_entry_point_and_stdin() -> None:
    data = (EXAMPLES / "oom" / "records.jsonl").read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "kernelindex_sdk.cli.main", "compare", "-", "--format", "csv"],
        input=data,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().count("\n") == 3


ODD_DOCUMENTS = (
    "[]",
    "{}",
    '"just a string"',
    "[[[]]]",
    '{"run": 1}',
    '{"run": {"kind": "BenchmarkRun"}}',
    '{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Nope", "metadata": {"name": "x"},'
    ' "spec": {}}',
    '{"apiVersion": "kernelindex.dev/v9", "kind": "BenchmarkRun", "spec": {}}',
)


@pytest.mark.parametrize("text", ODD_DOCUMENTS)
def test_odd_documents_are_reported_never_raised(tmp_path: Path, text: str) -> None:
    (tmp_path / "odd.json").write_text(text, encoding="utf-8")
    result = compare(str(tmp_path / "odd.json"), ex("oom"))
    assert result.code in (0, 1)
    assert "Traceback" not in result.err
    assert result.out.splitlines()[-1] == "1 group, 2 runs"


def test_a_reference_to_a_record_of_the_wrong_kind_is_not_resolved(tmp_path: Path) -> None:
    from kernelindex_sdk.canonical import digest

    records = [json.loads(line) for line in (EXAMPLES / "oom" / "records.jsonl").open()]
    workload = next(r for r in records if r["kind"] == "Workload")
    liger = next(r for r in records if r["metadata"]["name"] == "oom-liger")
    liger["spec"]["environmentDigest"] = digest(workload)  # a Workload, not an environment
    path = tmp_path / "wrong-kind.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = compare(str(path))
    assert result.code == 1
    assert result.out.startswith(
        "not comparable: environment hardware differs (NVIDIA H100 80GB HBM3 vs environment sha256:"
    )
    assert "ExecutionEnvironment ×1" in result.err


# --------------------------------------------------------------------------- sweeps


def test_a_sweep_is_one_table_with_the_swept_value_down_and_providers_across() -> None:
    result = compare(ex("sweep"))
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[:7] == [
        "GeGLU MLP [geglu] · forward · latency · NVIDIA H100 80GB HBM3",
        "  fixed     batch=8, dtype=bf16, hidden=4096",
        "  protocol  Example harness · forward pass",
        "  seq   huggingface (baseline)  liger 0.5.0  speed-up",
        "  1024                104.9 µs    52.43 µs*     2.00×",
        "  2048                209.7 µs    104.9 µs*     2.00×",
        "  4096                419.4 µs          OOM       n/a",
    ]
    # The fastest implementation of each row is marked, and the legend says so.
    assert "legend: * fastest implementation of its row" in lines[-2]
    # llama4_rope-style: a second sweep (hidden at seq 1024) shares one shape with the first.
    assert "  hidden  huggingface (baseline)  liger 0.5.0  speed-up" in lines
    assert lines[-1] == "4 groups, 8 runs in 2 sweep tables"


def test_sweep_tables_in_markdown_have_no_empty_column() -> None:
    result = compare(ex("sweep"), "--format", "markdown")
    lines = result.out.splitlines()
    assert "| seq | huggingface (baseline) | liger 0.5.0 | speed-up |" in lines
    assert "|---|---:|---:|---:|" in lines
    assert "| 4096 | 419.4 µs | OOM | n/a |" in lines
    assert not any(line.rstrip().endswith("| |") for line in lines)


def test_by_shape_and_all_keep_one_table_per_group() -> None:
    by_shape = compare(ex("sweep"), "--by-shape")
    headings = [line for line in by_shape.out.splitlines() if line.startswith("GeGLU")]
    assert len(headings) == 4
    assert by_shape.out.splitlines()[-1] == "4 groups, 8 runs"
    every = compare(ex("sweep"), "--all")
    assert [line for line in every.out.splitlines() if line.startswith("GeGLU")] == headings


def test_passes_read_forward_backward_full(tmp_path: Path) -> None:
    records = [json.loads(line) for line in (EXAMPLES / "oom" / "records.jsonl").open()]
    from kernelindex_sdk.canonical import digest

    out = []
    for pass_ in ("full", "backward", "forward"):
        by_digest = {}
        for record in records:
            copy = json.loads(json.dumps(record))
            if copy["kind"] == "Workload":
                copy["spec"]["pass"] = pass_
            by_digest[digest(record)] = copy
        old_workload = next(d for d, r in by_digest.items() if r["kind"] == "Workload")
        new_workload = digest(by_digest[old_workload])
        for copy in by_digest.values():
            if copy["kind"] == "BenchmarkRun" and copy["spec"]["workloadDigest"] == old_workload:
                copy["spec"]["workloadDigest"] = new_workload
            out.append(copy)
    path = tmp_path / "passes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")
    result = compare(str(path))
    headings = [line.split(" · ")[1] for line in result.out.splitlines() if " · " in line[:40]]
    assert [h for h in headings if h in ("forward", "backward", "full")] == [
        "forward",
        "backward",
        "full",
    ]


# --------------------------------------------------------------------------- undated runs


def _undated_set(
    directory: Path, order: tuple[int, ...], *, dated: bool = True
) -> tuple[Path, dict[str, str]]:
    """huggingface (dated) and liger runs of one workload: one dated 2024-03-01 (unless
    not ``dated``), two flagged observed_at_unknown (the 1970 placeholder), written in
    ``order``; returns the file and the runs' names → digests."""
    from compare_corpus import GEN

    from kernelindex_sdk.base.recordformat import OBSERVED_AT_UNKNOWN, UNKNOWN_OBSERVED_AT
    from kernelindex_sdk.canonical import digest

    refs = {
        "protocol": GEN.protocol("forward"),
        "workload": GEN.workload("geglu", seq=1),
        "environment": GEN.environment("h100"),
        "implementation": GEN.implementation("huggingface"),
    }
    liger_refs = {**refs, "implementation": GEN.implementation("liger", "0.5.0")}
    base = GEN.run("hf", refs, latency=(100, 100, 100))
    liger = []
    for name, observed, value in (
        ("liger-dated", "2024-03-01T00:00:00Z", 50),
        ("liger-undated-a", UNKNOWN_OBSERVED_AT, 40),
        ("liger-undated-b", UNKNOWN_OBSERVED_AT, 25),
    ):
        record = GEN.run(name, liger_refs, observed=observed, latency=(value,) * 3)
        if observed == UNKNOWN_OBSERVED_AT:
            record["spec"]["qualityFlags"] = [OBSERVED_AT_UNKNOWN]
        liger.append(record)
    chosen = [liger[i] for i in order if dated or i != 0]
    records = [*refs.values(), liger_refs["implementation"], base, *chosen]
    path = directory / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path, {r["metadata"]["name"]: digest(r) for r in (base, *liger)}


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 0, 2)])
def test_an_undated_run_shows_unknown_and_never_wins_newest(
    tmp_path: Path, order: tuple[int, ...]
) -> None:
    """nvbench and KernelBench runs carry the 1970 placeholder and observed_at_unknown:
    compare shows "unknown", never 1970, and a dated run is newer than any of them;
    among undated runs the greatest digest is the newest, whatever the input order."""
    path, digests = _undated_set(tmp_path, order)
    undated = sorted(["liger-undated-a", "liger-undated-b"], key=digests.__getitem__)[::-1]
    values = {"liger-undated-a": "40.00 ns", "liger-undated-b": "25.00 ns"}
    table = compare(str(path), "--all")
    assert table.code == 0, table.err
    assert "1970" not in table.out
    [row] = [line for line in table.out.splitlines() if line.lstrip().startswith("liger")]
    assert "50.00 ns" in row and row.endswith("2024-03-01 00:00:00Z")
    older = [line for line in table.out.splitlines() if "↳ older run" in line]
    assert len(older) == 2
    for name, line in zip(undated, older, strict=True):
        assert values[name] in line and " unknown" in line, line
    report = json.loads(compare(str(path), "--all", "--format", "json").out)
    [liger] = [r for r in report["groups"][0]["rows"] if r["implementation"]["provider"] == "liger"]
    assert liger["newest"]["digest"] == digests["liger-dated"]
    assert [run["observedAt"] for run in liger["older"]] == [None, None]
    assert "1970" not in compare(str(path), "--all", "--format", "csv").out

    only_undated, _ = _undated_set(tmp_path, order, dated=False)
    report = json.loads(compare(str(only_undated), "--format", "json").out)
    [liger] = [r for r in report["groups"][0]["rows"] if r["implementation"]["provider"] == "liger"]
    assert liger["newest"]["digest"] == digests[undated[0]]
    assert liger["newest"]["observedAt"] is None
    plain = compare(str(only_undated))
    [row] = [line for line in plain.out.splitlines() if line.lstrip().startswith("liger")]
    assert values[undated[0]] in row and " unknown" in row and "1970" not in plain.out
