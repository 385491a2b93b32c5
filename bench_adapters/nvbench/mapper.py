"""nvbench states to runs, and the protocol, workload, environment and implementation each
references, built and digested once per key.

* a **device** is an ``ExecutionEnvironment``: its name (split by the shared GPU
  catalog into product and form factor), SM version as architecture and compute
  capability, memory, SMs, clocks, bus, L2 and ECC, and the nvbench version and git
  sha of the file; driver and CUDA versions are not in the file and are ``unknown``
  in its provenance (or declared by the caller);
* a **benchmark and its axis values** are a ``Workload``: the benchmark's name as the
  kernel, every axis as a parameter under its snake_case name (int64, float64 and
  string axes as numbers and strings, power-of-two axes as their value, type axes as
  the type's name); the dtype when the type axes name one numeric type;
* the **program** (argv[0]) is the ``Implementation``;
* nvbench's **measurement method and settings** are the ``BenchmarkProtocol``;
* each **state** is a ``BenchmarkRun``: the mean (seconds to whole ns) as the primary
  statistic, the noise as a standard deviation, min and max where nvbench wrote them,
  the sample count; every numeric summary kept unchanged in ``sourceNative.metrics``
  under its tag. A skipped state is a run with status ``skipped`` and nvbench's reason;
  a state with no timing summary is a run that ``failed``, saying which tag is missing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_adapters.common import fields, numbers, records
from bench_adapters.common.gpus import resolve_gpu_warning
from bench_adapters.common.importing import Collector, Entry, EntryError
from bench_adapters.common.names import gpu_slug, record_name, slug, snake_slug, value_slug
from bench_adapters.common.provenance import (
    CATALOG,
    FILE,
    RECORD,
    UNKNOWN,
    Declarations,
    ProvenanceMap,
    software_spec,
)
from bench_adapters.nvbench.mapping import Method, NvbenchMapping
from bench_adapters.nvbench.reader import NvbenchFile, argv_text, flags_in
from kernelindex_sdk import models as m
from kernelindex_sdk.base import recordformat
from kernelindex_sdk.canonical import digest
from kernelindex_sdk.models.v1alpha1 import Statistic
from kernelindex_sdk.reading.intake import MAX_SAFE_INTEGER

NS_PER_S = 1_000_000_000
_TEXT_LIMIT = 4096
_LABEL_LIMIT = 1024
_DEVICE_TOKEN = re.compile(r"^Device=\S+\s*")

# Data-quality flags a run may carry (docs/importers/nvbench.md).
NOISE_NOT_FINITE = "noise_not_finite"
NOISE_ABOVE_MAX = "noise_above_max_noise"
FEWER_SAMPLES = "fewer_samples_than_min_samples"
METRICS_DROPPED = "native_metrics_dropped"


@attrs.define(eq=False)
class NvbenchMapper:
    """Maps the states of nvbench files into ``collector``, each referenced record once."""

    collector: Collector
    mapping: NvbenchMapping
    declarations: Declarations
    observed_at: str | None
    _protocols: dict[tuple[Any, ...], str] = attrs.field(init=False, factory=dict)
    _workloads: dict[tuple[Any, ...], tuple[str, str]] = attrs.field(init=False, factory=dict)
    _implementations: dict[str | None, str] = attrs.field(init=False, factory=dict)

    # ----------------------------------------------------------------------- files

    def map_file(self, nv: NvbenchFile) -> None:
        """Map every state of one file; stops early when the collector is stopped."""
        summary = self.collector.summary
        self.collector.expect(_state_count(nv.benchmarks), nv.path)
        devices = self._devices(nv)
        for index, bench in enumerate(nv.benchmarks):
            pointer = f"/benchmarks/{index}"
            try:
                name, axes, states = _benchmark(bench, pointer)
            except EntryError as error:
                self.collector.refuse_read(error.problem(nv.path))
                if summary.stopped:
                    return
                continue
            for position, state in enumerate(states):
                where = f"{pointer}/states/{position}"
                self.collector.attempt(
                    nv.path,
                    where,
                    functools.partial(self._state, nv, name, axes, state, where, devices),
                )
                if summary.stopped:
                    return

    # ----------------------------------------------------------------------- devices

    def _devices(self, nv: NvbenchFile) -> dict[int, _Device | EntryError]:
        """Device id → its environment (digest, name, slug), or why it cannot be one."""
        found: dict[int, _Device | EntryError] = {}
        for index, value in enumerate(nv.devices):
            pointer = f"/devices/{index}"
            try:
                device = fields.obj(value, pointer, "a device object")
                ident = fields.integer(device.get("id", index), f"{pointer}/id")
            except EntryError:
                continue  # no id: no state can name it; a state naming it says so
            if ident in found:
                found[ident] = EntryError(f"device id {ident} is listed twice", pointer)
                continue
            try:
                found[ident] = self._environment(nv, device, pointer)
            except EntryError as error:
                found[ident] = error
        return found

    def _environment(self, nv: NvbenchFile, device: Mapping[str, Any], pointer: str) -> _Device:
        mapping = self.mapping
        name = fields.text(device.get("name"), f"{pointer}/name")
        sm_version = fields.integer(device.get("sm_version"), f"{pointer}/sm_version", minimum=100)
        if sm_version > 9999:
            raise EntryError(
                f"sm_version {sm_version} is not an SM version", f"{pointer}/sm_version"
            )
        resolved = resolve_gpu_warning(name, self.collector.warn, f"{nv.path}: {pointer}/name: ")
        provenance = ProvenanceMap()
        hardware: dict[str, Any] = {
            recordformat.VENDOR_KEY: mapping.vendor,
            recordformat.PRODUCT_KEY: resolved.spec[recordformat.PRODUCT_KEY],
        }
        provenance.add(
            (recordformat.HARDWARE_KEY, recordformat.VENDOR_KEY),
            CATALOG,
            "nvbench measures CUDA devices",
        )
        read_by = "device name, read by the GPU catalog" if resolved.known else "device name"
        provenance.add((recordformat.HARDWARE_KEY, recordformat.PRODUCT_KEY), RECORD, read_by)
        if recordformat.FORM_FACTOR_KEY in resolved.spec:
            hardware[recordformat.FORM_FACTOR_KEY] = resolved.spec[recordformat.FORM_FACTOR_KEY]
            provenance.add(
                (recordformat.HARDWARE_KEY, recordformat.FORM_FACTOR_KEY), RECORD, read_by
            )
        hardware[recordformat.ARCHITECTURE_KEY] = f"sm_{sm_version // 10}"
        provenance.add(
            (recordformat.HARDWARE_KEY, recordformat.ARCHITECTURE_KEY), RECORD, "device sm_version"
        )
        hardware[recordformat.DEVICE_NAME_KEY] = name
        provenance.add(
            (recordformat.HARDWARE_KEY, recordformat.DEVICE_NAME_KEY), RECORD, "device name"
        )
        hardware[recordformat.COMPUTE_CAPABILITY_KEY] = (
            f"{sm_version // 100}.{sm_version % 100 // 10}"
        )
        provenance.add(
            (recordformat.HARDWARE_KEY, recordformat.COMPUTE_CAPABILITY_KEY),
            RECORD,
            "device sm_version",
        )
        for key, field in mapping.device_fields.items():
            value = device.get(key)
            if value is None:
                provenance.add((recordformat.HARDWARE_KEY, field), UNKNOWN, f"no device {key}")
                continue
            if field == recordformat.ECC_ENABLED_KEY:
                if not isinstance(value, bool):
                    raise EntryError(
                        f"expected a boolean, got {fields.shown(value)}", f"{pointer}/{key}"
                    )
                hardware[field] = value
            else:
                hardware[field] = fields.integer(value, f"{pointer}/{key}", minimum=1)
            provenance.add((recordformat.HARDWARE_KEY, field), RECORD, f"device {key}")
        recorded: dict[str, tuple[str, str, str]] = {}
        if nv.nvbench_version:
            recorded["nvbench"] = (nv.nvbench_version, FILE, "meta.version.nvbench.string")
        if nv.git_sha:
            recorded["nvbench-git-sha"] = (nv.git_sha, FILE, "meta.version.nvbench.git_sha")
        software = software_spec(
            recorded, self.declarations.software, mapping.expected_software, provenance
        )
        slug = gpu_slug(name)
        record = records.environment_record(
            m.Metadata(name=record_name(f"nvbench-{slug}"), title=f"nvbench host · {name}"),
            hardware,
            software,
            provenance.as_json(),
        )
        return _Device(digest=self.collector.keep(record), name=name, slug=slug)

    # ----------------------------------------------------------------------- states

    def _state(
        self,
        nv: NvbenchFile,
        bench: str,
        axes: Mapping[str, Mapping[str, Any]],
        value: Any,
        pointer: str,
        devices: Mapping[int, _Device | EntryError],
    ) -> Entry:
        state = fields.obj(value, pointer, "a state object")
        ident = fields.integer(state.get("device"), f"{pointer}/device")
        device = devices.get(ident)
        if device is None:
            raise EntryError(
                f"device {ident} is not one of the file's devices", f"{pointer}/device"
            )
        if isinstance(device, EntryError):
            raise EntryError(
                f"device {ident} cannot be read ({device.pointer}: {device.message})",
                f"{pointer}/device",
            )
        parameters, types = _parameters(state.get("axis_values"), axes, f"{pointer}/axis_values")
        values, dropped = self._summaries(nv, state.get("summaries"), f"{pointer}/summaries")
        settings = self._settings(nv, state, pointer)
        skipped = state.get("is_skipped") is True
        method = next((m for m in self.mapping.methods if m.mean in values), None)
        protocol = self._protocol(method or self.mapping.methods[0], settings)
        workload, workload_slug = self._workload(bench, parameters, types)
        implementation = self._implementation(nv.program)
        refs = (protocol, workload, device.digest, implementation)

        state_name = state.get("name") if isinstance(state.get("name"), str) else None
        shown_axes = _DEVICE_TOKEN.sub("", state_name or "").strip() or workload_slug
        flags: list[str] = [] if self.observed_at else [records.OBSERVED_AT_UNKNOWN]
        spec: dict[str, Any] = {
            recordformat.OBSERVED_AT_KEY: self.observed_at or records.UNKNOWN_OBSERVED_AT
        }
        if skipped:
            reason = state.get("skip_reason")
            spec = {
                recordformat.STATUS_KEY: "skipped",
                recordformat.REASON_KEY: (
                    reason
                    if isinstance(reason, str) and reason.strip()
                    else "nvbench skipped this state (no reason given)"
                )[:_TEXT_LIMIT],
                **spec,
            }
        elif method is None:
            tags = ", ".join(m.mean for m in self.mapping.methods)
            spec = {
                recordformat.STATUS_KEY: "failed",
                recordformat.REASON_KEY: (
                    f"nvbench recorded no time for this state (no summary {tags})"
                ),
                **spec,
            }
        else:
            spec = {recordformat.STATUS_KEY: "passed", **spec}
            flags += self._result(method, values, settings, spec, pointer)
        if dropped:
            flags.append(METRICS_DROPPED)
        if flags:
            spec[recordformat.QUALITY_FLAGS_KEY] = sorted(set(flags))
        metrics = {
            key: number
            for key, number in values.items()
            if not isinstance(number, str) and fields.holdable(number)
        }
        native = m.SourceNative(
            source=self.mapping.source,
            benchmark=bench[:_TEXT_LIMIT],
            external_id=f"{nv.program or 'unknown-program'}/{bench}/{state_name or shown_axes}"[
                :_TEXT_LIMIT
            ],
            metrics=metrics or None,
        )
        spec[recordformat.SOURCE_NATIVE_KEY] = m.unstructure(native)
        labels = {}
        if nv.argv:
            labels["nvbench/argv"] = argv_text(nv.argv)[:_LABEL_LIMIT]
        if state_name:
            labels["nvbench/state"] = state_name[:_LABEL_LIMIT]
        run = records.run_envelope(
            spec,
            name=record_name(f"nvbench-{snake_slug(bench)}-{workload_slug}-{device.slug}"),
            title=f"{bench} · {shown_axes} · {device.name}"[:_TEXT_LIMIT],
            labels=labels,
            digests=refs,
        )
        return Entry(run=run, digest=digest(run), refs=refs, source=nv.path, pointer=pointer)

    def _result(
        self,
        method: Method,
        values: Mapping[str, float | int | str],
        settings: Mapping[str, Any],
        spec: dict[str, Any],
        pointer: str,
    ) -> list[str]:
        """Fill a passed run's timing and measurements; its data-quality flags."""
        mean = values[method.mean]
        if isinstance(mean, str) or not fields.finite(mean) or mean < 0:
            raise EntryError(f"{method.mean} is {mean!r}: not a time", f"{pointer}/summaries")
        flags: list[str] = []
        mean_ns = _ns(mean, method.mean, pointer)
        found = values.get(method.samples) if method.samples else None
        samples = found if isinstance(found, int) and found >= 1 else None
        timing = m.Timing(latency_ns={"mean": mean_ns}, primary_statistic="mean", samples=samples)
        if samples is not None:
            minimum = settings.get("min_samples")
            if isinstance(minimum, (int, float)) and samples < minimum:
                flags.append(FEWER_SAMPLES)
        measurements = []
        noise = values.get(method.noise) if method.noise else None
        stddev = values.get(method.stddev) if method.stddev else None
        if isinstance(stddev, float) and fields.finite(stddev) and stddev >= 0:
            deviation: float | None = stddev
        elif isinstance(noise, (int, float)) and fields.finite(noise) and noise >= 0:
            deviation = noise * mean
        else:
            deviation = None
            if noise is not None:
                flags.append(NOISE_NOT_FINITE)
        if isinstance(noise, (int, float)) and fields.finite(noise):
            ceiling = settings.get("max_noise")
            if isinstance(ceiling, (int, float)) and ceiling > 0 and noise > ceiling:
                flags.append(NOISE_ABOVE_MAX)
        if deviation is not None:
            measurements.append(_latency("stddev", _ns(deviation, "stddev", pointer)))
        extremes: tuple[tuple[Statistic, str | None], ...] = (
            ("min", method.min),
            ("max", method.max),
        )
        for statistic, tag in extremes:
            found = values.get(tag) if tag else None
            if isinstance(found, (int, float)) and fields.finite(found) and found >= 0:
                measurements.append(_latency(statistic, _ns(found, str(tag), pointer)))
        spec[recordformat.TIMING_KEY] = m.unstructure(timing)
        if measurements:
            spec[recordformat.MEASUREMENTS_KEY] = measurements
        return flags

    def _summaries(
        self, nv: NvbenchFile, value: Any, pointer: str
    ) -> tuple[dict[str, float | int | str], bool]:
        """Summary tag (``tag/name`` for a datum not called ``value``) → its value; and
        whether a number a record cannot hold (infinite, NaN, beyond 2^53) is among them
        (it is kept here for the mapping, and left out of ``sourceNative.metrics``)."""
        if value is None:
            return {}, False
        found: dict[str, float | int | str] = {}
        dropped = False
        for index, item in enumerate(fields.array(value, pointer)):
            here = f"{pointer}/{index}"
            summary = fields.obj(item, here, "a summary object")
            tag = fields.text(summary.get("tag"), f"{here}/tag")
            data = fields.array(summary.get("data", []), f"{here}/data")
            for position, datum in enumerate(data):
                there = f"{here}/data/{position}"
                datum = fields.obj(datum, there, "a datum object")
                name = datum.get("name", "value")
                key = tag if name == "value" else f"{tag}/{name}"
                parsed = _datum(datum, there)
                if parsed is None:
                    continue
                if not isinstance(parsed, str) and not fields.holdable(parsed):
                    dropped = True
                    self.collector.warn(
                        f"{nv.path}: {there}: {key} = {parsed!r} cannot be held in a record "
                        "(not finite, or beyond 2**53): left out of sourceNative.metrics",
                        ("unholdable", nv.path, key),
                    )
                found[key] = parsed
        return found, dropped

    def _settings(self, nv: NvbenchFile, state: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        """The state's sampling settings (every scalar member that is not the state
        itself), and the measurement flags on the command line."""
        settings: dict[str, Any] = {}
        for key, value in state.items():
            if key in self.mapping.state_keys:
                continue
            if isinstance(value, dict):
                for sub, item in value.items():
                    self._setting(nv, settings, f"{key}.{sub}", item, f"{pointer}/{key}/{sub}")
            else:
                self._setting(nv, settings, key, value, f"{pointer}/{key}")
        settings.update(flags_in(nv.argv, self.mapping.argv_flags))
        return dict(sorted(settings.items()))

    def _setting(
        self, nv: NvbenchFile, settings: dict[str, Any], key: str, value: Any, pointer: str
    ) -> None:
        if value is None:
            return
        scalar = isinstance(value, (str, bool)) or (
            isinstance(value, (int, float)) and abs(value) <= MAX_SAFE_INTEGER
        )
        if not scalar or not key or len(key) > 128:
            self.collector.warn(
                f"{nv.path}: {pointer}: state member {key!r} is not a setting a protocol can "
                "hold (a string, number or boolean): left out",
                ("setting", key),
            )
            return
        settings[key] = value

    # ----------------------------------------------------------------------- records

    def _protocol(self, method: Method, settings: Mapping[str, Any]) -> str:
        key = (method.name, tuple((k, type(v).__name__, v) for k, v in settings.items()))
        cached = self._protocols.get(key)
        if cached is None:
            mapping = self.mapping
            measurement: dict[str, Any] = {
                recordformat.TIMER_KEY: method.timer,
                recordformat.PRIMARY_STATISTIC_KEY: "mean",
            }
            provenance = ProvenanceMap()
            provenance.add(
                (recordformat.MEASUREMENT_KEY, recordformat.TIMER_KEY),
                CATALOG,
                f"nvbench's {method.name} measurement",
            )
            if method.flush_l2_cache is not None:
                measurement[recordformat.FLUSH_L2_CACHE_KEY] = method.flush_l2_cache
                provenance.add(
                    (recordformat.MEASUREMENT_KEY, recordformat.FLUSH_L2_CACHE_KEY),
                    CATALOG,
                    f"nvbench's {method.name} measurement",
                )
            if settings:
                measurement[recordformat.HARNESS_SETTINGS_KEY] = dict(settings)
                provenance.add(
                    (recordformat.MEASUREMENT_KEY, recordformat.HARNESS_SETTINGS_KEY),
                    RECORD,
                    "the state's settings and argv flags",
                )
            shown = ", ".join(f"{k}={v}" for k, v in settings.items())
            record = records.protocol_record(
                m.Metadata(
                    name=record_name(f"nvbench-{method.name}"),
                    title=(f"{method.title} · {shown}" if shown else method.title)[:_TEXT_LIMIT],
                ),
                m.structure(dict(mapping.harness), m.Harness),
                measurement,
                m.Comparability(notes=method.notes, family=mapping.family),
                provenance.as_json(),
            )
            cached = self._protocols[key] = self.collector.keep(record)
        return cached

    def _workload(
        self, bench: str, parameters: Mapping[str, Any], types: Sequence[tuple[str, str | None]]
    ) -> tuple[str, str]:
        dtype = self._dtype(types)
        key = (bench, tuple((k, type(v).__name__, v) for k, v in parameters.items()), dtype)
        cached = self._workloads.get(key)
        if cached is None:
            kernel = snake_slug(bench)
            shape = "-".join(_slug_part(name, value) for name, value in parameters.items())
            slug = f"{shape}-{dtype}" if shape else dtype
            record = records.workload_record(
                record_name(f"nvbench-{kernel}-{slug}"),
                f"{bench} · {slug}"[:_TEXT_LIMIT],
                m.WorkloadSpec(
                    kernel=kernel, pass_="forward", parameters=dict(parameters), dtype=dtype
                ),
            )
            cached = self._workloads[key] = (self.collector.keep(record), slug)
        return cached

    def _dtype(self, types: Sequence[tuple[str, str | None]]) -> str:
        """The dtype the type axes name, when they name exactly one numeric type."""
        known = {
            self.mapping.types.get(value) or self.mapping.types.get(description or "")
            for value, description in types
        }
        if len(known) == 1 and None not in known:
            return str(next(iter(known)))
        return self.mapping.unspecified_dtype

    def _implementation(self, program: str | None) -> str:
        cached = self._implementations.get(program)
        if cached is None:
            if program is None:
                self.collector.warn(
                    "a file has no meta.argv: its benchmark program is unknown "
                    "(implementation provider unknown_program)",
                    ("program",),
                )
            name = program or "unknown_program"
            record = m.unstructure(
                m.Implementation(
                    metadata=m.Metadata(
                        name=record_name(f"nvbench-impl-{name}"),
                        title=f"nvbench benchmark program {name}"[:_TEXT_LIMIT],
                    ),
                    spec=m.ImplementationSpec(provider=slug(name), backend="cuda"),
                )
            )
            cached = self._implementations[program] = self.collector.keep(record)
        return cached


class _Device:
    """A device's environment: its digest, and its name and slug for run names and titles."""

    __slots__ = ("digest", "name", "slug")

    def __init__(self, digest: str, name: str, slug: str) -> None:
        self.digest = digest
        self.name = name
        self.slug = slug


def _state_count(benchmarks: Sequence[Any]) -> int:
    """How many states a file holds (a benchmark that cannot be read counts as one)."""
    return sum(
        len(states) if isinstance(states, list) else 1
        for states in (b.get("states") if isinstance(b, dict) else None for b in benchmarks)
    )


def _benchmark(value: Any, pointer: str) -> tuple[str, dict[str, dict[str, Any]], list[Any]]:
    """A benchmark's name, its axes by name (type, descriptions of type values), states."""
    bench = fields.obj(value, pointer, "a benchmark object")
    name = fields.text(bench.get("name"), f"{pointer}/name")
    axes: dict[str, dict[str, Any]] = {}
    listed = bench.get("axes")
    for index, item in enumerate(fields.array(listed, f"{pointer}/axes") if listed else []):
        here = f"{pointer}/axes/{index}"
        axis = fields.obj(item, here, "an axis object")
        axis_name = fields.text(axis.get("name"), f"{here}/name")
        descriptions: dict[str, str] = {}
        values = axis.get("values")
        for entry in fields.array(values, f"{here}/values") if values is not None else []:
            if isinstance(entry, dict) and isinstance(entry.get("input_string"), str):
                description = entry.get("description")
                descriptions[entry["input_string"]] = (
                    description if isinstance(description, str) else ""
                )
        axes[axis_name] = {"type": axis.get("type"), "descriptions": descriptions}
    states = fields.array(bench.get("states"), f"{pointer}/states")
    return name, axes, states


def _parameters(
    value: Any, axes: Mapping[str, Mapping[str, Any]], pointer: str
) -> tuple[dict[str, Any], list[tuple[str, str | None]]]:
    """A state's axis values as workload parameters, and its type axes' (value, C++ type)."""
    parameters: dict[str, Any] = {}
    names: dict[str, str] = {}
    types: list[tuple[str, str | None]] = []
    if value is None:
        return parameters, types
    for index, item in enumerate(fields.array(value, pointer)):
        here = f"{pointer}/{index}"
        axis = fields.obj(item, here, "an axis value object")
        name = fields.text(axis.get("name"), f"{here}/name")
        declared = axes.get(name, {})
        kind = declared.get("type") or axis.get("type")
        raw = axis.get("value")
        parsed: Any
        if kind == "int64":
            parsed = fields.integer(raw, f"{here}/value", minimum=-MAX_SAFE_INTEGER)
        elif kind == "float64":
            parsed = fields.real(raw, f"{here}/value")
            if not fields.holdable(parsed):
                raise EntryError(f"axis value {raw!r} is not a finite number", f"{here}/value")
        elif kind == "type":
            parsed = fields.text(raw, f"{here}/value")
            types.append((parsed, declared.get("descriptions", {}).get(parsed)))
        elif isinstance(raw, str) or _holdable_number(raw):
            parsed = raw
        else:
            raise EntryError(
                f"axis value of type {kind!r} cannot be read: {fields.shown(raw)}", f"{here}/value"
            )
        key = snake_slug(name)
        if key in names:
            raise EntryError(
                f"axes {names[key]!r} and {name!r} are both parameter {key!r}", f"{here}/name"
            )
        names[key] = name
        parameters[key] = parsed
    return parameters, types


def _holdable_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float)) and not isinstance(value, bool) and fields.holdable(value)
    )


