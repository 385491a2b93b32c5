"""Reporters: a :class:`~kernelindex_sdk.compare.grouping.Comparison` as text, Markdown,
JSON or CSV.

Reporters only format; every decision (groups, newest run, baseline, ratio) was made
before. People get one table per group with a readable unit; machines get base units
(ns, bytes) and every digest, so a figure can be traced back to its records.

A run that did not pass is shown by its status (``OOM``, ``FAILED``) and reason, never
as a number, and its ratio is n/a.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping
from datetime import timezone
from typing import IO, Any, Final

import attrs

from kernelindex_sdk.compare.explain import METRIC_NAMES, Difference, Lookup, differences
from kernelindex_sdk.compare.grouping import Comparison, Group, Row
from kernelindex_sdk.compare.runs import ResolvedRun, short_digest
from kernelindex_sdk.compare.units import pick_unit, quantity, spread, times
from kernelindex_sdk.printable import one_line

#: Longest reason shown in a table cell before it is cut.
REASON_WIDTH: Final = 48
#: Base unit per metric, as machine-readable output states it.
BASE_UNITS: Final = {"latency": "ns", "peak_memory": "bytes"}
#: Machine names of the ratio, per metric.
RATIO_KINDS: Final = {"latency": "speedup", "peak_memory": "memory_saving"}


@attrs.frozen
class ReportOptions:
    """How much to show."""

    #: List every run of a row (older re-runs too), not just the newest.
    show_all: bool = False


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
    lines = []
    for row in group.rows:
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
            else:
                value, detail = run.status.upper(), _cut(run.reason or "")
            lines.append(_Line(label, value, detail, times(ratio), _when(run, options), note))
    return lines


def _when(run: ResolvedRun, options: ReportOptions) -> str:
    """The date; with ``--all`` also the UTC time, which tells same-day re-runs apart."""
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


def summary(comparison: Comparison, options: ReportOptions) -> str:
    groups = len(comparison.groups)
    runs = comparison.runs
    text = f"{groups} group{'s' * (groups != 1)}, {runs} run{'s' * (runs != 1)}"
    older = comparison.older
    if older and not options.show_all:
        text += f" ({older} older re-run{'s' * (older != 1)} not shown; --all lists them)"
    return text


class TextReporter:
    """Aligned tables for a terminal, one per group."""

    def __init__(self, out: IO[str], options: ReportOptions) -> None:
        self.out, self.options = out, options

    def write(self, comparison: Comparison) -> None:
        for group in comparison.groups:
            run = group.first
            header = (
                "implementation",
                _statistic(group),
                "p20–p80",
                group.ratio_name,
                "observed",
                "",
            )
            rows = [header] + [attrs.astuple(line) for line in _lines(group, self.options)]
            cells = [tuple(one_line(str(c)) for c in row) for row in rows]
            widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
            _put(self.out, heading(group))
            _put(self.out, f"  workload  {workload_text(run)}")
            _put(self.out, f"  protocol  {protocol_text(run)}")
            for note in _notes(group):
                _put(self.out, f"  note      {note}")
            for cell in cells:
                left = f"{cell[0]:<{widths[0]}}  {cell[1]:>{widths[1]}}  {cell[2]:<{widths[2]}}"
                right = f"{cell[3]:>{widths[3]}}  {cell[4]:<{widths[4]}}  {cell[5]}"
                self.out.write(f"  {left}  {right}".rstrip() + "\n")
            self.out.write("\n")
        _put(self.out, summary(comparison, self.options))


class MarkdownReporter:
    """One heading and one GitHub-flavoured table per group, for docs and PRs."""

    def __init__(self, out: IO[str], options: ReportOptions) -> None:
        self.out, self.options = out, options

    def write(self, comparison: Comparison) -> None:
        for group in comparison.groups:
            run = group.first
            self.out.write(f"### {_md(heading(group))}\n\n")
            self.out.write(
                f"workload `{_md(workload_text(run))}` · protocol {_md(protocol_text(run))}\n\n"
            )
            for note in _notes(group):
                self.out.write(f"> {_md(note)}\n\n")
            self.out.write(
                f"| implementation | {_statistic(group)} | p20–p80 | {group.ratio_name}"
                " | observed | |\n|---|---:|---|---:|---|---|\n"
            )
            for line in _lines(group, self.options):
                cells = " | ".join(_md(str(c)) for c in attrs.astuple(line))
                self.out.write(f"| {cells} |\n")
            self.out.write("\n")
        self.out.write(f"_{_md(summary(comparison, self.options))}_\n")


def _md(text: str) -> str:
    """Text for a markdown table cell or line: one line, pipes escaped."""
    return one_line(text).replace("|", "\\|")


def _put(out: IO[str], text: str) -> None:
    """Write ``text`` as exactly one line, whatever the records put in it."""
    out.write(one_line(text) + "\n")


def run_json(run: ResolvedRun, ratio: float | None) -> dict[str, Any]:
    """A run in base units with its digest, for machines."""
    out: dict[str, Any] = {
        "digest": run.digest,
        "source": run.where,
        "status": run.status,
        "observedAt": run.observed_at,
    }
    if run.passed:
        out.update(
            statistic=run.statistic,
            value=_whole(run.value),
            p20=_whole(run.p20),
            p80=_whole(run.p80),
            unit=BASE_UNITS.get(run.metric),
        )
    else:
        out["reason"] = run.reason
    out["ratio"] = ratio
    return out


def _whole(value: float | None) -> float | int | None:
    """Whole nanoseconds and bytes as integers, as the records hold them."""
    if value is not None and float(value).is_integer():
        return int(value)
    return value


def group_json(group: Group, options: ReportOptions) -> dict[str, Any]:
    run = group.first
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
        "rows": [_row_json(row, options) for row in group.rows],
    }


def _row_json(row: Row, options: ReportOptions) -> dict[str, Any]:
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
        "newest": run_json(first, row.ratio),
        "olderRuns": row.older,
    }
    if options.show_all:
        out["older"] = [run_json(r, q) for r, q in zip(row.runs[1:], row.ratios[1:], strict=True)]
    return out


class JsonReporter:
    """One JSON object: every group with its rows, then a summary."""

    def __init__(self, out: IO[str], options: ReportOptions) -> None:
        self.out, self.options = out, options

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
        json.dump(report, self.out, ensure_ascii=True, indent=2)
        self.out.write("\n")


CSV_COLUMNS: Final = (
    "kernel", "pass", "metric", "gpu", "workload", "protocol", "implementation",
    "provider", "version", "baseline", "status", "reason", "statistic", "value", "p20",
    "p80", "unit", "ratio", "ratio_kind", "observed_at", "newest", "older_runs",
    "run_digest", "workload_digest", "protocol_digest", "environment_digest",
    "implementation_digest", "hardware", "source",
)  # fmt: skip


class CsvReporter:
    """One CSV row per run shown (base units), for spreadsheets and pandas."""

    def __init__(self, out: IO[str], options: ReportOptions) -> None:
        self.out, self.options = out, options

    def write(self, comparison: Comparison) -> None:
        writer = csv.writer(self.out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for group in comparison.groups:
            for row in group.rows:
                runs = row.runs if self.options.show_all else row.runs[:1]
                for index, (run, ratio) in enumerate(zip(runs, row.ratios, strict=False)):
                    cells = _csv_row(group, row, run, ratio, index == 0)
                    writer.writerow([one_line(c) if isinstance(c, str) else c for c in cells])

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
        _csv_number(run.value if passed else None),
        _csv_number(run.p20 if passed else None),
        _csv_number(run.p80 if passed else None),
        BASE_UNITS.get(group.metric, "") if passed else "",
        "" if ratio is None else repr(ratio),
        RATIO_KINDS.get(group.metric, ""),
        run.observed_at,
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


def _csv_number(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(value)


Reporter = TextReporter | MarkdownReporter | JsonReporter | CsvReporter

REPORTERS: Final[Mapping[str, Callable[[IO[str], ReportOptions], Reporter]]] = {
    "text": TextReporter,
    "markdown": MarkdownReporter,
    "json": JsonReporter,
    "csv": CsvReporter,
}


# --------------------------------------------------------------------------- explaining


@attrs.frozen
class Explanation:
    """The groups a selection fell into, each compared with the first."""

    groups: tuple[Group, ...]
    #: differences[i]: how group i differs from group 0 ([] for group 0).
    differences: tuple[tuple[Difference, ...], ...]

    @property
    def comparable(self) -> bool:
        return len(self.groups) <= 1


def explain(comparison: Comparison, lookup: Lookup) -> Explanation:
    """How each group of a selection differs from the first one."""
    groups = comparison.groups
    if not groups:
        return Explanation((), ())
    first = groups[0].first
    diffs = tuple(tuple(differences(first, g.first, lookup)) for g in groups)
    return Explanation(groups, diffs)


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
        json.dump(report, out, ensure_ascii=True, indent=2)
        out.write("\n")
        return
    if len(groups) == 2 and groups[0].runs == groups[1].runs == 1:
        found = explanation.differences[1]
        _put(out, "not comparable: " + "; ".join(str(d) for d in found))
        _put(out, f"  A  {_run_line(groups[0].first)}")
        _put(out, f"  B  {_run_line(groups[1].first)}")
        return
    runs = sum(g.runs for g in groups)
    _put(out, f"not comparable: the {runs} selected runs fall into {len(groups)} groups")
    for index, (group, diffs) in enumerate(
        zip(groups, explanation.differences, strict=True), start=1
    ):
        count = f"{group.runs} run{'s' * (group.runs != 1)}"
        _put(out, f"  group {index}: {heading(group)}; {workload_text(group.first)} ({count})")
        if index == 1:
            out.write("    (the others are compared with this one)\n")
        else:
            _put(out, "    " + "; ".join(str(d) for d in diffs))
