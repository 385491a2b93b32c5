"""Bad CSV input and the ``kernelindex import liger`` command line.

Every defect is one line on stderr naming the file, the line and what is wrong; by
default the row is skipped and the command exits 1 with a summary; ``--strict``
stops at the first and writes nothing; unreadable input exits 2. Never a traceback.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_adapters.cli import import_group, run_liger_import
from bench_adapters.liger import COLUMNS, convert, import_csv

EXAMPLES = Path(__file__).resolve().parent / "examples" / "liger"
HEADER = (
    "kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,"
    "x_label,x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,"
    "timestamp,liger_version"
)
ROW = (
    'rms_norm,liger,forward,speed,ms,H,hidden size,4096,0.05,0.049,0.051,"{""M"": 2048, '
    '""dtype"": ""torch.bfloat16""}",NVIDIA H100 80GB HBM3,2025-01-10 08:00:00,0.5.2'
)


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(import_group, ["liger", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def assert_no_traceback(output: str) -> None:
    assert "Traceback" not in output
    assert "Error:" not in output or "Usage:" in output


def problem_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(str(EXAMPLES))]


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# --- one defect per file, with its line number ---------------------------------------


@pytest.mark.parametrize(
    ("name", "line", "code", "words"),
    [
        ("missing_column.csv", 1, "missing-column", ["missing column", "y_value_20"]),
        ("bad_number.csv", 3, "bad-number", ["y_value_50", "not a number", "4.1ms"]),
        ("bad_config.csv", 4, "bad-config", ["extra_benchmark_config_str", "invalid JSON"]),
        ("short_row.csv", 3, "short-row", ["short row", "9 fields", "15"]),
    ],
)
def test_bad_csv_reported_with_line(
    tmp_path: Path, name: str, line: int, code: str, words: list[str]
) -> None:
    summary = import_csv([EXAMPLES / name], tmp_path / "out")
    (problem,) = summary.problems
    assert (problem.source, problem.line, problem.code) == (str(EXAMPLES / name), line, code)
    for word in words:
        assert word in problem.message

    status, output = run_cli(str(EXAMPLES / name), "--out", str(tmp_path / "cli"))
    assert status == 1
    assert_no_traceback(output)
    (reported,) = problem_lines(output)
    assert reported.startswith(f"{EXAMPLES / name}:{line}: ")
    assert "rows refused" in output


def test_missing_column_skips_the_whole_file(tmp_path: Path) -> None:
    summary = import_csv([EXAMPLES / "missing_column.csv", EXAMPLES / "good.csv"], tmp_path)
    assert summary.rows_refused == 1
    assert summary.rows_read == 7
    assert summary.runs == 6


def test_mixed_bad_rows_refused_good_rows_written(tmp_path: Path) -> None:
    summary = import_csv([EXAMPLES / "mixed_bad.csv"], tmp_path)
    found = [(p.line, p.code) for p in summary.problems]
    assert found == [
        (3, "bad-number"),
        (4, "bad-config"),
        (5, "short-row"),
        (6, "bad-timestamp"),
        (7, "unknown-mode"),
        (8, "unknown-metric"),
        (9, "unknown-unit"),
        (10, "bad-number"),
        (11, "bad-number"),
        (12, "empty-cell"),
    ]
    assert (summary.rows_read, summary.rows_refused, summary.runs) == (12, 10, 2)
    assert len(list(tmp_path.iterdir())) == 2


def test_cli_default_skips_and_exits_1(tmp_path: Path) -> None:
    status, output = run_cli(str(EXAMPLES / "mixed_bad.csv"), "--out", str(tmp_path))
    assert status == 1
    assert_no_traceback(output)
    assert len(problem_lines(output)) == 10
    assert len(list(tmp_path.iterdir())) == 2
    assert "rows refused         10" in output


def test_cli_strict_stops_at_the_first(tmp_path: Path) -> None:
    out = tmp_path / "out"
    status, output = run_cli(str(EXAMPLES / "mixed_bad.csv"), "--out", str(out), "--strict")
    assert status == 1
    assert_no_traceback(output)
    (reported,) = problem_lines(output)
    assert reported.startswith(f"{EXAMPLES / 'mixed_bad.csv'}:3: ")
    assert "nothing written" in output
    assert not out.exists()


def test_cli_clean_exit_0_and_summary(tmp_path: Path) -> None:
    status, output = run_cli(str(EXAMPLES / "good.csv"), "--out", str(tmp_path))
    assert status == 0
    for label in ("rows read", "runs written", "protocols", "workloads", "environments"):
        assert label in output
    assert "implementations" in output and "collapsed quantiles  2" in output


@pytest.mark.parametrize("layout", ["bundles", "jsonl"])
def test_cli_layouts(tmp_path: Path, layout: str) -> None:
    status, _ = run_cli(str(EXAMPLES / "good.csv"), "--out", str(tmp_path), "--layout", layout)
    assert status == 0
    names = [p.name for p in tmp_path.iterdir()]
    assert names == ["liger.jsonl"] if layout == "jsonl" else len(names) == 6


# --- unreadable input: exit 2, one line ----------------------------------------------


def test_missing_file_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "nope.csv"
    status, output = run_cli(str(missing), "--out", str(tmp_path / "out"))
    assert status == 2
    assert_no_traceback(output)
    assert output.strip() == f"{missing}: no such file or directory"
    assert not (tmp_path / "out").exists()


def test_unreadable_file_writes_nothing_even_after_good_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    status, _ = run_cli(str(EXAMPLES / "good.csv"), str(tmp_path / "nope.csv"), "--out", str(out))
    assert status == 2
    assert not out.exists()


def test_directory_as_input_exits_2(tmp_path: Path) -> None:
    status, output = run_cli(str(tmp_path), "--out", str(tmp_path / "out"))
    assert status == 2
    assert_no_traceback(output)
    assert output.startswith(f"{tmp_path}: is a directory, not a file")


def test_not_utf8_exits_2_with_line(tmp_path: Path) -> None:
    path = write(tmp_path, "latin1.csv", (HEADER + "\n" + ROW + "\n").encode() + b"caf\xe9\n")
    status, output = run_cli(str(path), "--out", str(tmp_path / "out"))
    assert status == 2
    assert_no_traceback(output)
    assert output.startswith(f"{path}:3: not UTF-8")


def test_out_is_a_file_exits_2(tmp_path: Path) -> None:
    target = write(tmp_path, "file", "x")
    status, output = run_cli(str(EXAMPLES / "good.csv"), "--out", str(target))
    assert status == 2
    assert_no_traceback(output)
    assert "exists and is not a directory" in output
    assert target.read_text() == "x"


def test_missing_arguments_are_usage_errors(tmp_path: Path) -> None:
    assert run_cli("--out", str(tmp_path))[0] == 2
    assert run_cli(str(EXAMPLES / "good.csv"))[0] == 2
    assert run_cli(str(EXAMPLES / "good.csv"), "--out", str(tmp_path), "--layout", "xml")[0] == 2


# --- CSV shapes that are fine ----------------------------------------------------


def test_empty_file_and_header_only(tmp_path: Path) -> None:
    empty = write(tmp_path, "empty.csv", "")
    (problem,) = convert([empty]).summary.problems
    assert (problem.line, problem.code) == (1, "empty-file")
    header_only = write(tmp_path, "header.csv", HEADER + "\n")
    summary = convert([header_only]).summary
    assert summary.problems == [] and summary.rows_read == 0


def test_bom_crlf_reordered_and_extra_columns(tmp_path: Path) -> None:
    names = HEADER.split(",")
    import csv

    (fields,) = list(csv.reader([ROW]))
    order = list(reversed(range(len(names))))
    header = ",".join([names[i] for i in order] + ["comment"])
    row = ",".join([_quote(fields[i]) for i in order] + ["hello"])
    path = write(tmp_path, "odd.csv", "\ufeff" + header + "\r\n" + row + "\r\n")
    conversion = convert([path])
    assert conversion.summary.problems == []
    assert conversion.summary.runs == 1
    reference = convert([write(tmp_path, "plain.csv", HEADER + "\n" + ROW + "\n")])
    assert conversion.runs[0].run == reference.runs[0].run


def test_multiline_cell_keeps_later_line_numbers(tmp_path: Path) -> None:
    config = '"{""M"": 2048,\n""dtype"": ""torch.bfloat16""}"'
    multi = ROW.replace('"{""M"": 2048, ""dtype"": ""torch.bfloat16""}"', config)
    bad = ROW.replace("0.049", "zero")
    path = write(tmp_path, "multi.csv", "\n".join([HEADER, multi, bad, ""]))
    (problem,) = convert([path]).summary.problems
    assert problem.line == 4


def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    path = write(tmp_path, "blank.csv", HEADER + "\n\n" + ROW + "\n\n")
    summary = convert([path]).summary
    assert (summary.rows_read, summary.runs, summary.problems) == (1, 1, [])


@pytest.mark.parametrize(
    ("cell", "value", "message"),
    [
        ("y_value_50", "1e400", "not a finite number"),
        ("y_value_50", "", "empty"),
        ("extra_benchmark_config_str", '{"M": NaN}', "invalid JSON"),
        ("extra_benchmark_config_str", '{"M": 1, "M": 2}', "duplicate key"),
        ("extra_benchmark_config_str", '{"M": 12345678901234567890}', "is outside ±(2**53 - 1)"),
        ("x_value", "99999999999999999999", "out of range"),
        ("timestamp", "yesterday", "timestamp"),
        ("timestamp", "2025-02-30 10:00:00", "no such time"),
    ],
)
def test_cell_defects(tmp_path: Path, cell: str, value: str, message: str) -> None:
    import csv

    (fields,) = list(csv.reader([ROW]))
    fields[HEADER.split(",").index(cell)] = value
    path = write(tmp_path, "cell.csv", HEADER + "\n" + ",".join(map(_quote, fields)) + "\n")
    (problem,) = convert([path]).summary.problems
    assert problem.line == 2
    assert message in problem.message
    assert problem.message.startswith(cell)


def test_empty_optional_cells_import(tmp_path: Path) -> None:
    import csv

    (fields,) = list(csv.reader([ROW]))
    names = HEADER.split(",")
    fields[names.index("extra_benchmark_config_str")] = ""
    fields[names.index("liger_version")] = ""
    path = write(tmp_path, "opt.csv", HEADER + "\n" + ",".join(map(_quote, fields)) + "\n")
    conversion = convert([path])
    assert conversion.summary.problems == []
    (mapped,) = conversion.runs
    assert "labels" not in mapped.run["metadata"]
    implementation = conversion.records[mapped.refs[3]]
    assert implementation["spec"]["package"] == {"name": "liger-kernel"}


def test_columns_constant_matches_liger_header() -> None:
    assert set(COLUMNS) <= set(HEADER.split(","))
    assert set(HEADER.split(",")) - set(COLUMNS) == {"x_label"}


def test_run_liger_import_writes_only_to_err(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = io.StringIO()
    status = run_liger_import([str(EXAMPLES / "unknown.csv")], str(tmp_path), err=err)
    assert status == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert "warning: unknown kernel 'warp_shuffle_norm'" in err.getvalue()
    assert "\r" not in err.getvalue(), "no progress bar when stderr is not a terminal"
    for path in tmp_path.iterdir():
        json.loads(path.read_text("utf-8"))


def _quote(field: str) -> str:
    if any(ch in field for ch in ',"\n\r'):
        return '"' + field.replace('"', '""') + '"'
    return field
