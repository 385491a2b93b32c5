"""KernelBench timing entries to runs, and the records each references, built once per key.

* each **entry** (``level → problem → {mean, std, min, max, num_trials, hardware,
  device}``) is a ``BenchmarkRun``: the mean (ms to whole ns) as the primary
  statistic, std, min and max as measurements, num_trials as the sample count, the
  entry's numbers unchanged in ``sourceNative.metrics``. An entry that is ``null``
  (the problem did not run) is a run that ``failed``, never dropped;
* the **level and problem** are the ``Workload`` (the problem's name as the kernel,
  ``level`` and ``problem`` number as parameters, the timed pass ``forward``);
* the **file name** gives the ``Implementation``: eager PyTorch, or torch.compile with
  its backend and mode;
* the **entry's own ``hardware``** gives the ``ExecutionEnvironment`` — never the
  folder, which only flags a disagreement (``hardware_differs_from_folder``);
* the **protocol** states what the files do not say (the timer, the warm-ups) as
  ``unknown`` or as the caller declared it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from bench_adapters.common import fields
from bench_adapters.common.gpus import resolve_gpu_warning
from bench_adapters.common.importing import Collector, Entry, EntryError, UnreadableSource
from bench_adapters.common.names import gpu_slug, record_name, slug
from bench_adapters.common.provenance import (
    CALLER,
    CATALOG,
    RECORD,
    UNKNOWN,
    Declarations,
    ProvenanceMap,
    software_spec,
)
from bench_adapters.common.records import (
    OBSERVED_AT_UNKNOWN,
    UNKNOWN_OBSERVED_AT,
    environment_record,
    protocol_record,
    run_envelope,
    workload_record,
)
from bench_adapters.kernelbench.files import (
    FileNameError,
    Implementation,
    agrees,
    folder_gpu,
    folder_name,
    implementation_of,
    implementation_of_file,
)
from bench_adapters.kernelbench.mapping import KernelBenchMapping
from kernelindex_sdk import models as m
from kernelindex_sdk.base import recordformat
from kernelindex_sdk.base.escaping import not_utf8
from kernelindex_sdk.base.recordformat import json_type
from kernelindex_sdk.canonical import digest
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.models.v1alpha1 import Statistic
from kernelindex_sdk.reading.sources import load_file

_LEVEL = re.compile(r"level[ _-]?([0-9]{1,6})", re.IGNORECASE)
_PROBLEM = re.compile(r"([0-9]{1,9})_(.*?)(?:\.py)?")
_TEXT_LIMIT = 4096

# Data-quality flags a run may carry (docs/importers/kernelbench.md).
DIFFERS_FROM_FOLDER = "hardware_differs_from_folder"
HARDWARE_FROM_OTHER_ENTRIES = "hardware_from_other_entries"
HARDWARE_UNKNOWN = "hardware_unknown"


def _check_names(path: str) -> None:
    """Refuse a file whose folder or file name is not UTF-8 (UnreadableSource): both
    names are written into every run it becomes (``externalId``, the
    ``kernelbench/folder`` label), and no record may hold such bytes."""
    for what, name in (("folder name", folder_name(path)), ("file name", os.path.basename(path))):
        problem = not_utf8(what, name)
        if problem is not None:
            raise UnreadableSource(Problem(problem, code="invalid-encoding", source=path))


@attrs.define(eq=False)
class KernelBenchMapper:
    """Maps the entries of KernelBench timing files into ``collector``."""

    collector: Collector
    mapping: KernelBenchMapping
    declarations: Declarations
    #: What the caller declared (``--set``), None where it did not.
    observed_at: str | None
    timer: str | None
    warmup: int | None
    gpu: str | None
    dtype: str | None
    #: Declared for files whose names do not say (``--set implementation=...``).
    implementation: str | None
    _protocol_digest: str | None = attrs.field(init=False, default=None)
    _environments: dict[tuple[str, str], str] = attrs.field(init=False, factory=dict)
    _workloads: dict[tuple[Any, ...], str] = attrs.field(init=False, factory=dict)
    _implementations: dict[str, str] = attrs.field(init=False, factory=dict)

    # ----------------------------------------------------------------------- files

    def map_files(self, paths: Iterable[str]) -> None:
        """Read every timing file first (an unreadable one raises before anything is
        mapped: IntakeError, UnreadableSource), then map each file's entries."""
        loaded = []
        for path in paths:
            _check_names(path)
            data = self._load(path)
            self.collector.expect(_entry_count(data), path)
            loaded.append((path, data))
        folders: dict[str, set[str]] = {}
        for path, data in loaded:
            folders.setdefault(_folder(path), set()).update(_gpus(data, self._hardware_key))
        for path, data in loaded:
            gpus = _gpus(data, self._hardware_key) or folders[_folder(path)]
            self.map_file(path, data, next(iter(gpus)) if len(gpus) == 1 else None)
            if self.collector.summary.stopped:
                return

    @property
    def _hardware_key(self) -> str:
        return self.mapping.entry["hardware"]

    def _load(self, path: str) -> dict[str, Any]:
        data = load_file(path)
        if not isinstance(data, dict):
            raise UnreadableSource(
                Problem(
                    f"not a KernelBench timing file: expected an object of levels, got "
                    f"{json_type(data)}",
                    code="unsupported-format",
                    source=path,
                )
            )
        return data

    def map_file(self, path: str, data: Mapping[str, Any], file_gpu: str | None) -> None:
        """Map every entry of one timing file's ``data``; ``file_gpu``: the one GPU its
        entries name (or, if none does, its folder's timing files), for null entries."""
        summary = self.collector.summary
        try:
            implementation = self._file_implementation(path)
        except FileNameError as error:
            # Like a CSV without a needed column: one line, every entry refused.
            entries = max(1, _entry_count(data))
            self.collector.refuse(
                [
                    Problem(
                        f"{error}; declare it with --set implementation=NAME",
                        code="unknown-implementation",
                        source=path,
                    )
                ]
            )
            summary.read += entries
            summary.refused += entries - 1
            return
        folder = folder_gpu(path)
        for level, problems in data.items():
            pointer = fields.at("", level)
            if not isinstance(problems, dict):
                got = json_type(problems)
                self.collector.refuse_read(
                    EntryError(f"expected an object of problems, got {got}", pointer).problem(path)
                )
                if summary.stopped:
                    return
                continue
            for problem, entry in problems.items():
                where = fields.at(pointer, problem)
                self.collector.attempt(
                    path,
                    where,
                    functools.partial(
                        self._entry,
                        path,
                        implementation,
                        folder,
                        file_gpu,
                        level,
                        problem,
                        entry,
                        where,
                    ),
                )
                if summary.stopped:
                    return

    def _file_implementation(self, path: str) -> Implementation:
        try:
            return implementation_of_file(path, self.mapping)
        except FileNameError:
            if self.implementation is None:
                raise
        return implementation_of(self.implementation, self.mapping)

    # ----------------------------------------------------------------------- entries

    def _entry(
        self,
        path: str,
        implementation: Implementation,
        folder: str | None,
        file_gpu: str | None,
        level: str,
        problem: str,
        value: Any,
        pointer: str,
    ) -> Entry:
        mapping = self.mapping
        keys = mapping.entry
        flags: list[str] = [] if self.observed_at else [OBSERVED_AT_UNKNOWN]
        labels: dict[str, str] = {}
        metrics: dict[str, Any] = {}
        observed = self.observed_at or UNKNOWN_OBSERVED_AT
        if value is None:
            gpu, origin = self._null_gpu(file_gpu)
            if origin == "file":
                # The run is tied to the environment the file's entries name (same
                # record, so compare shows the failure beside them); the run says so.
                flags.append(HARDWARE_FROM_OTHER_ENTRIES)
                origin = RECORD
            elif origin == UNKNOWN:
                flags.append(HARDWARE_UNKNOWN)
            spec: dict[str, Any] = {
                recordformat.STATUS_KEY: "failed",
                recordformat.REASON_KEY: (
                    "KernelBench recorded null for this problem: it did not run, "
                    "so there is no timing"
                ),
                recordformat.OBSERVED_AT_KEY: observed,
            }
        else:
            entry = fields.obj(value, pointer, "a timing object or null")
            hardware = entry.get(keys["hardware"])
            if hardware is None:
                if self.gpu is None:
                    raise EntryError(
                        "no hardware: the entry does not say which GPU ran it (declare it "
                        "with --set gpu=NAME; the folder name is not used)",
                        pointer,
                    )
                gpu, origin = self.gpu, CALLER
            else:
                gpu, origin = fields.text(hardware, f"{pointer}/{keys['hardware']}"), RECORD
                if folder is not None and not agrees(folder, gpu):
                    flags.append(DIFFERS_FROM_FOLDER)
            spec = {
                recordformat.STATUS_KEY: "passed",
                recordformat.OBSERVED_AT_KEY: observed,
                **self._result(entry, pointer),
            }
            metrics = self._metrics(path, entry, pointer)
            device = entry.get(keys["device"])
            if isinstance(device, str) and device:
                labels["kernelbench/device"] = device[:1024]
        if flags:
            spec[recordformat.QUALITY_FLAGS_KEY] = sorted(set(flags))
        folder_text = folder_name(path)
        stem = os.path.basename(path).rpartition(".")[0] or os.path.basename(path)
        benchmark = f"{level}/{problem}"
        native = m.SourceNative(
            source=mapping.source,
            benchmark=benchmark[:_TEXT_LIMIT],
            external_id=f"{folder_text}/{stem}/{benchmark}"[:_TEXT_LIMIT],
            metrics=metrics or None,
        )
        spec[recordformat.SOURCE_NATIVE_KEY] = m.unstructure(native)
        environment = self._environment(gpu, origin)
        workload, kernel, level_value = self._workload(level, problem, pointer)
        refs = (
            self._protocol(),
            workload,
            environment,
            self._implementation(implementation),
        )
        labels["kernelbench/folder"] = folder_text[:1024] or "."
        run = run_envelope(
            spec,
            name=record_name(
                f"kernelbench-level{level_value}-{kernel}-{implementation.name}-{gpu_slug(gpu)}"
            ),
            title=f"{problem} · {level} · {implementation.name} · {gpu}"[:_TEXT_LIMIT],
            labels=labels,
            digests=refs,
        )
        return Entry(run=run, digest=digest(run), refs=refs, source=path, pointer=pointer)

    def _null_gpu(self, file_gpu: str | None) -> tuple[str, str]:
        """Which GPU a null entry's run is tied to: the caller's, the one GPU the file's
        entries name (or its folder's timing files', when the file's name none), or none
        known."""
        if self.gpu is not None:
            return self.gpu, CALLER
        if file_gpu is not None:
            return file_gpu, "file"
        return "unknown", UNKNOWN

    def _result(self, entry: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        """A passed run's timing and measurements, in whole nanoseconds."""
        keys, factor = self.mapping.entry, self.mapping.ms_to_ns
        if keys["mean"] not in entry:
            raise EntryError(f"no {keys['mean']}: the entry holds no timing", pointer)

        def ns(role: str) -> int | None:
            key = keys[role]
            if key not in entry or entry[key] is None:
                return None
            value = fields.real(entry[key], f"{pointer}/{key}")
            if not fields.finite(value) or value < 0:
                raise EntryError(f"{key} = {value!r} ms is not a time", f"{pointer}/{key}")
            whole = fields.scaled(value, factor)
            if whole is None:
                raise EntryError(f"{key} = {value!r} ms is too large to record", f"{pointer}/{key}")
            return whole

        trials = entry.get(keys["trials"])
        timing = m.Timing(
            latency_ns={"mean": ns("mean")},  # type: ignore[dict-item]  # a number: checked above
            primary_statistic="mean",
            samples=None
            if trials is None
            else fields.integer(trials, f"{pointer}/{keys['trials']}", minimum=1),
        )
        spread: tuple[tuple[str, Statistic], ...] = (
            ("std", "stddev"),
            ("min", "min"),
            ("max", "max"),
        )
        measurements = [
            m.unstructure(m.Measurement("latency", "ns", statistic, value))
            for role, statistic in spread
            if (value := ns(role)) is not None
        ]
        result: dict[str, Any] = {recordformat.TIMING_KEY: m.unstructure(timing)}
        if measurements:
            result[recordformat.MEASUREMENTS_KEY] = measurements
        return result

    def _metrics(self, path: str, entry: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        """The entry's numbers under their own names, unchanged (ms, counts)."""
        metrics: dict[str, Any] = {}
        for key, value in entry.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                if key not in self.mapping.entry.values() and value is not None:
                    self.collector.warn(
                        f"{path}: {fields.at(pointer, key)}: member {key!r} is not a number: "
                        "not kept",
                        ("member", key),
                    )
                continue
            if fields.holdable(value):
                metrics[key] = value
        return metrics

    # ----------------------------------------------------------------------- records

    def _protocol(self) -> str:
        if self._protocol_digest is None:
            mapping = self.mapping
            provenance = ProvenanceMap()
            measurement: dict[str, Any] = {
                recordformat.TIMER_KEY: self.timer or "unknown",
                recordformat.PRIMARY_STATISTIC_KEY: "mean",
            }
            if self.warmup is not None:
                measurement[recordformat.WARMUP_ITERATIONS_KEY] = self.warmup
            # Each setting the files never hold: the caller's, or unknown.
            for key, declared, setting, unknown in (
                (recordformat.TIMER_KEY, bool(self.timer), "timer", "; timer is unknown"),
                (recordformat.WARMUP_ITERATIONS_KEY, self.warmup is not None, "warmup", ""),
            ):
                where = (recordformat.MEASUREMENT_KEY, key)
                if declared:
                    provenance.add(where, CALLER, f"--set {setting}={getattr(self, setting)}")
                else:
                    provenance.add(where, UNKNOWN, f"the files do not say{unknown}")
            timer = f"{self.timer} (declared by the importer's caller)" if self.timer else "unknown"
            warmup = (
                f"{self.warmup} (declared by the importer's caller)"
                if self.warmup is not None
                else "unknown"
            )
            notes = mapping.notes.replace("{timer}", timer).replace("{warmup}", warmup)
            name = "kernelbench-baseline"
            title = f"{mapping.title} · timer {self.timer or 'unknown'}"
            if self.warmup is not None:
                name += f"-warmup{self.warmup}"
                title += f" · {self.warmup} warm-ups"
            record = protocol_record(
                m.Metadata(
                    name=record_name(f"{name}-{self.timer or 'unknown-timer'}"), title=title
                ),
                m.structure(dict(mapping.harness), m.Harness),
                measurement,
                m.Comparability(notes=notes, family=mapping.family),
                provenance.as_json(),
            )
            self._protocol_digest = self.collector.keep(record)
        return self._protocol_digest

    def _environment(self, gpu: str, origin: str) -> str:
        key = (gpu, origin)
        cached = self._environments.get(key)
        if cached is not None:
            return cached
        provenance = ProvenanceMap()
        if origin == UNKNOWN:
            hardware: dict[str, Any] = {
                recordformat.VENDOR_KEY: "unknown",
                recordformat.PRODUCT_KEY: "unknown",
            }
            provenance.add_all(
                (
                    (recordformat.HARDWARE_KEY, recordformat.VENDOR_KEY),
                    (recordformat.HARDWARE_KEY, recordformat.PRODUCT_KEY),
                ),
                UNKNOWN,
                "a null entry in a file whose entries name more than one GPU, or none",
            )
            name, title = "kernelbench-unknown-gpu", "KernelBench host · unknown GPU"
        else:
            warn = self.collector.warn
            resolved = resolve_gpu_warning(gpu, warn, lacks="form factor or architecture")
            detail = "--set gpu=" + gpu if origin == CALLER else "the entry's hardware"
            hardware = dict(resolved.spec)
            hardware[recordformat.DEVICE_NAME_KEY] = gpu
            for field in hardware:
                provenance.add(
                    (recordformat.HARDWARE_KEY, field),
                    CALLER if origin == CALLER else RECORD,
                    detail,
                )
            if recordformat.ARCHITECTURE_KEY in hardware:
                provenance.add(
                    (recordformat.HARDWARE_KEY, recordformat.ARCHITECTURE_KEY),
                    CATALOG,
                    "the GPU catalog, by product",
                )
            if resolved.vendor_from in ("family", "catalog"):
                provenance.add(
                    (recordformat.HARDWARE_KEY, recordformat.VENDOR_KEY),
                    CATALOG,
                    "the GPU catalog, by product",
                )
            elif resolved.vendor_from is None:
                provenance.add(
                    (recordformat.HARDWARE_KEY, recordformat.VENDOR_KEY),
                    UNKNOWN,
                    "the name states no vendor",
                )
            name, title = f"kernelbench-{gpu_slug(gpu)}", f"KernelBench host · {gpu}"
        software = software_spec(
            {}, self.declarations.software, self.mapping.expected_software, provenance
        )
        record = environment_record(
            m.Metadata(name=record_name(name), title=title[:_TEXT_LIMIT]),
            hardware,
            software,
            provenance.as_json(),
        )
        cached = self._environments[key] = self.collector.keep(record)
        return cached

    def _workload(self, level: str, problem: str, pointer: str) -> tuple[str, str, str]:
        """The workload's digest, the kernel slug and the level as written in names."""
        level_match = _LEVEL.fullmatch(level.strip())
        level_value: int | str = int(level_match.group(1)) if level_match else level
        problem_match = _PROBLEM.fullmatch(problem.strip())
        parameters: dict[str, Any] = {"level": level_value}
        if problem_match is not None:
            parameters["problem"] = int(problem_match.group(1))
            name = problem_match.group(2)
        else:
            name = problem[:-3] if problem.endswith(".py") else problem
        kernel = slug(name).strip("._-") or "unnamed"
        dtype = self.dtype or self.mapping.unspecified_dtype
        key = (kernel, tuple(parameters.items()), dtype, problem)
        cached = self._workloads.get(key)
        if cached is None:
            number = f"-{parameters['problem']}" if "problem" in parameters else ""
            record = workload_record(
                record_name(f"kernelbench-level{level_value}{number}-{kernel}"),
                f"{_display(name) or kernel} · {level} · {problem}"[:_TEXT_LIMIT],
                m.WorkloadSpec(kernel=kernel, pass_="forward", parameters=parameters, dtype=dtype),
            )
            cached = self._workloads[key] = self.collector.keep(record)
        return cached, kernel, str(level_value)

    def _implementation(self, implementation: Implementation) -> str:
        cached = self._implementations.get(implementation.name)
        if cached is not None:
            return cached
        mapping = self.mapping
        if not implementation.compiled:
            info = mapping.eager
            backend: str | None = info["backend"]
            provider = info["provider"]
            title = info["title"]
        else:
            info = mapping.compile
            if implementation.backend and implementation.backend not in mapping.backends:
                self.collector.warn(
                    f"unknown torch.compile backend {implementation.backend!r} (from the file "
                    f"name {implementation.name!r}): imported as named",
                    ("backend", implementation.backend),
                )
            if implementation.mode and implementation.mode not in mapping.modes:
                self.collector.warn(
                    f"unknown torch.compile mode {implementation.mode!r} (from the file name "
                    f"{implementation.name!r}): imported as named",
                    ("mode", implementation.mode),
                )
            provider = slug(implementation.name)
            backend = slug(implementation.backend) if implementation.backend else None
            said = [
                f"backend {implementation.backend}" if implementation.backend else "",
                f"mode {implementation.mode}" if implementation.mode else "",
            ]
            title = info["title"] + (f" ({', '.join(s for s in said if s)})" if any(said) else "")
        spec = m.ImplementationSpec(
            provider=provider,
            backend=backend,
            package=m.Package(mapping.package),
            source=m.SourceLocation(mapping.repository),
        )
        metadata = m.Metadata(
            name=record_name(f"kernelbench-impl-{implementation.name}"), title=title
        )
        record = m.unstructure(m.Implementation(metadata=metadata, spec=spec))
        cached = self._implementations[implementation.name] = self.collector.keep(record)
        return cached


def _display(name: str) -> str:
    """A problem's name for people: ``Square_matrix_multiplication_`` → ``Square matrix
    multiplication`` (compare shows it as the kernel's title)."""
    return " ".join(name.replace("_", " ").split())


def _folder(path: str) -> str:
    """The folder a file is in, as one key whatever the path's spelling."""
    return os.path.dirname(os.path.abspath(path))


def _gpus(data: Mapping[str, Any], key: str) -> set[str]:
    """Every GPU a file's entries name."""
    found: set[str] = set()
    for problems in data.values():
        if not isinstance(problems, dict):
            continue
        for entry in problems.values():
            if isinstance(entry, dict) and isinstance(entry.get(key), str) and entry[key]:
                found.add(entry[key])
    return found


def _entry_count(data: Mapping[str, Any]) -> int:
    """How many entries a timing file holds (a level that is no object counts as one)."""
    return sum(len(problems) if isinstance(problems, dict) else 1 for problems in data.values())
