"""Building the five kernelindex records a Liger row becomes, as plain wire-form dicts.

Pure functions: inputs already resolved (catalog entries, hardware, workload shape),
output a record dict in the envelope order ``apiVersion, kind, metadata, spec``. Key
order inside a record never changes a digest (RFC 8785 sorts keys) but it does change
the bytes written, so every builder emits members in one fixed order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench_adapters.common.provenance import (
    CATALOG,
    RECORD,
    UNKNOWN,
    ProvenanceMap,
    hardware_provenance,
    software_spec,
)
from bench_adapters.common.records import API_VERSION, envelope, run_envelope
from bench_adapters.common.records import environment_record as environment_envelope
from bench_adapters.common.records import protocol_record as protocol_envelope
from bench_adapters.common.records import workload_record as workload_envelope
from bench_adapters.liger.catalog import Catalog, MetricInfo, ModeInfo, ProviderInfo
from bench_adapters.liger.hardware import Hardware
from bench_adapters.liger.names import gpu_slug, record_name, slug
from bench_adapters.liger.workload import WorkloadShape
from kernelindex_sdk import models as m
from kernelindex_sdk.base import recordformat

__all__ = [
    "API_VERSION",
    "COLLAPSED_QUANTILES",
    "EXPECTED_SOFTWARE",
    "envelope",
    "environment_record",
    "implementation_record",
    "protocol_record",
    "run_envelope",
    "run_record",
    "workload_record",
]

#: Software a reader of a Liger run wants and the CSV never records: listed as unknown
#: in an environment's provenance (``--provenance``) unless the caller declares them.
EXPECTED_SOFTWARE = ("driver", "cuda", "torch", "triton", "python")
#: The flag a run carries (with ``quality_flags``) when p20 = median = p80.
COLLAPSED_QUANTILES = "collapsed_quantiles"


def protocol_record(
    metric: MetricInfo, mode: str, mode_info: ModeInfo, catalog: Catalog
) -> dict[str, Any]:
    """The protocol of one (metric, operation mode): what exactly was timed or measured."""
    template = metric.protocol
    notes = template.notes.replace("{mode}", mode).replace("{timed}", mode_info.timed)
    return protocol_envelope(
        m.Metadata(
            name=record_name(template.name.replace("{mode}", mode)),
            title=template.title.replace("{mode}", mode),
        ),
        m.structure(dict(catalog.harness), m.Harness),
        template.measurement,
        m.Comparability(notes=notes, family=catalog.protocol_family),
    )


def environment_record(
    gpu_name: str,
    hardware: Hardware,
    *,
    provenance: bool = False,
    declared: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One environment per GPU name; the CSV records no software versions.

    By default exactly the seeds' environment: ``software: {}`` and no provenance.
    With ``provenance`` (or software ``declared`` by the caller, which must say so),
    the spec also says where each field came from: the row's ``gpu_name``, the GPU
    catalog, the caller, and which software versions are unknown.
    """
    software: Mapping[str, str] = {}
    provenance_json = None
    if provenance or declared:
        origins = ProvenanceMap()
        hardware_provenance(origins, hardware.spec, RECORD, "gpu_name")
        if "architecture" in hardware.spec:
            origins.add(("hardware", "architecture"), CATALOG, "the GPU catalog, by product")
        if hardware.vendor_from in ("family", "catalog"):
            origins.add(("hardware", "vendor"), CATALOG, "the GPU catalog, by product")
        elif hardware.vendor_from is None:
            origins.add(("hardware", "vendor"), UNKNOWN, "gpu_name states no vendor")
        software = software_spec({}, declared or {}, EXPECTED_SOFTWARE, origins)
        provenance_json = origins.as_json()
    metadata = m.Metadata(
        name=record_name(f"liger-bench-{gpu_slug(gpu_name)}"),
        title=f"Liger benchmark host · {hardware.short_name}",
    )
    return environment_envelope(metadata, hardware.spec, software, provenance_json)


def implementation_record(provider: str, info: ProviderInfo, version: str) -> dict[str, Any]:
    """Who computed it: the provider, its package (versioned for Liger's own), its source."""
    release = version if info.versioned and version else None
    spec = m.ImplementationSpec(
        provider=slug(provider),
        backend=info.backend or None,
        package=m.Package(info.package, release) if info.package else None,
        source=m.SourceLocation(info.repository) if info.repository else None,
    )
    name, title = f"liger-impl-{provider}", info.title
    if release:
        name += f"-{release}"
        title += f" · {info.package} {release}"
    metadata = m.Metadata(name=record_name(name), title=title)
    return dict(m.unstructure(m.Implementation(metadata=metadata, spec=spec)))


def workload_record(
    kernel: str,
    kernel_title: str,
    pass_: str,
    shape: WorkloadShape,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """What was computed: kernel, pass, normalized shape, dtype, settings.

    ``labels`` (metadata, outside the digest): how the source spelled it, if given.
    """
    spec = m.WorkloadSpec(
        kernel=slug(kernel),
        pass_=pass_,  # type: ignore[arg-type]  # one of the catalog's modes
        parameters=shape.parameters,
        dtype=shape.dtype,
        settings=shape.settings or None,
    )
    name = record_name(f"liger-{kernel}-{pass_}-{shape.slug}")
    return workload_envelope(name, f"{kernel_title} · {pass_} · {shape.slug}", spec, labels)


def run_record(
    *,
    name: str,
    title: str,
    labels: dict[str, str],
    observed_at: str,
    metric: MetricInfo,
    values: tuple[int, int, int],
    native_metrics: dict[str, float],
    source: str,
    benchmark: str,
    external_id: str,
    digests: tuple[str, str, str, str],
    quality_flags: list[str],
) -> dict[str, Any]:
    """A passed run: the median as its result, p20/p80 as measurements, the CSV floats as-is.

    ``values`` are (p20, median, p80) in the metric's whole unit; ``digests`` are the
    protocol, workload, environment and implementation digests, in that order.
    """
    p20, median, p80 = values
    spread = [
        m.Measurement(metric.metric, metric.unit, statistic, value)  # type: ignore[arg-type]
        for statistic, value in (("p20", p20), ("p80", p80))
    ]
    spec: dict[str, Any] = {
        recordformat.STATUS_KEY: "passed",
        recordformat.OBSERVED_AT_KEY: observed_at,
        metric.result: {
            metric.summary: {"median": median},
            recordformat.PRIMARY_STATISTIC_KEY: "median",
        },
        recordformat.MEASUREMENTS_KEY: [m.unstructure(measurement) for measurement in spread],
    }
    if quality_flags:
        spec[recordformat.QUALITY_FLAGS_KEY] = quality_flags
    spec[recordformat.SOURCE_NATIVE_KEY] = m.unstructure(
        m.SourceNative(source, benchmark, external_id, native_metrics)
    )
    return run_envelope(spec, name=name, title=title, labels=labels, digests=digests)
