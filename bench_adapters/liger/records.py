"""Building the five kernelindex records a Liger row becomes, as plain wire-form dicts.

Pure functions: inputs already resolved (catalog entries, hardware, workload shape),
output a record dict in the envelope order ``apiVersion, kind, metadata, spec``. Key
order inside a record never changes a digest (RFC 8785 sorts keys) but it does change
the bytes written, so every builder emits members in one fixed order.
"""

from __future__ import annotations

from typing import Any

from bench_adapters.liger.catalog import Catalog, MetricInfo, ModeInfo, ProviderInfo
from bench_adapters.liger.hardware import Hardware
from bench_adapters.liger.names import gpu_slug, record_name, slug
from bench_adapters.liger.workload import WorkloadShape
from kernelindex_sdk.wire import CURRENT_API_VERSION

#: The apiVersion the importer writes: the SDK's current one (one definition).
API_VERSION = CURRENT_API_VERSION
#: The flag a run carries (with ``quality_flags``) when p20 = median = p80.
COLLAPSED_QUANTILES = "collapsed_quantiles"


def envelope(kind: str, metadata: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """``{apiVersion, kind, metadata, spec}``."""
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


def protocol_record(
    metric: MetricInfo, mode: str, mode_info: ModeInfo, catalog: Catalog
) -> dict[str, Any]:
    """The protocol of one (metric, operation mode): what exactly was timed or measured."""
    template = metric.protocol
    notes = template.notes.replace("{mode}", mode).replace("{timed}", mode_info.timed)
    return envelope(
        "BenchmarkProtocol",
        {
            "name": record_name(template.name.replace("{mode}", mode)),
            "title": template.title.replace("{mode}", mode),
        },
        {
            "harness": dict(catalog.harness),
            "measurement": dict(template.measurement),
            "comparability": {"notes": notes, "family": catalog.protocol_family},
        },
    )


def environment_record(gpu_name: str, hardware: Hardware) -> dict[str, Any]:
    """One environment per GPU name; the CSV records no software versions."""
    return envelope(
        "ExecutionEnvironment",
        {
            "name": record_name(f"liger-bench-{gpu_slug(gpu_name)}"),
            "title": f"Liger benchmark host · {hardware.short_name}",
        },
        {"hardware": dict(hardware.spec), "software": {}},
    )


def implementation_record(provider: str, info: ProviderInfo, version: str) -> dict[str, Any]:
    """Who computed it: the provider, its package (versioned for Liger's own), its source."""
    spec: dict[str, Any] = {"provider": slug(provider)}
    if info.backend:
        spec["backend"] = info.backend
    release = version if info.versioned and version else None
    if info.package:
        spec["package"] = {"name": info.package, **({"version": release} if release else {})}
    if info.repository:
        spec["source"] = {"repository": info.repository}
    name, title = f"liger-impl-{provider}", info.title
    if release:
        name += f"-{release}"
        title += f" · {info.package} {release}"
    return envelope("Implementation", {"name": record_name(name), "title": title}, spec)


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
    spec: dict[str, Any] = {
        "kernel": slug(kernel),
        "pass": pass_,
        "parameters": shape.parameters,
        "dtype": shape.dtype,
    }
    if shape.settings:
        spec["settings"] = shape.settings
    metadata: dict[str, Any] = {
        "name": record_name(f"liger-{kernel}-{pass_}-{shape.slug}"),
        "title": f"{kernel_title} · {pass_} · {shape.slug}",
    }
    if labels:
        metadata["labels"] = labels
    return envelope("Workload", metadata, spec)


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
    spec: dict[str, Any] = {
        "status": "passed",
        "observedAt": observed_at,
        metric.result: {metric.summary: {"median": median}, "primaryStatistic": "median"},
        "measurements": [
            {"metric": metric.metric, "unit": metric.unit, "statistic": "p20", "value": p20},
            {"metric": metric.metric, "unit": metric.unit, "statistic": "p80", "value": p80},
        ],
    }
    if quality_flags:
        spec["qualityFlags"] = quality_flags
    spec["sourceNative"] = {
        "source": source,
        "benchmark": benchmark,
        "externalId": external_id,
        "metrics": native_metrics,
    }
    return run_envelope(spec, name=name, title=title, labels=labels, digests=digests)


def run_envelope(
    spec: dict[str, Any],
    *,
    name: str,
    title: str,
    labels: dict[str, str],
    digests: tuple[str, str, str, str],
) -> dict[str, Any]:
    """A BenchmarkRun from its spec body: the four references appended, then metadata.

    ``digests`` are the protocol, workload, environment and implementation digests, in
    that order. Shared by passed runs (:func:`run_record`) and by adapters that record
    runs which did not pass.
    """
    (
        spec["protocolDigest"],
        spec["workloadDigest"],
        spec["environmentDigest"],
        spec["implementationDigest"],
    ) = digests
    metadata: dict[str, Any] = {"name": name, "title": title}
    if labels:
        metadata["labels"] = labels
    return envelope("BenchmarkRun", metadata, spec)
