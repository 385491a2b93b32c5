"""Timing a callable: ``triton.testing.do_bench``'s settings, the timer, and its seam.

:class:`TimerSettings` is what a BenchmarkProtocol records (warm-up, repetitions,
quantiles, L2 flush, CUDA graphs); :class:`DoBenchTimer` runs triton's timer with
exactly those settings; :class:`Timer` is the seam: anything with ``settings`` and a
``time(fn, grad_to_none)`` returning one latency in milliseconds per quantile can
stand in — :class:`FakeTimer` does, so the recorder, the pytest fixture and ``bench
liger`` are tested on a CPU. triton is imported only when a real timer times.

``do_bench`` (triton 3.x) always flushes the L2 cache before each timed call, by
zeroing a 256 MB buffer; ``do_bench_cudagraph`` captures the calls in a CUDA graph and
never flushes, and has no warm-up argument. So ``cuda_graph=True`` means no flush, and
``flush_l2=False`` without CUDA graphs is a setting do_bench cannot honour: refused,
never recorded as if it were.

:class:`WallClockTimer` is the CPU clock (``time.perf_counter_ns``), calibrated as
pytest-benchmark and pyperf calibrate: a warm-up, then enough calls per sample that one
sample lasts well above the clock's resolution, then a fixed number of samples, the GC
state noted (and, when asked, the GC switched off while timing); its settings are
:class:`WallClockSettings` (protocol ``timer: wall_clock``) and what one timing found
(every sample, the calls per sample, the resolution) is :class:`Sampled`.

Only :class:`DoBenchTimer` and :class:`WallClockTimer` measure: :func:`injected` names
any other timer (a :class:`FakeTimer`, a caller's own), whose records must say so.
"""

from __future__ import annotations

import gc
import importlib
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import attrs

from kernelindex_sdk.base import recordformat

#: Quantiles asked of do_bench by default (Liger's harness's): median, then p20 and p80.
QUANTILES = (0.5, 0.2, 0.8)


@attrs.frozen
class TimerSettings:
    """do_bench's arguments, as the protocol records them."""

    warmup_ms: float = 25.0
    rep_ms: float = 100.0
    quantiles: tuple[float, ...] = QUANTILES
    #: Zero a large buffer before each timed call, so each starts with a cold L2.
    flush_l2: bool = True
    #: Time with ``triton.testing.do_bench_cudagraph`` (no flush, no warm-up setting).
    cuda_graph: bool = False

    def __attrs_post_init__(self) -> None:
        if 0.5 not in self.quantiles:
            raise ValueError("the quantiles must include 0.5: the median is the result")
        if any(not 0.0 <= q <= 1.0 for q in self.quantiles):
            raise ValueError(f"quantiles must lie in [0, 1]: {self.quantiles}")
        if self.cuda_graph and self.flush_l2:
            raise ValueError(
                "do_bench_cudagraph does not flush the L2 cache: use flush_l2=False with "
                "cuda_graph=True"
            )
        if not self.cuda_graph and not self.flush_l2:
            raise ValueError(
                "triton.testing.do_bench always flushes the L2 cache: flush_l2=False is "
                "only possible with cuda_graph=True"
            )

    @property
    def timer(self) -> str:
        """The protocol's ``measurement.timer``."""
        return "cuda_graph" if self.cuda_graph else "cuda_events"

    def measurement(self) -> dict[str, Any]:
        """The protocol's ``measurement``, as these settings time: every protocol of a
        recorder run and of ``bench liger`` states it from here (one definition)."""
        measurement: dict[str, Any] = {
            recordformat.TIMER_KEY: self.timer,
            recordformat.PRIMARY_STATISTIC_KEY: "median",
            recordformat.QUANTILES_KEY: list(self.quantiles),
        }
        if not self.cuda_graph:  # do_bench_cudagraph takes no warm-up
            measurement[recordformat.WARMUP_MS_KEY] = self.warmup_ms
        measurement[recordformat.REPETITION_MS_KEY] = self.rep_ms
        measurement[recordformat.FLUSH_L2_CACHE_KEY] = self.flush_l2
        return measurement

    def described(self) -> str:
        """The call these settings make and how it times, for a protocol's notes."""
        quantiles = "/".join(f"{q:g}" for q in self.quantiles)
        if self.cuda_graph:
            return (
                f"triton.testing.do_bench_cudagraph(rep={self.rep_ms:g}, quantiles "
                f"{quantiles}): the calls captured in a CUDA graph and replayed, the L2 "
                "cache not flushed"
            )
        return (
            f"triton.testing.do_bench(warmup={self.warmup_ms:g}, rep={self.rep_ms:g}, "
            f"quantiles {quantiles}): CUDA events around each call, the L2 cache flushed "
            "before each call by zeroing a large buffer"
        )


