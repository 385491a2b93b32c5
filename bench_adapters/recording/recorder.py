"""``record(fn, *args, ...)``: time any callable with do_bench and return a linked bundle.

The measuring is :func:`~bench_adapters.recording.measure.measure`'s — the one sequence
``kernelindex bench liger`` measures through too: ``fn(*args, **kwargs)`` runs once,
the device synchronized around it (its wall time, JIT and compiling included, is kept
apart as ``sourceNative.metrics.first_call_ms``); with a ``reference`` (a callable
taking the same arguments, or the expected value) that output is compared with the
reference's (``torch.testing.assert_close``, or ``==`` for what is not a tensor) and a
mismatch is a ``failed`` run, never timed; then the timer
(:mod:`~bench_adapters.recording.timing`: do_bench unless one is injected) measures the
quantiles the protocol asks for. Out of memory anywhere is status ``oom``; any other
error ``failed``; each with the stage and the error as the reason.

This module adds the records: the run, the protocol (from the timer's settings), the
workload and implementation as given (see :mod:`~bench_adapters.recording.describe` for
helpers that build them) and the environment (:mod:`~bench_adapters.recording.environment`'s
probe, unless given), linked by :func:`link` — which, with :func:`unfinished_run`, also
assembles ``bench liger``'s bundles.
"""

from __future__ import annotations

import importlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from bench_adapters.common.names import record_name
from bench_adapters.common.records import protocol_record as protocol_envelope
from bench_adapters.common.records import run_envelope
from bench_adapters.recording import environment as env
from bench_adapters.recording.measure import Measured, Step, measure, stage, timing, utc_now
from bench_adapters.recording.timing import (
    DoBenchTimer,
    Sampled,
    Settings,
    Timer,
    TimerSettings,
    WallClockSettings,
    WallClockTimer,
    injected,
    injected_measurement,
    injected_notes,
    quantile,
)
from kernelindex_sdk import models as m
from kernelindex_sdk.base import recordformat
from kernelindex_sdk.canonical import digest
from kernelindex_sdk.models.v1alpha1 import Statistic

#: ``sourceNative.source`` of every run the recorder makes.
SOURCE = "kernelindex-record"
#: The harness every protocol names.
HARNESS = "kernelindex record"
#: The longest reason a run carries (the schema's text limit).
REASON_LIMIT = 4096
#: Quantile statistics the format names (common.schema.json#/$defs/statistic).
_STATISTICS: dict[float, Statistic] = {
    0.5: "median",
    0.05: "p5",
    0.1: "p10",
    0.2: "p20",
    0.25: "p25",
    0.75: "p75",
    0.8: "p80",
    0.9: "p90",
    0.95: "p95",
    0.99: "p99",
    0.0: "min",
    1.0: "max",
}

Compare = Callable[[Any, Any], "str | None"]
#: The protocol, workload, environment and implementation digests a run references.
Refs = tuple[str, str, str, str]


@attrs.frozen
class Recording:
    """What :func:`record` measured: the bundle, and the run's status for the caller."""

    #: ``{run, protocol, workload, environment, implementation}``, linked by digest.
    bundle: dict[str, Any]
    status: str
    reason: str | None
    #: What the first call of ``fn`` returned (None when it did not return).
    output: Any = None
    #: The timer's latencies in ms, in the protocol's quantile order (None unless passed).
    milliseconds: tuple[float, ...] | None = None
    #: The protocol's ``measurement.timer`` (``unknown`` for an injected timer).
    timer: str = "unknown"
    #: The injected timer's class, where one timed (its records are flagged).
    injected: str | None = None
    #: What the CPU clock found (every sample), where it timed and the run passed.
    sampled: Sampled | None = None


