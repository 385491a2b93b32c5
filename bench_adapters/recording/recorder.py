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
from bench_adapters.recording.timing import DoBenchTimer, Timer, TimerSettings
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
    settings: TimerSettings, version: str, notes: str | None = None
) -> dict[str, Any]:
    """The protocol of a recorder run: do_bench's settings as they were used."""
    name = "kernelindex-record-do-bench" + ("-cudagraph" if settings.cuda_graph else "")
    text = (
        f"Timed by {settings.described()}; the number of calls follows from the estimated "
        "time per call. The median is the result. The callable's first call (JIT, "
        "compile) ran before, apart, as sourceNative.metrics.first_call_ms; where a "
        "reference was given, that call's output was checked against it first and a "
        "mismatch recorded as failed, never timed."
    )
    if notes:
        text += " " + notes
    return protocol_envelope(
        m.Metadata(name=record_name(name), title=f"kernelindex record · {settings.timer}"),
        m.Harness(name=HARNESS, version=version),
        settings.measurement(),
        m.Comparability(notes=text[:4096], family="kernelindex_record"),
    )


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
    protocol: TimerSettings | None = None,
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

    ``protocol``: do_bench's settings (default :class:`TimerSettings`); ``timer``: the
    seam — anything with ``settings`` and ``time(fn, grad_to_none)`` (default
    :class:`DoBenchTimer` with ``protocol``; a given timer's own settings are the
    protocol, and a ``protocol`` that differs from them is an error). ``reference``: a
    callable taking the same arguments, or the expected output. ``environment``: an
    ExecutionEnvironment record (default: this machine, probed).
    """
    if timer is None:
        timer = DoBenchTimer(protocol or TimerSettings())
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
    bundle = link(
        lambda refs: _run_record(workload, implementation, settings, measured, refs),
        protocol=protocol_record(settings, harness_version()),
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
    )


def _run_record(
    workload: Mapping[str, Any],
    implementation: Mapping[str, Any],
    settings: TimerSettings,
    measured: Measured,
    refs: Refs,
) -> dict[str, Any]:
    kernel = str(workload.get(recordformat.SPEC_KEY, {}).get(recordformat.KERNEL_KEY, "kernel"))
    provider = str(
        implementation.get(recordformat.SPEC_KEY, {}).get(recordformat.PROVIDER_KEY, "provider")
    )
    pass_ = str(workload.get(recordformat.SPEC_KEY, {}).get(recordformat.PASS_KEY, "forward"))
    observed = measured.observed_at
    stamp = observed.replace(":", "-").replace(".", "-").rstrip("Z")
    external_id = f"{kernel}/{pass_}/{provider}/{stamp}"
    name = record_name(f"record-{kernel}-{pass_}-{provider}-{stamp}")
    title = f"{kernel} · {pass_} · {provider}"
    source_native = m.SourceNative(SOURCE, f"{kernel}/{pass_}", external_id)
    ms = measured.values
    if measured.status != "passed" or ms is None:
        return unfinished_run(
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
    by_q = dict(zip(settings.quantiles, ms, strict=True))
    timing = m.Timing(
        latency_ns={"median": round(by_q[0.5] * 1_000_000)}, primary_statistic="median"
    )
    spec: dict[str, Any] = {
        recordformat.STATUS_KEY: "passed",
        recordformat.OBSERVED_AT_KEY: observed,
    }
    spec[recordformat.TIMING_KEY] = m.unstructure(timing)
    measurements = [
        m.unstructure(m.Measurement("latency", "ns", statistic, round(by_q[q] * 1_000_000)))
        for q in sorted(settings.quantiles)
        if q != 0.5 and (statistic := _STATISTICS.get(q)) is not None
    ]
    if measurements:
        spec[recordformat.MEASUREMENTS_KEY] = measurements
    metrics = {f"ms_q{q:g}": float(v) for q, v in by_q.items()}
    metrics.update(measured.native)
    spec[recordformat.SOURCE_NATIVE_KEY] = m.unstructure(
        attrs.evolve(source_native, metrics=metrics)
    )
    return run_envelope(spec, name=name, title=title, labels={}, digests=refs)
