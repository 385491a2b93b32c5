"""Running a planned sweep: gate, then measure, each provider of each workload.

For every planned item and each of its providers, in order:

1. a provider whose modules are not importable is ``skipped`` (with the module named);
2. a provider that is not itself a reference is run once and checked against the
   reference (:mod:`~bench_adapters.liger_bench.gate`); a mismatch is ``failed``, and
   with no importable reference the run is ``skipped`` — unchecked code is never timed.
   That call is the provider's first at the workload, so it absorbs Triton's JIT and
   ``torch.compile`` (tens of seconds for the distillation loss): its wall time is
   recorded apart, as ``first_call_ms``, and never reaches ``do_bench``'s estimate;
3. the pass is timed (:class:`~bench_adapters.liger_bench.probes.Timer`) or its peak
   memory measured (:class:`~bench_adapters.liger_bench.probes.MemoryProbe`).

Out-of-memory anywhere becomes ``oom`` and any other exception ``failed``, each with
the stage and the error as the reason, and the sweep goes on with the next run. Every
machine-facing piece — device, kernels, timer, memory probe, clock — is passed in
(:class:`Tools`), so this loop is tested on a CPU.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from typing import Any, Protocol

import attrs

from bench_adapters.liger_bench import gate
from bench_adapters.liger_bench.catalog import BenchKernel, Tolerance
from bench_adapters.liger_bench.plan import PlannedItem, Workload
from bench_adapters.liger_bench.probes import Device, MemoryProbe, Timer, quantile

#: Statistics a run carries, and the quantile each one is.
STATISTICS = (("p20", 0.2), ("median", 0.5), ("p80", 0.8))
#: ``sourceNative.metrics`` name of the correctness-check call's wall time, in ms.
FIRST_CALL = "first_call_ms"


class Prepared(Protocol):
    """One provider set up at one workload: inputs built, module ready."""

    def results(self) -> gate.Results:
        """Run the pass once; the named outputs (and gradients) to check.

        Returns once the device has finished, so a wall clock around it times the call.
        """

    def timed(self) -> tuple[Callable[[], object], Sequence[Any]]:
        """The callable to measure, and the tensors whose ``.grad`` is reset between calls."""


class Backend(Protocol):
    """Builds providers' inputs and modules, and compares their results."""

    def missing(self, kernel: BenchKernel, provider: str) -> str | None:
        """Why ``provider`` cannot run here (a module not installed), or None."""

    def prepare(self, workload: Workload, provider: str, seed: int) -> Prepared:
        """Set ``provider`` up at ``workload``; one ``seed`` gives all providers the same inputs."""

    def compare(self, actual: Any, expected: Any, tolerance: Tolerance) -> str | None:
        """None when ``actual`` is within ``tolerance`` of ``expected``, else what differs."""


def utc_now() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(timezone.utc)


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


