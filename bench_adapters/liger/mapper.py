"""Turning parsed Liger rows into runs and the records they reference, once each.

A CSV of thousands of rows names a handful of GPUs, modes and providers and a few
hundred workloads, so everything but the run itself is built and digested once per
key and then looked up: the per-row work is a few dict look-ups, one run dict and
one digest. The :class:`Mapper` owns those caches, the de-duplication of records by
digest, and the de-duplication of warnings (each unknown kernel, parameter, GPU or
provider is named once, not once per row).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import attrs

from bench_adapters.common.fields import scaled
from bench_adapters.liger import records
from bench_adapters.liger.catalog import Catalog, MetricInfo, ModeInfo, ProviderInfo, load_catalog
from bench_adapters.liger.hardware import resolve_gpu
from bench_adapters.liger.names import gpu_slug, record_name, slug
from bench_adapters.liger.source import LigerRow, RowError, SourceText
from bench_adapters.liger.spelling import workload_labels
from bench_adapters.liger.workload import describe_workload
from kernelindex_sdk.canonical import digest

_TOKEN = re.compile(r"[^a-z0-9]+")
_T = TypeVar("_T")


class Warnings:
    """Collects warnings, each once per key, and passes new ones to a callback."""

    def __init__(self, on_warning: Callable[[str], None] | None = None) -> None:
        self.messages: list[str] = []
        self._seen: set[tuple[str, ...]] = set()
        self._on_warning = on_warning

    def __call__(self, key: tuple[str, ...], message: str) -> None:
        if key in self._seen:
            return
        self._seen.add(key)
        self.messages.append(message)
        if self._on_warning is not None:
            self._on_warning(message)


@attrs.frozen
class MappedRun:
    """A row's run, its digest, the digests it references, and its data-quality facts."""

    run: dict[str, Any]
    digest: str
    #: protocol, workload, environment, implementation
    refs: tuple[str, str, str, str]
    collapsed: bool
    #: The row as written, for its spelling labels (None for runs not read from a CSV).
    text: SourceText | None = None
    #: Where the row is: file and line (for the problems of the records it becomes).
    source: str | None = None
    line: int | None = None


_Cached = tuple[dict[str, Any], str]


