"""Speed-up per problem: the view a suite of many one-shape problems needs.

A suite such as KernelBench has hundreds of problems, each one workload: a panel per
sweep would be hundreds of one-point panels. What its reader asks is "over how many
problems is this implementation faster, and by how much?" — so this view draws, per
GPU, metric and implementation (against its baseline), every problem's ratio sorted
from worst to best, with a line at 1× and the geometric mean.

The partition, the baseline and the geometric mean are those of
:func:`~kernelindex_sdk.compare.summary.summarize` (one definition of a suite's
summary); this module only keeps the per-problem ratios behind each summary.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from kernelindex_sdk.compare.grouping import Comparison, Group
from kernelindex_sdk.compare.summary import Summary, summarize
from kernelindex_sdk.compare.sweeps import Panel


@attrs.frozen
class Entry:
    """One problem's ratio (``baseline ÷ implementation``), named for the axis."""

    name: str
    ratio: float


@attrs.frozen
class SpeedupPanel:
    """One implementation against its baseline on one GPU and metric, problems sorted."""

    summary: Summary
    #: Ascending by ratio (worst first), ties by name.
    entries: tuple[Entry, ...]

    @property
    def title(self) -> str:
        """``torch_compile over torch · latency · 248 problems``."""
        count = len(self.entries)
        problems = f"{count} problem{'' if count == 1 else 's'}"
        return f"{self.summary.implementation} over {self.summary.baseline} · {problems}"


def speedup_panels(comparison: Comparison) -> list[SpeedupPanel]:
    """A panel per summary of ``comparison`` that has at least one ratio, in its order."""
    names = _names(comparison.groups)
    ratios: dict[tuple[str, str, str, str], list[Entry]] = {}
    for group, name in zip(comparison.groups, names, strict=True):
        base = next((row for row in group.rows if row.is_baseline), None)
        if group.baseline is None or base is None or not base.newest.passed:
            continue
        for row in group.rows:
            if row is base or not row.newest.passed or row.ratio is None:
                continue
            place = (group.key.hardware, group.metric, group.baseline, row.implementation)
            ratios.setdefault(place, []).append(Entry(name, row.ratio))
    out = []
    for summary in summarize(comparison):
        place = (summary.hardware, summary.metric, summary.baseline, summary.implementation_digest)
        entries = ratios.get(place, [])
        if entries:
            ordered = tuple(sorted(entries, key=lambda e: (e.ratio, e.name)))
            out.append(SpeedupPanel(summary, ordered))
    return out


def no_sweeps(panels: Sequence[Panel]) -> bool:
    """Whether no panel is a sweep — every one holds one-off shapes, as for a suite of
    one-shape problems, which ``compare --plot`` draws as speed-ups when too many."""
    return bool(panels) and all(panel.x_name is None for panel in panels)


def _names(groups: Sequence[Group]) -> list[str]:
    """A name per group: the kernel; with its pass when passes differ, and its shape
    when one kernel has several workloads (two KernelBench problems may share a stem)."""
    kernels = [g.first.kernel or g.first.kernel_title for g in groups]
    passes = {g.first.pass_ for g in groups}
    workloads: dict[str, set[str]] = {}
    for group, kernel in zip(groups, kernels, strict=True):
        workloads.setdefault(kernel, set()).add(group.key.workload)
    names = []
    for group, kernel in zip(groups, kernels, strict=True):
        name = kernel
        if len(passes) > 1 and group.first.pass_:
            name += f" · {group.first.pass_}"
        if len(workloads[kernel]) > 1 and group.first.workload is not None:
            name += f" [{group.first.workload.describe()}]"
        names.append(name)
    return names
