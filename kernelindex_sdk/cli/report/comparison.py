"""``compare``'s reporters: a :class:`~kernelindex_sdk.compare.grouping.Comparison` as
text, Markdown, JSON or CSV, and why a selection is not comparable
(:func:`write_explanation`).

Reporters only format; every decision (groups, newest run, baseline, ratio) was made
before. People get one table per group with a readable unit; machines get base units
(ns, bytes) and every digest, so a figure can be traced back to its records.

A run that did not pass is shown by its status (``OOM``, ``FAILED``) and reason, never
as a number, and its ratio is n/a.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timezone
from typing import IO, Any, Final, Protocol

import attrs

from kernelindex_sdk.base.escaping import markdown_cell
from kernelindex_sdk.base.metrics import BASE_UNITS, METRIC_NAMES, RATIO_KINDS, RATIO_NAMES
from kernelindex_sdk.cli.report.writing import (
    aligned,
    csv_number,
    csv_ratio,
    json_number,
    put_line,
    write_csv,
    write_json,
    write_markdown_table,
)
from kernelindex_sdk.compare.explain import Explanation
from kernelindex_sdk.compare.fastest import fastest
from kernelindex_sdk.compare.grouping import Comparison, Group, Row
from kernelindex_sdk.compare.noise import noise_of, overlap
from kernelindex_sdk.compare.runs import ResolvedRun, short_digest, show_value
from kernelindex_sdk.compare.sweeps import Panel, panels
from kernelindex_sdk.compare.units import pick_unit, quantity, spread, times

#: What a run flagged ``observed_at_unknown`` shows as its time in the tables.
UNKNOWN_TIME: Final = "unknown"

#: Longest reason shown in a table cell before it is cut.
REASON_WIDTH: Final = 48

#: Marks a ratio whose two runs' noise intervals overlap, and a run without noise.
WITHIN_NOISE: Final = "≈"
COLLAPSED: Final = "†"
#: What the marks mean, printed once under tables that use them.
LEGEND: Final = (
    f"{WITHIN_NOISE} within noise: the two runs' noise intervals (p20–p80, or mean ± stddev)"
    f" overlap, so the ratio may be noise; {COLLAPSED} collapsed quantiles"
    " (p20 = median = p80): the run records no noise"
)
#: Marks the fastest implementation of a table's row (the least memory, for peak memory).
FASTEST: Final = "*"
FASTEST_LEGEND: Final = (
    f"{FASTEST} fastest implementation of its row (for peak memory: the least memory)"
)


def within_noise(baseline: ResolvedRun | None, run: ResolvedRun) -> bool | None:
    """Whether a ratio's two runs overlap in their noise (:mod:`~kernelindex_sdk.compare.noise`);
    None for the baseline itself, a ratio that is n/a, or two runs without noise."""
    if baseline is None or baseline is run:
        return None
    return overlap(baseline, run)


def collapsed(run: ResolvedRun) -> bool:
    """A passed run whose quantiles collapsed (p20 = median = p80, or flagged so)."""
    return run.passed and noise_of(run).why == "collapsed quantiles"


def marked_ratio(ratio: float | None, within: bool | None) -> str:
    """``1.03×``, or ``≈1.03×`` when within noise."""
    text = times(ratio)
    return f"{WITHIN_NOISE}{text}" if within and ratio is not None else text


def _fastest_rows(group: Group) -> frozenset[int]:
    """The rows of a group whose newest run is the fastest (:func:`~kernelindex_sdk.
    compare.fastest.fastest`)."""
    return fastest([row.newest for row in group.rows])


def base_run(group: Group) -> ResolvedRun | None:
    """The run a group's ratios are over (the baseline row's newest passed run)."""
    return next((r.newest for r in group.rows if r.is_baseline and r.newest.passed), None)


def uses_marks(comparison: Comparison, options: ReportOptions) -> bool:
    """Whether a table of this comparison shows a noise mark (so the legend is needed)."""
    for group in comparison.groups:
        base = base_run(group)
        for row in group.rows:
            pairs = zip(row.runs, row.ratios, strict=False)
            shown = pairs if options.show_all else [(row.newest, row.ratio)]
            for run, ratio in shown:
                if collapsed(run) or (ratio is not None and within_noise(base, run)):
                    return True
    return False


@attrs.frozen
class ReportOptions:
    """How much to show."""

    #: List every run of a row (older re-runs too), not just the newest (per shape).
    show_all: bool = False
    #: One table per comparable group (workload shape) instead of one per sweep.
    by_shape: bool = False


class _Reporter:
    """What every reporter of a comparison is given: where to write, how much to show."""

    def __init__(self, out: IO[str], options: ReportOptions | None = None) -> None:
        self.out = out
        self.options = options if options is not None else ReportOptions()


def heading(group: Group) -> str:
    """``GeGLU MLP [geglu] · full · latency · NVIDIA H100 80GB HBM3``."""
    run = group.first
    title = run.kernel_title
    kernel = run.kernel
    name = f"{title} [{kernel}]" if kernel and kernel != title else title
    parts = [name, run.pass_ or "pass unknown", METRIC_NAMES.get(group.metric, group.metric)]
    return " · ".join([*parts, run.gpu])


def workload_text(run: ResolvedRun) -> str:
    if run.workload is None:
        return f"{short_digest(run.workload_digest)} (record not given)"
    return run.workload.describe()


def protocol_text(run: ResolvedRun) -> str:
    if run.protocol_title or run.protocol_name:
        return str(run.protocol_title or run.protocol_name)
    return f"{short_digest(run.protocol_digest)} (record not given)"


def _statistic(group: Group) -> str:
    stats = {row.newest.statistic for row in group.rows if row.newest.statistic}
    return stats.pop() if len(stats) == 1 else "value"


@attrs.frozen
class _Line:
    implementation: str
    value: str
    spread: str
    ratio: str
    observed: str
    note: str


def _lines(group: Group, options: ReportOptions) -> list[_Line]:
    unit = pick_unit((r.newest.value for r in group.rows), group.metric)
    base = base_run(group)
    best = _fastest_rows(group)
    lines = []
    for position, row in enumerate(group.rows):
        label = f"{row.label} (baseline)" if row.is_baseline else row.label
        runs = row.runs if options.show_all else row.runs[:1]
        for index, (run, ratio) in enumerate(zip(runs, row.ratios, strict=False)):
            if index == 0:
                note = ""
                if row.older and not options.show_all:
                    note = f"+{row.older} older"
            else:
                label = "  ↳ older run"
                note = ""
            if run.passed and run.value is not None:
                value, detail = quantity(run.value, unit), spread(run.p20, run.p80, unit)
                if collapsed(run):
                    value, detail = f"{value}{COLLAPSED}", "collapsed"
                if index == 0 and position in best:
                    value += FASTEST
            else:
                value, detail = run.status.upper(), _cut(run.reason or "")
            shown = marked_ratio(ratio, within_noise(base, run) if ratio is not None else None)
            lines.append(_Line(label, value, detail, shown, _when(run, options), note))
    return lines


def _when(run: ResolvedRun, options: ReportOptions) -> str:
    """The date; with ``--all`` also the UTC time, which tells same-day re-runs apart.
    A run flagged ``observed_at_unknown`` is ``unknown``, never its 1970 placeholder."""
    if not run.dated:
        return UNKNOWN_TIME
    if not options.show_all:
        return run.observed_at[:10]
    return run.observed_key.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def _cut(text: str, width: int = REASON_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _notes(group: Group) -> list[str]:
    notes = []
    if len(group.environments) > 1:
        notes.append(
            f"runs come from {len(group.environments)} environments on this hardware"
            " (software differs)"
        )
    if group.baseline is None:
        notes.append(f"no baseline provider in this group: {group.ratio_name} n/a")
    elif not any(row.is_baseline and row.newest.passed for row in group.rows):
        notes.append(f"baseline {group.baseline} has no passed run: {group.ratio_name} n/a")
    return notes


def summary(comparison: Comparison, options: ReportOptions, *, sweeps: int = 0) -> str:
    groups = len(comparison.groups)
    runs = comparison.runs
    text = f"{groups} group{'s' * (groups != 1)}, {runs} run{'s' * (runs != 1)}"
    if sweeps:
        text += f" in {sweeps} sweep table{'s' * (sweeps != 1)}"
    older = comparison.older
    if older and not options.show_all:
        text += f" ({older} older re-run{'s' * (older != 1)} not shown; --all lists them)"
    return text


@attrs.frozen
class SweepTable:
    """A sweep as a table: the swept value down, implementations across.

    What Liger's visualizer draws, as text: one table per kernel, pass, metric, GPU and
    fixed settings, a row per value of the swept parameter, a column of medians per
    implementation and, for each one that is not the baseline, a column of its ratio
    over the baseline at that value.
    """

    panel: Panel
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    #: Columns to right-align (numbers).
    numeric: tuple[bool, ...]
    notes: tuple[str, ...]
    #: Whether a row marks its fastest implementation (:data:`FASTEST`).
    marks_fastest: bool = False

    @property
    def title(self) -> str:
        panel = self.panel
        name = (
            f"{panel.kernel_title} [{panel.kernel}]"
            if panel.kernel and panel.kernel != panel.kernel_title
            else panel.kernel_title
        )
        metric = METRIC_NAMES.get(panel.metric, panel.metric)
        return " · ".join([name, panel.pass_ or "pass unknown", metric, panel.gpu])

    @property
    def fixed(self) -> str:
        return ", ".join(f"{k}={show_value(v)}" for k, v in self.panel.fixed) or "—"


def sweep_table(panel: Panel) -> SweepTable:
    """The table of one panel (see :class:`SweepTable`)."""
    ratio_name = RATIO_NAMES.get(panel.metric, "ratio")
    unit = pick_unit((p.value for s in panel.series for p in s.points), panel.metric)
    others = [s for s in panel.series if not s.is_baseline]
    header: list[str] = [panel.x_name or "workload"]
    header += [f"{s.label} (baseline)" if s.is_baseline else s.label for s in panel.series]
    if len(others) == 1:
        header.append(ratio_name)
    else:
        header += [f"{ratio_name} {s.label}" for s in others]
    rows = []
    baseline = next((s for s in panel.series if s.is_baseline), None)
    marked = False
    for x in panel.x_values:
        row = [show_value(x)]
        ratios = []
        base = next((p.run for p in baseline.points if p.x == x), None) if baseline else None
        points = [next((p for p in series.points if p.x == x), None) for series in panel.series]
        best = fastest([p.run if p is not None else None for p in points])
        marked = marked or bool(best)
        for position, (series, point) in enumerate(zip(panel.series, points, strict=True)):
            failure = next((f for f in series.failures if f.x == x), None)
            if point is not None:
                mark = COLLAPSED if collapsed(point.run) else ""
                mark += FASTEST if position in best else ""
                row.append(quantity(point.value, unit) + mark)
            elif failure is not None:
                row.append(failure.status.upper())
            else:
                row.append("—")
            if not series.is_baseline:
                if point is None:
                    ratios.append("n/a")
                else:
                    within = within_noise(base, point.run) if point.ratio is not None else None
                    ratios.append(marked_ratio(point.ratio, within))
        rows.append(tuple(row + ratios))
    numeric = (False,) + (True,) * (len(header) - 1)
    notes = []
    if not any(s.is_baseline for s in panel.series):
        notes.append(f"no baseline provider in this sweep: {ratio_name} n/a")
    return SweepTable(panel, tuple(header), tuple(rows), numeric, tuple(notes), marked)


def _split(
    comparison: Comparison, options: ReportOptions
) -> tuple[list[tuple[Panel, list[str]]], list[Group]]:
    """The sweeps to show as sweep tables (each with its groups' notes), and the groups
    to show per shape: every group with ``by_shape`` or ``show_all``; else the groups
    in no sweep (a one-off shape, or no Workload record given)."""
    if options.by_shape or options.show_all:
        return [], list(comparison.groups)
    found, _ = panels(comparison)
    group_of = {id(row.newest): group for group in comparison.groups for row in group.rows}
    sweeps: list[tuple[Panel, list[str]]] = []
    placed: set[int] = set()
    for panel in found:
        if panel.x_name is None:
            continue  # one-off shapes: their own tables say more
        groups = {
            id(group_of[id(run)]): group_of[id(run)]
            for series in panel.series
            for run in [p.run for p in series.points] + [f.run for f in series.failures]
        }
        notes = [note for g in groups.values() for note in _notes(g) if "baseline" not in note]
        sweeps.append((panel, list(dict.fromkeys(notes))))
        placed.update(groups)
    rest = [g for g in comparison.groups if id(g) not in placed]
    return sweeps, rest


class TextReporter(_Reporter):
    """Aligned tables for a terminal: one per sweep, or one per group (``by_shape``)."""

    def write(self, comparison: Comparison) -> None:
        sweeps, shapes = _split(comparison, self.options)
        marked = False
        for panel, notes in sweeps:
            table = sweep_table(panel)
            put_line(self.out, table.title)
            put_line(self.out, f"  fixed     {table.fixed}")
            put_line(self.out, f"  protocol  {panel.protocol}")
            for note in [*notes, *table.notes]:
                put_line(self.out, f"  note      {note}")
            for line in aligned([table.header, *table.rows], table.numeric, indent="  "):
                self.out.write(line + "\n")
            self.out.write("\n")
            marked = marked or table.marks_fastest
        for group in shapes:
            self._group(group)
        if uses_marks(comparison, self.options):
            put_line(self.out, f"legend: {LEGEND}")
        if marked or any(_fastest_rows(group) for group in shapes):
            put_line(self.out, f"legend: {FASTEST_LEGEND}")
        put_line(self.out, summary(comparison, self.options, sweeps=len(sweeps)))

    def _group(self, group: Group) -> None:
        run = group.first
        header = ("implementation", _statistic(group), "p20–p80", group.ratio_name, "observed", "")
        rows = [header] + [attrs.astuple(line) for line in _lines(group, self.options)]
        put_line(self.out, heading(group))
        put_line(self.out, f"  workload  {workload_text(run)}")
        put_line(self.out, f"  protocol  {protocol_text(run)}")
        for note in _notes(group):
            put_line(self.out, f"  note      {note}")
        for line in aligned(rows, _GROUP_NUMERIC, indent="  "):
            self.out.write(line + "\n")
        self.out.write("\n")


class MarkdownReporter(_Reporter):
    """GitHub-flavoured tables for docs and PRs: one per sweep, or per group (``by_shape``).

    Every piece of text, cells and headings alike, goes through
    :func:`~kernelindex_sdk.base.escaping.markdown_cell`: a record's names and titles are
    shown as they are, never read as Markdown or HTML (a PR comment, a step summary).
    """

    def write(self, comparison: Comparison) -> None:
        sweeps, shapes = _split(comparison, self.options)
        md = markdown_cell
        marked = False
        for panel, notes in sweeps:
            table = sweep_table(panel)
            self.out.write(f"### {md(table.title)}\n\n")
            self.out.write(f"fixed {md(table.fixed)} · protocol {md(panel.protocol)}\n\n")
            for note in [*notes, *table.notes]:
                self.out.write(f"> {md(note)}\n\n")
            write_markdown_table(self.out, table.header, table.rows, table.numeric)
            marked = marked or table.marks_fastest
        for group in shapes:
            self._group(group)
        if uses_marks(comparison, self.options):
            self.out.write(f"> legend: {md(LEGEND)}\n\n")
        if marked or any(_fastest_rows(group) for group in shapes):
            self.out.write(f"> legend: {md(FASTEST_LEGEND)}\n\n")
        self.out.write(f"_{md(summary(comparison, self.options, sweeps=len(sweeps)))}_\n")

    def _group(self, group: Group) -> None:
        run, md = group.first, markdown_cell
        self.out.write(f"### {md(heading(group))}\n\n")
        self.out.write(f"workload {md(workload_text(run))} · protocol {md(protocol_text(run))}\n\n")
        for note in _notes(group):
            self.out.write(f"> {md(note)}\n\n")
        header = ("implementation", _statistic(group), "p20–p80", group.ratio_name, "observed")
        rows = [attrs.astuple(line) for line in _lines(group, self.options)]
        write_markdown_table(self.out, (*header, "note"), rows, _GROUP_NUMERIC)


def run_json(
    run: ResolvedRun, ratio: float | None, base: ResolvedRun | None = None
) -> dict[str, Any]:
    """A run in base units with its digest, for machines; ``withinNoise`` over ``base``
    (the group's baseline run): true, false, or null where it does not apply."""
    out: dict[str, Any] = {
        "digest": run.digest,
        "source": run.where,
        "status": run.status,
        "observedAt": run.observed_at if run.dated else None,
    }
    if run.passed:
        out.update(
            statistic=run.statistic,
            value=json_number(run.value),
            p20=json_number(run.p20),
            p80=json_number(run.p80),
            unit=BASE_UNITS.get(run.metric),
            noise=noise_of(run).kind,
            collapsedQuantiles=collapsed(run),
        )
    else:
        out["reason"] = run.reason
    out["ratio"] = ratio
    out["withinNoise"] = within_noise(base, run) if ratio is not None else None
    return out


def group_json(group: Group, options: ReportOptions) -> dict[str, Any]:
    run, best = group.first, _fastest_rows(group)
    workload: dict[str, Any] | None = None
    if run.workload is not None:
        workload = {
            "kernel": run.workload.kernel,
            "pass": run.workload.pass_,
            "dtype": run.workload.dtype,
            "parameters": dict(run.workload.parameters),
            "settings": dict(run.workload.settings),
            "title": run.workload.title,
        }
    return {
        "key": {
            "workloadDigest": group.key.workload,
            "protocolDigest": group.key.protocol,
            "hardware": group.key.hardware,
            "metric": group.key.metric,
        },
        "title": heading(group),
        "gpu": run.gpu,
        "workload": workload,
        "protocol": {"name": run.protocol_name, "title": run.protocol_title},
        "environmentDigests": list(group.environments),
        "baseline": group.baseline,
        "ratioKind": RATIO_KINDS.get(group.metric),
        "rows": [
            {**_row_json(row, options, base_run(group)), "fastest": i in best}
            for i, row in enumerate(group.rows)
        ],
    }


def _row_json(row: Row, options: ReportOptions, base: ResolvedRun | None) -> dict[str, Any]:
    first = row.newest
    implementation = first.implementation
    out: dict[str, Any] = {
        "implementation": {
            "digest": row.implementation,
            "label": row.label,
            "provider": row.provider,
            "version": implementation.version if implementation else None,
        },
        "baseline": row.is_baseline,
        "newest": run_json(first, row.ratio, base),
        "olderRuns": row.older,
    }
    if options.show_all:
        out["older"] = [
            run_json(r, q, base) for r, q in zip(row.runs[1:], row.ratios[1:], strict=True)
        ]
    return out


class JsonReporter(_Reporter):
    """One JSON object: every group with its rows, then a summary."""

    def write(self, comparison: Comparison) -> None:
        report = {
            "groups": [group_json(g, self.options) for g in comparison.groups],
            "summary": {
                "groups": len(comparison.groups),
                "runs": comparison.runs,
                "olderRuns": comparison.older,
                "baseline": comparison.baseline,
            },
        }
        write_json(self.out, report)


CSV_COLUMNS: Final = (
    "kernel", "pass", "metric", "gpu", "workload", "protocol", "implementation",
    "provider", "version", "baseline", "status", "reason", "statistic", "value", "p20",
    "p80", "unit", "ratio", "ratio_kind", "observed_at", "newest", "older_runs",
    "run_digest", "workload_digest", "protocol_digest", "environment_digest",
    "implementation_digest", "hardware", "source", "within_noise", "noise",
)  # fmt: skip


class CsvReporter(_Reporter):
    """One CSV row per run shown (base units), for spreadsheets and pandas."""

    def write(self, comparison: Comparison) -> None:
        write_csv(self.out, CSV_COLUMNS, self._rows(comparison))

    def _rows(self, comparison: Comparison) -> Iterator[list[object]]:
        for group in comparison.groups:
            base = base_run(group)
            for row in group.rows:
                runs = row.runs if self.options.show_all else row.runs[:1]
                for index, (run, ratio) in enumerate(zip(runs, row.ratios, strict=False)):
                    cells = _csv_row(group, row, run, ratio, index == 0)
                    within = within_noise(base, run) if ratio is not None else None
                    cells += ["" if within is None else str(within).lower()]
                    cells += [noise_of(run).kind if run.passed else ""]
                    yield cells

    @staticmethod
    def columns() -> tuple[str, ...]:
        return CSV_COLUMNS


def _csv_row(
    group: Group, row: Row, run: ResolvedRun, ratio: float | None, newest: bool
) -> list[object]:
    implementation = run.implementation
    passed = run.passed
    return [
        run.kernel or "",
        run.pass_ or "",
        group.metric,
        run.gpu,
        workload_text(run),
        run.protocol_name or run.protocol_digest,
        row.label,
        row.provider or "",
        implementation.version if implementation and implementation.version else "",
        "true" if row.is_baseline else "false",
        run.status,
        run.reason or "",
        run.statistic if passed else "",
        csv_number(run.value if passed else None),
        csv_number(run.p20 if passed else None),
        csv_number(run.p80 if passed else None),
        BASE_UNITS.get(group.metric, "") if passed else "",
        csv_ratio(ratio),
        RATIO_KINDS.get(group.metric, ""),
        run.observed_at if run.dated else "",
        "true" if newest else "false",
        row.older if newest else "",
        run.digest,
        run.workload_digest,
        run.protocol_digest,
        run.environment_digest,
        run.implementation_digest,
        run.hardware,
        run.where,
    ]


Reporter = TextReporter | MarkdownReporter | JsonReporter | CsvReporter


class ReporterFactory(Protocol):
    """A reporter class: the stream, and how much to show (all by default)."""

    def __call__(self, out: IO[str], options: ReportOptions = ...) -> Reporter: ...


#: Which columns of a group's table are right-aligned (the median and the ratio).
_GROUP_NUMERIC: Final = (False, True, False, True, False, False)


def _run_line(run: ResolvedRun) -> str:
    title = run.title or run.implementation_label
    return f"{run.where}: {title} ({short_digest(run.digest)})"


def write_explanation(explanation: Explanation, out: IO[str], fmt: str) -> None:
    """Say why the selected runs cannot be one comparison (text, or JSON for --format json)."""
    groups = explanation.groups
    if fmt == "json":
        report = {
            "comparable": explanation.comparable,
            "groups": [
                {
                    "title": heading(group),
                    "workload": workload_text(group.first),
                    "runs": [r.digest for row in group.rows for r in row.runs],
                    "differsFromFirst": [d.as_json() for d in diffs],
                }
                for group, diffs in zip(groups, explanation.differences, strict=True)
            ],
        }
        write_json(out, report)
        return
    if len(groups) == 2 and groups[0].runs == groups[1].runs == 1:
        found = explanation.differences[1]
        put_line(out, "not comparable: " + "; ".join(str(d) for d in found))
        put_line(out, f"  A  {_run_line(groups[0].first)}")
        put_line(out, f"  B  {_run_line(groups[1].first)}")
        return
    runs = sum(g.runs for g in groups)
    put_line(out, f"not comparable: the {runs} selected runs fall into {len(groups)} groups")
    for index, (group, diffs) in enumerate(
        zip(groups, explanation.differences, strict=True), start=1
    ):
        count = f"{group.runs} run{'s' * (group.runs != 1)}"
        put_line(out, f"  group {index}: {heading(group)}; {workload_text(group.first)} ({count})")
        if index == 1:
            out.write("    (the others are compared with this one)\n")
        else:
            put_line(out, "    " + "; ".join(str(d) for d in diffs))