class Mapper:
    """Maps rows to records with every referenced record built and digested once."""

    def __init__(
        self,
        catalog: Catalog | None = None,
        *,
        quality_flags: bool = False,
        warn: Warnings | None = None,
        provenance: bool = False,
        declared: Mapping[str, str] | None = None,
    ) -> None:
        self.catalog = catalog or load_catalog()
        self.quality_flags = quality_flags
        #: Environments say where each field came from (``--provenance``); declared
        #: software versions (``--set torch=...``) imply it.
        self.provenance = provenance
        self.declared = dict(declared or {})
        self.warn = warn or Warnings()
        #: Referenced records by digest, in the order first built.
        self.records: dict[str, dict[str, Any]] = {}
        self._protocols: dict[tuple[str, str], _Cached] = {}
        self._environments: dict[str, _Cached] = {}
        self._implementations: dict[tuple[str, str], _Cached] = {}
        self._workloads: dict[tuple[Any, ...], tuple[dict[str, Any], str, str]] = {}
        self._kernel_titles: dict[str, str] = {}

    def map_row(self, row: LigerRow) -> MappedRun:
        """The run for ``row``; :class:`RowError` if the row names an unknown metric or mode.

        A value no digest can be computed of (RFC 8785 refuses it) is a RowError too:
        whatever a cell holds, mapping never raises anything else.
        """
        try:
            return self._map_row(row)
        except (ValueError, TypeError, RecursionError) as error:
            raise RowError(
                f"the records this row becomes cannot be canonicalized (RFC 8785): {error}",
                "not-canonicalizable",
            ) from None

    def _map_row(self, row: LigerRow) -> MappedRun:
        catalog = self.catalog
        metric = _known(
            catalog.metrics,
            row.metric,
            f"metric_name: unknown metric {row.metric!r}",
            "unknown-metric",
            sorted(catalog.metrics),
        )
        factor = _known(
            metric.units,
            row.unit,
            f"metric_unit: {row.unit!r} is not a unit of {row.metric!r}",
            "unknown-unit",
        )
        mode = _known(
            catalog.modes,
            row.mode,
            f"kernel_operation_mode: unknown mode {row.mode!r}, so the timed pass is unknown",
            "unknown-mode",
        )
        values = (
            _whole("y_value_20", row.y20, factor),
            _whole("y_value_50", row.y50, factor),
            _whole("y_value_80", row.y80, factor),
        )
        protocol_digest = self._protocol(row.metric, metric, row.mode, mode)
        environment_digest = self._environment(row.gpu)
        implementation_digest = self._implementation(row.provider, row.liger_version)
        kernel_title = self._kernel_title(row.kernel)
        workload_digest, workload_slug = self._workload(row, mode.pass_, kernel_title)

        label = f"/{metric.label}" if metric.label else ""
        benchmark = f"{row.kernel}/{row.mode}{label}"
        external_id = (
            f"{benchmark}/{row.provider}/{gpu_slug(row.gpu)}/{workload_slug}/{row.time_slug}"
        )
        title = f"{kernel_title} · {row.provider} · {row.mode}"
        if metric.label:
            title += f" · {metric.label}"
        collapsed = row.y20 == row.y50 == row.y80
        unit_key = row.unit.lower()
        refs = (protocol_digest, workload_digest, environment_digest, implementation_digest)
        run = records.run_record(
            name=record_name(f"liger-{external_id}"),
            title=title,
            labels={"liger_version": row.liger_version} if row.liger_version else {},
            observed_at=row.observed_at,
            metric=metric,
            values=values,
            native_metrics={
                f"{unit_key}_20": row.y20,
                f"{unit_key}_50": row.y50,
                f"{unit_key}_80": row.y80,
            },
            source=catalog.source,
            benchmark=benchmark,
            external_id=external_id,
            digests=refs,
            quality_flags=[records.COLLAPSED_QUANTILES] if collapsed and self.quality_flags else [],
        )
        return MappedRun(
            run=run,
            digest=digest(run),
            refs=refs,
            collapsed=collapsed,
            text=row.text,
            source=row.source,
            line=row.line,
        )

    def _keep(self, record: dict[str, Any]) -> str:
        value = digest(record)
        self.records.setdefault(value, record)
        return value

    def _protocol(
        self, metric_name: str, metric: MetricInfo, mode_name: str, mode: ModeInfo
    ) -> str:
        key = (metric_name, mode_name)
        cached = self._protocols.get(key)
        if cached is None:
            record = records.protocol_record(metric, mode_name, mode, self.catalog)
            cached = self._protocols[key] = (record, self._keep(record))
        return cached[1]

    def _environment(self, gpu: str) -> str:
        cached = self._environments.get(gpu)
        if cached is None:
            hardware = resolve_gpu(gpu, self.catalog)
            if not hardware.known:
                self.warn(
                    ("gpu", gpu),
                    f"unknown GPU {gpu!r}: not in the catalog; its environment records vendor "
                    f"{hardware.spec['vendor']!r} and the name as the product, with no form "
                    "factor or architecture",
                )
            record = records.environment_record(
                gpu, hardware, provenance=self.provenance, declared=self.declared
            )
            cached = self._environments[gpu] = (record, self._keep(record))
        return cached[1]

    def _implementation(self, provider: str, version: str) -> str:
        key = (provider, version)
        cached = self._implementations.get(key)
        if cached is None:
            info = self._provider_info(provider)
            record = records.implementation_record(provider, info, version)
            cached = self._implementations[key] = (record, self._keep(record))
        return cached[1]

    def _provider_info(self, provider: str) -> ProviderInfo:
        known = self.catalog.providers.get(provider)
        if known is not None:
            return known
        family = self.catalog.families.get("liger", {})
        if slug(provider).startswith("liger") and family:
            tokens = _TOKEN.split(provider.lower())
            backend = next(
                (
                    self.catalog.backend_tokens[t]
                    for t in tokens
                    if t in self.catalog.backend_tokens
                ),
                None,
            )
            self.warn(
                ("provider", provider),
                f"unknown provider {provider!r}: treated as a Liger-Kernel variant "
                f"(package {family.get('package')} at the row's liger_version"
                + (f", backend {backend}" if backend else "")
                + ")",
            )
            return ProviderInfo(
                family="liger",
                title=provider,
                backend=backend,
                package=family.get("package"),
                repository=family.get("repository"),
                versioned=bool(family.get("versioned", False)),
            )
        self.warn(
            ("provider", provider),
            f"unknown provider {provider!r}: its implementation records only the provider name",
        )
        return ProviderInfo(
            family="unknown",
            title=provider,
            backend=None,
            package=None,
            repository=None,
            versioned=False,
        )

    def _kernel_title(self, kernel: str) -> str:
        title = self._kernel_titles.get(kernel)
        if title is None:
            info = self.catalog.kernels.get(kernel)
            if info is None:
                title = kernel
                self.warn(
                    ("kernel", kernel),
                    f"unknown kernel {kernel!r}: not in the catalog; titled by its own name",
                )
            else:
                title = info.title
            self._kernel_titles[kernel] = title
        return title

    def _workload(self, row: LigerRow, pass_: str, kernel_title: str) -> tuple[str, str]:
        key = (row.kernel, pass_, row.x_name, type(row.x_value), row.x_value, row.config_text)
        cached = self._workloads.get(key)
        if cached is None:
            shape = describe_workload(
                row.kernel, row.x_name, row.x_value, row.config, self.catalog, self.warn
            )
            labels = workload_labels(row.text)
            record = records.workload_record(row.kernel, kernel_title, pass_, shape, labels)
            cached = self._workloads[key] = (record, self._keep(record), shape.slug)
        return cached[1], cached[2]


def _known(
    table: Mapping[str, _T], key: str, said: str, code: str, known: Iterable[str] = ()
) -> _T:
    """``table[key]``, or a row error: what ``said``, then the keys known (``known``, or
    the table's own, in its order)."""
    found = table.get(key)
    if found is None:
        raise RowError(f"{said} (known: {', '.join(known or table)})", code)
    return found


def _whole(column: str, value: float, factor: int) -> int:
    """A CSV value in the record's whole unit (ms -> ns, MiB -> bytes), rounded."""
    result = scaled(value, factor)
    if result is None:
        raise RowError(f"{column}: {value!r} is too large to record", "bad-number")
    return result
