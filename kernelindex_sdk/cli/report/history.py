"""``kernelindex history``'s reporters: a :class:`~kernelindex_sdk.compare.history.History`
as text, Markdown, CSV or JSON.

Only formatting. Text and Markdown give one line (or table row) per series: its key,
how many points over which versions, its first and newest value, and every change
(``0.10.0 slower 1.31× (100.0 → 130.5 µs)``); with ``points`` each series' points
follow. CSV is one row per point (base units) with the change that starts there, if
any; JSON is :meth:`~kernelindex_sdk.compare.history.History.to_json`. The ratio is
the new level ÷ the old one (candidate ÷ reference) everywhere, and the headers say so.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Final, Protocol

from kernelindex_sdk.base.metrics import METRIC_NAMES
from kernelindex_sdk.cli.report.writing import (
    csv_number,
    csv_ratio,
    put_line,
    write_aligned,
    write_csv,
    write_json,
    write_markdown_table,
)
from kernelindex_sdk.compare.history import KEY_FIELDS, Change, History, Series
from kernelindex_sdk.compare.units import pick_unit, quantity, spread

#: What the change column's ratio is, named in every header.
RATIO_NOTE: Final = "ratio = new ÷ old (candidate ÷ reference; above 1 is slower)"


class HistoryReporter(Protocol):
    def write(self, history: History) -> None: ...


class _Reporter:
    def __init__(self, out: IO[str], points: bool = False) -> None:
        self.out, self.points = out, points


def _versions(series: Series) -> str:
    first, last = series.points[0].version, series.points[-1].version
    if first is None and last is None:
        return "unversioned"
    return first or "?" if first == last else f"{first or '?'} … {last or '?'}"


def change_text(change: Change, unit: tuple[str, float]) -> str:
    """``0.10.0 (2025-01-01T10:00:00Z) slower 1.31× (100.0 µs → 130.5 µs)``."""
    return (
        f"{change.version or '?'} ({change.observed_at}) {change.direction}"
        f" {change.ratio:.3f}× ({quantity(change.before, unit)} → {quantity(change.after, unit)})"
    )


def _unit(series: Series) -> tuple[str, float]:
    return pick_unit((p.value for p in series.points), series.key.get("metric", ""))


def _what(series: Series) -> str:
    key = series.key
    metric = METRIC_NAMES.get(key.get("metric", ""), key.get("metric", ""))
    return " · ".join(
        [key.get("kernel", ""), key.get("pass", ""), metric, key.get("gpu", ""),
         key.get("workload", ""), key.get("implementation", ""), key.get("protocol", "")]
    )  # fmt: skip


def summary_text(history: History) -> str:
    """``3 series, 40 points, 2 changes (1 slower, 1 faster)``."""
    changes = [c for s in history.series for c in s.changes]
    slower = sum(c.direction == "slower" for c in changes)
    points = sum(len(s.points) for s in history.series)
    return (
        f"{len(history.series)} series, {points} points, {len(changes)} changes"
        f" ({slower} slower, {len(changes) - slower} faster); {RATIO_NOTE};"
        f" threshold {history.threshold:.0%}"
    )


class TextReporter(_Reporter):
    """A line per series, its changes indented under it; then a summary line."""

    def write(self, history: History) -> None:
        out = self.out
        for series in history.series:
            unit = _unit(series)
            first, newest = series.points[0], series.points[-1]
            put_line(
                out,
                f"{_what(series)}: {len(series.points)} points, {_versions(series)};"
                f" {quantity(first.value, unit)} → {quantity(newest.value, unit)}",
            )
            for change in series.changes:
                put_line(out, f"  change at {change_text(change, unit)}")
            if self.points:
                rows = [
                    [p.version or "", p.observed_at, quantity(p.value, unit),
                     spread(p.low, p.high, unit), p.noise]
                    for p in series.points
                ]  # fmt: skip
                write_aligned(out, rows, (False, False, True, True, False), indent="    ")
        put_line(out, summary_text(history))


class MarkdownReporter(_Reporter):
    """A table of series (their changes in one cell), then the points per series."""

    HEADER: Final = (
        *KEY_FIELDS, "points", "versions", "first", "newest", f"changes ({RATIO_NOTE})",
    )  # fmt: skip

    def write(self, history: History) -> None:
        rows = [self._row(series) for series in history.series]
        numeric = [False] * len(KEY_FIELDS) + [True, False, True, True, False]
        write_markdown_table(self.out, self.HEADER, rows, numeric)
        if self.points:
            for series in history.series:
                unit = _unit(series)
                self.out.write(f"**{_escaped_heading(_what(series))}**\n\n")
                rows = [
                    [p.version or "", p.observed_at, quantity(p.value, unit),
                     spread(p.low, p.high, unit), p.noise]
                    for p in series.points
                ]  # fmt: skip
                header = ("version", "observedAt", "value", "noise interval", "noise")
                write_markdown_table(self.out, header, rows, (False, False, True, True, False))
        self.out.write(_escaped_heading(summary_text(history)) + "\n")

    def _row(self, series: Series) -> list[str]:
        unit = _unit(series)
        changes = "; ".join(change_text(c, unit) for c in series.changes) or "none"
        return [
            *(series.key.get(field, "") for field in KEY_FIELDS),
            str(len(series.points)),
            _versions(series),
            quantity(series.points[0].value, unit),
            quantity(series.points[-1].value, unit),
            changes,
        ]


def _escaped_heading(text: str) -> str:
    from kernelindex_sdk.base.escaping import markdown_cell

    return markdown_cell(text)


CSV_COLUMNS: Final = (
    *KEY_FIELDS, "unit", "index", "version", "observed_at", "value", "low", "high", "noise",
    "statistic", "digest", "runs", "change", "change_ratio",
)  # fmt: skip


class CsvReporter(_Reporter):
    """One row per point (base units); ``change``/``change_ratio`` where a level starts."""

    def write(self, history: History) -> None:
        write_csv(self.out, CSV_COLUMNS, self._rows(history))

    def _rows(self, history: History) -> Iterator[list[object]]:
        for series in history.series:
            key = [series.key.get(field, "") for field in KEY_FIELDS]
            starts = {change.index: change for change in series.changes}
            for index, p in enumerate(series.points):
                change = starts.get(index)
                yield [
                    *key, series.unit, index, p.version or "", p.observed_at,
                    csv_number(p.value), csv_number(p.low), csv_number(p.high), p.noise,
                    p.statistic or "", p.digest, p.runs, change.direction if change else "",
                    csv_ratio(change.ratio) if change else "",
                ]  # fmt: skip


class JsonReporter(_Reporter):
    """The library's JSON form of the history."""

    def write(self, history: History) -> None:
        write_json(self.out, history.to_json())
