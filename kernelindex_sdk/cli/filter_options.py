"""The filter options ``compare``, ``ls`` and ``history`` share: one definition of each.

``--kernel``, ``--pass``, ``--gpu``, ``--metric`` and ``--where`` select runs the same
way in every command that takes them (:func:`~kernelindex_sdk.compare.grouping.select`), so they are
declared once here — names, choices, help texts — and applied with
:func:`filter_options`; :func:`select_runs` applies them to resolved runs,
:func:`typos` says which values name nothing present, and :func:`unknown_metric`
refuses a metric word outside the one list
(:data:`~kernelindex_sdk.base.metrics.METRIC_ALIASES`) for callers that bypass click, as
:func:`bad_where` refuses a ``--where`` that is not ``KEY=VALUE``.
``--format`` differs in its choices per command, so :func:`format_option` takes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Protocol, TypeVar

import click

from kernelindex_sdk.base.metrics import METRIC_ALIASES
from kernelindex_sdk.compare.grouping import PASS_ORDER

if TYPE_CHECKING:
    from kernelindex_sdk.compare.runs import ResolvedRun

#: ``--pass`` choices: the timed passes, in the order reports list them.
PASSES: Final = tuple(PASS_ORDER)

F = TypeVar("F", bound=Callable[..., object])


class Filters(Protocol):
    """What a command's options hold of the filters (``CompareOptions``, ``LsOptions``)."""

    @property
    def kernels(self) -> tuple[str, ...]: ...
    @property
    def passes(self) -> tuple[str, ...]: ...
    @property
    def gpus(self) -> tuple[str, ...]: ...
    @property
    def metrics(self) -> tuple[str, ...]: ...
    @property
    def wheres(self) -> tuple[str, ...]: ...


def filter_options(command: F) -> F:
    """Add ``--kernel``, ``--pass``, ``--gpu``, ``--metric`` and ``--where`` (each
    repeatable) to a click command; they arrive as the tuples ``kernels``, ``passes``,
    ``gpus``, ``metrics``, ``wheres``."""
    for option in reversed(_FILTERS):
        command = option(command)
    return command


_FILTERS: Final = (
    click.option(
        "--kernel",
        "kernels",
        multiple=True,
        metavar="K",
        help="Only runs of this kernel (repeatable).",
    ),
    click.option(
        "--pass",
        "passes",
        multiple=True,
        type=click.Choice(PASSES),
        help="Only this timed pass (repeatable).",
    ),
    click.option(
        "--gpu",
        "gpus",
        multiple=True,
        metavar="G",
        help="Only GPUs whose name contains G (case, spaces, '-' and '_' ignored), e.g. h100"
        " (repeatable).",
    ),
    click.option(
        "--metric",
        "metrics",
        multiple=True,
        type=click.Choice(sorted(METRIC_ALIASES)),
        help="Only latency (speed) or peak-memory (memory, peak_memory) runs.",
    ),
    click.option(
        "--where",
        "wheres",
        multiple=True,
        metavar="KEY=VALUE",
        help="Only workloads whose parameter KEY (or dtype) is VALUE, e.g. hidden=4096 or"
        " dtype=bf16 (repeatable: every key must match, any of one key's values).",
    ),
)


def format_option(formats: Sequence[str], help_text: str) -> Callable[[F], F]:
    """``--format``, one of ``formats`` (the first is the default); it arrives as
    ``format_``."""
    return click.option(
        "--format",
        "format_",
        type=click.Choice(formats),
        default=formats[0],
        show_default=True,
        help=help_text,
    )


def unknown_metric(metrics: Iterable[str]) -> str | None:
    """The usage error for a ``--metric`` word that names no metric (None: all known)."""
    unknown = [m for m in metrics if m not in METRIC_ALIASES]
    if not unknown:
        return None
    return f"unknown --metric {unknown[0]!r} (choose from {', '.join(sorted(METRIC_ALIASES))})"


def bad_where(wheres: Iterable[str]) -> str | None:
    """The usage error for a ``--where`` that is not ``KEY=VALUE`` (None: all are)."""
    from kernelindex_sdk.compare.filters import parse_where

    try:
        parse_where(wheres)
    except ValueError as error:
        return str(error)
    return None


def select_runs(
    runs: Iterable[ResolvedRun],
    filters: Filters,
    gpu_names: Mapping[str, Sequence[str]] | None = None,
) -> list[ResolvedRun]:
    """The runs every given filter matches, metric words read as the records name them
    (the ``--where`` texts must be ``KEY=VALUE``: :func:`bad_where`)."""
    from kernelindex_sdk.compare.filters import parse_where, select_where
    from kernelindex_sdk.compare.grouping import select

    selected = select(
        runs,
        kernels=filters.kernels,
        passes=filters.passes,
        gpus=filters.gpus,
        metrics=[METRIC_ALIASES[m] for m in filters.metrics],
        gpu_names=gpu_names,
    )
    return select_where(selected, parse_where(filters.wheres))


def typos(
    runs: Sequence[ResolvedRun],
    filters: Filters,
    gpu_names: Mapping[str, Sequence[str]],
    baselines: Sequence[str] = (),
) -> list[str]:
    """Why a ``--kernel``, ``--gpu``, ``--where`` (or ``compare``'s ``--baseline``) value
    names nothing among ``runs``, one line each (:func:`~kernelindex_sdk.compare.filters.unmatched`,
    :func:`~kernelindex_sdk.compare.filters.unmatched_where`: with the names it might have
    meant); none where no run was loaded to name."""
    from kernelindex_sdk.compare.filters import (
        parse_where,
        unmatched,
        unmatched_where,
        where_values,
    )

    if not runs:
        return []
    found = unmatched(
        runs, kernels=filters.kernels, gpus=filters.gpus, baselines=baselines, gpu_names=gpu_names
    )
    wheres = parse_where(filters.wheres)
    lines = [str(typo) for typo in found]
    if wheres:
        lines += unmatched_where((where_values(run) for run in runs), wheres)
    return lines
