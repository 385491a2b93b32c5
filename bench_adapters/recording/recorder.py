"""``record(fn, *args, ...)``: time any callable with do_bench and return a linked bundle.

One call, in order:

1. ``fn(*args, **kwargs)`` runs once, the device synchronized around it: this first call
   absorbs Triton's JIT and any ``torch.compile``, so its wall time is recorded apart
   (``sourceNative.metrics.first_call_ms``) and never reaches do_bench's estimate;
2. with a ``reference`` (a callable taking the same arguments, or the expected value),
   that output is compared with the reference's (``torch.testing.assert_close``, or
   ``==`` for what is not a tensor); a mismatch is a ``failed`` run, never timed;
3. the timer (:mod:`~bench_adapters.recording.timing`: do_bench unless one is injected)
   measures the quantiles the protocol asks for.

Out of memory anywhere is status ``oom``; any other error ``failed``; each with the
stage and the error as the reason. The bundle links five records: the run, the
protocol (from the timer's settings), the workload and implementation as given (see
:mod:`~bench_adapters.recording.describe` for helpers that build them), and the
environment (:mod:`~bench_adapters.recording.environment`'s probe, unless given).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import attrs

from bench_adapters.common.names import record_name
from bench_adapters.common.records import envelope, run_envelope
from bench_adapters.recording import environment as env
from bench_adapters.recording.timing import DoBenchTimer, Timer, TimerSettings
from kernelindex_sdk.canonical import digest

#: ``sourceNative.source`` of every run the recorder makes.
SOURCE = "kernelindex-record"
#: The harness every protocol names.
HARNESS = "kernelindex record"
#: ``sourceNative.metrics`` name of the first call's wall time, in ms.
FIRST_CALL = "first_call_ms"
#: The longest reason a run carries (the schema's text limit).
REASON_LIMIT = 4096
#: Quantile statistics the format names (common.schema.json#/$defs/statistic).
_STATISTICS = {
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


def utc_now() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(timezone.utc)


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
    measurement: dict[str, Any] = {
        "timer": settings.timer,
        "primaryStatistic": "median",
        "quantiles": list(settings.quantiles),
        "repetitionMs": settings.rep_ms,
        "flushL2Cache": settings.flush_l2,
    }
    quantiles = "/".join(f"{q:g}" for q in settings.quantiles)
    if settings.cuda_graph:
        call = f"triton.testing.do_bench_cudagraph(rep={settings.rep_ms:g}, quantiles {quantiles})"
        how = "the calls captured in a CUDA graph and replayed, the L2 cache not flushed"
        name = "kernelindex-record-do-bench-cudagraph"
    else:
        measurement["warmupMs"] = settings.warmup_ms
        call = (
            f"triton.testing.do_bench(warmup={settings.warmup_ms:g}, rep={settings.rep_ms:g}, "
            f"quantiles {quantiles})"
        )
        how = "CUDA events around each call, the L2 cache flushed before each by zeroing a buffer"
        name = "kernelindex-record-do-bench"
    text = (
        f"Timed by {call}: {how}; the number of calls follows from the estimated time per "
        "call. The median is the result. The callable's first call (JIT, compile) ran "
        "before, apart, as sourceNative.metrics.first_call_ms; where a reference was "
        "given, that call's output was checked against it first and a mismatch recorded "
        "as failed, never timed."
    )
    if notes:
        text += " " + notes
    return envelope(
        "BenchmarkProtocol",
        {"name": record_name(name), "title": f"kernelindex record · {settings.timer}"},
        {
            "harness": {"name": HARNESS, "version": version},
            "measurement": measurement,
            "comparability": {"notes": text[:4096], "family": "kernelindex_record"},
        },
    )


def harness_version() -> str:
    """The kernelindex-sdk version: the harness version every protocol records."""
    import kernelindex_sdk

    return kernelindex_sdk.__version__


class _Stage(Exception):
    def __init__(self, stage: str, error: BaseException) -> None:
        super().__init__(stage)
        self.stage = stage
        self.error = error


def _stage(stage: str, fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as error:
        raise _Stage(stage, error) from error


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
    protocol_rec = protocol_record(settings, harness_version())
    refs = (
        digest(protocol_rec),
        digest(workload),
        digest(environment_rec),
        digest(implementation),
    )

    def call() -> Any:
        return fn(*args, **call_kwargs)

    native: dict[str, float] = {}
    output: Any = None
    status, reason, ms = "passed", None, None
    try:
        _stage("synchronizing before the first call", synchronize)
        started = stopwatch()
        output = _stage("running the first call", call)
        _stage("synchronizing after the first call", synchronize)
        native[FIRST_CALL] = round((stopwatch() - started) * 1000, 3)
        verdict = None
        if reference is not None:
            if callable(reference):
                expected = _stage("running the reference", lambda: reference(*args, **call_kwargs))
            else:
                expected = reference
            verdict = _stage("comparing with the reference", compare, output, expected)
        if verdict is not None:
            status, reason = "failed", f"output differs from the reference: {verdict}"
        else:
            ms = tuple(_stage("timing", timer.time, call, list(grad_to_none)))
            if len(ms) != len(settings.quantiles):
                raise _Stage("timing", ValueError(f"timer returned {len(ms)} values"))
    except _Stage as failure:
        what = "out of memory" if is_out_of_memory(failure.error) else "error"
        status = "oom" if what == "out of memory" else "failed"
        text = " ".join(str(failure.error).split()) or "(no message)"
        reason = f"{what} while {failure.stage}: {type(failure.error).__name__}: {text}"
        ms = None
    moment = clock().astimezone(timezone.utc)
    observed = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    run = _run_record(
        workload, implementation, status, reason, ms, settings, native, observed, refs
    )
    bundle = {
        "run": run,
        "protocol": protocol_rec,
        "workload": dict(workload),
        "environment": environment_rec,
        "implementation": dict(implementation),
    }
    return Recording(bundle=bundle, status=status, reason=reason, output=output, milliseconds=ms)


def _run_record(
    workload: Mapping[str, Any],
    implementation: Mapping[str, Any],
    status: str,
    reason: str | None,
    ms: tuple[float, ...] | None,
    settings: TimerSettings,
    native: dict[str, float],
    observed: str,
    refs: tuple[str, str, str, str],
) -> dict[str, Any]:
    kernel = str(workload.get("spec", {}).get("kernel", "kernel"))
    provider = str(implementation.get("spec", {}).get("provider", "provider"))
    pass_ = str(workload.get("spec", {}).get("pass", "forward"))
    stamp = observed.replace(":", "-").replace(".", "-").rstrip("Z")
    external_id = f"{kernel}/{pass_}/{provider}/{stamp}"
    name = record_name(f"record-{kernel}-{pass_}-{provider}-{stamp}")
    title = f"{kernel} · {pass_} · {provider}"
    source_native: dict[str, Any] = {
        "source": SOURCE,
        "benchmark": f"{kernel}/{pass_}",
        "externalId": external_id,
    }
    spec: dict[str, Any] = {"status": status}
    if status != "passed" or ms is None:
        spec["reason"] = (reason or status)[:REASON_LIMIT]
        spec["observedAt"] = observed
        if native:
            source_native["metrics"] = dict(native)
        spec["sourceNative"] = source_native
        return run_envelope(spec, name=name, title=title, labels={}, digests=refs)
    by_q = dict(zip(settings.quantiles, ms, strict=True))
    spec["observedAt"] = observed
    spec["timing"] = {
        "latencyNs": {"median": round(by_q[0.5] * 1_000_000)},
        "primaryStatistic": "median",
    }
    measurements = []
    for q in sorted(settings.quantiles):
        statistic = _STATISTICS.get(q)
        if q == 0.5 or statistic is None:
            continue
        measurements.append(
            {
                "metric": "latency",
                "unit": "ns",
                "statistic": statistic,
                "value": round(by_q[q] * 1_000_000),
            }
        )
    if measurements:
        spec["measurements"] = measurements
    metrics = {f"ms_q{q:g}": float(v) for q, v in by_q.items()}
    metrics.update(native)
    source_native["metrics"] = metrics
    spec["sourceNative"] = source_native
    return run_envelope(spec, name=name, title=title, labels={}, digests=refs)
