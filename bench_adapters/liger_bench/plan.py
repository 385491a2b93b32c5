"""Planning a sweep: kernels × x values × passes × metrics, each with its providers.

Planning needs no GPU and imports no torch: it only reads the catalogs and normalizes
each workload with the importer's own :func:`describe_workload`, so ``--dry-run``
lists exactly the workloads (and workload slugs) a real sweep would record, and those
are the workloads the importer builds from Liger's CSV for the same x and config.
Bad requests (an unknown kernel, a provider the kernel lacks, a malformed ``--set``)
are :class:`PlanError` with a one-line message naming what is known, never a traceback.

``--set KEY=VALUE`` overrides a key of a kernel's Liger config, and only of the kernels
whose config has that key: ``--set bsz=2`` over GeGLU and ReLU² changes GeGLU's batch
and leaves ReLU² alone. Applying it to every kernel would add a parameter the kernel
never had (a new workload under a new slug), and an alias could even take over
another key's place (``H=64`` would become RoPE's hidden size, its own ``hidden_size``
pushed into the settings). A value keeps the type the config gives the key, and is
read by the SDK's strict JSON intake: NaN, infinities, integers beyond ±(2**53 − 1),
numbers no double holds exactly and deep nesting are refused, never half-parsed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from bench_adapters.common.provenance import split_setting
from bench_adapters.liger.workload import Warn, WorkloadShape, describe_workload
from bench_adapters.liger_bench.catalog import PASSES, BenchCatalog, BenchKernel
from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.errors import EmptyDocument, IntakeError, MalformedJSON
from kernelindex_sdk.reading.intake import loads

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


#: First characters of a JSON value other than a literal word: a VALUE starting with
#: one of them is JSON or an error, never taken as text.
_JSON_START = frozenset('{["-0123456789')
#: How much of a bad --set item an error message quotes.
_QUOTE_LIMIT = 60


def _quote(text: str) -> str:
    """``text`` as one printable line, cut to :data:`_QUOTE_LIMIT` characters."""
    shown = text if len(text) <= _QUOTE_LIMIT else text[:_QUOTE_LIMIT] + "…"
    return one_line(shown)


def parse_overrides(items: Iterable[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; VALUE is strict JSON (a number, string, boolean or null), or
    plain text when it cannot begin a JSON value (``gelu``, ``torch.float32``).

    VALUE goes through the SDK's strict intake, so what it refuses — ``NaN`` and
    ``Infinity``, integers beyond ±(2**53 − 1), numbers that are not exact doubles,
    nesting deeper than the intake allows — is a :class:`PlanError` naming the item,
    as is anything that starts like JSON but is not (``1x``, ``[1``). Arrays and
    objects are refused: a config override is one scalar.
    """
    result: dict[str, Any] = {}
    for item in items:
        key, text = split_setting(item, PlanError, _quote(item), ", e.g. --set bsz=4")
        value: Any
        try:
            # A value set by hand must mean exactly what it says: no inexact literal.
            value = loads(text, source="--set", strict_numbers=True)
        except (MalformedJSON, EmptyDocument) as error:
            stripped = text.strip()
            if not stripped or stripped[0] in _JSON_START:
                raise PlanError(
                    f"--set {_quote(item)}: VALUE is not valid JSON: {error.problem.message}"
                ) from None
            value = stripped
        except IntakeError as error:
            raise PlanError(f"--set {_quote(item)}: {one_line(error.problem.message)}") from None
        if isinstance(value, (dict, list)):
            raise PlanError(
                f"--set {_quote(item)}: VALUE must be a number, string, boolean or null"
            )
        result[key] = value
    return result


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "null"


def _fits(value: Any, like: Any) -> bool:
    """Whether ``value`` may replace the config value ``like`` (same JSON type).

    An integer may replace a number; nothing else changes type: a batch size stays an
    integer, a flag a boolean, a dtype text.
    """
    if isinstance(like, bool) or isinstance(value, bool):
        return isinstance(like, bool) and isinstance(value, bool)
    if isinstance(like, int):
        return isinstance(value, int)
    if isinstance(like, float):
        return isinstance(value, (int, float))
    if isinstance(like, str):
        return isinstance(value, str)
    return value is None and like is None


