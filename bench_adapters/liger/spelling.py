"""How a Liger row was spelled, kept beside the records so the export gives it back exactly.

A run's fields say what was measured, not how Liger's CSV wrote it: the workload holds
normalized parameters (``T`` became ``seq``), numbers lose their spelling (``4096.0``
is ``4096``), the config's key order and spacing are gone. So the importer keeps the
spelling in ``metadata.labels`` — outside every digest — in the fewest places that
let each row be rebuilt byte for byte:

* A **workload** carries the sweep's cells as the first row that built it wrote them:
  ``liger-csv/x_name``, ``liger-csv/x_label``, ``liger-csv/x_value`` and
  ``liger-csv/extra_benchmark_config_str``.
* Everything else is **derived** from the run and its records: kernel and mode from
  ``sourceNative.benchmark``, the provider from ``sourceNative.externalId``, metric
  and unit from the result and the ``sourceNative.metrics`` keys, the y values as
  Python writes those floats, the GPU from the environment (its vendor word and its
  title), the timestamp from ``observedAt``, the release from ``labels.liger_version``.
* A **run** carries a ``liger-csv/<column>`` label only for a cell that differs from
  what is derived (a second sweep reaching the same workload, a GPU name spelled in
  an unusual way, a y value written as ``5`` rather than ``5.0``), and
  ``liger-csv/line`` only when the row's text is not what Python's ``csv`` module
  writes for its cells (odd quoting).

The importer checks every row: :meth:`Speller.spell` adds exactly the labels that make
:meth:`Speller.line` return the row's own text, so the law *import, then export,
gives the source rows* holds by construction, for any CSV with Liger's header. The
four published seeds need no run label at all (their runs stay as published).

A label value holds at most :data:`LABEL_LIMIT` characters; longer text is split
over ``key``, ``key.2``, ``key.3``, ... (:func:`put_text`, :func:`get_text`).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bench_adapters.liger.catalog import Catalog, MetricInfo
from bench_adapters.liger.hardware import resolve_gpu
from bench_adapters.liger.source import LIGER_HEADER, SourceText
from kernelindex_sdk.base import recordformat

PREFIX = "liger-csv/"
LINE_LABEL = PREFIX + "line"
#: The schema's longest label value.
LABEL_LIMIT = 1024
#: The cells a workload keeps, as the row that built it wrote them.
WORKLOAD_COLUMNS = ("x_name", "x_label", "x_value", "extra_benchmark_config_str")
#: The title prefix of the importer's environments (``records.environment_record``).
ENVIRONMENT_TITLE = "Liger benchmark host · "
#: Liger's harness writes rows with ``csv.DictWriter``: minimal quoting, ``\r\n``.
LINE_END = "\r\n"

_OBSERVED = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}:[0-9]{2}:[0-9]{2})\.([0-9]{3})Z")
_QUANTILES = ("50", "20", "80")

Record = Mapping[str, Any]
#: protocol, workload, environment, implementation: the records a run references.
Referenced = tuple[Record, Record, Record, Record]


def put_text(labels: dict[str, str], key: str, text: str) -> None:
    """Store ``text`` under ``key`` (split over ``key.2``, ... past :data:`LABEL_LIMIT`)."""
    labels[key] = text[:LABEL_LIMIT]
    for part, start in enumerate(range(LABEL_LIMIT, len(text), LABEL_LIMIT), 2):
        labels[f"{key}.{part}"] = text[start : start + LABEL_LIMIT]


def get_text(labels: Mapping[str, Any] | None, key: str) -> str | None:
    """The text :func:`put_text` stored under ``key``, or None."""
    if not labels:
        return None
    first = labels.get(key)
    if not isinstance(first, str):
        return None
    parts = [first]
    part = 2
    while isinstance(piece := labels.get(f"{key}.{part}"), str):
        parts.append(piece)
        part += 1
    return "".join(parts)


def workload_labels(text: SourceText) -> dict[str, str]:
    """The spelling labels of a workload built from a row that said ``text``."""
    labels: dict[str, str] = {}
    if text.cells:
        cells = dict(zip(LIGER_HEADER, text.cells, strict=True))
        for column in WORKLOAD_COLUMNS:
            put_text(labels, PREFIX + column, cells[column])
    return labels


def encode_line(cells: Sequence[str]) -> str:
    """One CSV record as Python's ``csv`` module writes it (no line ending)."""
    buffer = io.StringIO()
    # The line ending must be Liger's: the writer quotes a cell holding any of its characters.
    csv.writer(buffer, lineterminator=LINE_END).writerow(cells)
    return buffer.getvalue()[: -len(LINE_END)]


