"""One measurement, checked before it is timed: the sequence every recorder run follows.

:func:`~bench_adapters.recording.recorder.record` and ``kernelindex bench liger``'s
sweep (:mod:`bench_adapters.liger_bench.runner`) both measure through :func:`measure`,
so the rules below have one implementation:

1. ``setup`` (optional) builds what is measured;
2. ``first_call`` (optional) runs once, the device synchronized around it: it absorbs
   Triton's JIT and any ``torch.compile``, so its wall time is kept apart
   (:data:`FIRST_CALL`, in ms) and never reaches the timer's estimate;
3. ``check`` (optional) judges that call's output: a verdict (the reason) is a
   ``failed`` run and **nothing is measured**;
4. ``timed`` gives the callable measured and the tensors whose ``.grad`` is reset
   between calls; ``measure`` measures it (a timer's latency quantiles, see
   :func:`timing`, or a memory probe's peaks).

Each step is a :class:`Step`: a callable and the stage a failure of it is reported in
(``error while timing: ValueError: …``). An error anywhere ends the measurement: out
of memory is status ``oom``, an ``ImportError`` ``skipped`` where the caller says so,
anything else ``failed``; the first call's wall time is kept whatever happens after it.
What the steps are (a user's callable, a Liger pass) and which records the result
becomes are the caller's.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

import attrs

from bench_adapters.recording.timing import Timer

#: ``sourceNative.metrics`` name of the first call's wall time, in ms.
FIRST_CALL = "first_call_ms"
#: The longest error text a reason quotes (one readable line; the run caps the reason too).
ERROR_TEXT_LIMIT = 600


def utc_now() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(timezone.utc)


def observed_at(clock: Callable[[], datetime] = utc_now) -> str:
    """The clock's reading as a run's ``observedAt``: RFC 3339 UTC, milliseconds."""
    moment = clock().astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` means the device ran out of memory (torch's type, or its text).

    Some CUDA paths (cuBLAS workspaces, Triton launches) raise a plain RuntimeError
    whose text is the only sign. Triton's OutOfResources (shared memory, registers) is
    a kernel configuration failure, not the device running out: not matched.
    """
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        torch = None
    if torch is not None:
        oom = getattr(torch.cuda, "OutOfMemoryError", None) or getattr(
            torch, "OutOfMemoryError", None
        )
        if oom is not None and isinstance(error, oom):
            return True
    return isinstance(error, MemoryError) or "out of memory" in str(error).lower()


def synchronize() -> None:
    """Wait for the CUDA device, when torch and CUDA are there (else nothing to wait for)."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


class StageError(Exception):
    """An error raised while doing ``stage``: carried to the run's reason."""

    def __init__(self, stage: str, error: BaseException) -> None:
        super().__init__(stage)
        self.stage = stage
        self.error = error


def stage(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, an error in it becoming :class:`StageError` ``name``.

    An error already named by an inner :func:`stage` keeps its name, so a step can
    report its own parts (``computing the torch reference``) more precisely.
    """
    try:
        return fn(*args)
    except (KeyboardInterrupt, SystemExit, StageError):
        raise
    except Exception as error:
        raise StageError(name, error) from error


def describe_error(error: BaseException) -> str:
    """``Type: text`` on one line, the text cut at :data:`ERROR_TEXT_LIMIT` characters."""
    text = " ".join(str(error).split()) or "(no message)"
    if len(text) > ERROR_TEXT_LIMIT:
        text = text[:ERROR_TEXT_LIMIT] + "…"
    return f"{type(error).__name__}: {text}"


@attrs.frozen
class Step:
    """A callable of a measurement, and the stage its failure is reported in."""

    stage: str
    fn: Callable[..., Any]


@attrs.frozen
class Measured:
    """What :func:`measure` came to."""

    #: passed | failed | oom | skipped
    status: str
    #: Why it did not pass (the check's verdict, or the stage and the error); None if passed.
    reason: str | None
    #: What ``measure`` returned (passed only): the timer's ms, or the probe's peaks.
    values: tuple[float, ...] | None
    #: :data:`FIRST_CALL` where the first call ran to its end.
    native: dict[str, float]
    #: :func:`observed_at` when the measurement ended.
    observed_at: str
    #: What the first call returned (None without one, or unless kept).
    output: Any = None


def timing(timer: Timer) -> Step:
    """The measuring step of a timer (do_bench or one injected through the seam): one
    latency in ms per quantile of its settings, or the stage ``timing`` fails."""

    def time_it(fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
        ms = tuple(timer.time(fn, list(grad_to_none)))
        if len(ms) != len(timer.settings.quantiles):
            raise ValueError(f"timer returned {len(ms)} values")
        return ms

    return Step("timing", time_it)


def measure(
    timed: Step,
    measuring: Step,
    *,
    setup: Step | None = None,
    first_call: Step | None = None,
    check: Step | None = None,
    keep_output: bool = True,
    skip_import_errors: bool = False,
    is_oom: Callable[[BaseException], bool] = is_out_of_memory,
    clock: Callable[[], datetime] = utc_now,
    stopwatch: Callable[[], float] = time.perf_counter,
) -> Measured:
    """Set up, call once, check, then measure (the module doc); never raises for a
    failure of the run itself.

    ``check.fn(output)`` returns None when the first call's output is right, else the
    reason the run failed. ``keep_output=False`` drops that output before measuring (a
    peak-memory probe must not see it). ``skip_import_errors``: an ``ImportError`` is
    status ``skipped`` (``cannot import while …``), a module that fails only when used.
    ``is_oom`` says which errors are the device running out of memory.
    """
    if check is not None and first_call is None:
        raise ValueError("a check judges the first call's output: give first_call too")
    native: dict[str, float] = {}
    output: Any = None
    values: tuple[float, ...] | None = None
    status, reason = "passed", None
    try:
        if setup is not None:
            stage(setup.stage, setup.fn)
        if first_call is not None:
            stage("synchronizing before the first call", synchronize)
            started = stopwatch()
            output = stage(first_call.stage, first_call.fn)
            stage("synchronizing after the first call", synchronize)
            native[FIRST_CALL] = round((stopwatch() - started) * 1000, 3)
        verdict = None if check is None else stage(check.stage, check.fn, output)
        if not keep_output:
            output = None
        if verdict is not None:
            status, reason = "failed", str(verdict)
        else:
            fn, grad_to_none = stage(timed.stage, timed.fn)
            values = tuple(stage(measuring.stage, measuring.fn, fn, grad_to_none))
    except StageError as failure:
        error = failure.error
        if skip_import_errors and isinstance(error, ImportError):
            status, what = "skipped", "cannot import"
        elif is_oom(error):
            status, what = "oom", "out of memory"
        else:
            status, what = "failed", "error"
        reason = f"{what} while {failure.stage}: {describe_error(error)}"
    return Measured(
        status=status,
        reason=reason,
        values=values,
        native=native,
        observed_at=observed_at(clock),
        output=output if keep_output else None,
    )
