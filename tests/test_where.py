"""``--where KEY=VALUE`` on ``compare``, ``compare --against`` and ``ls`` (``history``'s
own tests cover it there): it selects workloads by a parameter or dtype, and a
malformed one, an unknown key or a value nothing has is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_helpers import kernelindex

from kernelindex_sdk.compare.filters import Where, parse_where, unmatched_where, where_matches

SWEEP = Path(__file__).resolve().parent / "examples" / "compare" / "sweep"


def test_where_selects_by_parameter_and_dtype() -> None:
    done = kernelindex("compare", SWEEP, "--where", "seq=2048", "--where", "dtype=bf16",
                       "--format", "json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    groups = json.loads(done.stdout)["groups"]
    assert groups and all(g["workload"]["parameters"]["seq"] == 2048 for g in groups)
    listed = kernelindex("ls", SWEEP, "--where", "seq=2048", "--format", "json")
    everything = kernelindex("ls", SWEEP, "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert 0 < json.loads(listed.stdout)["runs"] < json.loads(everything.stdout)["runs"]


@pytest.mark.parametrize(
    ("command", "where", "said"),
    [
        (("compare",), "seq", "--where 'seq' is not KEY=VALUE"),
        (("ls",), "=4", "--where '=4' is not KEY=VALUE"),
        (("compare",), "sq=1024", "no parameter 'sq' in the input; did you mean 'seq'?"),
        (("ls",), "dtyp=bf16", "no parameter 'dtyp' in the input; did you mean 'dtype'?"),
        (("compare", "--against", str(SWEEP)), "seq=3", "present: seq=1024, seq=2048"),
        (("compare", "--against", str(SWEEP)), "sq=3", "did you mean 'seq'?"),
        (("compare",), "seq=3", "--where 'seq=3' matches nothing in the input; present: seq=1024"),
    ],
)
def test_a_bad_where_is_one_line_and_exit_2(
    command: tuple[str, ...], where: str, said: str
) -> None:
    done = kernelindex(command[0], SWEEP, *command[1:], "--where", where)
    assert done.returncode == 2, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "--where" in line]
    assert said in line and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_where_matching_rules() -> None:
    values = {"hidden": "4096", "flag": "true", "dtype": "bf16"}
    assert where_matches(values, parse_where(["hidden=4096.0", "flag=True"]))
    assert where_matches(values, parse_where(["dtype=fp16", "dtype=bf16"]))  # any of a key's
    assert not where_matches(values, parse_where(["dtype=bf16", "hidden=1"]))  # every key
    assert parse_where([" hidden = 4096 "]) == (Where("hidden", "4096"),)
    assert unmatched_where([values], parse_where(["hidden=4096"])) == []


def test_tables_mark_the_fastest_implementation_per_row() -> None:
    markdown = kernelindex("compare", SWEEP, "--format", "markdown").stdout
    assert "| 1024 | 104.9 µs | 52.43 µs\\* | 2.00× |" in markdown
    assert "| 4096 | 419.4 µs | OOM | n/a |" in markdown  # one passed run: nothing to mark
    assert "> legend: \\* fastest implementation of its row" in markdown
    report = json.loads(kernelindex("compare", SWEEP, "--by-shape", "--format", "json").stdout)
    for group in report["groups"]:
        passed = [row for row in group["rows"] if "value" in row["newest"]]
        marked = [row["newest"]["value"] for row in group["rows"] if row["fastest"]]
        if len(passed) >= 2:
            assert marked == [min(row["newest"]["value"] for row in passed)]
        else:
            assert marked == []
    by_shape = kernelindex("compare", SWEEP, "--by-shape").stdout
    assert "52.43 µs*" in by_shape and "legend: * fastest" in by_shape


def test_fastest_needs_two_passed_runs_of_one_statistic() -> None:
    from beforeafter_records import RunSpec, records_for, resolved

    from kernelindex_sdk.compare.fastest import fastest

    runs = resolved([records_for(RunSpec(value=v, at=i)) for i, v in enumerate([300, 100, 100])])
    ordered = sorted(runs, key=lambda run: run.observed_at)
    assert fastest([ordered[0], None, ordered[1], ordered[2]]) == {2, 3}  # ties: both
    assert fastest([ordered[0]]) == frozenset()