def _datum(datum: Mapping[str, Any], pointer: str) -> float | int | str | None:
    """One summary datum: int64 and float64 values (written as strings) as numbers,
    strings as they are; None for anything that is no value."""
    kind, value = datum.get("type"), datum.get("value")
    if kind == "int64":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        number = numbers.integer(value) if isinstance(value, str) else None
        if number is None:
            raise EntryError(f"expected an int64, got {fields.shown(value)}", f"{pointer}/value")
        return number
    if kind == "float64":
        return fields.real(value, f"{pointer}/value")
    if isinstance(value, str):
        if kind == "string":
            return value
        found = numbers.decimal(value, non_finite=True)
        return value if found is None else found
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def _ns(seconds: float, what: str, pointer: str) -> int:
    """Seconds as whole nanoseconds."""
    value = fields.scaled(seconds, NS_PER_S)
    if value is None:
        raise EntryError(f"{what} = {seconds!r} s is too large to record", f"{pointer}/summaries")
    return value


def _latency(statistic: Statistic, value: int) -> dict[str, Any]:
    return dict(m.unstructure(m.Measurement("latency", "ns", statistic, value)))


def _slug_part(name: str, value: Any) -> str:
    """``block_size64``, ``t=u8``: numbers follow the name, strings after ``=``."""
    if isinstance(value, str):
        return f"{name}={value_slug(value)}"
    return f"{name}{value!r}" if isinstance(value, float) else f"{name}{value}"
