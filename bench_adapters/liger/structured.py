"""A Liger CSV row computed from a run's structured fields (runs not imported from a CSV).

``kernelindex bench liger`` writes runs that no CSV row stands behind. The export still
gives each one the row Liger's own harness would have written for that measurement:

* kernel, provider and mode: the workload's ``kernel`` and ``pass``, the
  implementation's ``provider``; metric and unit: ``speed``/``ms`` for a timing,
  ``memory``/``MB`` for peak memory (the first unit of ``data/metrics.json``, which are
  Liger's);
* y values: the median and the p20/p80 measurements, converted back from whole ns or
  bytes — equal to Liger's within the 1 ns (1 byte) rounding of the record;
* x and config: the sweep the run was measured in. A workload can belong to several
  of Liger's sweeps (Llama-4 RoPE's ``T`` sweep at ``hidden_size`` 8192 and its ``H``
  sweep at ``seq_len`` 2048 share a shape), and Liger's visualizer draws a row on
  the plot of its ``x_name``, so the sweep is taken from the record where it says
  one: the ``liger-csv/`` x and config labels of an imported run's workload, a run's
  own over them (a second sweep reaching the same workload). Otherwise — a run of
  ``kernelindex bench liger``, which measures one sweep per kernel — it is that sweep
  (``x`` name and fixed config, in Liger's own keys, as the bench catalog records
  them), with the workload's values put in. Either is checked by mapping it forward
  again (:func:`describe_workload`): it is used only if it gives back exactly the
  run's workload. The x label is the one written beside the x, else the one Liger's
  script writes (``xLabels`` in ``data/kernels.json``);
* GPU: the environment's ``deviceName`` (the driver's own name), else the name an
  importer environment was built from, else product and form factor; timestamp:
  ``observedAt`` in UTC as ``YYYY-MM-DD HH:MM:SS``; release: the run's
  ``liger_version`` label, else the implementation's liger-kernel version.

A run this cannot express (a kernel without a known sweep, a workload no config gives
back, a run without p20/p80) raises :class:`NotExpressible` with the reason.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from bench_adapters.liger.catalog import Catalog, MetricInfo
from bench_adapters.liger.hardware import resolve_gpu
from bench_adapters.liger.names import slug
from bench_adapters.liger.source import (
    RowError,
    normalized_gpu,
    parse_config,
    parse_measurement,
    parse_timestamp,
    parse_x,
)
from bench_adapters.liger.spelling import PREFIX, WORKLOAD_COLUMNS, Referenced, Speller, get_text
from bench_adapters.liger.workload import describe_workload
from kernelindex_sdk.base import recordformat

#: The quantile columns and the run statistic each is read from.
_STATISTICS = (("y_value_50", "median"), ("y_value_20", "p20"), ("y_value_80", "p80"))
LIGER_PACKAGE = "liger-kernel"
_RFC3339 = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.[0-9]+)?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})"
)

#: Liger's sweep of a kernel in its own terms: x name and the fixed config.
Sweep = tuple[str, Mapping[str, Any]]


class NotExpressible(Exception):
    """A run no Liger row can say; the message says why, ``reason`` the same without
    what is particular to the run (runs left out for one reason are counted together)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


@functools.cache
def bench_sweeps() -> dict[str, Sweep]:
    """Liger's sweeps as ``kernelindex bench liger`` runs them (its catalog), by kernel."""
    try:
        from bench_adapters.liger_bench.catalog import load_bench_catalog

        kernels = load_bench_catalog().kernels
    except Exception:  # a broken bench catalog only leaves its runs unexpressible
        return {}
    return {name: (kernel.sweep.x_name, kernel.sweep.config) for name, kernel in kernels.items()}