#: The clock :class:`WallClockTimer` reads (its name, as protocols record it).
CLOCK = "time.perf_counter_ns"
#: A sample lasts at least this many times the clock's resolution.
RESOLUTION_FACTOR = 1000


@attrs.frozen
class WallClockSettings:
    """How :class:`WallClockTimer` samples, as the protocol records it."""

    #: Calls made (and thrown away) for at least this long before calibrating.
    warmup_ms: float = 10.0
    #: Each sample lasts at least this long (and :data:`RESOLUTION_FACTOR` × the
    #: clock's resolution): the calls per sample are calibrated to it.
    min_sample_ms: float = 1.0
    #: How many samples are kept; the quantiles are over them.
    samples: int = 21
    quantiles: tuple[float, ...] = QUANTILES
    #: Switch the garbage collector off while timing (pytest-benchmark's --benchmark-disable-gc).
    disable_gc: bool = False

    def __attrs_post_init__(self) -> None:
        if 0.5 not in self.quantiles:
            raise ValueError("the quantiles must include 0.5: the median is the result")
        if any(not 0.0 <= q <= 1.0 for q in self.quantiles):
            raise ValueError(f"quantiles must lie in [0, 1]: {self.quantiles}")
        if self.samples < 1 or self.warmup_ms < 0 or self.min_sample_ms <= 0:
            raise ValueError("samples must be >= 1, warmup_ms >= 0 and min_sample_ms > 0")

    @property
    def timer(self) -> str:
        """The protocol's ``measurement.timer``."""
        return "wall_clock"

    def measurement(self) -> dict[str, Any]:
        """The protocol's ``measurement``: the sampling rules; what a run's calibration
        found (calls per sample, resolution) is the run's own, in its sourceNative."""
        return {
            recordformat.TIMER_KEY: self.timer,
            recordformat.PRIMARY_STATISTIC_KEY: "median",
            recordformat.QUANTILES_KEY: list(self.quantiles),
            recordformat.WARMUP_MS_KEY: self.warmup_ms,
            recordformat.REPETITIONS_KEY: self.samples,
            recordformat.HARNESS_SETTINGS_KEY: {
                "clock": CLOCK,
                "minSampleMs": self.min_sample_ms,
                "minSampleResolutions": RESOLUTION_FACTOR,
                "gcDuringTiming": "disabled" if self.disable_gc else "as found",
            },
        }

    def described(self) -> str:
        """How these settings time, for a protocol's notes."""
        gc_text = "the garbage collector off" if self.disable_gc else "the GC left as found"
        return (
            f"{CLOCK} around batches of calls on the host: at least {self.warmup_ms:g} ms "
            f"of warm-up calls, then the calls per sample calibrated so one sample lasts "
            f"at least {self.min_sample_ms:g} ms and {RESOLUTION_FACTOR}x the clock's "
            f"resolution, then {self.samples} samples ({gc_text}); each sample is its "
            "batch's time divided by its calls"
        )


