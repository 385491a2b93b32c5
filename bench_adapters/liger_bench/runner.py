"""Running a planned sweep: gate, then measure, each provider of each workload.

For every planned item and each of its providers, in order:

1. a provider whose modules are not importable is ``skipped`` (with the module named);
2. a provider that is checked needs an importable reference, else the run is
   ``skipped`` — unchecked code is never timed;
3. the run is measured through the recorder's one measuring sequence
   (:func:`bench_adapters.recording.measure.measure`, the one ``record()`` uses), with
   this adapter's steps as its inputs: *setup* computes the reference's results (once
   per workload) and builds the provider's inputs and modules; the *first call* runs
   the provider's pass once (a checked provider only), absorbing Triton's JIT and
   ``torch.compile``, its wall time recorded apart as ``first_call_ms``; the *check* is
   :mod:`~bench_adapters.liger_bench.gate` against the reference (a mismatch is
   ``failed``, never measured); the pass is then timed
   (:class:`~bench_adapters.recording.timing.Timer`) or its peak memory measured
   (:class:`~bench_adapters.liger_bench.probes.MemoryProbe`).

What is timed is the pass's call in the sweep's call style
(:mod:`~bench_adapters.liger_bench.calls`: Liger's own script's call by default), with
that style's do_bench warm-up and rep unless the sweep fixed them. Beside a latency the
run also records the GPU's time alone (``Tools.gpu_timer``, a CUDA graph replay: a run
whose median is over twice it is flagged ``host-bound``,
:mod:`~bench_adapters.recording.hostbound`), the number of samples behind the
quantiles where the timer says, what NVML observed while it was timed
(:mod:`~bench_adapters.recording.observe`), and the correctness gate's tolerance and
the largest error it saw.

Out of memory anywhere is ``oom``, a module that fails to import only while set up
``skipped``, any other exception ``failed``, each with the stage and the error as the
reason, and the sweep goes on with the next run. Every machine-facing piece — device,
kernels, timer, memory probe, clock — is passed in (:class:`Tools`), so this loop is
tested on a CPU.
"""

from __future__ import annotations

import contextlib
import copy
import json
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol

import attrs

from bench_adapters.liger_bench import gate
from bench_adapters.liger_bench.calls import UPSTREAM, TimedCall, timed_call
from bench_adapters.liger_bench.catalog import BenchKernel, CallSpec, Tolerance
from bench_adapters.liger_bench.plan import PlannedItem, Workload
from bench_adapters.liger_bench.probes import Device, MemoryProbe, Timer, TimerSettings, quantile
from bench_adapters.recording import hostbound
from bench_adapters.recording.measure import (
    Measured,
    Step,
    measure,
    observed_at,
    stage,
    timing,
    utc_now,
)
from bench_adapters.recording.observe import Monitor, Watch

#: Statistics a run carries, and the quantile each one is.
STATISTICS = (("p20", 0.2), ("median", 0.5), ("p80", 0.8))


class Prepared(Protocol):
    """One provider set up at one workload: inputs built, module ready."""

    def results(self) -> gate.Results:
        """Run the pass once; the named outputs (and gradients) to check.

        Returns once the device has finished, so a wall clock around it times the call.
        """

    def timed(self, call: CallSpec | None = None) -> tuple[Callable[[], object], Sequence[Any]]:
        """The callable ``call`` makes (None: the ``kernelindex`` style's), and the
        tensors whose ``.grad`` is reset between calls."""


class Backend(Protocol):
    """Builds providers' inputs and modules, and compares their results."""

    def missing(self, kernel: BenchKernel, provider: str) -> str | None:
        """Why ``provider`` cannot run here (a module not installed), or None."""

    def prepare(self, workload: Workload, provider: str, seed: int) -> Prepared:
        """Set ``provider`` up at ``workload``; one ``seed`` gives all providers the same inputs."""

    def compare(self, actual: Any, expected: Any, tolerance: Tolerance) -> str | None:
        """None when ``actual`` is within ``tolerance`` of ``expected``, else what differs."""

    def worst(self, actual: Any, expected: Any, tolerance: Tolerance) -> tuple[float, float]:
        """The largest ``|actual − expected|`` and the largest ratio of it to what
        ``tolerance`` allows there (at most 1 within tolerance); (0, 0) for nothing."""


