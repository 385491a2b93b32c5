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
"""

from __future__ import annotations

import importlib
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


class Timer(Protocol):
    """Times a callable; returns latencies in milliseconds, one per quantile asked."""

    settings: TimerSettings

    def time(self, fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
        """Quantiles (in ``settings.quantiles`` order) of ``fn``'s latency, in ms."""


def interpolated(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile of ``values``, linearly interpolated between the sorted values
    (triton.testing's ``_quantile``, numpy's and torch's default)."""
    ordered = sorted(float(v) for v in values)
    point = q * (len(ordered) - 1)
    lower = int(point)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (point - lower)


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
            return tuple(interpolated(times, q) for q in quantiles)
        result = self._bench(fn, grads, quantiles=quantiles)
        values = result if isinstance(result, (list, tuple)) else [result]
        return tuple(float(v) for v in values)


class FakeTimer:
    """The seam's stand-in: calls ``fn`` ``calls`` times and answers fixed latencies.

    ``milliseconds``: one per quantile of ``settings`` (default: 1.0 ms for each), so
    tests know what the record must say. ``calls`` records how often ``fn`` ran.
    """

    def __init__(
        self,
        milliseconds: Sequence[float] | None = None,
        settings: TimerSettings | None = None,
        calls: int = 3,
    ) -> None:
        self.settings = settings or TimerSettings()
        self.milliseconds = tuple(milliseconds or [1.0] * len(self.settings.quantiles))
        self.repeat = calls
        self.calls = 0

    def time(self, fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
        for _ in range(self.repeat):
            fn()
            self.calls += 1
        return self.milliseconds