#: What a protocol can be built from: do_bench's settings or the CPU clock's.
Settings = TimerSettings | WallClockSettings


@attrs.frozen
class Sampled:
    """What one :meth:`WallClockTimer.time` found."""

    #: Each sample's time per call, in ns, in the order taken.
    samples_ns: tuple[float, ...]
    calls_per_sample: int
    warmup_calls: int
    resolution_ns: int
    #: Whether the garbage collector was on while the samples were taken.
    gc_enabled: bool


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, linearly interpolated (numpy's default)."""
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def clock_resolution_ns(readings: int = 200) -> int:
    """The smallest step the clock was seen to take (at least 1 ns)."""
    steps = []
    for _ in range(readings):
        start = time.perf_counter_ns()
        now = time.perf_counter_ns()
        while now == start:
            now = time.perf_counter_ns()
        steps.append(now - start)
    return max(1, min(steps))


class WallClockTimer:
    """The CPU clock: :data:`CLOCK` around calibrated batches of calls (the module doc).

    ``grad_to_none``'s ``.grad`` are set to None before each sample (not between the
    calls of one). :attr:`last` keeps what the latest timing found, samples included.
    """

    def __init__(self, settings: WallClockSettings | None = None) -> None:
        self.settings = settings or WallClockSettings()
        self.last: Sampled | None = None

    def time(self, fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
        settings = self.settings
        resolution = clock_resolution_ns()
        warmup_calls = _warm_up(fn, settings.warmup_ms * 1e6)
        target = max(settings.min_sample_ms * 1e6, RESOLUTION_FACTOR * resolution)
        calls = _calibrate(fn, target)
        gc_was = gc.isenabled()
        if settings.disable_gc:
            gc.disable()
        try:
            gc_on = gc.isenabled()
            samples = []
            for _ in range(settings.samples):
                for tensor in grad_to_none:
                    tensor.grad = None
                samples.append(_batch_ns(fn, calls) / calls)
        finally:
            if gc_was:
                gc.enable()
        self.last = Sampled(tuple(samples), calls, warmup_calls, resolution, gc_on)
        ordered = sorted(samples)
        return tuple(quantile(ordered, q) / 1e6 for q in settings.quantiles)


def _batch_ns(fn: Callable[[], object], calls: int) -> int:
    clock = time.perf_counter_ns
    start = clock()
    for _ in range(calls):
        fn()
    return clock() - start


def _warm_up(fn: Callable[[], object], budget_ns: float) -> int:
    """Call ``fn`` until ``budget_ns`` have passed (at least once); how many calls."""
    start, calls = time.perf_counter_ns(), 0
    while True:
        fn()
        calls += 1
        if time.perf_counter_ns() - start >= budget_ns:
            return calls


def _calibrate(fn: Callable[[], object], target_ns: float) -> int:
    """The calls per sample that make a batch last at least ``target_ns``."""
    calls = 1
    while True:
        took = _batch_ns(fn, calls)
        if took >= target_ns:
            return calls
        grow = math.ceil(calls * 1.2 * target_ns / took) if took > 0 else calls * 10
        calls = max(calls + 1, min(grow, calls * 10))


def injected(timer: object) -> str | None:
    """None for a timer kernelindex measures with (:class:`DoBenchTimer`,
    :class:`WallClockTimer`), else the injected timer's qualified class name."""
    kind = type(timer)
    if kind is DoBenchTimer or kind is WallClockTimer:
        return None
    return f"{kind.__module__}.{kind.__qualname__}"


def injected_measurement(settings: Settings, origin: str) -> dict[str, Any]:
    """The protocol ``measurement`` of a run an injected timer (``origin``) timed: the
    settings it claims, with ``timer: unknown`` and, in ``harnessSettings``, the
    injected class and the timer its settings claim (which did not time)."""
    measurement = settings.measurement()
    measurement[recordformat.TIMER_KEY] = "unknown"
    measurement[recordformat.HARNESS_SETTINGS_KEY] = {
        **measurement.get(recordformat.HARNESS_SETTINGS_KEY, {}),
        "injectedTimer": origin[:4096],
        "claimedTimer": settings.timer,
    }
    return measurement


def injected_notes(origin: str, settings: Settings) -> str:
    """What a protocol's notes say of an injected timer."""
    return (
        f"Timed by an injected timer, {origin}, not by kernelindex: its figures are not "
        f"a measurement. Its settings claim {settings.timer}, which did not time."
    )


class Timer(Protocol):
    """Times a callable; returns latencies in milliseconds, one per quantile asked."""

    @property
    def settings(self) -> Settings:
        """What the timer does, as its protocol records it."""

    def time(self, fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
        """Quantiles (in ``settings.quantiles`` order) of ``fn``'s latency, in ms."""


class DoBenchTimer:
    """``triton.testing.do_bench`` (or ``do_bench_cudagraph``) with the settings' quantiles.

    do_bench estimates the callable's time, then runs ``warmup_ms`` worth of warm-up
    calls and ``rep_ms`` worth of timed calls with CUDA events, zeroing a large buffer
    before each timed call (so the L2 cache starts cold) and setting ``.grad`` of every
    tensor in ``grad_to_none`` to None (so gradient accumulation is not timed).

    The timer asks for every sample (``return_mode="all"``) and takes the quantiles
    itself as triton 3's do_bench does (linear interpolation between the sorted
    samples), so :attr:`samples` says how many calls the last quantiles are over; a
    triton that cannot return its samples is asked for the quantiles, and
    :attr:`samples` is None.
    """

    def __init__(self, settings: TimerSettings | None = None) -> None:
        self.settings = settings or TimerSettings()
        #: How many timed samples the last :meth:`time` took its quantiles over.
        self.samples: int | None = None

    def _bench(self, fn: Callable[[], object], grads: list[Any] | None, **how: Any) -> Any:
        testing = importlib.import_module("triton.testing")
        if self.settings.cuda_graph:
            return testing.do_bench_cudagraph(
                fn, rep=self.settings.rep_ms, grad_to_none=grads, **how
            )
        return testing.do_bench(
            fn,
            warmup=self.settings.warmup_ms,
            rep=self.settings.rep_ms,
            grad_to_none=grads,
            **how,
        )

    def time(self, fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
        grads = list(grad_to_none) or None
        quantiles = list(self.settings.quantiles)
        self.samples = None
        try:
            times = self._bench(fn, grads, quantiles=None, return_mode="all")
        except (AssertionError, TypeError):  # a triton without return_mode="all"
            times = None
        if isinstance(times, (list, tuple)) and times:
            self.samples = len(times)
            ordered = sorted(float(v) for v in times)
            return tuple(quantile(ordered, q) for q in quantiles)
        result = self._bench(fn, grads, quantiles=quantiles)
        values = result if isinstance(result, (list, tuple)) else [result]
        return tuple(float(v) for v in values)


class FakeTimer:
    """The seam's stand-in: calls ``fn`` ``calls`` times and answers fixed latencies.

    It measures nothing: a record it times is flagged as injected (:func:`injected`).

        ``milliseconds``: one per quantile of ``settings`` (default: 1.0 ms for each), so
        tests know what the record must say. ``calls`` records how often ``fn`` ran.
    """

    def __init__(
        self,
        milliseconds: Sequence[float] | None = None,
        settings: Settings | None = None,
        calls: int = 3,
    ) -> None:
        self.settings: Settings = settings or TimerSettings()
        self.milliseconds = tuple(milliseconds or [1.0] * len(self.settings.quantiles))
        self.repeat = calls
        self.calls = 0

    def time(self, fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
        for _ in range(self.repeat):
            fn()
            self.calls += 1
        return self.milliseconds
