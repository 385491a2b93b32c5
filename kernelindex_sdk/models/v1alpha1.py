"""attrs models of kernelindex.dev/v1alpha1, one frozen class per object in the schemas.

Attribute names are snake_case; the wire names (camelCase, ``pass``) are derived by
the converter in :mod:`kernelindex_sdk.models.convert`. An optional field is ``None``
when absent and is left out on the wire, so a record read and written back is the
same JSON. Open maps (labels, native metrics, parameters, settings, software) stay
plain mappings: their keys are data, not fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

API_VERSION: Final = "kernelindex.dev/v1alpha1"

Status = Literal["passed", "failed", "oom", "skipped"]
Pass = Literal["forward", "backward", "full"]
Statistic = Literal[
    "median", "mean", "min", "max", "p20", "p80", "p5", "p10", "p25", "p75", "p90", "p95", "p99",
    "stddev",
]  # fmt: skip
Metric = Literal["latency", "peak_memory"]
Unit = Literal["ns", "us", "ms", "s", "bytes", "KiB", "MiB", "GiB"]
Timer = Literal["cuda_events", "cuda_graph", "cupti", "wall_clock", "unknown"]
#: Where a field of a spec came from (see :class:`ProvenanceEntry`).
Origin = Literal["record", "file", "file-name", "folder-name", "caller", "catalog", "unknown"]
Number = int | float
Scalar = int | float | str | bool


@attrs.frozen
class Metadata:
    """Naming and labels; never part of a digest."""

    name: str
    title: str | None = None
    labels: Mapping[str, str] | None = None


# --- BenchmarkRun -------------------------------------------------------------------


@attrs.frozen
class Timing:
    """A latency result: summary statistics in integer nanoseconds."""

    latency_ns: Mapping[Statistic, int]
    primary_statistic: Statistic
    #: How many samples the statistics are over, where the source says.
    samples: int | None = None


@attrs.frozen
class Memory:
    """A peak-memory result: summary statistics in bytes."""

    peak_bytes: Mapping[Statistic, int]
    primary_statistic: Statistic
    #: How many samples the statistics are over, where the source says.
    samples: int | None = None


@attrs.frozen
class Measurement:
    """One further statistic of the result, in an explicit unit."""

    metric: Metric
    unit: Unit
    statistic: Statistic
    value: Number


@attrs.frozen
class SourceNative:
    """What the source published, unchanged."""

    source: str
    benchmark: str | None = None
    external_id: str | None = None
    metrics: Mapping[str, Number] | None = None


@attrs.frozen
class RunSpec:
    """What was measured, referencing protocol, workload, environment and implementation."""

    status: Status
    observed_at: str
    protocol_digest: str
    workload_digest: str
    environment_digest: str
    implementation_digest: str
    reason: str | None = None
    timing: Timing | None = None
    memory: Memory | None = None
    measurements: tuple[Measurement, ...] | None = None
    quality_flags: tuple[str, ...] | None = None
    source_native: SourceNative | None = None


@attrs.frozen
class BenchmarkRun:
    metadata: Metadata
    spec: RunSpec
    kind: Literal["BenchmarkRun"] = "BenchmarkRun"
    api_version: Literal["kernelindex.dev/v1alpha1"] = API_VERSION
    #: ``$schema`` on the wire: the schema's ``$id``, for editors (never in a digest).
    json_schema: (
        Literal["https://kernelindex.dev/schemas/v1alpha1/benchmark-run.schema.json"] | None
    ) = None


# --- Provenance (environments and protocols) -------------------------------------------


@attrs.frozen
class ProvenanceEntry:
    """Where one field of a spec came from; ``unknown``: the source does not say (absent)."""

    origin: Origin
    detail: str | None = None


#: JSON Pointer into the spec (``/hardware/product``) → where that field came from.
Provenance = Mapping[str, ProvenanceEntry]


# --- BenchmarkProtocol ----------------------------------------------------------------


@attrs.frozen
class Harness:
    name: str
    repository: str | None = None
    version: str | None = None


@attrs.frozen
class MeasurementSettings:
    """How samples were taken: timer or memory probe, statistics, warm-up, repetitions."""

    primary_statistic: Statistic
    timer: Timer | None = None
    memory_probe: str | None = None
    quantiles: tuple[Number, ...] | None = None
    warmup_ms: Number | None = None
    repetition_ms: Number | None = None
    warmup_iterations: int | None = None
    repetitions: int | None = None
    flush_l2_cache: bool | None = None
    grad_to_none: bool | None = None
    #: The harness's own sampling settings under its own names (nvbench's min_samples, ...).
    harness_settings: Mapping[str, Scalar] | None = None


@attrs.frozen
class Comparability:
    notes: str
    family: str | None = None


@attrs.frozen
class ProtocolSpec:
    harness: Harness
    measurement: MeasurementSettings
    comparability: Comparability | None = None
    provenance: Provenance | None = None


@attrs.frozen
class BenchmarkProtocol:
    metadata: Metadata
    spec: ProtocolSpec
    kind: Literal["BenchmarkProtocol"] = "BenchmarkProtocol"
    api_version: Literal["kernelindex.dev/v1alpha1"] = API_VERSION
    #: ``$schema`` on the wire: the schema's ``$id``, for editors (never in a digest).
    json_schema: (
        Literal["https://kernelindex.dev/schemas/v1alpha1/benchmark-protocol.schema.json"] | None
    ) = None


# --- ExecutionEnvironment -------------------------------------------------------------


@attrs.frozen
class Hardware:
    vendor: str
    product: str
    form_factor: str | None = None
    architecture: str | None = None
    device_name: str | None = None
    memory_bytes: int | None = None
    count: int | None = None
    compute_capability: str | None = None
    multiprocessors: int | None = None
    clock_hz: int | None = None
    memory_clock_hz: int | None = None
    memory_bus_width_bits: int | None = None
    memory_bandwidth_bytes_per_second: int | None = None
    l2_cache_bytes: int | None = None
    ecc_enabled: bool | None = None
    max_clock_hz: int | None = None
    application_clock_hz: int | None = None
    application_memory_clock_hz: int | None = None
    power_limit_milliwatts: int | None = None
    host_cpu: str | None = None
    host_cpu_cores: int | None = None
    host_cpu_frequency_policy: str | None = None


@attrs.frozen
class EnvironmentSpec:
    hardware: Hardware
    software: Mapping[str, str] | None = None
    provenance: Provenance | None = None


@attrs.frozen
class ExecutionEnvironment:
    metadata: Metadata
    spec: EnvironmentSpec
    kind: Literal["ExecutionEnvironment"] = "ExecutionEnvironment"
    api_version: Literal["kernelindex.dev/v1alpha1"] = API_VERSION
    #: ``$schema`` on the wire: the schema's ``$id``, for editors (never in a digest).
    json_schema: (
        Literal["https://kernelindex.dev/schemas/v1alpha1/execution-environment.schema.json"] | None
    ) = None


# --- Workload ---------------------------------------------------------------------------


@attrs.frozen
class WorkloadSpec:
    """What was computed. ``pass_`` is ``pass`` on the wire (a Python keyword)."""

    kernel: str
    pass_: Pass
    parameters: Mapping[str, Scalar]
    dtype: str
    settings: Mapping[str, Any] | None = None


@attrs.frozen
class Workload:
    metadata: Metadata
    spec: WorkloadSpec
    kind: Literal["Workload"] = "Workload"
    api_version: Literal["kernelindex.dev/v1alpha1"] = API_VERSION
    #: ``$schema`` on the wire: the schema's ``$id``, for editors (never in a digest).
    json_schema: Literal["https://kernelindex.dev/schemas/v1alpha1/workload.schema.json"] | None = (
        None
    )


# --- Implementation ---------------------------------------------------------------------


@attrs.frozen
class Package:
    name: str
    version: str | None = None


@attrs.frozen
class SourceLocation:
    repository: str
    revision: str | None = None
    path: str | None = None


@attrs.frozen
class ImplementationSpec:
    """Who computed it."""

    provider: str
    backend: str | None = None
    package: Package | None = None
    entry_point: str | None = None
    source: SourceLocation | None = None


@attrs.frozen
class Implementation:
    metadata: Metadata
    spec: ImplementationSpec
    kind: Literal["Implementation"] = "Implementation"
    api_version: Literal["kernelindex.dev/v1alpha1"] = API_VERSION
    #: ``$schema`` on the wire: the schema's ``$id``, for editors (never in a digest).
    json_schema: (
        Literal["https://kernelindex.dev/schemas/v1alpha1/implementation.schema.json"] | None
    ) = None


# --- Bundle ---------------------------------------------------------------------------


@attrs.frozen
class Bundle:
    """A run with any of the records it references embedded beside it."""

    run: BenchmarkRun
    protocol: BenchmarkProtocol | None = None
    workload: Workload | None = None
    environment: ExecutionEnvironment | None = None
    implementation: Implementation | None = None
    #: ``$schema`` on the wire: the Bundle schema's ``$id``, for editors.
    json_schema: Literal["https://kernelindex.dev/schemas/v1alpha1/bundle.schema.json"] | None = (
        None
    )


Record = BenchmarkRun | BenchmarkProtocol | ExecutionEnvironment | Workload | Implementation

#: Wire kind → model class.
KINDS: Mapping[str, type[Any]] = {
    "BenchmarkRun": BenchmarkRun,
    "BenchmarkProtocol": BenchmarkProtocol,
    "ExecutionEnvironment": ExecutionEnvironment,
    "Workload": Workload,
    "Implementation": Implementation,
    "Bundle": Bundle,
}
