"""The KernelBench mapping, loaded from ``data/mapping.json`` and shape-checked once.

File-name rules (the implementation), the entry's members, torch.compile's backends
and modes, and the protocol's wording are data: a new backend or mode is a data change.
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
    str_list,
    str_map,
)


@attrs.frozen
class KernelBenchMapping:
    """Everything the KernelBench importer knows, as data."""

    source: str
    family: str
    harness: Mapping[str, str]
    file_prefix: str
    eager: Mapping[str, str]
    compile: Mapping[str, str]
    package: str
    repository: str
    #: Longest first, so ``aot_eager`` is matched before ``eager``.
    backends: tuple[str, ...]
    modes: tuple[str, ...]
    entry: Mapping[str, str]
    ms_to_ns: int
    unspecified_dtype: str
    expected_software: tuple[str, ...]
    title: str
    notes: str


@functools.cache
def load_mapping() -> KernelBenchMapping:
    """The packaged mapping (read once per process)."""
    data = load_data("bench_adapters.kernelbench", "mapping.json")
    where = "mapping.json"
    factor = data.get("msToNs")
    if not isinstance(factor, int) or isinstance(factor, bool) or factor < 1:
        raise CatalogError(f"catalog {where}/msToNs: expected a positive integer")
    entry = str_map(data.get("entry"), f"{where}/entry")
    missing = {"mean", "std", "min", "max", "trials", "hardware", "device"} - set(entry)
    if missing:
        raise CatalogError(f"catalog {where}/entry: missing {', '.join(sorted(missing))}")
    backends = str_list(data.get("backends"), f"{where}/backends")
    return KernelBenchMapping(
        source=expect_str(data.get("source"), f"{where}/source"),
        family=expect_str(data.get("family"), f"{where}/family"),
        harness=str_map(data.get("harness"), f"{where}/harness"),
        file_prefix=expect_str(data.get("filePrefix"), f"{where}/filePrefix"),
        eager=str_map(expect_object(data.get("eager"), f"{where}/eager"), f"{where}/eager"),
        compile=str_map(expect_object(data.get("compile"), f"{where}/compile"), f"{where}/compile"),
        package=expect_str(data.get("package"), f"{where}/package"),
        repository=expect_str(data.get("repository"), f"{where}/repository"),
        backends=tuple(sorted(backends, key=lambda b: (-len(b), b))),
        modes=str_list(data.get("modes"), f"{where}/modes"),
        entry=entry,
        ms_to_ns=factor,
        unspecified_dtype=expect_str(data.get("unspecifiedDtype"), f"{where}/unspecifiedDtype"),
        expected_software=str_list(data.get("expectedSoftware"), f"{where}/expectedSoftware"),
        title=expect_str(data.get("title"), f"{where}/title"),
        notes=expect_str(data.get("notes"), f"{where}/notes"),
    )