def kernel_overrides(kernel: BenchKernel, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The overrides that apply to ``kernel``: the keys its Liger config has, type-checked."""
    applied: dict[str, Any] = {}
    for key, value in overrides.items():
        if key not in kernel.sweep.config:
            continue
        like = kernel.sweep.config[key]
        if not _fits(value, like):
            raise PlanError(
                f"--set {_quote(key)}: {kernel.name}'s {_quote(key)} is {_type_name(like)} "
                f"({_quote(repr(like))} in Liger's config), not {_type_name(value)} "
                f"({_quote(repr(value))})"
            )
        applied[key] = value
    return applied


def _check_override_keys(kernels: Sequence[BenchKernel], overrides: Mapping[str, Any]) -> None:
    """Every --set key must be a config key of at least one kernel asked for."""
    for key in overrides:
        for kernel in kernels:
            if key == kernel.sweep.x_name:
                raise PlanError(
                    f"--set {_quote(key)}: that is the swept x of {kernel.name!r}; use --x instead"
                )
        if not any(key in kernel.sweep.config for kernel in kernels):
            known = "; ".join(
                f"{kernel.name}: {', '.join(kernel.sweep.config)}" for kernel in kernels
            )
            raise PlanError(
                f"--set {_quote(key)}: no kernel asked for has that key in its Liger config "
                f"({known})"
            )


def plan(request: Request, catalog: BenchCatalog, warn: Warn | None = None) -> list[PlannedItem]:
    """Every (workload, metric) to measure, in a stable order: kernel, x, pass, metric."""
    if not request.kernels:
        raise PlanError(f"no kernel given; known kernels: {', '.join(sorted(catalog.kernels))}")
    on_warning: Warn = warn if warn is not None else (lambda key, message: None)
    kernels: list[BenchKernel] = []
    for name in _unique(request.kernels):
        kernel = catalog.kernels.get(name)
        if kernel is None:
            raise PlanError(
                f"unknown kernel {_quote(repr(name))}; known kernels: "
                f"{', '.join(sorted(catalog.kernels))}"
            )
        kernels.append(kernel)
    _check_override_keys(kernels, request.overrides)
    items: list[PlannedItem] = []
    for kernel in kernels:
        providers = _providers(kernel, request.providers)
        passes = _unique(request.passes) or PASSES
        for pass_ in passes:
            if pass_ not in PASSES:
                raise PlanError(f"unknown pass {_quote(repr(pass_))}; known: {', '.join(PASSES)}")
        for metric in _unique(request.metrics):
            if metric not in METRICS:
                raise PlanError(
                    f"unknown metric {_quote(repr(metric))}; known: {', '.join(METRICS)}"
                )
        config = {**kernel.sweep.config, **kernel_overrides(kernel, request.overrides)}
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
    """The published seeds' workloads: each kernel that has one, at its x and pass, speed.

    Kernels whose provider compiles on its first call (the distillation loss's
    ``torch.compile``, tens of seconds) come last, so a short GPU window that runs out
    while compiling has already measured every other kernel.
    """
    items: list[PlannedItem] = []
    order = sorted(catalog.kernels.values(), key=lambda k: (k.compiles_on_first_call, k.name))
    for kernel in order:
        if kernel.sweep.seed_x is None or kernel.sweep.seed_pass is None:
            continue
        request = Request(
            kernels=(kernel.name,),
            passes=(kernel.sweep.seed_pass,),
            x_values=(kernel.sweep.seed_x,),
        )
        items.extend(plan(request, catalog))
    return items


def _providers(kernel: BenchKernel, asked: Sequence[str]) -> tuple[str, ...]:
    if not asked:
        return kernel.default_providers
    for provider in asked:
        if provider not in kernel.providers:
            raise PlanError(
                f"kernel {kernel.name!r} has no provider {_quote(repr(provider))}; "
                f"known: {', '.join(kernel.providers)}"
            )
    return _unique(asked)


def _unique(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(values))
