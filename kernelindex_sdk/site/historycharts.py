"""A kernel's history as charts: each series of
:func:`~kernelindex_sdk.compare.history.history` over versions, its change points marked.

One chart per series of two points or more: the points in the series' order (versions,
then days), joined, the recorded spread as a band, each point linked to its newest
run's page; a dashed line where a new level starts, red for ``slower`` and green for
``faster``, labelled with the ratio (new level ÷ old). A series of many points is
thinned evenly for drawing (every change point kept); its table of changes is whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kernelindex_sdk.base.metrics import METRIC_NAMES
from kernelindex_sdk.compare.history import SLOWER, Series, history
from kernelindex_sdk.compare.runs import ResolvedRun
from kernelindex_sdk.compare.units import pick_unit, quantity, spread
from kernelindex_sdk.site.html import esc, link, record_file, relative, table
from kernelindex_sdk.site.svg import Chart, ChartPoint, ChartSeries, Marker, render

#: Most points one history chart draws.
DRAWN: Final = 400
#: Most series a kernel page charts (the rest counted).
CHARTED: Final = 40


def history_sections(path: str, runs: Sequence[ResolvedRun]) -> list[str]:
    """The history part of a kernel's page at ``path``: a chart and the changes of each
    series of two points or more; empty where no series has two."""
    found = history(runs)
    shown = [series for series in found.series if len(series.points) >= 2]
    if not shown:
        return []
    out = [
        f'<p class="sub">Change points: {esc(found.method)}; threshold {found.threshold:.0%}.</p>'
    ]
    out.extend(_section(path, series) for series in shown[:CHARTED])
    if len(shown) > CHARTED:
        out.append(
            f'<p class="note">and {len(shown) - CHARTED} more series (all of them:'
            " kernelindex history)</p>"
        )
    return out


def _section(path: str, series: Series) -> str:
    key = series.key
    title = " · ".join(key.get(k, "") for k in ("pass", "workload", "implementation"))
    sub = " · ".join(
        [key.get("gpu", ""), METRIC_NAMES.get(key.get("metric", ""), ""), key.get("protocol", "")]
    )
    rows = [
        [
            f'<span class="{esc(change.direction)}">{esc(change.direction)}</span>',
            esc(f"{change.ratio:.3f}×"),
            esc(change.version or "—"),
            esc(change.observed_at[:10]),
            link(path, record_file(series.points[change.index].digest), "run"),
        ]
        for change in series.changes
    ]
    changes = (
        table(["change", "ratio (new ÷ old)", "from version", "date", ""], rows)
        if rows
        else '<p class="note">No change point.</p>'
    )
    return (
        f'<h3>{esc(title)}</h3><p class="sub">{esc(sub)}</p>'
        + render(history_chart(series, path))
        + changes
    )


def _drawn(series: Series) -> list[int]:
    """The indices of the points drawn: all, or evenly thinned with every change kept."""
    count = len(series.points)
    if count <= DRAWN:
        return list(range(count))
    step = -(-count // DRAWN)
    keep = {c.index for c in series.changes} | {c.index - 1 for c in series.changes if c.index}
    return [i for i in range(count) if i % step == 0 or i in keep or i == count - 1]


def history_chart(series: Series, path: str) -> Chart:
    """One series as a chart drawn on ``path``."""
    metric = series.key.get("metric", "")
    unit = pick_unit([p.value for p in series.points], metric)
    scale = unit[1]
    drawn = _drawn(series)
    at = {index: slot for slot, index in enumerate(drawn)}
    points = []
    for slot, index in enumerate(drawn):
        point = series.points[index]
        target = record_file(point.digest)
        band = spread(point.low, point.high, unit) if point.low is not None else "no spread"
        points.append(
            ChartPoint(
                x=slot,
                y=point.value / scale,
                low=None if point.low is None else point.low / scale,
                high=None if point.high is None else point.high / scale,
                tip=f"{point.version or 'no version'} · {point.observed_at[:10]}:"
                f" {quantity(point.value, unit)} ({band}; {point.runs} runs)",
                href=None if target is None else relative(path, target),
            )
        )
    markers = tuple(
        Marker(
            x=at[change.index],
            label=f"{change.direction} {change.ratio:.2f}×",
            tone="worse" if change.direction == SLOWER else "better",
        )
        for change in series.changes
        if change.index in at
    )
    labels = tuple(series.points[i].version or series.points[i].observed_at[:10] for i in drawn)
    return Chart(
        x_labels=labels,
        x_positions=tuple(float(slot) for slot in range(len(drawn))),
        x_title="implementation version",
        y_title=f"{METRIC_NAMES.get(metric, metric)} ({unit[0]})",
        series=(ChartSeries(series.key.get("implementation", ""), tuple(points)),),
        markers=markers,
        description=f"history of {series.key.get('kernel', '')}, {len(series.changes)} changes",
    )
