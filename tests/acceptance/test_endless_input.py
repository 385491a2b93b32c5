"""Input that never ends: every command reading a stream stops at its limit, in one line.

A pipe, a FIFO or ``< /dev/zero`` may never send the ``\\n`` that ends a line, so the
line-size guard must not wait for it: each reader stops at the documented limit (256 MiB
a document, 64 KiB a Liger row), says so in one line and exits 2. Real processes read
the real ``/dev/zero`` and a real FIFO; each run takes well under a second (measured:
0.4 s for 256 MiB of ``/dev/zero``), the timeout only catches a hang.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from bench_adapters.liger.source import LIGER_HEADER

from .support import finish

COMMAND = [sys.executable, "-m", "kernelindex_sdk.cli.main"]
#: Far more than a run needs; reaching it means the reader hung.
TIMEOUT = 60

#: Every command that reads a stream, with what it says when the stream breaks the limit.
#: Each way of reading a stream: lines, one whole document, CSV rows. ``digest`` and
#: ``export`` read lines as ``validate`` does: in the slow set.
STREAM_READERS = [
    pytest.param(["validate", "-"], "line longer than 256 MiB", id="validate"),
    pytest.param(["digest", "-"], "line longer than 256 MiB", id="digest", marks=pytest.mark.slow),
    pytest.param(["canonicalize", "-"], "larger than 256 MiB", id="canonicalize"),
    pytest.param(
        ["export", "liger", "-", "--out", "{out}.csv"],
        "line longer",
        id="export",
        marks=pytest.mark.slow,
    ),
    pytest.param(["import", "liger", "-", "--out", "{out}"], "row longer than 64 KiB", id="import"),
]


def _run(args: Sequence[str], stdin: int) -> tuple[int, str, str]:
    process = subprocess.Popen(
        [*COMMAND, *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    return finish(process, TIMEOUT, f"{' '.join(args)}: still reading after")


def _one_limit_line(output: str, says: str) -> None:
    """``output`` (stdout and stderr: ``validate`` reports on stdout) says it once."""
    limit_lines = [line for line in output.splitlines() if "limit" in line]
    assert len(limit_lines) == 1, output
    assert says in limit_lines[0] and limit_lines[0].startswith("<stdin>:1: "), output
    assert "read no further" in limit_lines[0], output


@pytest.mark.parametrize(("args", "says"), STREAM_READERS)
def test_dev_zero_on_stdin_stops_at_the_limit(args: list[str], says: str, tmp_path: Path) -> None:
    args = [arg.replace("{out}", str(tmp_path / "out")) for arg in args]
    with open("/dev/zero", "rb") as zero:
        status, out, err = _run(args, zero.fileno())
    assert status == 2, err
    if args[0] != "canonicalize":  # one document: its own, older message
        _one_limit_line(out + err, says)
    else:
        assert err.strip().endswith(f"{says}, the limit for one document: not read"), err
    if args[0] == "validate":
        assert out.endswith("\n0 valid, 0 invalid, 1 unreadable in 1 file\n"), out
    else:
        assert out == ""  # nothing made of an input that was not read
    assert not any((tmp_path / "out").parent.glob("out*.csv"))


@pytest.mark.parametrize(
    "command", ["validate", pytest.param("digest", marks=pytest.mark.slow), "import"]
)
def test_a_fifo_fed_without_a_newline_stops_at_the_limit(command: str, tmp_path: Path) -> None:
    """A writer that keeps sending bytes, never a ``\\n``: the reader stops and leaves."""
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)
    # One process turning /dev/zero into x's: a third of the CPU of `yes x | tr -d '\\n'`.
    feeder = subprocess.Popen(
        ["sh", "-c", f"tr '\\0' x < /dev/zero > '{fifo}'"], start_new_session=True
    )
    try:
        with open(fifo, "rb") as feed:
            args = (
                ["import", "liger", "-", "--out", str(tmp_path / "out")]
                if command == "import"
                else [command, "-"]
            )
            status, out, err = _run(args, feed.fileno())
    finally:
        os.killpg(feeder.pid, signal.SIGKILL)
        feeder.wait()
    assert status == 2, err
    _one_limit_line(out + err, "64 KiB" if command == "import" else "256 MiB")


def test_a_regular_file_on_stdin_is_still_read_past_an_overlong_line(tmp_path: Path) -> None:
    """A file has an end: the overlong line is skipped and the next line read, as before."""
    path = tmp_path / "rows.csv"
    header = ",".join(LIGER_HEADER) + "\n"
    path.write_bytes(header.encode() + b"x" * (70 << 10) + b"\n" + b"not,a,row\n")
    args = ["import", "liger", "-", "--out", str(tmp_path / "o")]
    with open(path, "rb") as stdin:
        status, _, err = _run(args, stdin.fileno())
    assert "row longer than 64 KiB" in err and "read no further" not in err, err
    assert "<stdin>:3:" in err, err  # the line after it was read
    assert status == 1, err