class RowComputer:
    """Computes the cells of a run's row from its structured fields and its records."""

    def __init__(
        self, catalog: Catalog, speller: Speller, sweeps: Mapping[str, Sweep] | None = None
    ) -> None:
        self.catalog = catalog
        self.speller = speller
        self._sweeps = sweeps
        #: (workload digest, written axis cells) -> whether they give back the workload:
        #: an import's runs share a few hundred workloads and their spellings.
        self._axes: dict[tuple[Any, ...], bool] = {}
        #: GPU name as a row writes it -> the hardware the importer reads from it.
        self._hardware: dict[str, Mapping[str, Any]] = {}

    @property
    def sweeps(self) -> Mapping[str, Sweep]:
        if self._sweeps is None:
            self._sweeps = bench_sweeps()
        return self._sweeps

    def cells(self, run: Mapping[str, Any], referenced: Referenced) -> dict[str, str]:
        """Every column of the row; :class:`NotExpressible` when one cannot be said."""
        _, workload, environment, implementation = referenced
        spec = run[recordformat.SPEC_KEY]
        found = self.speller.metric_of(spec)
        if found is None:
            raise NotExpressible("the run carries neither a timing nor a memory result")
        metric_name, metric = found
        unit = next(iter(metric.units))
        w_spec = workload[recordformat.SPEC_KEY]
        kernel = str(w_spec[recordformat.KERNEL_KEY])
        cells = {
            "kernel_name": kernel,
            "kernel_provider": str(
                implementation[recordformat.SPEC_KEY][recordformat.PROVIDER_KEY]
            ),
            "kernel_operation_mode": str(w_spec[recordformat.PASS_KEY]),
            "metric_name": metric_name,
            "metric_unit": unit,
            **self.axis(run, workload),
            "gpu_name": self._gpu_name(environment),
            "timestamp": _utc_timestamp(spec[recordformat.OBSERVED_AT_KEY]),
            "liger_version": _release(run, implementation),
        }
        cells.update(_y_values(spec, metric, unit))
        return cells

    def record_cells(
        self, run: Mapping[str, Any], referenced: Referenced, spelled: Mapping[str, str]
    ) -> tuple[dict[str, str], list[str]]:
        """An imported run's spelled row, checked against what the run itself holds.

        The spelling comes from ``sourceNative`` and ``liger-csv/`` labels, which a later
        edit of the run's values (its timing, its time, its references) leaves as they
        were. Each part of the row the record no longer says is replaced by the
        record's own value; returned with the names of the parts replaced (none: the
        row stands as spelled). :class:`NotExpressible` if the record cannot say a
        replaced part.
        """
        _, workload, environment, implementation = referenced
        spec, w_spec = run[recordformat.SPEC_KEY], workload[recordformat.SPEC_KEY]
        cells = dict(spelled)
        stale = []
        found = self.speller.metric_of(spec)
        if found is not None and not _y_match(spec, found[1], cells):
            unit = cells["metric_unit"]
            unit = unit if unit in found[1].units else next(iter(found[1].units))
            cells.update(metric_unit=unit, **_y_values(spec, found[1], unit))
            stale.append("values")
        if _said_time(cells["timestamp"]) != _instant(spec[recordformat.OBSERVED_AT_KEY]):
            cells["timestamp"] = _utc_timestamp(spec[recordformat.OBSERVED_AT_KEY])
            stale.append("timestamp")
        mode = self.catalog.modes.get(cells["kernel_operation_mode"].strip())
        said = (slug(cells["kernel_name"].strip()), mode.pass_ if mode else None)
        if said != (w_spec[recordformat.KERNEL_KEY], w_spec[recordformat.PASS_KEY]):
            cells["kernel_name"] = str(w_spec[recordformat.KERNEL_KEY])
            cells["kernel_operation_mode"] = str(w_spec[recordformat.PASS_KEY])
            stale.append("kernel and mode")
        if (
            slug(cells["kernel_provider"].strip())
            != implementation[recordformat.SPEC_KEY][recordformat.PROVIDER_KEY]
        ):
            cells["kernel_provider"] = str(
                implementation[recordformat.SPEC_KEY][recordformat.PROVIDER_KEY]
            )
            stale.append("provider")
        if (
            self._hardware_of(cells["gpu_name"])
            != environment[recordformat.SPEC_KEY][recordformat.HARDWARE_KEY]
        ):
            cells["gpu_name"] = self._gpu_name(environment)
            stale.append("GPU")
        if not self._axis_matches(run, cells, w_spec):
            cells.update(self.axis(run, workload))
            stale.append("x and config")
        return cells, stale

    def _hardware_of(self, gpu_name: str) -> Mapping[str, Any]:
        """The hardware the importer reads from a ``gpu_name`` cell."""
        found = self._hardware.get(gpu_name)
        if found is None:
            gpu = normalized_gpu(gpu_name)
            found = self._hardware[gpu_name] = resolve_gpu(gpu, self.catalog).spec
        return found

    def axis(self, run: Mapping[str, Any], workload: Mapping[str, Any]) -> dict[str, str]:
        """x name, x label, x value and config of the sweep the run was measured in."""
        w_spec = workload[recordformat.SPEC_KEY]
        kernel = str(w_spec[recordformat.KERNEL_KEY])
        info = self.catalog.kernels.get(kernel)
        cells = self.written_axis(run, workload)
        if cells is None:
            x_name, x_value, config = self._sweep_values(kernel, w_spec)
            cells = {
                "x_name": x_name,
                "x_value": x_value if isinstance(x_value, str) else json.dumps(x_value),
                "extra_benchmark_config_str": json.dumps(config),
            }
        x_name = cells["x_name"].strip()
        cells.setdefault("x_label", info.x_labels.get(x_name, x_name) if info else x_name)
        return cells

    def written_axis(
        self, run: Mapping[str, Any], workload: Mapping[str, Any]
    ) -> dict[str, str] | None:
        """The sweep's cells as the record writes them (the workload's ``liger-csv/``
        labels, the run's own over them), if they give back exactly its workload; else
        None (none written, or they no longer say this workload)."""
        written: dict[str, str] = {}
        for column in WORKLOAD_COLUMNS:
            for labels in (
                run.get(recordformat.METADATA_KEY, {}).get(recordformat.LABELS_KEY),
                workload[recordformat.METADATA_KEY].get(recordformat.LABELS_KEY),
            ):
                text = get_text(labels, PREFIX + column)
                if text is not None:
                    written[column] = text
                    break
        if "x_name" not in written or "x_value" not in written:
            return None
        written.setdefault("extra_benchmark_config_str", "")
        return (
            written if self._axis_matches(run, written, workload[recordformat.SPEC_KEY]) else None
        )

    def _axis_matches(
        self, run: Mapping[str, Any], cells: Mapping[str, str], w_spec: Mapping[str, Any]
    ) -> bool:
        """Whether a row's x and config cells, read as the importer reads them, give back
        exactly the run's workload (remembered per workload digest and cells)."""
        axis = tuple(cells[c] for c in ("x_name", "x_value", "extra_benchmark_config_str"))
        key = (run[recordformat.SPEC_KEY].get("workloadDigest"), *axis)
        good = self._axes.get(key)
        if good is None:
            x_name, x_text, config_text = (text.strip() for text in axis)
            try:
                x_value, config = parse_x(x_text), parse_config(config_text)
            except RowError:
                good = False
            else:
                good = self._gives_back(
                    str(w_spec[recordformat.KERNEL_KEY]), x_name, x_value, config, w_spec
                )
            self._axes[key] = good
        return good

    def _gives_back(
        self, kernel: str, x_name: str, x_value: Any, config: Mapping[str, Any], w_spec: Any
    ) -> bool:
        """Whether an x and config in Liger's terms map forward to exactly ``w_spec``."""
        shape = describe_workload(
            kernel, x_name, x_value, config, self.catalog, lambda key, message: None
        )
        return (shape.parameters, shape.settings, shape.dtype) == (
            dict(w_spec.get(recordformat.PARAMETERS_KEY, {})),
            dict(w_spec.get(recordformat.SETTINGS_KEY, {})),
            w_spec[recordformat.DTYPE_KEY],
        )

    def _sweep_values(self, kernel: str, w_spec: Mapping[str, Any]) -> tuple[str, Any, Any]:
        """x name, x value and config in Liger's terms that give back exactly ``w_spec``."""
        sweep = self.sweeps.get(kernel)
        if sweep is None:
            raise NotExpressible(
                f"kernel {kernel!r}: its x and config in Liger's terms are unknown "
                "(the bench catalog has no sweep for it)",
                "the bench catalog has no sweep for their kernel: its x and config in"
                " Liger's terms are unknown",
            )
        x_name, template = sweep
        parameters: Mapping[str, Any] = w_spec.get(recordformat.PARAMETERS_KEY, {})
        settings: Mapping[str, Any] = w_spec.get(recordformat.SETTINGS_KEY, {})
        info = self.catalog.kernels.get(kernel)
        overrides = info.parameters if info is not None else {}

        def shape_name(raw: str) -> str | None:
            return overrides.get(raw) or self.catalog.shape_names.get(raw)

        x_param = shape_name(x_name) or x_name.lower()
        if x_param not in parameters:
            raise NotExpressible(
                f"the workload has no {x_param!r}, the x Liger sweeps",
                "their workload lacks the x Liger sweeps",
            )
        config: dict[str, Any] = {}
        used = {x_param}
        for key, value in template.items():
            name = shape_name(key)
            if key in self.catalog.dtype_keys:
                config[key] = self._dtype_spelling(value, str(w_spec[recordformat.DTYPE_KEY]))
            elif key in settings:
                config[key] = settings[key]
            elif key == x_name:
                config[key] = value
            elif name is not None and name in parameters:
                config[key] = parameters[name]
                used.add(name)
        for name, value in parameters.items():
            if name not in used:
                config[name] = value
        for key, value in settings.items():
            config.setdefault(key, value)
        if not self._gives_back(kernel, x_name, parameters[x_param], config, w_spec):
            raise NotExpressible(
                f"no config in Liger's terms for kernel {kernel!r} gives back this workload",
                "no config in Liger's terms gives back their workload",
            )
        return x_name, parameters[x_param], config

    def _dtype_spelling(self, written: Any, dtype: str) -> Any:
        """Liger's spelling of ``dtype``: the template's if it means that, else ``torch.*``."""
        spellings = self.catalog.dtypes
        if isinstance(written, str) and spellings.get(written) == dtype:
            return written
        names = sorted(name for name, value in spellings.items() if value == dtype)
        torch_names = [name for name in names if name.startswith("torch.")]
        return (torch_names or names or [dtype])[0]

    def _gpu_name(self, environment: Mapping[str, Any]) -> str:
        hardware = environment[recordformat.SPEC_KEY][recordformat.HARDWARE_KEY]
        device = hardware.get(recordformat.DEVICE_NAME_KEY)
        if isinstance(device, str):
            return device
        imported = self.speller.gpu_name(environment)
        if imported is not None:
            return imported
        form_factor = hardware.get(recordformat.FORM_FACTOR_KEY)
        return str(hardware[recordformat.PRODUCT_KEY]) + (f" {form_factor}" if form_factor else "")


