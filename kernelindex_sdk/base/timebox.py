"""Time boxes: a step that may run without end (a regex that backtracks, a validator
that walks a schema exponentially) is stopped after a few CPU seconds.

Python's ``re`` cannot be told how long it may run, but it looks for signals while it
matches; so a step run inside :func:`bounded` under :func:`armed` is interrupted by a
CPU-time timer (``ITIMER_VIRTUAL``: the process's own time, so a busy machine does not
make a step look slow), and raises :class:`OverBudget`. The caller decides what a step
not finished means (the schema diff: a claim it cannot judge, so undecided).

Limits that keep the whole bounded, not only each step: after :data:`OVERRUNS` steps
have run over, every later step under the same :func:`armed` is refused at once; and
:func:`search` remembers, per regex, the shortest text that ran over, so a longer one
is refused without trying.

Signals reach only the main thread, and only where ``setitimer`` exists (POSIX): in
another thread, or on Windows, :func:`armed` arms nothing and steps run unbounded.
An outer CPU-time timer already running is left to run: the steps are then not
bounded here (the outer one bounds them).
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["OVERRUNS", "STEP_SECONDS", "OverBudget", "armed", "bounded", "search"]

#: CPU seconds one step may take.
STEP_SECONDS = 0.5
#: Steps that may run over, per :func:`armed`, before every later one is refused.
OVERRUNS = 8
_OVER = f"took longer than {STEP_SECONDS} CPU seconds"
#: Regexes remembered as slow (the least recently added dropped first).
_SLOW_KEPT = 256


class OverBudget(Exception):
    """A step ran past its time (or would have): what it was is the message."""


class _State:
    armed = False
    running = False
    overruns = 0


#: Per regex, the shortest text a search of it ran over on.
_SLOW: dict[str, int] = {}


def _interrupt(signum: int, frame: Any) -> None:
    if _State.running:
        raise OverBudget("")  # said by the step it stops (see bounded)


def _stop() -> None:
    _State.running = False
    signal.setitimer(signal.ITIMER_VIRTUAL, 0)


@contextmanager
def armed() -> Iterator[bool]:
    """Arms :func:`bounded` for the duration (yields whether it could: the main thread
    of a POSIX process, no other CPU-time timer running). Nested, the outer one holds."""
    usable = (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and not _State.armed
        and signal.getitimer(signal.ITIMER_VIRTUAL)[0] == 0
    )
    if not usable:
        yield _State.armed
        return
    previous = signal.signal(signal.SIGVTALRM, _interrupt)
    _State.armed, _State.overruns = True, 0
    try:
        yield True
    finally:
        _State.armed = _State.running = False
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)


@contextmanager
def bounded(what: str) -> Iterator[None]:
    """Runs the body as one step of at most :data:`STEP_SECONDS` CPU seconds when
    :func:`armed` (inside another step: within that one's time). Raises
    :class:`OverBudget` naming ``what`` when it runs over, or at once when too many
    steps already have."""
    if not _State.armed or _State.running:
        yield
        return
    if _State.overruns >= OVERRUNS:
        raise OverBudget(f"{what}: not tried, {OVERRUNS} steps already ran out of time")
    _State.running = True
    # Again every tenth of a second: a signal raised inside a callback that swallows
    # exceptions (a finalizer) would otherwise be lost.
    signal.setitimer(signal.ITIMER_VIRTUAL, STEP_SECONDS, 0.1)
    try:
        yield
    except OverBudget as error:
        _stop()
        _State.overruns += 1
        # A step inside this one (a search) may have said what ran over.
        raise OverBudget(str(error) or f"{what}: {_OVER}") from None
    finally:
        _stop()


def search(compiled: re.Pattern[str], text: str) -> bool:
    """Whether ``compiled`` finds a match in ``text``, as a bounded step (see
    :func:`bounded`); a regex that ran over on a text is refused at once on any text
    as long or longer (:class:`OverBudget`)."""
    regex = compiled.pattern
    what = f"matching pattern {regex!r} against a string of {len(text)} characters"
    if len(text) >= _SLOW.get(regex, len(text) + 1):
        raise OverBudget(f"{what}: not tried, a shorter one already ran out of time")
    try:
        with bounded(what):
            return compiled.search(text) is not None
    except OverBudget as error:
        if len(_SLOW) >= _SLOW_KEPT and regex not in _SLOW:
            del _SLOW[next(iter(_SLOW))]
        _SLOW[regex] = min(len(text), _SLOW.get(regex, len(text)))
        raise OverBudget(str(error) or f"{what}: {_OVER}") from None
