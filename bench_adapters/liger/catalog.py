"""The Liger catalog: what the mapping knows about kernels, parameters, GPUs and providers.

Everything the importer needs to *know* (as opposed to compute) lives in JSON files
under ``data/`` — kernel display names, parameter-name normalization, GPU names to
hardware, providers to implementations, dtype spellings, operation modes and metric
units — so that supporting a new kernel or GPU is a data change, reviewed as data,
not another branch in code. This module only loads those files into typed, frozen
objects and checks their shape, so a broken catalog fails loudly at load time rather
than producing odd records later.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import attrs

from bench_adapters.common import catalogdata
from bench_adapters.common.catalogdata import DATA_DIR, CatalogError
from bench_adapters.common.gpus import Product, Vendor, load_gpus

__all__ = [
    "DATA_DIR",
    "Catalog",
    "CatalogError",
    "KernelInfo",
    "MetricInfo",
    "ModeInfo",
    "Product",
    "ProtocolTemplate",
    "ProviderInfo",
    "Vendor",
    "load_catalog",
]

DATA_PACKAGE = "bench_adapters.liger"


@attrs.frozen
class KernelInfo:
    """A known Liger kernel: its display name, default dtype and parameter overrides."""

    title: str
    default_dtype: str | None
    parameters: Mapping[str, str]
    #: x_name -> the x_label Liger's script writes beside it (for the export).
    x_labels: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class ProviderInfo:
    """A known kernel provider and the implementation facts the catalog states for it."""

    family: str
    title: str
    backend: str | None
    package: str | None
    repository: str | None
    versioned: bool


@attrs.frozen
class ModeInfo:
    """An operation mode: the pass it times and the words that describe it."""

    pass_: str
    timed: str


@attrs.frozen
class ProtocolTemplate:
    """The protocol a metric is measured under, with ``{mode}``/``{timed}`` placeholders."""

    name: str
    title: str
    measurement: Mapping[str, Any]
    notes: str


@attrs.frozen
class MetricInfo:
    """A CSV metric: where a run carries it, its unit, and the CSV units it accepts."""

    #: Inserted into a run's ids and title; None for speed (the seeds' ids have none).
    label: str | None
    result: str
    summary: str
    metric: str
    unit: str
    units: Mapping[str, int]
    protocol: ProtocolTemplate


@attrs.frozen
class Catalog:
    """All catalog tables, loaded once."""

    kernels: Mapping[str, KernelInfo]
    shape_names: Mapping[str, str]
    setting_names: frozenset[str]
    dtype_keys: tuple[str, ...]
    dtypes: Mapping[str, str]
    unspecified_dtype: str
    vendors: tuple[Vendor, ...]
    #: Every (model, product) pair, longest model first: the match order.
    models: tuple[tuple[str, Product], ...]
    providers: Mapping[str, ProviderInfo]
    families: Mapping[str, Mapping[str, Any]]
    backend_tokens: Mapping[str, str]
    modes: Mapping[str, ModeInfo]
    metrics: Mapping[str, MetricInfo]
    harness: Mapping[str, str]
    protocol_family: str
    source: str


def _load(name: str) -> dict[str, Any]:
    return catalogdata.load_data(DATA_PACKAGE, name)


_str = catalogdata.expect_str
_opt_str = catalogdata.optional_str
_obj = catalogdata.expect_object
_str_map = catalogdata.str_map
_str_list = catalogdata.str_list


def _kernels() -> dict[str, KernelInfo]:
    data = _obj(_load("kernels.json").get("kernels"), "kernels.json/kernels")
    kernels = {}
    for name, entry in data.items():
        where = f"kernels.json/{name}"
        entry = _obj(entry, where)
        kernels[name] = KernelInfo(
            title=_str(entry.get("title"), f"{where}/title"),
            default_dtype=_opt_str(entry.get("defaultDtype"), f"{where}/defaultDtype"),
            parameters=_str_map(entry.get("parameters", {}), f"{where}/parameters"),
            x_labels=_str_map(entry.get("xLabels", {}), f"{where}/xLabels"),
        )
    return kernels


def _providers() -> tuple[dict[str, ProviderInfo], dict[str, Mapping[str, Any]], dict[str, str]]:
    data = _load("providers.json")
    families: dict[str, Mapping[str, Any]] = {
        name: _obj(value, f"providers.json/families/{name}")
        for name, value in _obj(data.get("families"), "providers.json/families").items()
    }
    providers = {}
    for name, entry in _obj(data.get("providers"), "providers.json/providers").items():
        where = f"providers.json/providers/{name}"
        entry = _obj(entry, where)
        family_name = _str(entry.get("family"), f"{where}/family")
        family = families.get(family_name, {})
        providers[name] = ProviderInfo(
            family=family_name,
            title=_str(entry.get("title"), f"{where}/title"),
            backend=_opt_str(entry.get("backend"), f"{where}/backend"),
            package=_opt_str(entry.get("package", family.get("package")), f"{where}/package"),
            repository=_opt_str(
                entry.get("repository", family.get("repository")), f"{where}/repository"
            ),
            versioned=bool(family.get("versioned", False)),
        )
    tokens = _str_map(data.get("backendTokens", {}), "providers.json/backendTokens")
    return providers, families, tokens


def _metrics() -> tuple[dict[str, MetricInfo], dict[str, str], str, str]:
    data = _load("metrics.json")
    metrics = {}
    for name, entry in _obj(data.get("metrics"), "metrics.json/metrics").items():
        where = f"metrics.json/metrics/{name}"
        entry = _obj(entry, where)
        units = {}
        for unit, factor in _obj(entry.get("units"), f"{where}/units").items():
            if not isinstance(factor, int) or isinstance(factor, bool) or factor < 1:
                raise CatalogError(f"catalog {where}/units/{unit}: expected a positive integer")
            units[unit] = factor
        protocol = _obj(entry.get("protocol"), f"{where}/protocol")
        metrics[name] = MetricInfo(
            label=_opt_str(entry.get("label"), f"{where}/label"),
            result=_str(entry.get("result"), f"{where}/result"),
            summary=_str(entry.get("summary"), f"{where}/summary"),
            metric=_str(entry.get("metric"), f"{where}/metric"),
            unit=_str(entry.get("unit"), f"{where}/unit"),
            units=units,
            protocol=ProtocolTemplate(
                name=_str(protocol.get("name"), f"{where}/protocol/name"),
                title=_str(protocol.get("title"), f"{where}/protocol/title"),
                measurement=_obj(protocol.get("measurement"), f"{where}/protocol/measurement"),
                notes=_str(protocol.get("notes"), f"{where}/protocol/notes"),
            ),
        )
    harness = _str_map(data.get("harness"), "metrics.json/harness")
    family = _str(data.get("family"), "metrics.json/family")
    source = _str(data.get("source"), "metrics.json/source")
    return metrics, harness, family, source


def _modes() -> dict[str, ModeInfo]:
    data = _obj(_load("modes.json").get("modes"), "modes.json/modes")
    return {
        name: ModeInfo(
            pass_=_str(_obj(entry, f"modes.json/{name}").get("pass"), f"modes.json/{name}/pass"),
            timed=_str(entry.get("timed"), f"modes.json/{name}/timed"),
        )
        for name, entry in data.items()
    }


@functools.cache
def load_catalog() -> Catalog:
    """The packaged catalog (read once per process)."""
    parameters = _load("parameters.json")
    dtypes = _load("dtypes.json")
    gpus = load_gpus()
    providers, families, tokens = _providers()
    metrics, harness, family, source = _metrics()
    return Catalog(
        kernels=_kernels(),
        shape_names=_str_map(parameters.get("shape"), "parameters.json/shape"),
        setting_names=frozenset(_str_list(parameters.get("settings"), "parameters.json/settings")),
        dtype_keys=_str_list(parameters.get("dtypeKeys"), "parameters.json/dtypeKeys"),
        dtypes=_str_map(dtypes.get("dtypes"), "dtypes.json/dtypes"),
        unspecified_dtype=_str(dtypes.get("unspecified"), "dtypes.json/unspecified"),
        vendors=gpus.vendors,
        models=gpus.models,
        providers=providers,
        families=families,
        backend_tokens=tokens,
        modes=_modes(),
        metrics=metrics,
        harness=harness,
        protocol_family=family,
        source=source,
    )
