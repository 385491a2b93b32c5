"""Turning groups into plot panels: finding the swept dimension.

A benchmark sweeps one parameter while holding the others fixed (Liger's geglu sweeps
``seq`` at batch 8, hidden 4096). Records do not say which parameter was swept —
a Workload just has parameters — so it is found from the data.

Panels
------
Groups are first split into *families*: same kernel, pass, metric, protocol and GPU
(runs from different families are never drawn on one axis). Within a family each
distinct workload is a point in a space of settings: its parameters, its ``dtype``
and its ``settings`` (flattened as ``settings.<name>``). A **sweep** along ``k`` is a
set of workloads that agree on everything but ``k`` and take at least two values of
``k``. Sweeps are chosen greedily, largest first (ties: by name of ``k``), as long as
each adds a workload not yet drawn; each chosen sweep is one panel, with ``k`` on x.
So ``llama4_rope``, which sweeps ``seq`` at one hidden size and ``hidden`` at one
sequence length, gets two panels (the shared point appears in both, as in Liger's own
plots), and a full grid gets one panel per row of the grid.

Workloads in no sweep (one-off shapes) are drawn together in one more panel per
family, one categorical x position per workload, labelled by what differs.

Some parameters *name* a problem rather than size it: KernelBench's ``level`` and
``problem`` number (:data:`IDENTIFYING`). Two workloads that differ in one are two
different problems, never two points of a sweep, so such a coordinate is never an x
axis: they land in the categorical panel, one position each.

x is numeric when every value is a number, else categorical (model names, dtypes).
Each implementation is one series; a run that did not pass is a *failure* marker at
its x, never a point.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from kernelindex_sdk.base.metrics import METRIC_NAMES
from kernelindex_sdk.compare.grouping import Comparison, Group, scalar_order
from kernelindex_sdk.compare.runs import ResolvedRun, show_value

#: A flattened workload coordinate: parameter, dtype or setting value.
Value = int | float | str | bool
#: Parameters that identify a problem of a suite (KernelBench's ``level`` and
#: ``problem`` number), not a size: never swept, however numeric they look.
IDENTIFYING: Final = frozenset({"level", "problem"})
#: Marks a coordinate a workload does not have.
_MISSING: Final = "\x00missing"


@attrs.frozen
class Point:
    x: Value
    value: float
    p20: float | None
    p80: float | None
    run: ResolvedRun
    #: The run's ratio over the group's baseline (None: n/a, or the baseline itself).
    ratio: float | None = None


@attrs.frozen
class Failure:
    x: Value
    status: str
    reason: str | None
    run: ResolvedRun


@attrs.frozen
class Series:
    """One implementation's line in a panel."""

    implementation: str
    label: str
    is_baseline: bool
    points: tuple[Point, ...]
    failures: tuple[Failure, ...]


@attrs.frozen
class Panel:
    """One axis: a family, a swept coordinate (or None for one-off shapes), the series."""

    kernel: str
    kernel_title: str
    pass_: str
    metric: str
    gpu: str
    protocol: str
    #: The swept coordinate; None for a panel of workloads that are in no sweep.
    x_name: str | None
    categorical: bool
    #: x values in axis order (numbers ascending, strings as sorted).
    x_values: tuple[Value, ...]
    #: The coordinates held fixed along the sweep.
    fixed: tuple[tuple[str, Value], ...]
    series: tuple[Series, ...]

    @property
    def title(self) -> str:
        """``GeGLU MLP · forward · latency``: what the panel compares."""
        metric = METRIC_NAMES.get(self.metric, self.metric)
        return f"{self.kernel_title} · {self.pass_} · {metric}"

    @property
    def subtitle(self) -> str:
        """``NVIDIA H100 80GB HBM3 · batch=8, dtype=bf16``: where, and the fixed shape."""
        fixed = ", ".join(f"{k}={show_value(v)}" for k, v in self.fixed)
        return f"{self.gpu} · {fixed}" if fixed else self.gpu


def coordinates(run: ResolvedRun) -> dict[str, Value]:
    """A workload as flat coordinates: parameters, ``dtype``, ``settings.<name>``."""
    workload = run.workload
    if workload is None:  # pragma: no cover - callers skip these
        return {}
    out: dict[str, Value] = dict(workload.parameters)
    out["dtype"] = workload.dtype
    for name, value in workload.settings.items():
        if isinstance(value, (int, float, str, bool)):
            out[f"settings.{name}"] = value
        else:
            out[f"settings.{name}"] = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return out


def panels(comparison: Comparison) -> tuple[list[Panel], int]:
    """The panels for a comparison, and how many groups could not be placed.

    Groups whose Workload record was not given have no coordinates: they are counted,
    not drawn.
    """
    families: dict[tuple[str, ...], list[Group]] = {}
    unplaced = 0
    for group in comparison.groups:
        run = group.first
        if run.workload is None:
            unplaced += 1
            continue
        family = (
            run.workload.kernel,
            run.workload.pass_,
            group.metric,
            group.key.hardware,
            group.key.protocol,
        )
        families.setdefault(family, []).append(group)
    out: list[Panel] = []
    for groups in families.values():
        out.extend(_family_panels(groups))
    return out, unplaced