@attrs.define
class Tools:
    """Everything a sweep touches outside Python: injected, so tests can stand in."""

    device: Device
    backend: Backend
    timer: Timer
    memory: MemoryProbe
    clock: Callable[[], datetime] = utc_now
    seed: int = 0
    #: Seconds, monotonic: the wall time of a provider's first (correctness-check) call.
    stopwatch: Callable[[], float] = time.perf_counter
    #: Whose call is timed (:mod:`~bench_adapters.liger_bench.calls`): ``upstream`` or
    #: ``kernelindex``.
    call_style: str = UPSTREAM
    #: The timer's warm-up and rep were asked for: the call style does not replace them.
    fixed_timing: bool = False
    #: Times the GPU alone beside each latency (a CUDA graph replay); None: not measured.
    gpu_timer: Timer | None = None
    #: Samples the device while a run is timed; None: nothing observed.
    monitor: Monitor | None = None
    #: Seconds between the monitor's samples while timing (0: at start and end only).
    monitor_interval: float = 0.1


@attrs.frozen
class Outcome:
    """One provider's run of one planned item: what happened and what was measured."""

    item: PlannedItem
    provider: str
    status: str
    #: Why a run did not pass; None when it passed.
    reason: str | None
    #: (p20, median, p80) in ns (speed) or bytes (memory) when passed.
    values: tuple[int, int, int] | None
    #: The measurement as the harness produced it (do_bench's ms; peak bytes), and
    #: ``first_call_ms``, the wall time of the correctness-check call, where one ran.
    native: dict[str, float]
    #: RFC 3339 UTC, milliseconds: when the run finished.
    observed_at: str
    #: The reference the provider was checked against (None: a reference itself).
    checked_against: str | None = None
    #: The call timed (or measured), and the timer's settings for it (speed runs).
    call: TimedCall | None = None
    timer: TimerSettings | None = None
    #: How many samples the quantiles are over, where the timer says.
    samples: int | None = None
    #: Quality flags the measurement raised (``host-bound``, ``gpu-only-unmeasured``).
    flags: tuple[str, ...] = ()


