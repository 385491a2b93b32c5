"""Planning a sweep: kernels × x values × passes × metrics, each with its providers.

Planning needs no GPU and imports no torch: it only reads the catalogs and normalizes
each workload with the importer's own :func:`describe_workload`, so ``--dry-run``
lists exactly the workloads (and workload slugs) a real sweep would record, and those
are the workloads the importer builds from Liger's CSV for the same x and config.
Bad requests (an unknown kernel, a provider the kernel lacks, a malformed ``--set``)
are :class:`PlanError` with a message naming what is known, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from bench_adapters.liger.workload import Warn, WorkloadShape, describe_workload
from bench_adapters.liger_bench.catalog import PASSES, BenchCatalog, BenchKernel

METRICS = ("speed", "memory")


class PlanError(Exception):
    """The request cannot be planned; the message says why and what would work."""


@attrs.frozen
class Workload:
    """One workload of a kernel: Liger's x and config, and what they normalize to."""

    kernel: BenchKernel
    x_value: int
    config: Mapping[str, Any]
    pass_: str
    shape: WorkloadShape

    @property
    def label(self) -> str:
        """``geglu/backward/batch8-hidden4096-intermediate11008-seq4096-bf16``."""
        return f"{self.kernel.name}/{self.pass_}/{self.shape.slug}"


@attrs.frozen
class PlannedItem:
    """A workload measured under one metric, by each of ``providers`` in order."""

    workload: Workload
    metric: str
    providers: tuple[str, ...]


@attrs.frozen
class Request:
    """What the user asked for, as plain data (the CLI's options)."""

    kernels: tuple[str, ...]
    passes: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ("speed",)
    x_values: tuple[int, ...] = ()
    providers: tuple[str, ...] = ()
    overrides: Mapping[str, Any] = attrs.field(factory=dict)


def parse_overrides(items: Iterable[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; a VALUE that parses as JSON is taken as JSON, else as text."""
    result: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise PlanError(f"--set {item!r}: expected KEY=VALUE, e.g. --set bsz=4")
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        if isinstance(value, (dict, list)):
            raise PlanError(f"--set {item!r}: VALUE must be a number, string, boolean or null")
        result[key] = value
    return result


def plan(request: Request, catalog: BenchCatalog, warn: Warn | None = None) -> list[PlannedItem]:
    """Every (workload, metric) to measure, in a stable order: kernel, x, pass, metric."""
    if not request.kernels:
        raise PlanError(f"no kernel given; known kernels: {', '.join(sorted(catalog.kernels))}")
    on_warning: Warn = warn if warn is not None else (lambda key, message: None)
    items: list[PlannedItem] = []
    for name in _unique(request.kernels):
        kernel = catalog.kernels.get(name)
        if kernel is None:
            raise PlanError(
                f"unknown kernel {name!r}; known kernels: {', '.join(sorted(catalog.kernels))}"
            )
        providers = _providers(kernel, request.providers)
        passes = _unique(request.passes) or PASSES
        for pass_ in passes:
            if pass_ not in PASSES:
                raise PlanError(f"unknown pass {pass_!r}; known: {', '.join(PASSES)}")
        for metric in _unique(request.metrics):
            if metric not in METRICS:
                raise PlanError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
        config = {**kernel.sweep.config, **request.overrides}
        if kernel.sweep.x_name in request.overrides:
            raise PlanError(
                f"--set {kernel.sweep.x_name}: that is the swept x of {name!r}; use --x instead"
            )
        for x_value in _unique(request.x_values) or kernel.sweep.values:
            if x_value < 1:
                raise PlanError(f"--x {x_value}: x values must be positive integers")
            shape = describe_workload(
                kernel.name, kernel.sweep.x_name, x_value, config, catalog.liger, on_warning
            )
            for pass_ in passes:
                workload = Workload(kernel, x_value, config, pass_, shape)
                for metric in _unique(request.metrics):
                    items.append(PlannedItem(workload, metric, providers))
    return items


def seed_request(catalog: BenchCatalog) -> list[PlannedItem]:
    """The published seeds' workloads: each kernel that has one, at its x and pass, speed."""
    items: list[PlannedItem] = []
    for name in sorted(catalog.kernels):
        kernel = catalog.kernels[name]
        if kernel.sweep.seed_x is None or kernel.sweep.seed_pass is None:
            continue
        request = Request(
            kernels=(name,), passes=(kernel.sweep.seed_pass,), x_values=(kernel.sweep.seed_x,)
        )
        items.extend(plan(request, catalog))
    return items


def _providers(kernel: BenchKernel, asked: Sequence[str]) -> tuple[str, ...]:
    if not asked:
        return kernel.default_providers
    for provider in asked:
        if provider not in kernel.providers:
            raise PlanError(
                f"kernel {kernel.name!r} has no provider {provider!r}; "
                f"known: {', '.join(kernel.providers)}"
            )
    return _unique(asked)


def _unique(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(values))
