"""Charts as inline SVG, written here: no library, no script, nothing fetched.

A chart is a few series of points on one axis pair: each point a median with, where
the run records one, its p20–p80 spread; runs that did not pass as a cross on the x
axis. Along a numeric x the points of a series are joined and the spread drawn as a
band; on a categorical x (dtypes, problem names, versions) each point stands alone
with whiskers, never joined. Vertical markers (change points) may be drawn across.

Every text drawn — labels, tick names, tooltips — is input and goes through
:func:`~kernelindex_sdk.base.escaping.html_text`; every number is formatted here. A
point's tooltip is an SVG ``<title>`` (the browser's own), and a point may link to a
page (its record), so the chart needs no script at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import attrs

from kernelindex_sdk.base.escaping import html_text

#: The chart's size in SVG user units (it scales with the page: ``viewBox``).
WIDTH: Final = 720
HEIGHT: Final = 340
#: Room for the axes' labels: left, right, top, bottom.
_LEFT, _RIGHT, _TOP, _BOTTOM = 72, 16, 16, 64
#: One colour per series (matplotlib's ``tab10``, so the PNG plots and these agree).
PALETTE: Final = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
#: How far apart the series' points of one category are drawn.
_DODGE: Final = 7.0
#: Most x tick labels drawn; beyond, every n-th one.
_MAX_TICKS: Final = 12


@attrs.frozen
class ChartPoint:
    """One point: where on x (an index into the chart's x values), the value and its
    spread (None: not recorded), the tooltip, and the page it links to (None: none)."""

    x: int
    y: float
    low: float | None = None
    high: float | None = None
    tip: str = ""
    href: str | None = None


@attrs.frozen
class ChartSeries:
    label: str
    points: tuple[ChartPoint, ...]
    #: x indices of runs that did not pass, each with its tooltip.
    failures: tuple[tuple[int, str], ...] = ()


@attrs.frozen
class Marker:
    """A vertical line at an x index (a change point), with its label."""

    x: int
    label: str
    #: ``worse`` (red) or ``better`` (green); anything else grey.
    tone: str = ""


@attrs.frozen
class Chart:
    #: x tick labels in axis order (already text).
    x_labels: tuple[str, ...]
    #: Numeric positions of the x values (None: categorical, evenly spaced).
    x_positions: tuple[float, ...] | None
    x_title: str
    y_title: str
    series: tuple[ChartSeries, ...]
    log_y: bool = False
    markers: tuple[Marker, ...] = ()
    #: Text read out for the whole chart (``aria-label``).
    description: str = ""


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def render(chart: Chart) -> str:
    """The chart as one ``<svg>`` element (text, escaped throughout)."""
    values = [
        v
        for s in chart.series
        for p in s.points
        for v in (p.y, p.low, p.high)
        if v is not None and math.isfinite(v) and (v > 0 or not chart.log_y)
    ]
    y_of = _y_scale(values, chart.log_y)
    xs = _x_coordinates(chart)
    joined = chart.x_positions is not None
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img"'
        f' aria-label="{html_text(chart.description)}" xmlns="http://www.w3.org/2000/svg">',
        _y_axis(chart, y_of, values),
        _x_axis(chart, xs),
    ]
    parts.extend(_marker(marker, xs) for marker in chart.markers if 0 <= marker.x < len(xs))
    count = len(chart.series)
    for index, series in enumerate(chart.series):
        # Side by side on a categorical axis: points of one category never hide each other.
        shift = 0.0 if joined else (index - (count - 1) / 2) * _DODGE
        moved = [x + shift for x in xs]
        parts.append(_series(series, colour(index), moved, y_of, joined))
    parts.append("</svg>")
    return "".join(parts)


class _Scale:
    """Data → SVG units along one axis (linear, or logarithmic in base 10)."""

    def __init__(self, low: float, high: float, start: float, end: float, log: bool) -> None:
        self.log = log
        self.low, self.high = (math.log10(low), math.log10(high)) if log else (low, high)
        if self.high <= self.low:
            self.low, self.high = self.low - 1, self.high + 1
        self.start, self.end = start, end

    def __call__(self, value: float) -> float:
        if self.log:
            value = math.log10(value) if value > 0 else self.low
        share = (value - self.low) / (self.high - self.low)
        return self.start + share * (self.end - self.start)

    def ticks(self) -> list[float]:
        """About five round values inside the axis."""
        if self.log:
            first, last = math.floor(self.low), math.ceil(self.high)
            found = [10.0**e for e in range(first, last + 1)]
            found = [t for t in found if self.low <= math.log10(t) <= self.high]
            return found or [10**self.low, 10**self.high]
        span = self.high - self.low
        step = 10 ** math.floor(math.log10(span / 5))
        for factor in (1, 2, 5, 10):
            if span / (step * factor) <= 6:
                step *= factor
                break
        start = math.ceil(self.low / step) * step
        return [start + i * step for i in range(int((self.high - start) / step) + 1)]


def _y_scale(values: Sequence[float], log: bool) -> _Scale:
    bottom, top = HEIGHT - _BOTTOM, _TOP
    if not values:
        return _Scale(0.0, 1.0, bottom, top, False)
    low, high = min(values), max(values)
    if log:
        return _Scale(low / 1.15, high * 1.15, bottom, top, True)
    pad = (high - low) * 0.08 or abs(high) * 0.1 or 1.0
    floor = max(0.0, low - pad) if low >= 0 else low - pad
    return _Scale(floor, high + pad, bottom, top, False)


def _x_coordinates(chart: Chart) -> list[float]:
    """Where each x value is drawn: by its numeric position, or evenly spaced slots."""
    count = len(chart.x_labels)
    positions = chart.x_positions
    if positions is not None and len(positions) == count and count >= 2:
        low, high = min(positions), max(positions)
        pad = (high - low) * 0.04 or 1.0
        scale = _Scale(low - pad, high + pad, _LEFT, WIDTH - _RIGHT, False)
        return [scale(p) for p in positions]
    slot = (WIDTH - _LEFT - _RIGHT) / max(count, 1)
    return [_LEFT + slot * (i + 0.5) for i in range(count)]


def _number(value: float) -> str:
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e5 or magnitude < 1e-3:
        return f"{value:.0e}"
    return f"{value:.4g}"


def _y_axis(chart: Chart, y_of: _Scale, values: Sequence[float]) -> str:
    bottom = HEIGHT - _BOTTOM
    parts = [
        f'<line class="axis" x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{bottom}"/>',
        f'<line class="axis" x1="{_LEFT}" y1="{bottom}" x2="{WIDTH - _RIGHT}" y2="{bottom}"/>',
    ]
    if values:
        for tick in y_of.ticks():
            y = y_of(tick)
            parts.append(
                f'<line class="grid" x1="{_LEFT}" y1="{y:.1f}" x2="{WIDTH - _RIGHT}" y2="{y:.1f}"/>'
                f'<text class="tick" x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
                f"{_number(tick)}</text>"
            )
    middle = (_TOP + bottom) / 2
    parts.append(
        f'<text class="title" x="14" y="{middle:.1f}" text-anchor="middle"'
        f' transform="rotate(-90 14 {middle:.1f})">{html_text(chart.y_title)}</text>'
    )
    return "".join(parts)


def _x_axis(chart: Chart, xs: Sequence[float]) -> str:
    bottom = HEIGHT - _BOTTOM
    every = max(1, math.ceil(len(xs) / _MAX_TICKS))
    parts = []
    for index, (x, label) in enumerate(zip(xs, chart.x_labels, strict=True)):
        if index % every:
            continue
        shown = label if len(label) <= 18 else label[:17] + "…"
        parts.append(
            f'<text class="tick" x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">'
            f"<title>{html_text(label)}</title>{html_text(shown)}</text>"
        )
    parts.append(
        f'<text class="title" x="{(_LEFT + WIDTH - _RIGHT) / 2:.1f}" y="{HEIGHT - 8}"'
        f' text-anchor="middle">{html_text(chart.x_title)}</text>'
    )
    return "".join(parts)


def _marker(marker: Marker, xs: Sequence[float]) -> str:
    x = xs[marker.x]
    tone = marker.tone if marker.tone in ("worse", "better") else "neutral"
    return (
        f'<g class="marker {tone}"><title>{html_text(marker.label)}</title>'
        f'<line x1="{x:.1f}" y1="{_TOP}" x2="{x:.1f}" y2="{HEIGHT - _BOTTOM}"/>'
        f'<text x="{x + 3:.1f}" y="{_TOP + 10}">{html_text(marker.label)}</text></g>'
    )


def _series(
    series: ChartSeries, stroke: str, xs: Sequence[float], y_of: _Scale, joined: bool
) -> str:
    points = [p for p in series.points if 0 <= p.x < len(xs) and math.isfinite(p.y)]
    parts = [f'<g class="series" stroke="{stroke}" fill="{stroke}">']
    parts.append(f"<title>{html_text(series.label)}</title>")
    spread = [p for p in points if p.low is not None and p.high is not None]
    if joined and len(spread) >= 2:
        upper = [f"{xs[p.x]:.1f},{y_of(p.high):.1f}" for p in spread if p.high is not None]
        lower = [f"{xs[p.x]:.1f},{y_of(p.low):.1f}" for p in reversed(spread) if p.low is not None]
        parts.append(f'<polygon class="band" points="{" ".join(upper + lower)}"/>')
    if joined and len(points) >= 2:
        line = " ".join(f"{xs[p.x]:.1f},{y_of(p.y):.1f}" for p in points)
        parts.append(f'<polyline class="line" fill="none" points="{line}"/>')
    for point in points:
        parts.append(_point(point, xs[point.x], y_of, joined))
    bottom = HEIGHT - _BOTTOM
    for x, tip in series.failures:
        if 0 <= x < len(xs):
            parts.append(
                f'<text class="failure" x="{xs[x]:.1f}" y="{bottom - 4}" text-anchor="middle">'
                f"<title>{html_text(tip)}</title>✕</text>"
            )
    parts.append("</g>")
    return "".join(parts)


def _point(point: ChartPoint, x: float, y_of: _Scale, joined: bool) -> str:
    y = y_of(point.y)
    body = f"<title>{html_text(point.tip)}</title>"
    if point.low is not None and point.high is not None and not joined:
        body += (
            f'<line class="whisker" x1="{x:.1f}" y1="{y_of(point.low):.1f}"'
            f' x2="{x:.1f}" y2="{y_of(point.high):.1f}"/>'
        )
    body += f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5"/>'
    if point.href is None:
        return f"<g>{body}</g>"
    return f'<a href="{html_text(point.href)}">{body}</a>'