class _Trial:
    """One provider's run of one item, as the measuring sequence's steps.

    Holds the prepared provider and the reference's results between the steps; they
    go with it when the run ends, so every tensor it made can be released.
    """

    def __init__(
        self, runner: Runner, item: PlannedItem, provider: str, reference: str | None
    ) -> None:
        self.runner = runner
        self.item = item
        self.provider = provider
        self.reference = reference
        self.expected: gate.Results = ()
        self.prepared: Prepared | None = None
        tools, workload = runner.tools, item.workload
        self.call = timed_call(workload.kernel, workload.pass_, tools.call_style)
        self.timer = _timer_for(tools, self.call)
        #: sourceNative metrics beside the measurement (gate, GPU-only, NVML).
        self.extra: dict[str, float] = {}
        self.flags: list[str] = []
        self.samples: int | None = None

    def setup(self) -> None:
        """The reference's results (for the check), then the provider set up (a failure
        of the reference names its own stage)."""
        workload, tools = self.item.workload, self.runner.tools
        if self.reference is not None:
            self.expected = self.runner._reference_results(workload, self.reference)
        self.prepared = tools.backend.prepare(workload, self.provider, tools.seed)

    def results(self) -> gate.Results:
        assert self.prepared is not None
        return self.prepared.results()

    def check(self, actual: gate.Results) -> str | None:
        assert self.reference is not None
        workload = self.item.workload
        tolerance = workload.kernel.tolerance(workload.shape.dtype)
        backend = self.runner.tools.backend
        verdict = gate.check(
            actual,
            self.expected,
            tolerance,
            backend.compare,
            provider=self.provider,
            reference=self.reference,
        )
        self.extra.update(gate.errors(actual, self.expected, tolerance, backend.worst))
        return verdict

    def timed(self) -> tuple[Callable[[], object], Sequence[Any]]:
        assert self.prepared is not None
        return self.prepared.timed(self.call.spec)

    def time(self, fn: Callable[[], object], grad_to_none: Sequence[Any]) -> tuple[float, ...]:
        """The latency quantiles, with what the device did meanwhile; then the GPU alone."""
        tools = self.runner.tools
        step = timing(self.timer)
        if tools.monitor is None:
            ms = tuple(step.fn(fn, grad_to_none))
        else:
            with Watch(tools.monitor, tools.monitor_interval) as watch:
                ms = tuple(step.fn(fn, grad_to_none))
            self.extra.update(watch.summary())
        self.samples = getattr(self.timer, "samples", None)
        if tools.gpu_timer is not None:
            median = dict(zip(self.timer.settings.quantiles, ms, strict=True))[0.5]
            self._gpu_only(tools.gpu_timer, fn, grad_to_none, median)
        return ms

    def _gpu_only(
        self, timer: Timer, fn: Callable[[], object], grads: Sequence[Any], median: float
    ) -> None:
        """The GPU's own time of ``fn`` (a CUDA graph replay) and the host-bound flag;
        a graph that cannot be captured flags the run instead of failing it."""
        try:
            ms = tuple(timer.time(fn, list(grads)))
            by_q = dict(zip(timer.settings.quantiles, ms, strict=True))
        except Exception:
            self.flags.append(hostbound.GPU_ONLY_UNMEASURED)
            return
        for q, value in sorted(by_q.items()):
            self.extra[f"{hostbound.GPU_ONLY_PREFIX}{round(q * 100)}"] = float(value)
        samples = getattr(timer, "samples", None)
        if samples:
            self.extra[hostbound.GPU_ONLY_SAMPLES] = samples
        if hostbound.is_host_bound(median, by_q[0.5]):
            self.flags.append(hostbound.HOST_BOUND)

    def measured(self) -> Measured:
        tools, gated = self.runner.tools, self.reference is not None
        if self.item.metric == "speed":
            measuring = Step("timing", self.time)
        else:
            measuring = Step("measuring peak memory", lambda fn, grads: _peaks(tools.memory, fn))
        return measure(
            Step("preparing the timed call", self.timed),
            measuring,
            setup=Step(f"setting up {self.provider}", self.setup),
            first_call=(
                Step(f"running {self.provider} for the correctness check", self.results)
                if gated
                else None
            ),
            check=Step("checking against the reference", self.check) if gated else None,
            keep_output=False,  # the peak-memory probe must not count the checked results
            skip_import_errors=True,
            is_oom=tools.device.is_out_of_memory,
            clock=tools.clock,
            stopwatch=tools.stopwatch,
        )


class Runner:
    """Runs planned items with the given tools; keeps one workload's reference results."""

    def __init__(self, tools: Tools) -> None:
        self.tools = tools
        self._reference_key: str | None = None
        self._reference: tuple[str, gate.Results] | None = None

    def run(
        self,
        items: Iterable[PlannedItem],
        on_outcome: Callable[[Outcome], None] = lambda outcome: None,
    ) -> list[Outcome]:
        """Every provider of every item, in order; ``on_outcome`` sees each as it ends."""
        outcomes = []
        for item in items:
            for provider in item.providers:
                outcome = self.run_one(item, provider)
                outcomes.append(outcome)
                on_outcome(outcome)
        self._forget_reference()
        return outcomes

    def run_one(self, item: PlannedItem, provider: str) -> Outcome:
        """One provider's run of ``item``; never raises for a failure of the run itself."""
        kernel = item.workload.kernel
        missing = self.tools.backend.missing(kernel, provider)
        if missing is not None:
            return self._skipped(item, provider, f"{provider} cannot run: {missing}")
        reference: str | None = None
        if kernel.gated(provider):
            reference, why_not = self._choose_reference(kernel)
            if reference is None:
                return self._skipped(item, provider, why_not)
        trial = _Trial(self, item, provider, reference)
        try:
            measured = trial.measured()
        finally:
            self._release()
        values, native = None, {**measured.native, **trial.extra}
        passed = measured.status == "passed" and measured.values is not None
        if passed and measured.values is not None:
            if item.metric == "speed":
                values, quantiles = _speed(do_bench_settings(trial.timer), measured.values)
            else:
                values, quantiles = _memory(measured.values)
            native = {**quantiles, **native}
        return Outcome(
            item=item,
            provider=provider,
            status=measured.status,
            reason=measured.reason,
            values=values,
            native=native,
            observed_at=measured.observed_at,
            checked_against=reference,
            call=trial.call,
            timer=do_bench_settings(trial.timer) if item.metric == "speed" else None,
            samples=trial.samples if passed else None,
            flags=tuple(trial.flags) if passed else (),
        )

    @property
    def seed(self) -> int:
        return self.tools.seed

    def _choose_reference(self, kernel: BenchKernel) -> tuple[str | None, str]:
        """The first importable reference, or None and why none is."""
        reasons = []
        for reference in kernel.references:
            missing = self.tools.backend.missing(kernel, reference)
            if missing is None:
                return reference, ""
            reasons.append(f"{reference}: {missing}")
        return None, (
            "no reference to check correctness against, so not timed (" + "; ".join(reasons) + ")"
        )

    def _reference_results(self, workload: Workload, reference: str) -> gate.Results:
        key = _workload_key(workload, reference)
        if self._reference_key == key and self._reference is not None:
            return self._reference[1]
        self._forget_reference()
        prepared = stage(
            f"setting up the {reference} reference",
            self.tools.backend.prepare,
            workload,
            reference,
            self.seed,
        )
        try:
            results: gate.Results = stage(f"computing the {reference} reference", prepared.results)
        finally:
            del prepared
        self._reference_key, self._reference = key, (reference, results)
        return results

    def _forget_reference(self) -> None:
        if self._reference is not None:
            self._reference_key, self._reference = None, None
            self._release()

    def _release(self) -> None:
        # Releasing is a courtesy; a failure here must not end the sweep.
        with contextlib.suppress(Exception):
            self.tools.device.release()

    def _skipped(self, item: PlannedItem, provider: str, reason: str) -> Outcome:
        return Outcome(
            item=item,
            provider=provider,
            status="skipped",
            reason=reason,
            values=None,
            native={},
            observed_at=observed_at(self.tools.clock),
        )


