"""Runs resolved against the records they reference, and the comparability key.

A BenchmarkRun only *references* its workload, protocol, environment and
implementation by digest. :func:`resolve_runs` looks each one up (once per digest)
and reads off what comparing needs: the result in base units (ns or bytes), the
kernel and shape, the provider and version, the GPU.

The comparability key
---------------------
The seeds' protocols state the rule: runs compare "only within one kernel, workload,
timed pass, and GPU". A Workload's digest covers kernel, pass, shape, dtype and
settings; a Protocol's covers how it was timed. So two runs are comparable exactly
when they share

* ``workloadDigest`` (same computation),
* ``protocolDigest`` (same harness, timer and statistic), and
* the **hardware identity** of their environments: the digest of the environment's
  ``spec.hardware`` object alone (see :func:`hardware_identity`),

and measure the same metric (latency or peak memory). Environments on one GPU that
differ only in software versions (driver, torch) *are* comparable: the rule names the
GPU, and the reference implementation of a kernel is usually measured in the same
session as the candidate anyway. Where a group mixes software, the reports say so.

A run whose environment record is not given cannot show its hardware; it is keyed
by its ``environmentDigest`` instead, so it never joins a group by accident.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Final

import attrs

from kernelindex_sdk import checks
from kernelindex_sdk.base import recordformat
from kernelindex_sdk.base.metrics import LATENCY, PEAK_MEMORY, UNKNOWN

# Names, not ``wire.`` lookups: resolving reads them for every run.
from kernelindex_sdk.base.recordformat import (
    API_VERSION_KEY,
    MEASUREMENTS_KEY,
    METADATA_KEY,
    METRIC_KEY,
    OBSERVED_AT_KEY,
    PRIMARY_STATISTIC_KEY,
    QUALITY_FLAGS_KEY,
    REASON_KEY,
    SAMPLES_KEY,
    SPEC_KEY,
    STATISTIC_KEY,
    STATUS_KEY,
    TITLE_KEY,
    UNIT_KEY,
    VALUE_KEY,
)
from kernelindex_sdk.canonical import canonicalize
from kernelindex_sdk.compare.records import RecordIndex, StoredRun, gc_paused

if TYPE_CHECKING:
    from kernelindex_sdk.reading.kistore import RunFacts, RunShape

#: Result field, summary field, metric.

#: A workload parameter value, as the schema allows it.
Scalar = int | float | str | bool


@attrs.frozen
class ComparabilityKey:
    """Runs with equal keys may share a table row set; others never do."""

    workload: str
    protocol: str
    hardware: str
    metric: str


@attrs.frozen
class WorkloadInfo:
    """What a run computed, read off its Workload record."""

    kernel: str
    pass_: str
    dtype: str
    parameters: Mapping[str, Scalar]
    settings: Mapping[str, Any]
    title: str | None

    def describe(self) -> str:
        """``batch=8 hidden=4096 seq=1024, bf16`` — shape, dtype, then settings."""
        parts = [" ".join(f"{k}={show_value(v)}" for k, v in sorted(self.parameters.items()))]
        parts.append(self.dtype)
        parts.extend(f"{k}={show_value(v)}" for k, v in sorted(self.settings.items()))
        return ", ".join(p for p in parts if p)


@attrs.frozen
class ImplementationInfo:
    """Who computed it: the provider and, where recorded, the package version."""

    provider: str
    package: str | None
    version: str | None
    title: str | None
    #: The callable measured (``spec.entryPoint``), where recorded.
    entry_point: str | None = None
    #: The kernel language or library underneath (``spec.backend``), where recorded.
    backend: str | None = None

    @property
    def label(self) -> str:
        """``liger 0.5.10`` or just ``huggingface``: short enough for a table column."""
        return f"{self.provider} {self.version}" if self.version else self.provider


@attrs.frozen
class ResolvedRun:
    """One run with everything comparing needs, values in base units (ns, bytes)."""

    digest: str
    source: str
    line: int | None
    pointer: str
    status: str
    reason: str | None
    observed_at: str
    observed_key: datetime
    #: LATENCY, PEAK_MEMORY, or UNKNOWN (a run that did not pass, protocol silent).
    metric: str
    #: The primary statistic of the result (``median`` in every Liger run).
    statistic: str | None
    value: float | None
    p20: float | None
    p80: float | None
    workload_digest: str
    protocol_digest: str
    environment_digest: str
    implementation_digest: str
    hardware: str
    gpu: str
    workload: WorkloadInfo | None
    implementation: ImplementationInfo | None
    protocol_name: str | None
    protocol_title: str | None
    title: str | None
    #: The standard deviation of the samples in base units, where the run records one.
    stddev: float | None = None
    #: How many samples the summary is over, where the source says.
    samples: int | None = None
    #: ``spec.qualityFlags`` (e.g. ``collapsed_quantiles``).
    flags: tuple[str, ...] = ()
    #: False for a run flagged ``observed_at_unknown``: its ``observedAt`` is the
    #: placeholder :data:`~kernelindex_sdk.base.recordformat.UNKNOWN_OBSERVED_AT`, no time at all.
    dated: bool = True

    @property
    def recency(self) -> tuple[bool, datetime, str]:
        """The order of "newest": a dated run beats every undated one (a placeholder
        never wins), dated runs go by ``observedAt`` (offsets honoured), and what is
        left tied — every undated run, runs of one instant — by digest, the greatest
        first, so the choice never depends on the order the files were given in."""
        return (self.dated, self.observed_key if self.dated else _NO_TIME, self.digest)

    @property
    def key(self) -> ComparabilityKey:
        return ComparabilityKey(
            self.workload_digest, self.protocol_digest, self.hardware, self.metric
        )

    @property
    def passed(self) -> bool:
        return self.status == "passed" and self.value is not None

    @property
    def kernel(self) -> str | None:
        return self.workload.kernel if self.workload else None

    @property
    def pass_(self) -> str | None:
        return self.workload.pass_ if self.workload else None

    @property
    def provider(self) -> str | None:
        return self.implementation.provider if self.implementation else None

    @property
    def implementation_label(self) -> str:
        if self.implementation is not None:
            return self.implementation.label
        return f"implementation {short_digest(self.implementation_digest)}"

    @property
    def kernel_title(self) -> str:
        """A display name for the kernel: from the workload's title, else the run's."""
        for title in (self.workload.title if self.workload else None, self.title):
            if title:
                return title.split(" · ")[0].strip()
        if self.workload is not None:
            return self.workload.kernel
        return f"workload {short_digest(self.workload_digest)}"

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}" if self.line is not None else self.source


#: Where every undated run sits in :attr:`ResolvedRun.recency` (only the digest orders them).
_NO_TIME = datetime.min.replace(tzinfo=timezone.utc)


#: What a report says of a run an injected timer timed (a test seam, never a clock).
INJECTED_NOTE = "injected timer: not a measurement"


def injected_timer(run: ResolvedRun) -> bool:
    """Whether an injected timer (a fake, or a caller's own, through a test seam) timed
    the run: its figures are no measurement, and a gate refuses it."""
    return recordformat.INJECTED_TIMER in run.flags


def injected_runs(runs: Iterable[ResolvedRun]) -> list[ResolvedRun]:
    """The runs an injected timer timed (:func:`injected_timer`), in the given order."""
    return [run for run in runs if injected_timer(run)]


def short_digest(digest: str) -> str:
    """``sha256:0123456789ab`` — enough to tell records apart in a message."""
    return digest[:19]


def hardware_identity(hardware: Mapping[str, Any]) -> str:
    """The digest of a ``spec.hardware`` object: what makes two environments one GPU.

    Every hardware field counts (vendor, product, form factor, architecture, and
    deviceName, memoryBytes or count where recorded): an H100 PCIe is not an H100
    SXM, and two GPUs are not one.
    """
    return "sha256:" + hashlib.sha256(canonicalize(dict(hardware))).hexdigest()


def gpu_label(hardware: Mapping[str, Any]) -> str:
    """``NVIDIA H100 80GB HBM3`` (product and form factor), ``2× ...`` for a count."""
    words = [
        str(hardware.get(recordformat.PRODUCT_KEY, "")),
        str(hardware.get(recordformat.FORM_FACTOR_KEY, "")),
    ]
    label = " ".join(w for w in words if w) or str(
        hardware.get(recordformat.VENDOR_KEY, "unknown GPU")
    )
    count = hardware.get(recordformat.COUNT_KEY)
    return f"{count}× {label}" if isinstance(count, int) and count > 1 else label


def metric_of_protocol(protocol: Mapping[str, Any] | None) -> str | None:
    """What a protocol measures when it says so unambiguously (timer xor memory probe)."""
    if protocol is None:
        return None
    measurement = protocol[SPEC_KEY][recordformat.MEASUREMENT_KEY]
    timed, probed = (
        recordformat.TIMER_KEY in measurement,
        recordformat.MEMORY_PROBE_KEY in measurement,
    )
    if timed and not probed:
        return LATENCY
    if probed and not timed:
        return PEAK_MEMORY
    return None


#: A shape of stored runs resolved (:meth:`Resolver._shaped`): the fields of
#: :class:`ResolvedRun` every run of it shares, in the class's order (``source``,
#: ``pointer`` to ``reason``, ``metric`` and ``statistic``, ``workload_digest`` to
#: ``title``, ``flags`` and ``dated``), and the kinds of referenced records it lacks
#: (each counted once per run).
_Shaped = tuple[
    str,
    str,
    str,
    "str | None",
    str,
    "str | None",
    str,
    str,
    str,
    str,
    str,
    str,
    "WorkloadInfo | None",
    "ImplementationInfo | None",
    "str | None",
    "str | None",
    "str | None",
    tuple[str, ...],
    bool,
    tuple[str, ...],
]


class Resolver:
    """Resolves runs against an index, caching what each referenced digest yields."""

    def __init__(self, index: RecordIndex) -> None:
        self.index = index
        self._workloads: dict[str, WorkloadInfo | None] = {}
        self._implementations: dict[str, ImplementationInfo | None] = {}
        self._environments: dict[str, tuple[str, str, Mapping[str, Any] | None]] = {}
        self._protocols: dict[str, tuple[str | None, str | None, str | None]] = {}
        #: Kind → how many runs referenced a record of it that was not given.
        self.missing: dict[str, int] = {}
        #: What runs given by their stored facts share, resolved once per shape.
        self._shapes: dict[RunShape, _Shaped] = {}

    def resolve(self, stored: StoredRun | RunFacts) -> ResolvedRun:
        """A run resolved: from its record, or from its stored facts (a trusted store,
        :meth:`~kernelindex_sdk.compare.records.RecordIndex.add_facts`)."""
        if not isinstance(stored, StoredRun):
            return self._from_facts(stored)
        run = stored.record
        spec = run[SPEC_KEY]
        metadata = run.get(METADATA_KEY, {})
        facts = checks.for_version(str(run.get(API_VERSION_KEY))) or checks.newest()
        refs = {member: spec[field] for member, (_, field) in facts.REFERENCES.items()}
        workload = self._workload(refs["workload"])
        implementation = self._implementation(refs["implementation"])
        hardware, gpu, _ = self._environment(refs["environment"])
        protocol_name, protocol_title, protocol_metric = self._protocol(refs["protocol"])
        result = _result(spec, facts)
        return ResolvedRun(
            digest=stored.digest,
            source=stored.source,
            line=stored.line,
            pointer=sys.intern(stored.pointer),
            status=spec[STATUS_KEY],
            reason=spec.get(REASON_KEY),
            observed_at=spec[OBSERVED_AT_KEY],
            observed_key=parse_timestamp_or_epoch(spec[OBSERVED_AT_KEY]),
            metric=result.metric or protocol_metric or UNKNOWN,
            statistic=result.statistic,
            value=result.value,
            p20=result.spread.get("p20"),
            p80=result.spread.get("p80"),
            # Interned: many runs reference one record, and each parsed its own copy of
            # the digest (120 bytes a string; a resolved run outlives its record).
            workload_digest=sys.intern(refs["workload"]),
            protocol_digest=sys.intern(refs["protocol"]),
            environment_digest=sys.intern(refs["environment"]),
            implementation_digest=sys.intern(refs["implementation"]),
            hardware=hardware,
            gpu=gpu,
            workload=workload,
            implementation=implementation,
            protocol_name=protocol_name,
            protocol_title=protocol_title,
            dated=recordformat.OBSERVED_AT_UNKNOWN not in spec.get(QUALITY_FLAGS_KEY, ()),
            title=_interned(metadata.get(TITLE_KEY)),
            stddev=result.spread.get("stddev"),
            samples=result.samples,
            flags=tuple(spec.get(QUALITY_FLAGS_KEY, ())),
        )

    def _from_facts(self, run: RunFacts) -> ResolvedRun:
        """What :meth:`resolve` gives for the run whose stored facts these are.

        The facts are what ``store add`` read off this very resolution of the run's
        record (:func:`kernelindex_sdk.store.facts.run_facts`); only what the records
        it references say is resolved here, against this resolver's index, as for a
        record — once per shape the runs share (:data:`_Shaped`). The metric of a run
        without a result is its protocol's, as in :meth:`refresh`.
        """
        shaped = self._shapes.get(run.shape)
        if shaped is None:
            shaped = self._shapes[run.shape] = self._shaped(run.shape)
        for kind in shaped[-1]:
            self._missing(kind)
        # Positional, in the class's field order (_Shaped's): far cheaper than keywords.
        return ResolvedRun(
            run.digest,
            shaped[0],
            run.line,
            shaped[1],
            shaped[2],
            shaped[3],
            run.observed_at,
            parse_timestamp_or_epoch(run.observed_at),
            shaped[4],
            shaped[5],
            run.value,
            run.p20,
            run.p80,
            shaped[6],
            shaped[7],
            shaped[8],
            shaped[9],
            shaped[10],
            shaped[11],
            shaped[12],
            shaped[13],
            shaped[14],
            shaped[15],
            shaped[16],
            run.stddev,
            run.samples,
            shaped[17],
            shaped[18],
        )

    def _shaped(self, shape: RunShape) -> _Shaped:
        before = dict(self.missing)
        workload = self._workload(shape.workload_digest)
        implementation = self._implementation(shape.implementation_digest)
        hardware, gpu, _ = self._environment(shape.environment_digest)
        protocol_name, protocol_title, protocol_metric = self._protocol(shape.protocol_digest)
        missing = tuple(kind for kind, n in self.missing.items() if n != before.get(kind, 0))
        self.missing = before  # counted per run, by the caller
        intern = sys.intern
        metric = shape.metric if shape.statistic is not None else (protocol_metric or UNKNOWN)
        return (
            intern(shape.source),
            intern(shape.pointer),
            intern(shape.status),
            _interned(shape.reason),
            intern(metric),
            _interned(shape.statistic),
            intern(shape.workload_digest),
            intern(shape.protocol_digest),
            intern(shape.environment_digest),
            intern(shape.implementation_digest),
            hardware,
            gpu,
            workload,
            implementation,
            protocol_name,
            protocol_title,
            _interned(shape.title),
            shape.flags,
            recordformat.OBSERVED_AT_UNKNOWN not in shape.flags,
            missing,
        )

    def refresh(self, run: ResolvedRun) -> ResolvedRun:
        """``run`` resolved again against this resolver's index, from the digests it
        keeps: what :meth:`resolve` gives for its record, without the record.

        For a run resolved before its referenced records came (``compare --against``
        resolves each run as it is read; a reference run's Workload may come with the
        candidate), so that its parsed record need not be held meanwhile. Only what the
        referenced records decide changes; the metric of a run without a result is read
        off its protocol again (then inferred, by :func:`refresh_runs`).
        """
        workload = self._workload(run.workload_digest)
        implementation = self._implementation(run.implementation_digest)
        hardware, gpu, _ = self._environment(run.environment_digest)
        name, title, protocol_metric = self._protocol(run.protocol_digest)
        metric = run.metric if run.statistic is not None else (protocol_metric or UNKNOWN)
        now = (workload, implementation, hardware, gpu, name, title, metric)
        before = (
            run.workload,
            run.implementation,
            run.hardware,
            run.gpu,
            run.protocol_name,
            run.protocol_title,
            run.metric,
        )
        if now == before:
            return run
        return attrs.evolve(
            run,
            workload=workload,
            implementation=implementation,
            hardware=hardware,
            gpu=gpu,
            protocol_name=name,
            protocol_title=title,
            metric=metric,
        )

    def environment(self, digest: str) -> Mapping[str, Any] | None:
        """The environment record behind a digest, if it was given."""
        return self._environment(digest)[2]

    def gpu_names(self) -> dict[str, list[str]]:
        """Hardware identity → other names it goes by, for ``--gpu`` to match.

        The environment's name and title, the architecture and the driver's device
        name: ``--gpu sm_90`` or ``--gpu liger-bench-nvidia-h100`` work too.
        """
        names: dict[str, list[str]] = {}
        for identity, _, record in self._environments.values():
            if record is None:
                continue
            hardware = record[SPEC_KEY][recordformat.HARDWARE_KEY]
            metadata = record.get(METADATA_KEY, {})
            found = names.setdefault(identity, [])
            for name in (
                metadata.get(recordformat.NAME_KEY),
                metadata.get(TITLE_KEY),
                hardware.get(recordformat.ARCHITECTURE_KEY),
                hardware.get(recordformat.DEVICE_NAME_KEY),
            ):
                if isinstance(name, str) and name not in found:
                    found.append(name)
        return names

    def _missing(self, kind: str) -> None:
        self.missing[kind] = self.missing.get(kind, 0) + 1

    def _workload(self, digest: str) -> WorkloadInfo | None:
        if digest not in self._workloads:
            record = self.index.lookup(digest, "Workload")
            info = None
            if record is not None:
                spec = record[SPEC_KEY]
                info = WorkloadInfo(
                    kernel=spec[recordformat.KERNEL_KEY],
                    pass_=spec[recordformat.PASS_KEY],
                    dtype=spec[recordformat.DTYPE_KEY],
                    parameters=dict(spec[recordformat.PARAMETERS_KEY]),
                    settings=dict(spec.get(recordformat.SETTINGS_KEY, {})),
                    title=record.get(METADATA_KEY, {}).get(TITLE_KEY),
                )
            self._workloads[digest] = info
        info = self._workloads[digest]
        if info is None:
            self._missing("Workload")
        return info

    def _implementation(self, digest: str) -> ImplementationInfo | None:
        if digest not in self._implementations:
            record = self.index.lookup(digest, "Implementation")
            info = None
            if record is not None:
                spec = record[SPEC_KEY]
                package = spec.get(recordformat.PACKAGE_KEY, {})
                info = ImplementationInfo(
                    provider=spec[recordformat.PROVIDER_KEY],
                    package=package.get(recordformat.NAME_KEY),
                    version=package.get(recordformat.VERSION_KEY),
                    title=record.get(METADATA_KEY, {}).get(TITLE_KEY),
                    entry_point=spec.get(recordformat.ENTRY_POINT_KEY),
                    backend=spec.get(recordformat.BACKEND_KEY),
                )
            self._implementations[digest] = info
        info = self._implementations[digest]
        if info is None:
            self._missing("Implementation")
        return info

    def _environment(self, digest: str) -> tuple[str, str, Mapping[str, Any] | None]:
        if digest not in self._environments:
            record = self.index.lookup(digest, "ExecutionEnvironment")
            entry: tuple[str, str, Mapping[str, Any] | None]
            if record is None:
                entry = (f"environment {digest}", f"environment {short_digest(digest)}", None)
            else:
                hardware = record[SPEC_KEY][recordformat.HARDWARE_KEY]
                # One copy per GPU, not per environment (one per software stack).
                entry = (
                    sys.intern(hardware_identity(hardware)),
                    sys.intern(gpu_label(hardware)),
                    record,
                )
            self._environments[digest] = entry
        entry = self._environments[digest]
        if entry[2] is None:
            self._missing("ExecutionEnvironment")
        return entry

    def _protocol(self, digest: str) -> tuple[str | None, str | None, str | None]:
        """(name, title, metric) of a protocol; all None when it was not given."""
        if digest not in self._protocols:
            record = self.index.lookup(digest, "BenchmarkProtocol")
            found: tuple[str | None, str | None, str | None] = (None, None, None)
            if record is not None:
                metadata = record.get(METADATA_KEY, {})
                found = (
                    metadata.get(recordformat.NAME_KEY),
                    metadata.get(TITLE_KEY),
                    metric_of_protocol(record),
                )
            self._protocols[digest] = found
        entry = self._protocols[digest]
        if entry[0] is None:  # metadata.name is required: None means not given
            self._missing("BenchmarkProtocol")
        return entry


def resolve_runs(index: RecordIndex) -> tuple[list[ResolvedRun], Resolver]:
    """Every indexed run, resolved; the resolver keeps the count of missing records.

    A run that did not pass carries no result, so its metric comes from its protocol;
    where the protocol does not tell, from the passed runs that share its workload,
    protocol and hardware (when they all measure one metric).
    """
    resolver = Resolver(index)
    with gc_paused():
        runs = [resolver.resolve(stored) for stored in index.runs.values()]
    return _infer_metrics(runs), resolver


def _interned(text: str | None) -> str | None:
    """One copy of a string many runs carry (a title such as ``GeGLU MLP · liger``)."""
    return sys.intern(text) if isinstance(text, str) else text


def refresh_runs(
    runs: Iterable[ResolvedRun], index: RecordIndex
) -> tuple[list[ResolvedRun], Resolver]:
    """Runs resolved before, resolved again against ``index`` (:meth:`Resolver.refresh`):
    the same as :func:`resolve_runs` on their records with ``index``'s records, but
    their parsed records may have been let go."""
    resolver = Resolver(index)
    with gc_paused():
        refreshed = [resolver.refresh(run) for run in runs]
    return _infer_metrics(refreshed), resolver


def _infer_metrics(runs: list[ResolvedRun]) -> list[ResolvedRun]:
    if all(run.metric != UNKNOWN for run in runs):
        return runs
    seen: dict[tuple[str, str, str], set[str]] = {}
    for run in runs:
        if run.metric != UNKNOWN:
            place = (run.workload_digest, run.protocol_digest, run.hardware)
            seen.setdefault(place, set()).add(run.metric)
    out = []
    for run in runs:
        if run.metric == UNKNOWN:
            metrics = seen.get((run.workload_digest, run.protocol_digest, run.hardware), set())
            if len(metrics) == 1:
                run = attrs.evolve(run, metric=next(iter(metrics)))
        out.append(run)
    return out


@attrs.frozen
class _Result:
    """What a run's result says, in base units; all None for a run without one."""

    metric: str | None = None
    statistic: str | None = None
    value: float | None = None
    #: ``p20``, ``p80`` and ``stddev``, where recorded (summary or measurements).
    spread: Mapping[str, float] = attrs.Factory(dict)
    samples: int | None = None


#: The statistics that describe a run's spread rather than its centre.
_SPREAD: Final = ("p20", "p80", "stddev")


def _result(spec: Mapping[str, Any], facts: Any) -> _Result:
    """The metric, primary statistic and value, spread and sample count of a run.

    ``facts``: the checks module of the run's apiVersion (where results are, units).
    """
    units: Mapping[str, tuple[str, int]] = facts.UNITS
    for field, summary_key, metric in facts.RESULTS:
        result = spec.get(field)
        if result is None:
            continue
        summary = result[summary_key]
        statistic = result[PRIMARY_STATISTIC_KEY]
        spread: dict[str, float] = {
            stat: float(summary[stat]) for stat in _SPREAD if stat in summary
        }
        for measurement in spec.get(MEASUREMENTS_KEY, ()):
            stat = measurement[STATISTIC_KEY]
            if measurement[METRIC_KEY] == metric and stat in _SPREAD and stat not in spread:
                spread[stat] = float(measurement[VALUE_KEY]) * units[measurement[UNIT_KEY]][1]
        value = summary.get(statistic)
        return _Result(
            metric,
            statistic,
            float(value) if value is not None else None,
            spread,
            _count(result.get(SAMPLES_KEY)),
        )
    return _Result()


def _count(value: Any) -> int | None:
    """A sample count as the integer it is: JSON Schema takes ``100.0`` as an integer
    (the schema's ``samples``), and a count read as 100 wherever it was written so
    (a store holds it in an integer column) prints as 100 in every report."""
    return int(value) if isinstance(value, float) else value


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def parse_timestamp_or_epoch(text: str) -> datetime:
    """An RFC 3339 timestamp as an aware datetime, for ordering runs by age
    (:func:`kernelindex_sdk.base.recordformat.parse_timestamp`, which gives None for
    what it cannot parse); anything unparseable (schema-valid input never is) is the
    epoch here, so it still orders, as the oldest."""
    return recordformat.parse_timestamp(text) or _EPOCH


def show_value(value: Any) -> str:
    """A parameter or setting value as people write it (``true``, ``4096``, ``{"a":1}``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
