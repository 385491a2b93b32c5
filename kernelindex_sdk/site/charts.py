"""Compare's answers as charts: a sweep panel (:class:`~kernelindex_sdk.compare.sweeps.Panel`)
as an SVG chart, with each point's spread and a link to its run's page.

The axes follow :mod:`~kernelindex_sdk.compare.plot` (the PNG plots) so that both read
the same: one readable unit per chart, a log₂ x for doubling sweeps, a log₁₀ axis for
values spanning more than :data:`~kernelindex_sdk.compare.plot.LOG_SPAN` ×, categories
never joined by a line. The spread drawn is the one every verdict judges by
(:func:`~kernelindex_sdk.compare.noise.noise_of`): p20–p80, or mean ± stddev.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kernelindex_sdk.base.metrics import METRIC_NAMES
from kernelindex_sdk.compare.noise import noise_of
from kernelindex_sdk.compare.plot import LOG_SPAN, powers_of_two
from kernelindex_sdk.compare.runs import ResolvedRun, show_value
from kernelindex_sdk.compare.sweeps import Panel
from kernelindex_sdk.compare.units import pick_unit, quantity, spread
from kernelindex_sdk.site.html import record_file, relative
from kernelindex_sdk.site.svg import Chart, ChartPoint, ChartSeries


def x_positions(values: Sequence[object]) -> tuple[float, ...] | None:
    """Numeric x positions of a numeric sweep (log₂ for doubling, log₁₀ for wide), or
    None: categorical."""
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) != len(values) or not numbers:
        return None
    floats = [float(v) for v in numbers]
    if powers_of_two(floats):
        return tuple(math.log2(v) for v in floats)
    if min(floats) > 0 and max(floats) / min(floats) > LOG_SPAN:
        return tuple(math.log10(v) for v in floats)
    return tuple(floats)


def describe(run: ResolvedRun, unit: tuple[str, float]) -> str:
    """``median 1.234 ms, p20–p80 1.200–1.300 ms``: a run's value and spread."""
    if not run.passed or run.value is None:
        reason = f": {run.reason}" if run.reason else ""
        return f"{run.status}{reason}"
    noise = noise_of(run)
    statistic = run.statistic or "value"
    text = f"{statistic} {quantity(run.value, unit)}"
    if noise.low is not None and noise.high is not None:
        text += f", {noise.label} {spread(noise.low, noise.high, unit)}"
    return text


def panel_chart(panel: Panel, page: str) -> Chart:
    """A sweep panel as a chart drawn on ``page`` (its points link to run pages)."""
    values = [p.value for s in panel.series for p in s.points]
    unit = pick_unit(values, panel.metric)
    scale = unit[1]
    index = {show_value(v): i for i, v in enumerate(panel.x_values)}
    positions = None if panel.categorical else x_positions(panel.x_values)
    drawn = [v / scale for v in values if v > 0]
    log_y = bool(drawn) and max(drawn) / min(drawn) > LOG_SPAN
    series = []
    for line in panel.series:
        label = line.label + (" (baseline)" if line.is_baseline else "")
        points = []
        for point in line.points:
            noise = noise_of(point.run)
            target = record_file(point.run.digest)
            points.append(
                ChartPoint(
                    x=index[show_value(point.x)],
                    y=point.value / scale,
                    low=None if noise.low is None else noise.low / scale,
                    high=None if noise.high is None else noise.high / scale,
                    tip=f"{label} at {show_value(point.x)}: {describe(point.run, unit)}",
                    href=None if target is None else relative(page, target),
                )
            )
        failures = tuple(
            (index[show_value(f.x)], f"{label} at {show_value(f.x)}: {describe(f.run, unit)}")
            for f in line.failures
        )
        series.append(ChartSeries(label, tuple(points), failures))
    metric = METRIC_NAMES.get(panel.metric, panel.metric)
    return Chart(
        x_labels=tuple(show_value(v) for v in panel.x_values),
        x_positions=positions,
        x_title=panel.x_name or "workload",
        y_title=f"{metric} ({unit[0]})",
        series=tuple(series),
        log_y=log_y,
        description=f"{panel.title}; {panel.subtitle}",
    )
