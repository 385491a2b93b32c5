"""The nvbench mapping, loaded from ``data/mapping.json`` and shape-checked once.

What the importer knows about nvbench's format — which versions it reads, which
summary tags are which statistic, what each measurement method is and how it times,
which device members are which hardware fields, which type-axis values are which
dtype — is data, so a new tag, device field or type name is a data change.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import attrs

from bench_adapters.common.catalogdata import (
    CatalogError,
    expect_object,
    expect_str,
    load_data,
    optional_str,
    str_list,
    str_map,
)


@attrs.frozen
class Method:
    """One way nvbench times a state (cold GPU, CPU only): its tags and protocol facts."""

    name: str
    mean: str
    noise: str | None
    stddev: str | None
    min: str | None
    max: str | None
    samples: str | None
    timer: str
    flush_l2_cache: bool | None
    title: str
    notes: str


@attrs.frozen
class NvbenchMapping:
    """Everything the nvbench importer knows, as data."""

    formats: tuple[str, ...]
    source: str
    family: str
    harness: Mapping[str, str]
    vendor: str
    methods: tuple[Method, ...]
    state_keys: frozenset[str]
    argv_flags: tuple[str, ...]
    device_fields: Mapping[str, str]
    types: Mapping[str, str]
    unspecified_dtype: str
    expected_software: tuple[str, ...]


def _method(entry: object, where: str) -> Method:
    data = expect_object(entry, where)
    flush = data.get("flushL2Cache")
    if flush is not None and not isinstance(flush, bool):
        raise CatalogError(f"catalog {where}/flushL2Cache: expected a boolean")
    return Method(
        name=expect_str(data.get("name"), f"{where}/name"),
        mean=expect_str(data.get("mean"), f"{where}/mean"),
        noise=optional_str(data.get("noise"), f"{where}/noise"),
        stddev=optional_str(data.get("stddev"), f"{where}/stddev"),
        min=optional_str(data.get("min"), f"{where}/min"),
        max=optional_str(data.get("max"), f"{where}/max"),
        samples=optional_str(data.get("samples"), f"{where}/samples"),
        timer=expect_str(data.get("timer"), f"{where}/timer"),
        flush_l2_cache=flush,
        title=expect_str(data.get("title"), f"{where}/title"),
        notes=expect_str(data.get("notes"), f"{where}/notes"),
    )


@functools.cache
def load_mapping() -> NvbenchMapping:
    """The packaged mapping (read once per process)."""
    data = load_data("bench_adapters.nvbench", "mapping.json")
    where = "mapping.json"
    methods = data.get("measurements")
    if not isinstance(methods, list) or not methods:
        raise CatalogError(f"catalog {where}/measurements: expected a non-empty array")
    return NvbenchMapping(
        formats=str_list(data.get("formats"), f"{where}/formats"),
        source=expect_str(data.get("source"), f"{where}/source"),
        family=expect_str(data.get("family"), f"{where}/family"),
        harness=str_map(data.get("harness"), f"{where}/harness"),
        vendor=expect_str(data.get("vendor"), f"{where}/vendor"),
        methods=tuple(
            _method(entry, f"{where}/measurements/{i}") for i, entry in enumerate(methods)
        ),
        state_keys=frozenset(str_list(data.get("stateKeys"), f"{where}/stateKeys")),
        argv_flags=str_list(data.get("argvFlags"), f"{where}/argvFlags"),
        device_fields=str_map(data.get("deviceFields"), f"{where}/deviceFields"),
        types=str_map(data.get("types"), f"{where}/types"),
        unspecified_dtype=expect_str(data.get("unspecifiedDtype"), f"{where}/unspecifiedDtype"),
        expected_software=str_list(data.get("expectedSoftware"), f"{where}/expectedSoftware"),
    )