def _y_values(spec: Mapping[str, Any], metric: MetricInfo, unit: str) -> dict[str, str]:
    """The three quantiles in Liger's unit, from the result and the p20/p80 measurements."""
    base: dict[str, float] = {"median": spec[metric.result][metric.summary]["median"]}
    for measurement in spec.get(recordformat.MEASUREMENTS_KEY, ()):
        factor = metric.units.get(measurement[recordformat.UNIT_KEY])
        if measurement[recordformat.METRIC_KEY] == metric.metric and factor is not None:
            base.setdefault(
                measurement[recordformat.STATISTIC_KEY],
                measurement[recordformat.VALUE_KEY] * factor,
            )
    cells = {}
    for column, statistic in _STATISTICS:
        if statistic not in base:
            raise NotExpressible(f"the run has no {statistic}, which Liger's rows carry")
        cells[column] = repr(base[statistic] / metric.units[unit])
    return cells


def _y_match(spec: Mapping[str, Any], metric: MetricInfo, cells: Mapping[str, str]) -> bool:
    """Whether the row's y values, read as the importer reads them, are the run's."""
    factor = metric.units.get(cells["metric_unit"])
    if factor is None:
        return False
    held: dict[str, Any] = {"median": spec[metric.result][metric.summary].get("median")}
    for measurement in spec.get(recordformat.MEASUREMENTS_KEY, ()):
        if (
            measurement[recordformat.METRIC_KEY] == metric.metric
            and measurement[recordformat.UNIT_KEY] == metric.unit
        ):
            held.setdefault(
                measurement[recordformat.STATISTIC_KEY], measurement[recordformat.VALUE_KEY]
            )
    try:
        said = {stat: parse_measurement(col, cells[col].strip()) for col, stat in _STATISTICS}
    except RowError:
        return False
    return all(round(value * factor) == held.get(stat) for stat, value in said.items())