def without_spelling(labels: Mapping[str, str] | None) -> dict[str, str]:
    """``labels`` less every ``liger-csv/`` label."""
    return {k: v for k, v in (labels or {}).items() if not k.startswith(PREFIX)}


class Speller:
    """Derives a run's Liger cells from its records, and the labels that make them exact."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._gpus: dict[tuple[str, str], str | None] = {}
        self._by_result = {
            metric.result: (name, metric) for name, metric in catalog.metrics.items()
        }

    # ------------------------------------------------------------------ the row

    def cells(self, run: Record, referenced: Referenced) -> dict[str, str | None]:
        """Every column of the row, None where nothing says it; the run's labels applied."""
        derived = self.derived(run, referenced)
        labels = run.get(recordformat.METADATA_KEY, {}).get(recordformat.LABELS_KEY)
        for column in LIGER_HEADER:
            written = get_text(labels, PREFIX + column)
            if written is not None:
                derived[column] = written
        return derived

    def line(
        self, run: Record, referenced: Referenced, cells: Mapping[str, str | None] | None = None
    ) -> str | None:
        """The row's text (no line ending), or None when a cell is unknown; ``cells``:
        what :meth:`cells` gave for this run, if the caller has it already."""
        written = get_text(
            run.get(recordformat.METADATA_KEY, {}).get(recordformat.LABELS_KEY), LINE_LABEL
        )
        if written is not None:
            return written
        cells = cells if cells is not None else self.cells(run, referenced)
        values = [cells[column] for column in LIGER_HEADER]
        if any(value is None for value in values):
            return None
        return encode_line([value for value in values if value is not None])

    def spell(self, run: dict[str, Any], text: SourceText, referenced: Referenced) -> None:
        """Give ``run`` the labels that make :meth:`line` equal ``text`` (in place).

        Earlier ``liger-csv/`` labels are dropped first, so spelling again against other
        copies of the referenced records (a merge) leaves only what those need.
        """
        metadata = run[recordformat.METADATA_KEY]
        labels = without_spelling(metadata.get(recordformat.LABELS_KEY))
        metadata[recordformat.LABELS_KEY] = labels
        derived = self.derived(run, referenced)
        for column, cell in zip(LIGER_HEADER, text.cells, strict=True):
            if derived[column] != cell:
                put_text(labels, PREFIX + column, cell)
        if text.line is not None and encode_line(text.cells) != text.line:
            put_text(labels, LINE_LABEL, text.line)
        if not labels:
            del metadata[recordformat.LABELS_KEY]

    # ------------------------------------------------------------------ derivation

    def derived(self, run: Record, referenced: Referenced) -> dict[str, str | None]:
        """The cells the records themselves say, before any run label (imported runs)."""
        _, workload, environment, _ = referenced
        spec = run[recordformat.SPEC_KEY]
        cells: dict[str, str | None] = dict.fromkeys(LIGER_HEADER)
        found = self.metric_of(spec)
        native = spec.get(recordformat.SOURCE_NATIVE_KEY) or {}
        benchmark, external_id = (
            native.get(recordformat.BENCHMARK_KEY),
            native.get(recordformat.EXTERNAL_ID_KEY),
        )
        if found is not None and isinstance(benchmark, str):
            name, metric = found
            cells["metric_name"] = name
            kernel_mode = benchmark
            if metric.label:
                kernel_mode = kernel_mode.removesuffix(f"/{metric.label}")
            kernel, slash, mode = kernel_mode.rpartition("/")
            if slash:
                cells["kernel_name"], cells["kernel_operation_mode"] = kernel, mode
            if isinstance(external_id, str) and external_id.startswith(benchmark + "/"):
                rest = external_id[len(benchmark) + 1 :].rsplit("/", 3)
                if len(rest) == 4:
                    cells["kernel_provider"] = rest[0]
            cells.update(self._measured(native.get(recordformat.METRICS_KEY), metric))
        workload_labels = workload.get(recordformat.METADATA_KEY, {}).get(recordformat.LABELS_KEY)
        for column in WORKLOAD_COLUMNS:
            cells[column] = get_text(workload_labels, PREFIX + column)
        cells["gpu_name"] = self.gpu_name(environment)
        cells["timestamp"] = liger_timestamp(spec.get(recordformat.OBSERVED_AT_KEY))
        labels = run.get(recordformat.METADATA_KEY, {}).get(recordformat.LABELS_KEY) or {}
        cells["liger_version"] = labels.get("liger_version", "")
        return cells

    def metric_of(self, spec: Record) -> tuple[str, MetricInfo] | None:
        """The CSV metric (name, info) whose result the run carries."""
        for result, found in self._by_result.items():
            if result in spec:
                return found
        return None

    def _measured(self, metrics: Any, metric: MetricInfo) -> dict[str, str]:
        """metric_unit and the three y values, from ``sourceNative.metrics``."""
        if not isinstance(metrics, dict):
            return {}
        keys = [key for key in metrics if isinstance(key, str) and key.endswith("_50")]
        if len(keys) != 1:
            return {}
        prefix = keys[0][:-3]
        units = [unit for unit in metric.units if unit.lower() == prefix]
        values = [metrics.get(f"{prefix}_{q}") for q in _QUANTILES]
        if len(units) != 1 or not all(isinstance(v, (int, float)) for v in values):
            return {}
        found = {"metric_unit": units[0]}
        for q, value in zip(_QUANTILES, values, strict=True):
            found[f"y_value_{q}"] = repr(value)
        return found

    def gpu_name(self, environment: Record) -> str | None:
        """The GPU name an importer environment was built from (its vendor word restored).

        Known hardware loses the separator between model and form factor, so the name
        is read back from the title (``Liger benchmark host · A100-SXM4-80GB``) and the
        vendor word that resolves to the same hardware is put back in front of it.
        """
        title = environment.get(recordformat.METADATA_KEY, {}).get(recordformat.TITLE_KEY)
        hardware = environment.get(recordformat.SPEC_KEY, {}).get(recordformat.HARDWARE_KEY)
        if not isinstance(title, str) or not title.startswith(ENVIRONMENT_TITLE):
            return None
        if not isinstance(hardware, dict):
            return None
        short = title[len(ENVIRONMENT_TITLE) :]
        key = (short, repr(sorted(hardware.items())))
        if key not in self._gpus:
            self._gpus[key] = self._gpu_from(short, hardware)
        return self._gpus[key]

    def _gpu_from(self, short: str, hardware: Mapping[str, Any]) -> str | None:
        vendor_words = [
            word
            for vendor in self.catalog.vendors
            if vendor.vendor == hardware.get(recordformat.VENDOR_KEY)
            for word in vendor.names
        ]
        candidates = [
            str(hardware.get(recordformat.PRODUCT_KEY, "")),
            *(f"{w} {short}" for w in vendor_words),
        ]
        for candidate in [*candidates, short]:
            resolved = resolve_gpu(candidate, self.catalog)
            if resolved.spec == hardware and resolved.short_name == short:
                return candidate
        return None


def liger_timestamp(observed_at: Any) -> str | None:
    """``2024-09-03T15:38:37.000Z`` -> ``2024-09-03 15:38:37`` (milliseconds only if any)."""
    match = _OBSERVED.fullmatch(observed_at) if isinstance(observed_at, str) else None
    if match is None:
        return None
    date, time, millis = match.groups()
    return f"{date} {time}" + (f".{millis}" if millis != "000" else "")