def _speed(
    settings: TimerSettings, ms: Sequence[float]
) -> tuple[tuple[int, int, int], dict[str, float]]:
    """(p20, median, p80) in ns, and do_bench's ms as they came (``ms_20`` …)."""
    by_q = dict(zip(settings.quantiles, ms, strict=True))
    native = {f"ms_{round(q * 100)}": float(by_q[q]) for _, q in STATISTICS}
    values = tuple(round(by_q[q] * 1_000_000) for _, q in STATISTICS)
    return (values[0], values[1], values[2]), native


def _timer_for(tools: Tools, call: TimedCall) -> Timer:
    """The sweep's timer, with the call style's warm-up and rep unless the sweep fixed
    them (a shallow copy with those settings: the sweep's timer itself is unchanged)."""
    base = do_bench_settings(tools.timer)
    if tools.fixed_timing or call.rep_ms is None or base.cuda_graph:
        return tools.timer
    settings = attrs.evolve(
        base,
        warmup_ms=call.warmup_ms if call.warmup_ms is not None else base.warmup_ms,
        rep_ms=call.rep_ms,
    )
    if settings == base:
        return tools.timer
    timer = copy.copy(tools.timer)
    # Every timer bench liger holds keeps its settings in a plain attribute (the Timer
    # protocol only promises to read them).
    vars(timer)["settings"] = settings
    return timer


def do_bench_settings(timer: Timer) -> TimerSettings:
    """The do_bench settings a bench liger timer states (an injected one claims them)."""
    settings = timer.settings
    if not isinstance(settings, TimerSettings):
        raise TypeError(f"bench liger times with do_bench's settings, not {settings!r}")
    return settings


def _peaks(memory: MemoryProbe, fn: Callable[[], object]) -> list[int]:
    peaks = memory.peaks(fn)
    if not peaks:
        raise ValueError("the memory probe returned no peaks")
    return peaks


def _memory(peaks: Sequence[float]) -> tuple[tuple[int, int, int], dict[str, float]]:
    """(p20, median, p80) of the peaks in bytes, interpolated as ``torch.quantile``."""
    floats = [float(p) for p in peaks]
    by_q = {q: quantile(floats, q) for _, q in STATISTICS}
    values = tuple(round(by_q[q]) for _, q in STATISTICS)
    native = {f"bytes_{round(q * 100)}": by_q[q] for _, q in STATISTICS}
    return (values[0], values[1], values[2]), native


def _workload_key(workload: Workload, reference: str) -> str:
    return json.dumps(
        [workload.kernel.name, workload.pass_, workload.x_value, dict(workload.config), reference],
        sort_keys=True,
        default=str,
    )
