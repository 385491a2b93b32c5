"""Faults of ``kernelindex import liger``, with real processes and files (#11).

A ``kill -9`` while a batch is renamed into place, two imports into one folder at
once, a folder the importer may not write, an input it may not read, and a CSV of one
huge line. Each command runs in its own session and its group is killed if it hangs.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from acceptance.support import finish
from liger_rows import HEADER, good_rows, row, write_csv

from bench_adapters.cli import run_liger_import
from bench_adapters.liger import JSONL_NAME
from kernelindex_sdk.base.fileio import STAGING_PREFIX
from kernelindex_sdk.validating.pipeline import Pipeline

COMMAND = [sys.executable, "-m", "kernelindex_sdk.cli.main", "import", "liger"]
#: Run as a user for whom mode 000 means something (root reads anything otherwise).
WITHOUT_DAC = [
    "setpriv",
    "--bounding-set=-dac_override,-dac_read_search",
    "--inh-caps=-dac_override,-dac_read_search",
    "--",
]


def start(args: Sequence[str], prefix: Sequence[str] = ()) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*prefix, *COMMAND, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def many_rows(count: int, provider: str = "liger") -> list[str]:
    return [row(x_value=str(i + 1), kernel_provider=provider) for i in range(count)]


def valid_runs(directory: Path) -> int:
    """The runs under ``directory``; every record in it must pass validate --strict-refs."""
    check = Pipeline([str(directory)], strict_refs=True, keep_values=True)
    runs = 0
    for item in check:
        assert not item.problems, item.problems
        runs += sum(ref.kind == "BenchmarkRun" for ref in item.records)
    assert not check.late
    return runs


def test_kill_9_while_renaming_a_batch_is_completed_by_the_next_run(tmp_path: Path) -> None:
    rows = 600
    source = write_csv(tmp_path / "big.csv", many_rows(rows))
    out = tmp_path / "out"
    for _attempt in range(3):
        shutil.rmtree(out, ignore_errors=True)
        process = start([str(source), "--out", str(out)])
        committed = False
        while process.poll() is None and not committed:
            committed = any(out.glob(f"{STAGING_PREFIX}*/journal.json"))
            time.sleep(0.0005)
        if committed:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            break
        finish(process)
    else:
        pytest.fail("the import always finished before it could be killed mid-batch")
    visible = [p for p in out.iterdir() if not p.name.startswith(".")]
    assert len(visible) < rows, "killed while renaming: part of the batch is in place"
    for path in visible:
        json.loads(path.read_text("utf-8"))  # every file whole
    err = io.StringIO()
    more = write_csv(tmp_path / "more.csv", [row(x_value="0")])
    assert run_liger_import([str(more)], str(out), err=err) == 0, err.getvalue()
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")], "nothing left over"
    assert valid_runs(out) == rows + 1, "the committed batch was completed"


def test_two_imports_into_one_folder_lose_nothing(tmp_path: Path) -> None:
    first = write_csv(tmp_path / "a.csv", many_rows(300, "liger"))
    second = write_csv(tmp_path / "b.csv", many_rows(300, "torch"))
    out = tmp_path / "out"
    processes = [
        start([str(path), "--out", str(out), "--layout", "jsonl"]) for path in (first, second)
    ]
    for process in processes:
        status, _, err = finish(process)
        assert status == 0, err
    assert [p.name for p in out.iterdir()] == [JSONL_NAME]
    assert valid_runs(out) == 600


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux setpriv")
def test_an_unwritable_folder_and_an_unreadable_csv_exit_2(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "a.csv", good_rows(2))
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        status, _, err = finish(start([str(source), "--out", str(locked)], WITHOUT_DAC))
    finally:
        locked.chmod(0o755)
    assert status == 2
    assert err.strip().endswith("Permission denied")
    assert list(locked.iterdir()) == []
    source.chmod(0)
    status, _, err = finish(start([str(source), "--out", str(tmp_path / "out")], WITHOUT_DAC))
    assert status == 2
    assert err.strip() == f"{source}: permission denied"
    assert not (tmp_path / "out").exists()


def peak_kib(csv_path: Path, out: Path) -> tuple[list[str], int]:
    """Import ``csv_path`` in a fresh process: its stderr lines and its peak memory (KiB)."""
    code = (
        "import resource, sys; from bench_adapters.cli import run_liger_import; "
        f"status = run_liger_import([{str(csv_path)!r}], {str(out)!r}); "
        "print(status, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    lines = result.stderr.splitlines()
    return lines, int(lines[-1].split()[1])


@pytest.mark.slow
def test_a_huge_line_costs_no_more_than_the_cap(tmp_path: Path) -> None:
    huge = tmp_path / "huge.csv"
    with huge.open("wb") as handle:
        handle.write((HEADER + "\r\n").encode())
        handle.write(b"x" * (64 << 20) + b"\r\n")
        handle.write((row() + "\r\n").encode())
    lines, peak = peak_kib(huge, tmp_path / "out")
    assert lines[0].startswith(f"{huge}:2: row longer than 64 KiB")
    assert lines[-1].split()[0] == "1"
    _, baseline = peak_kib(write_csv(tmp_path / "small.csv", [row()]), tmp_path / "out2")
    assert peak < baseline + 16 * 1024, "the 64 MiB line was never held in memory"
