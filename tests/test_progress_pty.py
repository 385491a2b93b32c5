"""Progress bars move while the work does, seen as a user sees them: on a terminal.

Each test runs the real command in a new process whose stderr is a pseudo-terminal
(:mod:`pty`), reads every frame the bar drew (the text between carriage returns) and
asserts frames *between* the start and the end: a bar that stays silent through a long
file and then flashes 0 % or 100 % fails. Inputs are large enough to take a few seconds
(hence ``slow``); the cheap checks of the parts are at the end, unmarked.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from compare_corpus import corpus
from liger_rows import good_rows, write_csv

from kernelindex_sdk.base.progress import Progress
from kernelindex_sdk.reading.sources import FileSource, read

CLI = [sys.executable, "-m", "kernelindex_sdk.cli.main"]
#: A count: a number, or a byte count in binary units (``12.5 MiB``, ``7 bytes``).
AMOUNT = r"[\d.]+(?: (?:bytes?|KiB|MiB|GiB))?"
PERCENT = re.compile(rf"^(.*?) \[[#-]+\](?: {AMOUNT}/{AMOUNT})? +(\d+)%$")
COUNT = re.compile(rf"^(compare: loading bytes|liger: reading bytes) ({AMOUNT})$")
_UNITS = {"byte": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def on_a_terminal(args: list[str], stdin: Path | None = None) -> tuple[int, list[str]]:
    """Run ``args`` with stderr on a pseudo-terminal; its exit status and bar frames."""
    master, slave = pty.openpty()
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        process = subprocess.Popen(
            args, stdin=source, stdout=subprocess.DEVNULL, stderr=slave, close_fds=True
        )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: the terminal's other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    status = process.wait(timeout=600)
    text = b"".join(chunks).decode("utf-8", "replace")
    frames = [part.strip() for part in re.split(r"[\r\n]", text) if part.strip()]
    return status, frames


def percents(frames: list[str], label: str) -> list[int]:
    found = [PERCENT.match(frame) for frame in frames]
    return [int(m[2]) for m in found if m and m[1] == label]


def counts(frames: list[str], label: str) -> list[int]:
    found = [COUNT.match(frame) for frame in frames]
    return [_bytes(m[2]) for m in found if m and m[1] == label]


def _bytes(amount: str) -> int:
    """``12.5 MiB`` → its bytes (to the unit's precision)."""
    number, _, unit = amount.partition(" ")
    return int(float(number) * _UNITS.get(unit, 1))


def moved(values: list[int], low: int = 0, high: int = 100) -> bool:
    """At least two distinct values strictly between ``low`` and ``high``, increasing."""
    inside = [v for v in values if low < v < high]
    return len(set(inside)) >= 2 and inside == sorted(inside)


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_csv(tmp_path_factory.mktemp("csv") / "big.csv", good_rows(15_000))


@pytest.fixture(scope="module")
def big_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records = corpus(list(range(100, 6_100)), list(range(50, 6_050)))
    path = tmp_path_factory.mktemp("jsonl") / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.slow
def test_import_liger_moves_while_reading_and_writing(big_csv: Path, tmp_path: Path) -> None:
    status, frames = on_a_terminal([*CLI, "import", "liger", str(big_csv), "--out", str(tmp_path)])
    assert status == 0, frames[-5:]
    assert moved(percents(frames, "liger: reading bytes")), frames[:20]
    assert moved(percents(frames, "liger: writing")), frames[-20:]


@pytest.mark.slow
def test_import_liger_from_stdin_counts_bytes_as_they_come(big_csv: Path, tmp_path: Path) -> None:
    args = [*CLI, "import", "liger", "-", "--out", str(tmp_path)]
    status, frames = on_a_terminal(args, stdin=big_csv)
    assert status == 0, frames[-5:]
    assert moved(counts(frames, "liger: reading bytes"), high=big_csv.stat().st_size), frames[:20]


@pytest.mark.slow
def test_compare_moves_through_a_json_lines_file(big_jsonl: Path) -> None:
    status, frames = on_a_terminal([*CLI, "compare", str(big_jsonl), "--summary", "--progress"])
    assert status == 0, frames[-5:]
    assert moved(percents(frames, "compare: loading bytes")), frames[:20]


@pytest.mark.slow
def test_compare_moves_through_standard_input(big_jsonl: Path) -> None:
    args = [*CLI, "compare", "-", "--summary", "--progress"]
    status, frames = on_a_terminal(args, stdin=big_jsonl)
    assert status == 0, frames[-5:]
    assert moved(counts(frames, "compare: loading bytes"), high=big_jsonl.stat().st_size)


# ----------------------------------------------------------------- the parts, fast


def test_update_sets_where_the_work_is() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    bar = Progress(200, "bytes", stream=stream, delay=0, show_counts=False)
    bar.update(50)
    assert stream.getvalue() == "\r" + "bytes [#######-----------------------]  25%"
    assert bar.count == 50
    bar.close()


def test_reading_json_lines_reports_bytes_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n\n{"c": 3}\n')
    told: list[int] = []
    documents = read(FileSource(str(path), jsonl=True), on_read=told.append)
    first = next(documents)
    assert sum(told) < path.stat().st_size  # told before the rest is read
    assert first.value == {"a": 1}  # type: ignore[union-attr]
    list(documents)
    assert sum(told) == path.stat().st_size


def test_a_bar_of_bytes_counts_in_binary_units() -> None:
    """A reader sees ``12.0 MiB/48.0 MiB``, not ``12582912/50331648``; without a total,
    ``3.5 KiB``."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    bar = Progress(48 << 20, "compare: loading bytes", stream=stream, delay=0, unit="bytes")
    bar.update(12 << 20)
    assert stream.getvalue().endswith("] 12 MiB/48 MiB  25%")
    assert PERCENT.match(stream.getvalue().strip("\r"))
    stream = Terminal()
    unknown = Progress(None, "liger: reading bytes", stream=stream, delay=0, unit="bytes")
    unknown.update(3584)
    assert stream.getvalue() == "\rliger: reading bytes 3.5 KiB"
    assert [_bytes(m[2]) for m in [COUNT.match(stream.getvalue().strip("\r"))] if m] == [3584]