def _said_time(cell: str) -> datetime | None:
    """The instant a timestamp cell says, read as the importer reads it."""
    try:
        return _instant(parse_timestamp(cell.strip())[0])
    except RowError:
        return None


def _instant(observed_at: str) -> datetime | None:
    """An RFC 3339 time as an instant, or None."""
    match = _RFC3339.fullmatch(observed_at)
    if match is None:
        return None
    try:
        return datetime.fromisoformat(observed_at.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return None


def _utc_timestamp(observed_at: str) -> str:
    """An RFC 3339 time as Liger writes its timestamps: UTC, to the second."""
    match = _RFC3339.fullmatch(observed_at)
    if match is None:
        raise NotExpressible(f"observedAt {observed_at!r} is not an RFC 3339 time")
    date, clock, offset = match.groups()
    offset = "+00:00" if offset in ("Z", "z") else offset
    try:
        moment = datetime.fromisoformat(f"{date}T{clock}{offset}").astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise NotExpressible(
            f"observedAt {observed_at!r} has no UTC time Liger can write"
        ) from None
    return moment.replace(tzinfo=None).isoformat(sep=" ")


def _release(run: Mapping[str, Any], implementation: Mapping[str, Any]) -> str:
    labels = run.get(recordformat.METADATA_KEY, {}).get(recordformat.LABELS_KEY) or {}
    version = labels.get("liger_version")
    if isinstance(version, str):
        return version
    package = implementation[recordformat.SPEC_KEY].get(recordformat.PACKAGE_KEY) or {}
    if package.get(recordformat.NAME_KEY) == LIGER_PACKAGE and isinstance(
        package.get(recordformat.VERSION_KEY), str
    ):
        return str(package[recordformat.VERSION_KEY])
    return ""
