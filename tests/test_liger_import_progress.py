"""The progress bar: drawn only on a terminal, rate-limited, erased when done."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench_adapters.liger import import_csv
from kernelindex_sdk.base.progress import Progress

EXAMPLES = Path(__file__).resolve().parent / "examples" / "liger"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr("kernelindex_sdk.base.progress.time", SimpleNamespace(monotonic=fake))
    return fake


def test_quiet_when_not_a_terminal() -> None:
    stream = io.StringIO()
    with Progress(100, "rows", stream=stream, delay=0) as bar:
        for _ in range(100):
            bar.advance()
        bar.note("a warning")
    assert stream.getvalue() == "a warning\n"
    assert bar.count == 100


def test_draws_on_a_terminal_and_erases_itself(clock: Clock) -> None:
    stream = FakeTerminal()
    drawn = "rows [###############---------------] 5/10  50%"
    with Progress(10, "rows", stream=stream, delay=0) as bar:
        clock.now += 1
        bar.advance(5)
        assert stream.getvalue() == "\r" + drawn
    assert stream.getvalue() == "\r" + drawn + "\r" + " " * len(drawn) + "\r"


def test_redraws_at_most_ten_times_a_second(clock: Clock) -> None:
    stream = FakeTerminal()
    bar = Progress(1000, stream=stream, delay=0)
    for _ in range(1000):
        bar.advance()
        clock.now += 0.001  # a whole second over 1000 rows
    draws = stream.getvalue().count("\r")
    assert 1 <= draws <= 11
    bar.close()


def test_waits_before_the_first_draw(clock: Clock) -> None:
    stream = FakeTerminal()
    with Progress(10, stream=stream, delay=0.5) as bar:
        clock.now += 0.2
        bar.advance()
        assert stream.getvalue() == ""
        clock.now += 0.4
        bar.advance()
        assert "2/10" in stream.getvalue()


def test_note_clears_the_bar_first(clock: Clock) -> None:
    stream = FakeTerminal()
    with Progress(4, "x", stream=stream, delay=0) as bar:
        clock.now += 1
        bar.advance()
        bar.note("warning: something")
    text = stream.getvalue()
    before, _, after = text.partition("warning: something\n")
    assert before.endswith("\r") and "1/4" in before
    assert "1/4" in after  # redrawn below the message


def test_unknown_total_counts() -> None:
    bar = Progress(None, "rows", stream=FakeTerminal(), delay=0)
    bar.advance(7)
    assert bar.render() == "rows 7"


def test_import_draws_on_a_terminal_only(tmp_path: Path) -> None:
    terminal = FakeTerminal()
    import_csv([EXAMPLES / "good.csv"], tmp_path / "a", progress_stream=terminal)
    plain = io.StringIO()
    import_csv([EXAMPLES / "good.csv"], tmp_path / "b", progress_stream=plain)
    assert plain.getvalue() == ""