def compare_outputs(actual: Any, expected: Any) -> str | None:
    """None when ``actual`` matches ``expected``, else what differs (one line).

    Tensors (anything with ``shape`` and ``dtype``), and tuples or lists of them, are
    compared by ``torch.testing.assert_close`` with its per-dtype tolerances; other
    values with ``==``.
    """
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            return f"expected {len(expected)} outputs, got {_kind(actual)}"
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            verdict = compare_outputs(a, e)
            if verdict is not None:
                return f"output {index}: {verdict}"
        return None
    if hasattr(expected, "shape") and hasattr(expected, "dtype"):
        testing = importlib.import_module("torch.testing")
        try:
            testing.assert_close(actual, expected)
        except AssertionError as error:
            return " ".join(str(error).split())
        return None
    return None if actual == expected else f"{actual!r} != reference {expected!r}"[:1000]


def _kind(value: Any) -> str:
    return f"{len(value)} outputs" if isinstance(value, (tuple, list)) else type(value).__name__


def protocol_record(
    settings: Settings, version: str, notes: str | None = None, injected: str | None = None
) -> dict[str, Any]:
    """The protocol of a recorder run: the timer's settings as they were used.

    ``injected``: the class of a timer injected through the seam. Its protocol says
    ``timer: unknown`` and names the class and the timer its settings claim, so that
    nothing it timed reads as a do_bench or wall-clock measurement.
    """
    measurement = settings.measurement()
    timer = settings.timer
    if isinstance(settings, WallClockSettings):
        name = "kernelindex-record-wall-clock"
        how = f"Timed by {settings.described()}."
    else:
        name = "kernelindex-record-do-bench" + ("-cudagraph" if settings.cuda_graph else "")
        how = (
            f"Timed by {settings.described()}; the number of calls follows from the "
            "estimated time per call."
        )
    if injected is not None:
        name, timer = "kernelindex-record-injected-timer", "unknown"
        how = injected_notes(injected, settings)
        measurement = injected_measurement(settings, injected)
    text = (
        f"{how} The median is the result. The callable's first call (JIT, compile) ran "
        "before, apart, as sourceNative.metrics.first_call_ms; where a reference was "
        "given, that call's output was checked against it first and a mismatch recorded "
        "as failed, never timed."
    )
    if notes:
        text += " " + notes
    return protocol_envelope(
        m.Metadata(name=record_name(name), title=f"kernelindex record · {timer}"),
        m.Harness(name=HARNESS, version=version),
        measurement,
        m.Comparability(notes=text[:4096], family="kernelindex_record"),
    )


def timer_for(protocol: Settings | None) -> Timer:
    """The measuring timer of these settings: do_bench's (the default) or the CPU clock."""
    if isinstance(protocol, WallClockSettings):
        return WallClockTimer(protocol)
    return DoBenchTimer(protocol or TimerSettings())


def harness_version() -> str:
    """The kernelindex-sdk version: the harness version every protocol records."""
    import kernelindex_sdk

    return kernelindex_sdk.__version__


def link(
    run_for: Callable[[Refs], dict[str, Any]],
    *,
    protocol: Mapping[str, Any],
    workload: Mapping[str, Any],
    environment: Mapping[str, Any],
    implementation: Mapping[str, Any],
) -> dict[str, Any]:
    """The bundle ``{run, protocol, workload, environment, implementation}``: the run
    built by ``run_for`` from the four records' digests, so it references exactly them."""
    refs = (digest(protocol), digest(workload), digest(environment), digest(implementation))
    return {
        "run": run_for(refs),
        "protocol": dict(protocol),
        "workload": dict(workload),
        "environment": dict(environment),
        "implementation": dict(implementation),
    }


def unfinished_run(
    status: str,
    reason: str | None,
    observed: str,
    source_native: m.SourceNative,
    metrics: Mapping[str, float],
    *,
    name: str,
    title: str,
    labels: dict[str, str],
    refs: Refs,
) -> dict[str, Any]:
    """A run that did not pass: its status, the reason (cut to the schema's limit, with
    an ellipsis), no result; ``metrics`` (the first call's time, where it ran) kept."""
    text = reason or status
    if len(text) > REASON_LIMIT:
        text = text[: REASON_LIMIT - 1] + "…"
    native = attrs.evolve(source_native, metrics=dict(metrics) if metrics else None)
    spec: dict[str, Any] = {
        recordformat.STATUS_KEY: status,
        recordformat.REASON_KEY: text,
        recordformat.OBSERVED_AT_KEY: observed,
        recordformat.SOURCE_NATIVE_KEY: m.unstructure(native),
    }
    return run_envelope(spec, name=name, title=title, labels=labels, digests=refs)


