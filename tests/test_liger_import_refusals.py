"""A bad row never sinks an import nor gets written, and nothing earlier is lost (#11).

Each odd cell a new user tried (an unsafe number, 5,000 digits, a lone surrogate,
nesting 500 deep, quantiles out of order, impossible or future timestamps, an x of
1e20, huge names) is one line ``FILE:LINE: column or pointer: message``; the other rows
are written, the command exits 1, and what it wrote passes ``validate --strict-refs``.
Output already there is merged (jsonl) or kept (bundles), never silently replaced.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from liger_rows import good_rows, row, write_csv

from bench_adapters.cli import run_liger_import
from bench_adapters.liger import JSONL_NAME, import_csv
from kernelindex_sdk.validating.pipeline import Pipeline

ODD_CELLS = {
    "unsafe number in config": (
        {"extra_benchmark_config_str": '{"B": 1e16}'},
        "/workload/spec/parameters/batch: 1e+16 is greater than the maximum",
    ),
    "5,000 digits": ({"x_value": "9" * 5000}, "x_value: number out of range"),
    "lone surrogate": (
        {"extra_benchmark_config_str": '{"a": "\\ud800"}'},
        "extra_benchmark_config_str: invalid JSON at character 8 (/a): lone surrogate",
    ),
    "nested 500 deep": (
        {"extra_benchmark_config_str": '{"a": ' + "[" * 500 + "]" * 500 + "}"},
        "nested deeper than 256 levels",
    ),
    "quantiles out of order": (
        {"y_value_20": "5", "y_value_50": "1", "y_value_80": "0.5"},
        "y_value_20: statistics out of order: p20 (5000000) > median (1000000",
    ),
    "year zero": ({"timestamp": "0000-01-01 00:00:00"}, "timestamp: no such time"),
    "in the future": (
        {"timestamp": "2999-01-01 00:00:00"},
        "timestamp: observedAt 2999-01-01T00:00:00.000Z is in the future",
    ),
    "x of 1e20": ({"x_value": "1e20"}, "x_value: number out of range: '1e20'"),
    "kernel name of 100k characters": (
        {"kernel_name": "k" * 100_000},
        "row longer than 64 KiB, the limit for one row",
    ),
    "unknown metric": (
        {"metric_name": "joules"},
        "metric_name: unknown metric 'joules' (known: memory, speed)",
    ),
    "unknown unit": (
        {"metric_unit": "furlongs"},
        "metric_unit: 'furlongs' is not a unit of 'speed' (known: ms, us, ns, s)",
    ),
    "unknown mode": (
        {"kernel_operation_mode": "sideways"},
        "kernel_operation_mode: unknown mode 'sideways', so the timed pass is unknown"
        " (known: forward, backward, full, no-grad-forward)",
    ),
    "kernel name of 5k characters": (
        {"kernel_name": "k" * 5000},
        "kernel_name: 5000 characters, more than the 1024",
    ),
}


def validate_strict(directory: Path) -> list[str]:
    """What ``kernelindex validate DIR --strict-refs`` reports, as lines."""
    check = Pipeline([str(directory)], strict_refs=True)
    found = [str(p) for item in check for p in item.problems] + [str(p) for p in check.late]
    assert check.tally.files, "nothing was written"
    return found


@pytest.mark.parametrize("case", list(ODD_CELLS), ids=lambda case: case.replace(" ", "-"))
def test_an_odd_cell_refuses_its_row_only(tmp_path: Path, case: str) -> None:
    cells, expected = ODD_CELLS[case]
    rows = good_rows(49)
    rows.insert(25, row(**cells))
    source = write_csv(tmp_path / "in.csv", rows)
    err = io.StringIO()
    status = run_liger_import([str(source)], str(tmp_path / "out"), layout="jsonl", err=err)
    problems = [line for line in err.getvalue().splitlines() if line.startswith(str(source))]
    assert status == 1
    assert "Traceback" not in err.getvalue()
    (problem,) = problems
    assert problem.startswith(f"{source}:27: ")
    assert expected in problem
    assert "rows refused         1" in err.getvalue()
    written = (tmp_path / "out" / JSONL_NAME).read_text("utf-8").splitlines()
    assert sum('"kind":"BenchmarkRun"' in line for line in written) == 49
    assert validate_strict(tmp_path / "out") == []


def test_records_of_a_refused_row_are_not_written(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "in.csv", [row(x_value="1e20", kernel_name="lonely")])
    summary = import_csv([source], tmp_path / "out", layout="jsonl")
    assert summary.rows_refused == 1 and summary.runs == summary.kept == 0
    assert summary.protocols == summary.workloads == summary.environments == 0
    assert not (tmp_path / "out").exists(), "nothing kept: no stream, not even a folder"


# --- never lose earlier data ------------------------------------------------------


def test_a_second_jsonl_import_merges(tmp_path: Path) -> None:
    first = write_csv(tmp_path / "a.csv", good_rows(3))
    second = write_csv(tmp_path / "b.csv", [row(x_value="1", kernel_provider="torch")])
    out = tmp_path / "out"
    import_csv([first], out, layout="jsonl")
    before = set((out / JSONL_NAME).read_text("utf-8").splitlines())
    summary = import_csv([second], out, layout="jsonl")
    after = set((out / JSONL_NAME).read_text("utf-8").splitlines())
    assert before < after, "every earlier record kept"
    assert summary.records_kept == len(before)
    assert sum('"kind":"BenchmarkRun"' in line for line in after) == 4
    assert validate_strict(out) == []
    again = import_csv([first, second], out, layout="jsonl")
    assert again.files_unchanged == 1 and again.runs == 0


def test_a_stream_that_cannot_be_merged_is_refused_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / JSONL_NAME).write_text('{"kind": "BenchmarkRun"}\n{not json\n', "utf-8")
    before = (out / JSONL_NAME).read_bytes()
    source = write_csv(tmp_path / "a.csv", good_rows(2))
    err = io.StringIO()
    status = run_liger_import([str(source)], str(out), layout="jsonl", err=err)
    assert status == 2
    lines = err.getvalue().splitlines()
    assert lines[0].startswith(f"{out / JSONL_NAME}:1: ")
    assert lines[1].startswith(f"{out / JSONL_NAME}:2:")
    assert "cannot be merged" in lines[-1] and "--force" in lines[-1]
    assert (out / JSONL_NAME).read_bytes() == before
    assert run_liger_import([str(source)], str(out), layout="jsonl", force=True, err=err) == 0
    assert validate_strict(out) == []


def test_a_hand_edited_bundle_is_never_replaced_without_force(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "a.csv", good_rows(3))
    out = tmp_path / "out"
    import_csv([source], out)
    edited = sorted(out.iterdir())[1]
    bundle = json.loads(edited.read_text("utf-8"))
    bundle["run"]["metadata"]["title"] = "my own title"
    edited.write_text(json.dumps(bundle, indent=2), "utf-8")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    more = write_csv(tmp_path / "b.csv", good_rows(4))
    err = io.StringIO()
    assert run_liger_import([str(more)], str(out), err=err) == 2
    assert err.getvalue().splitlines()[0] == (
        f"{edited}: exists with other content: not replaced (use --force to replace it)"
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before, "nothing written"
    assert run_liger_import([str(more)], str(out), force=True, err=err) == 0
    assert len(list(out.iterdir())) == 4
    assert json.loads(edited.read_text("utf-8"))["run"]["metadata"]["title"] != "my own title"


# --- usage: --out '', stdin ----------------------------------------------------------


def test_an_empty_out_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = write_csv(tmp_path / "a.csv", good_rows(2))
    err = io.StringIO()
    assert run_liger_import([str(source)], "", err=err) == 2
    assert "--out ''" in err.getvalue()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]


def test_dash_reads_the_csv_from_stdin(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "a.csv", good_rows(3))
    from_file = tmp_path / "file"
    from_stdin = tmp_path / "stdin"
    import_csv([source], from_file, layout="jsonl")
    stdin = io.BytesIO(source.read_bytes())
    err = io.StringIO()
    assert run_liger_import(["-"], str(from_stdin), layout="jsonl", err=err, stdin=stdin) == 0
    assert (from_stdin / JSONL_NAME).read_bytes() == (from_file / JSONL_NAME).read_bytes()
    bad = io.BytesIO(write_csv(tmp_path / "b.csv", [row(x_value="1e20")]).read_bytes())
    assert run_liger_import(["-"], str(tmp_path / "x"), err=err, stdin=bad) == 1
    assert "<stdin>:2: x_value: number out of range" in err.getvalue()
    assert run_liger_import(["-", "-"], str(tmp_path / "y"), err=err) == 2


def test_a_record_too_long_for_the_cap_is_skipped_and_reading_goes_on(tmp_path: Path) -> None:
    rows = good_rows(2)
    open_quote = 'rms_norm,liger,forward,speed,ms,H,"hidden size'  # a quote never closed
    source = write_csv(tmp_path / "in.csv", [rows[0], "y" * 70_000, rows[1]])
    summary = import_csv([source], tmp_path / "out")
    assert [(p.line, p.code) for p in summary.problems] == [(3, "row-too-long")]
    assert summary.runs == 2
    multi = write_csv(tmp_path / "multi.csv", [rows[0], open_quote, *["z" * 100] * 800])
    summary = import_csv([multi], tmp_path / "out2")
    assert [(p.line, p.code) for p in summary.problems] == [(3, "row-too-long")]
    assert summary.runs == 1