@attrs.frozen
class _Sweep:
    name: str
    fixed: tuple[tuple[str, Any], ...]
    members: tuple[int, ...]


def find_sweeps(points: Sequence[Mapping[str, Value]]) -> tuple[list[_Sweep], list[int]]:
    """Sweeps over a set of coordinate maps, and the indices left in none.

    See the module docstring for the rule. Pure, so it is tested on its own.
    """
    keys = sorted({k for p in points for k in p})
    candidates: list[_Sweep] = []
    for name in keys:
        if name in IDENTIFYING:
            continue
        others = [k for k in keys if k != name]
        classes: dict[tuple[Any, ...], list[int]] = {}
        for index, point in enumerate(points):
            if name in point:
                rest = tuple(point.get(k, _MISSING) for k in others)
                classes.setdefault(rest, []).append(index)
        for rest, members in classes.items():
            if len({_hashable(points[i][name]) for i in members}) >= 2:
                fixed = tuple((k, v) for k, v in zip(others, rest, strict=True) if v != _MISSING)
                candidates.append(_Sweep(name, fixed, tuple(members)))
    candidates.sort(key=lambda s: (-len(s.members), s.name, [_sort_fixed(s.fixed)]))
    chosen: list[_Sweep] = []
    covered: set[int] = set()
    for sweep in candidates:
        if not set(sweep.members) <= covered:
            chosen.append(sweep)
            covered.update(sweep.members)
    leftover = [i for i in range(len(points)) if i not in covered]
    return chosen, leftover


def _hashable(value: Value) -> tuple[str, Value]:
    # True == 1 in Python; as coordinates they are different values.
    return (type(value).__name__ if isinstance(value, bool) else "n", value)


def _sort_fixed(fixed: tuple[tuple[str, Any], ...]) -> list[tuple[str, tuple[int, float, str]]]:
    return [(k, scalar_order(v)) for k, v in fixed]


def _family_panels(groups: list[Group]) -> list[Panel]:
    points = [coordinates(g.first) for g in groups]
    sweeps, leftover = find_sweeps(points)
    out = [_panel(groups, points, sweep.members, sweep.name, sweep.fixed) for sweep in sweeps]
    if leftover:
        out.append(_leftover_panel(groups, points, leftover))
    return out


def _panel(
    groups: Sequence[Group],
    points: Sequence[Mapping[str, Value]],
    members: Iterable[int],
    x_name: str,
    fixed: tuple[tuple[str, Any], ...],
) -> Panel:
    members = list(members)
    xs = {i: points[i][x_name] for i in members}
    return _build(groups, members, xs, x_name, fixed)


def _leftover_panel(
    groups: Sequence[Group], points: Sequence[Mapping[str, Value]], members: list[int]
) -> Panel:
    """One categorical panel for one-off workloads, each labelled by what differs."""
    keys = sorted({k for i in members for k in points[i]})
    varying = [k for k in keys if len({_hashable(points[i].get(k, "—")) for i in members}) > 1]
    fixed = tuple(
        (k, points[members[0]][k]) for k in keys if k not in varying and k in points[members[0]]
    )
    shown = varying or keys
    xs: dict[int, Value] = {
        i: " ".join(f"{k}={show_value(points[i].get(k, '—'))}" for k in shown) for i in members
    }
    return _build(groups, members, xs, None, fixed if varying else ())


def _build(
    groups: Sequence[Group],
    members: list[int],
    xs: Mapping[int, Value],
    x_name: str | None,
    fixed: tuple[tuple[str, Any], ...],
) -> Panel:
    values = list(xs.values())
    categorical = x_name is None or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
    )
    order = sorted({_hashable(v): v for v in values}.values(), key=scalar_order)
    series: dict[str, tuple[str, bool, list[Point], list[Failure]]] = {}
    for index in members:
        for row in groups[index].rows:
            run = row.newest
            entry = series.setdefault(row.implementation, (row.label, False, [], []))
            if row.is_baseline and not entry[1]:
                entry = (entry[0], True, entry[2], entry[3])
                series[row.implementation] = entry
            x = xs[index]
            if run.passed and run.value is not None:
                entry[2].append(Point(x, run.value, run.p20, run.p80, run, row.ratio))
            else:
                entry[3].append(Failure(x, run.status, run.reason, run))
    first = groups[members[0]].first
    return Panel(
        kernel=first.kernel or "",
        kernel_title=first.kernel_title,
        pass_=first.pass_ or "",
        metric=groups[members[0]].metric,
        gpu=first.gpu,
        protocol=first.protocol_title or first.protocol_name or first.protocol_digest,
        x_name=x_name,
        categorical=categorical,
        x_values=tuple(order),
        fixed=tuple(sorted(fixed, key=lambda kv: kv[0])),
        series=tuple(
            Series(
                implementation=digest,
                label=label,
                is_baseline=is_base,
                points=tuple(sorted(pts, key=lambda p: scalar_order(p.x))),
                failures=tuple(fails),
            )
            for digest, (label, is_base, pts, fails) in sorted(
                series.items(), key=lambda item: (not item[1][1], item[1][0])
            )
        ),
    )