def record(
    fn: Callable[..., Any],
    *args: Any,
    workload: Mapping[str, Any],
    implementation: Mapping[str, Any],
    protocol: Settings | None = None,
    reference: Any = None,
    kwargs: Mapping[str, Any] | None = None,
    timer: Timer | None = None,
    environment: Mapping[str, Any] | None = None,
    compare: Compare = compare_outputs,
    grad_to_none: Sequence[Any] = (),
    clock: Callable[[], datetime] = utc_now,
    stopwatch: Callable[[], float] = time.perf_counter,
) -> Recording:
    """Check, then time ``fn(*args, **kwargs)``; return the run's linked bundle.

    ``protocol``: the timer's settings (default :class:`TimerSettings`, do_bench;
    :class:`WallClockSettings` times with the CPU clock); ``timer``: the seam —
    anything with ``settings`` and ``time(fn, grad_to_none)`` (default: the timer of
    ``protocol``; a given timer's own settings are the protocol, and a ``protocol``
    that differs from them is an error). A timer other than :class:`DoBenchTimer` or
    :class:`WallClockTimer` is injected: its run is flagged ``injected_timer`` and its
    protocol says ``timer: unknown``. ``reference``: a
    callable taking the same arguments, or the expected output. ``environment``: an
    ExecutionEnvironment record (default: this machine, probed).
    """
    if timer is None:
        timer = timer_for(protocol)
    elif protocol is not None and protocol != timer.settings:
        raise ValueError("protocol differs from the injected timer's settings")
    settings = timer.settings
    call_kwargs = dict(kwargs or {})
    environment_rec = (
        dict(environment) if environment is not None else env.environment_record(env.probe())
    )

    def call() -> Any:
        return fn(*args, **call_kwargs)

    def check(output: Any) -> str | None:
        expected = reference
        if callable(reference):
            expected = stage("running the reference", lambda: reference(*args, **call_kwargs))
        verdict = compare(output, expected)
        return None if verdict is None else f"output differs from the reference: {verdict}"

    measured = measure(
        Step("timing", lambda: (call, list(grad_to_none))),
        timing(timer),
        first_call=Step("running the first call", call),
        check=None if reference is None else Step("comparing with the reference", check),
        clock=clock,
        stopwatch=stopwatch,
    )
    origin = injected(timer)
    sampled = getattr(timer, "last", None) if origin is None and measured.values else None
    sampled = sampled if isinstance(sampled, Sampled) else None
    bundle = link(
        lambda refs: _run_record(
            workload, implementation, settings, measured, refs, origin, sampled
        ),
        protocol=protocol_record(settings, harness_version(), injected=origin),
        workload=workload,
        environment=environment_rec,
        implementation=implementation,
    )
    return Recording(
        bundle=bundle,
        status=measured.status,
        reason=measured.reason,
        output=measured.output,
        milliseconds=measured.values,
        timer="unknown" if origin else settings.timer,
        injected=origin,
        sampled=sampled,
    )