class _Stage(Exception):
    """An exception raised while doing ``stage``, carried to the outcome's reason."""

    def __init__(self, stage: str, error: BaseException) -> None:
        super().__init__(stage)
        self.stage = stage
        self.error = error


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
            return self._outcome(item, provider, "skipped", f"{provider} cannot run: {missing}")
        reference: str | None = None
        if kernel.gated(provider):
            reference, why_not = self._choose_reference(kernel)
            if reference is None:
                return self._outcome(item, provider, "skipped", why_not)
        first_call: dict[str, float] = {}
        try:
            verdict, values, native = self._gate_and_measure(item, provider, reference, first_call)
        except _Stage as failure:
            error = failure.error
            if isinstance(error, ImportError):
                status, what = "skipped", "cannot import"
            elif self.tools.device.is_out_of_memory(error):
                status, what = "oom", "out of memory"
            else:
                status, what = "failed", "error"
            reason = f"{what} while {failure.stage}: {_describe(error)}"
            return self._outcome(
                item, provider, status, reason, None, first_call, checked_against=reference
            )
        finally:
            self._release()
        if verdict is not None:
            return self._outcome(
                item, provider, "failed", verdict, None, first_call, checked_against=reference
            )
        return self._outcome(
            item,
            provider,
            "passed",
            None,
            values,
            {**native, **first_call},
            checked_against=reference,
        )

    def _gate_and_measure(
        self,
        item: PlannedItem,
        provider: str,
        reference: str | None,
        first_call: dict[str, float],
    ) -> tuple[str | None, tuple[int, int, int] | None, dict[str, float]]:
        """(gate verdict, values, native); raises :class:`_Stage` on any error.

        A method of its own so every tensor it made is released when it returns. The
        correctness-check call's wall time goes into ``first_call`` as soon as it is
        known, so a run that fails later still records it.
        """
        backend, workload = self.tools.backend, item.workload
        if reference is not None:
            expected = self._reference_results(workload, reference)
        prepared = _stage(f"setting up {provider}", backend.prepare, workload, provider, self.seed)
        if reference is not None:
            started = self.tools.stopwatch()
            actual = _stage(f"running {provider} for the correctness check", prepared.results)
            first_call[FIRST_CALL] = round((self.tools.stopwatch() - started) * 1000, 3)
            verdict = gate.check(
                actual,
                expected,
                workload.kernel.tolerance(workload.shape.dtype),
                backend.compare,
                provider=provider,
                reference=reference,
            )
            del actual
            if verdict is not None:
                return verdict, None, {}
        fn, grads = _stage("preparing the timed call", prepared.timed)
        if item.metric == "speed":
            ms = _stage("timing", self.tools.timer.time, fn, grads)
            values, native = self._speed(ms)
        else:
            peaks = _stage("measuring peak memory", self.tools.memory.peaks, fn)
            values, native = _memory(peaks)
        return None, values, native

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
        prepared = _stage(
            f"setting up the {reference} reference",
            self.tools.backend.prepare,
            workload,
            reference,
            self.seed,
        )
        try:
            results: gate.Results = _stage(f"computing the {reference} reference", prepared.results)
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

    def _speed(self, ms: Sequence[float]) -> tuple[tuple[int, int, int], dict[str, float]]:
        quantiles = self.tools.timer.settings.quantiles
        if len(ms) != len(quantiles):
            raise _Stage("timing", ValueError(f"timer returned {len(ms)} values"))
        by_q = dict(zip(quantiles, ms, strict=True))
        native = {f"ms_{round(q * 100)}": float(by_q[q]) for _, q in STATISTICS}
        values = tuple(round(by_q[q] * 1_000_000) for _, q in STATISTICS)
        return (values[0], values[1], values[2]), native

    def _outcome(
        self,
        item: PlannedItem,
        provider: str,
        status: str,
        reason: str | None,
        values: tuple[int, int, int] | None = None,
        native: dict[str, float] | None = None,
        *,
        checked_against: str | None = None,
    ) -> Outcome:
        moment = self.tools.clock().astimezone(timezone.utc)
        observed = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
        return Outcome(
            item=item,
            provider=provider,
            status=status,
            reason=reason,
            values=values,
            native=native or {},
            observed_at=observed,
            checked_against=checked_against,
        )


def _memory(peaks: Sequence[int]) -> tuple[tuple[int, int, int], dict[str, float]]:
    if not peaks:
        raise _Stage("measuring peak memory", ValueError("the memory probe returned no peaks"))
    floats = [float(p) for p in peaks]
    by_q = {q: quantile(floats, q) for _, q in STATISTICS}
    values = tuple(round(by_q[q]) for _, q in STATISTICS)
    native = {f"bytes_{round(q * 100)}": by_q[q] for _, q in STATISTICS}
    return (values[0], values[1], values[2]), native


def _stage(stage: str, fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except (KeyboardInterrupt, SystemExit):
        raise
    except _Stage:
        raise
    except Exception as error:
        raise _Stage(stage, error) from error


def _describe(error: BaseException) -> str:
    text = " ".join(str(error).split()) or "(no message)"
    if len(text) > 600:
        text = text[:600] + "…"
    return f"{type(error).__name__}: {text}"


def _workload_key(workload: Workload, reference: str) -> str:
    return json.dumps(
        [workload.kernel.name, workload.pass_, workload.x_value, dict(workload.config), reference],
        sort_keys=True,
        default=str,
    )
