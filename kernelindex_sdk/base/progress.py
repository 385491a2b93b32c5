"""A progress bar for long imports: on a terminal only, on stderr, never in the way.

Adapters that turn thousands of rows into records show how far they are, but a bar is
noise in a log file or a pipe, and it must never mix into the data on stdout. So a
:class:`Progress` draws only when its stream is a terminal, redraws at most about ten
times a second (a redraw per row would cost more than the row), waits a moment before
the first draw (a short import finishes before any bar appears), and erases itself
when done. It has no dependencies, so every adapter can use it.

    with Progress(total=len(rows), label="liger") as bar:
        for row in rows:
            ...
            bar.advance()

The bar must move while the work does: work that runs long between two calls (a whole
file read, then nothing) shows a bar stuck at 0 % and then gone. Count what moves —
bytes read (:meth:`Progress.update`), rows, files rendered and written — as it moves.

Messages that must appear while a bar is drawn (warnings) go through
:meth:`Progress.note`, which clears the bar line first so the two never interleave;
code that writes them itself does so inside :meth:`Progress.paused`.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from types import TracebackType
from typing import TextIO

from kernelindex_sdk.base.wording import byte_size

#: Seconds between two redraws: at most about ten a second.
REDRAW_INTERVAL = 0.1
#: Seconds before the first draw, so short runs never show a bar.
DEFAULT_DELAY = 0.3
#: Width of the bar itself, in characters.
BAR_WIDTH = 30


class Progress:
    """Counts work done out of ``total`` and shows it on a terminal stream."""

    def __init__(
        self,
        total: int | None,
        label: str = "",
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        delay: float = DEFAULT_DELAY,
        show_counts: bool = True,
        unit: str = "",
    ) -> None:
        self.total = total if total is None or total >= 0 else 0
        self.label = label
        #: What is counted: ``bytes`` shows counts in binary units (``12.5 MiB``).
        self.unit = unit
        #: Show ``done/total`` beside the percentage (off when the units are steps of
        #: several kinds, which mean nothing to a reader).
        self.show_counts = show_counts
        self.stream: TextIO = stream if stream is not None else sys.stderr
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        self.count = 0
        self._delay = delay
        self._started = time.monotonic()
        self._last_draw: float | None = None
        self._drawn_width = 0

    def __enter__(self) -> Progress:
        self._started = time.monotonic()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more units done; redraw if enough time has passed."""
        self.update(self.count + n)

    def update(self, count: int) -> None:
        """Set the units done to ``count`` (e.g. bytes read so far); redraw if enough
        time has passed. Work that knows where it is, rather than how much it just
        did, reports that here, as often as it likes: drawing stays rate-limited."""
        self.count = count
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._started < self._delay:
            return
        if self._last_draw is None or now - self._last_draw >= REDRAW_INTERVAL:
            self._draw(now)

    def note(self, message: str) -> None:
        """Write a line of text to the stream without tearing the bar."""
        with self.paused():
            self.stream.write(message.rstrip("\n") + "\n")

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The bar erased while the body writes to the stream (whoever writes: a
        callback that reports a problem), then the stream flushed and the bar drawn
        again if it was showing."""
        self.clear()
        try:
            yield
        finally:
            self.stream.flush()
            if self.enabled and self._last_draw is not None:
                self._draw(time.monotonic())

    def close(self) -> None:
        """Erase the bar; the stream is left as if no bar had been drawn."""
        self.clear()
        self._last_draw = None

    def render(self) -> str:
        """The bar's text at the current count (without carriage return)."""
        prefix = f"{self.label} " if self.label else ""
        if self.total:
            done = min(self.count, self.total)
            filled = BAR_WIDTH * done // self.total
            bar = "#" * filled + "-" * (BAR_WIDTH - filled)
            percent = 100 * done // self.total
            counts = f" {self._amount(done)}/{self._amount(self.total)}"
            return f"{prefix}[{bar}]{counts if self.show_counts else ''} {percent:3d}%"
        return f"{prefix}{self._amount(self.count)}"

    def _amount(self, count: int) -> str:
        return byte_size(count) if self.unit == "bytes" else str(count)

    def _draw(self, now: float) -> None:
        text = self.render()
        padding = " " * max(0, self._drawn_width - len(text))
        self.stream.write("\r" + text + padding)
        self.stream.flush()
        self._drawn_width = len(text)
        self._last_draw = now

    def clear(self) -> None:
        """Erase the bar for now (before other output); the next advance redraws it."""
        if self._drawn_width:
            self.stream.write("\r" + " " * self._drawn_width + "\r")
            self.stream.flush()
            self._drawn_width = 0


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