def _run_record(
    workload: Mapping[str, Any],
    implementation: Mapping[str, Any],
    settings: Settings,
    measured: Measured,
    refs: Refs,
    origin: str | None = None,
    sampled: Sampled | None = None,
) -> dict[str, Any]:
    kernel = str(workload.get(recordformat.SPEC_KEY, {}).get(recordformat.KERNEL_KEY, "kernel"))
    provider = str(
        implementation.get(recordformat.SPEC_KEY, {}).get(recordformat.PROVIDER_KEY, "provider")
    )
    pass_ = str(workload.get(recordformat.SPEC_KEY, {}).get(recordformat.PASS_KEY, "forward"))
    observed = measured.observed_at
    stamp = observed.replace(":", "-").replace(".", "-").rstrip("Z")
    external_id = f"{kernel}/{pass_}/{provider}/{stamp}"
    seam = "injected-timer-" if origin is not None else ""
    name = record_name(f"record-{seam}{kernel}-{pass_}-{provider}-{stamp}")
    title = f"{kernel} · {pass_} · {provider}"
    if origin is not None:  # what validate -v and every listing show of the run
        title += " · injected timer, not a measurement"
    source_native = m.SourceNative(SOURCE, f"{kernel}/{pass_}", external_id)
    ms = measured.values
    if measured.status != "passed" or ms is None:
        run = unfinished_run(
            measured.status,
            measured.reason,
            observed,
            source_native,
            measured.native,
            name=name,
            title=title,
            labels={},
            refs=refs,
        )
        return _flagged(run, origin)
    spec: dict[str, Any] = {
        recordformat.STATUS_KEY: "passed",
        recordformat.OBSERVED_AT_KEY: observed,
        **_results(settings, ms, sampled),
    }
    metrics = {f"ms_q{q:g}": float(v) for q, v in zip(settings.quantiles, ms, strict=True)}
    metrics.update(measured.native)
    if sampled is not None:
        metrics.update(
            calls_per_sample=sampled.calls_per_sample,
            warmup_calls=sampled.warmup_calls,
            clock_resolution_ns=sampled.resolution_ns,
            gc_enabled=int(sampled.gc_enabled),
        )
    spec[recordformat.SOURCE_NATIVE_KEY] = m.unstructure(
        attrs.evolve(source_native, metrics=metrics)
    )
    return _flagged(run_envelope(spec, name=name, title=title, labels={}, digests=refs), origin)


def _results(settings: Settings, ms: tuple[float, ...], sampled: Sampled | None) -> dict[str, Any]:
    """A passed run's ``timing`` (and ``measurements``): the CPU clock's samples
    summarized, or the timer's quantiles (the median as the timing, the others the
    format names as measurements)."""
    if sampled is not None:
        return {recordformat.TIMING_KEY: _sampled_timing(sampled)}
    by_q = dict(zip(settings.quantiles, ms, strict=True))
    timing = m.Timing(
        latency_ns={"median": round(by_q[0.5] * 1_000_000)}, primary_statistic="median"
    )
    found: dict[str, Any] = {recordformat.TIMING_KEY: m.unstructure(timing)}
    measurements = [
        m.unstructure(m.Measurement("latency", "ns", statistic, round(by_q[q] * 1_000_000)))
        for q in sorted(settings.quantiles)
        if q != 0.5 and (statistic := _STATISTICS.get(q)) is not None
    ]
    if measurements:
        found[recordformat.MEASUREMENTS_KEY] = measurements
    return found


def _sampled_timing(sampled: Sampled) -> dict[str, Any]:
    """The CPU clock's timing: the samples' median, p20, p80, min, max, mean and
    standard deviation (whole ns), over how many samples."""
    ordered = sorted(sampled.samples_ns)
    mean = math.fsum(ordered) / len(ordered)
    spread = math.sqrt(math.fsum((x - mean) ** 2 for x in ordered) / max(1, len(ordered) - 1))
    summary = {
        "median": quantile(ordered, 0.5),
        "p20": quantile(ordered, 0.2),
        "p80": quantile(ordered, 0.8),
        "min": ordered[0],
        "max": ordered[-1],
        "mean": mean,
        "stddev": spread if len(ordered) > 1 else None,
    }
    latency = {key: round(value) for key, value in summary.items() if value is not None}
    return {
        recordformat.LATENCY_NS_KEY: latency,
        recordformat.PRIMARY_STATISTIC_KEY: "median",
        recordformat.SAMPLES_KEY: len(ordered),
    }


def _flagged(run: dict[str, Any], origin: str | None) -> dict[str, Any]:
    """The run, flagged :data:`~kernelindex_sdk.base.recordformat.INJECTED_TIMER` where
    an injected timer timed it (its digest is computed later, from this)."""
    if origin is not None:
        spec = run[recordformat.SPEC_KEY]
        spec[recordformat.QUALITY_FLAGS_KEY] = [recordformat.INJECTED_TIMER]
    return run
