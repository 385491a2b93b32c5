"""Records for before/after tests: built from a few words, digests computed, and a
hypothesis strategy that draws sets of them.

A run is described by :class:`RunSpec` (kernel, shape, GPU, metric, implementation,
time, status, value and how its noise is recorded); :func:`records_for` turns specs into
schema-valid records (runs and the records they reference), :func:`resolved` into the
library's resolved runs without touching the disk, :func:`scaled` multiplies every
value of a run (its summary and its measurements) by a whole factor.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import attrs
from hypothesis import strategies as st

from kernelindex_sdk.canonical import digest
from kernelindex_sdk.compare.records import RecordIndex, StoredRun
from kernelindex_sdk.compare.runs import ResolvedRun, resolve_runs

API = "kernelindex.dev/v1alpha1"
START = datetime(2025, 1, 1, tzinfo=timezone.utc)

GPUS = {
    "h100": {"vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "80GB HBM3"},
    "a100": {"vendor": "nvidia", "product": "NVIDIA A100", "formFactor": "SXM4-80GB"},
}
#: name → Implementation spec. ``liger-0.5.0`` and ``liger-0.5.1`` are one lineage.
IMPLEMENTATIONS: dict[str, dict[str, Any]] = {
    "huggingface": {"provider": "huggingface"},
    "liger-0.5.0": {"provider": "liger", "package": {"name": "liger-kernel", "version": "0.5.0"}},
    "liger-0.5.1": {"provider": "liger", "package": {"name": "liger-kernel", "version": "0.5.1"}},
    "liger-rms": {
        "provider": "liger",
        "package": {"name": "liger-kernel", "version": "0.5.1"},
        "entryPoint": "liger_kernel.ops.rms_norm",
    },
}
NOISE_FORMS = ("quantiles", "collapsed", "stddev", "one-sample", "none")


@attrs.frozen
class RunSpec:
    kernel: str = "geglu"
    seq: int = 1024
    gpu: str = "h100"
    #: ``latency`` or ``peak_memory``.
    metric: str = "latency"
    implementation: str = "liger-0.5.0"
    #: Seconds after 2025-01-01T00:00:00Z.
    at: int = 0
    status: str = "passed"
    value: int = 100_000
    #: One of NOISE_FORMS.
    noise: str = "quantiles"
    #: Half-width of the noise (p20 = value - spread, p80 = value + spread; or stddev).
    spread: int = 2_000
    protocol: str = "bench"
    #: The sample count of a ``stddev`` run.
    samples: int = 20


def record(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API, "kind": kind, "metadata": {"name": name}, "spec": spec}


def _protocol(name: str, metric: str) -> dict[str, Any]:
    measurement = (
        {"memoryProbe": "torch_cuda_max_memory_allocated", "primaryStatistic": "median"}
        if metric == "peak_memory"
        else {"timer": "cuda_events", "primaryStatistic": "median"}
    )
    return record(
        "BenchmarkProtocol",
        f"{name}-{metric.replace('_', '-')}",
        {"harness": {"name": name}, "measurement": measurement},
    )


def records_for(spec: RunSpec) -> list[dict[str, Any]]:
    """The run (last) and the four records it references."""
    protocol = _protocol(spec.protocol, spec.metric)
    workload = record(
        "Workload",
        f"{spec.kernel}-{spec.seq}",
        {
            "kernel": spec.kernel,
            "pass": "forward",
            "dtype": "bf16",
            "parameters": {"seq": spec.seq},
        },
    )
    environment = record(
        "ExecutionEnvironment", f"env-{spec.gpu}", {"hardware": GPUS[spec.gpu], "software": {}}
    )
    implementation = record(
        "Implementation", spec.implementation, IMPLEMENTATIONS[spec.implementation]
    )
    observed = (START + timedelta(seconds=spec.at)).strftime("%Y-%m-%dT%H:%M:%SZ")
    run_spec: dict[str, Any] = {
        "status": spec.status,
        "observedAt": observed,
        "protocolDigest": digest(protocol),
        "workloadDigest": digest(workload),
        "environmentDigest": digest(environment),
        "implementationDigest": digest(implementation),
    }
    if spec.status == "passed":
        unit = "ns" if spec.metric == "latency" else "bytes"
        field, key = (
            ("timing", "latencyNs") if spec.metric == "latency" else ("memory", "peakBytes")
        )
        summary: dict[str, int] = {"median": spec.value}
        result: dict[str, Any] = {key: summary, "primaryStatistic": "median"}
        measurements = []
        if spec.noise == "quantiles":
            summary.update(p20=spec.value - spec.spread, p80=spec.value + spec.spread)
        elif spec.noise == "collapsed":
            summary.update(p20=spec.value, p80=spec.value)
        elif spec.noise == "stddev":
            result["samples"] = spec.samples
            measurements.append(
                {"metric": spec.metric, "unit": unit, "statistic": "stddev", "value": spec.spread}
            )
        elif spec.noise == "one-sample":
            result["samples"] = 1
        run_spec[field] = result
        if measurements:
            run_spec["measurements"] = measurements
    else:
        run_spec["reason"] = "CUDA out of memory"
    run = record("BenchmarkRun", f"run-{spec.implementation}-{spec.at}", run_spec)
    return [protocol, workload, environment, implementation, run]


def scaled(records: list[dict[str, Any]], factor: int) -> list[dict[str, Any]]:
    """The same records with every value of the run (last) multiplied by ``factor``."""
    out = json.loads(json.dumps(records))
    spec = out[-1]["spec"]
    for field, key in (("timing", "latencyNs"), ("memory", "peakBytes")):
        if field in spec:
            spec[field][key] = {k: v * factor for k, v in spec[field][key].items()}
    for measurement in spec.get("measurements", ()):
        measurement["value"] *= factor
    return out


def index_of(record_sets: Iterable[list[dict[str, Any]]], source: str = "test") -> RecordIndex:
    index = RecordIndex()
    for line, records in enumerate(record_sets, start=1):
        for item in records:
            found = digest(item)
            if item["kind"] == "BenchmarkRun":
                index.runs.setdefault(found, StoredRun(found, item, source, line, ""))
            else:
                index.records.setdefault(found, item)
    return index


def resolved(
    record_sets: Iterable[list[dict[str, Any]]], source: str = "test"
) -> list[ResolvedRun]:
    """Resolved runs of record sets (each a run and what it references), no disk."""
    runs, _ = resolve_runs(index_of(record_sets, source))
    return runs


def write_jsonl(path: Path, record_sets: Sequence[list[dict[str, Any]]]) -> None:
    path.write_text(
        "".join(json.dumps(r) + "\n" for records in record_sets for r in records), encoding="utf-8"
    )


@st.composite
def run_specs(draw: st.DrawFn, *, at: int) -> RunSpec:
    """One run drawn from a small vocabulary, so that runs of two sets often pair."""
    status = draw(st.sampled_from(["passed"] * 5 + ["oom"]))
    value = draw(st.integers(1_000, 10_000_000))
    return RunSpec(
        kernel=draw(st.sampled_from(["geglu", "swiglu"])),
        seq=draw(st.sampled_from([1024, 2048])),
        gpu=draw(st.sampled_from(sorted(GPUS))),
        metric=draw(st.sampled_from(["latency", "peak_memory"])),
        implementation=draw(st.sampled_from(sorted(IMPLEMENTATIONS))),
        at=at,
        status=status,
        value=value,
        noise=draw(st.sampled_from(NOISE_FORMS)),
        # Under half the value: every interval stays above 0.
        spread=draw(st.integers(1, value // 2 - 1)),
    )


@st.composite
def run_sets(draw: st.DrawFn, *, max_size: int = 12, first: int = 0) -> list[RunSpec]:
    """Runs with distinct times (``first``, ``first + 1``, ...): "the newest" is never a tie."""
    size = draw(st.integers(1, max_size))
    return [draw(run_specs(at=first + i * 7)) for i in range(size)]
