"""``compare --summary``'s reporters: summaries (:mod:`~kernelindex_sdk.compare.summary`)
as text, Markdown, JSON or CSV.

Only formatting: every figure was computed before. People get one aligned table (or
one Markdown table, for a pull request) with shares in per cent and a legend that
says what each column counts; machines get fractions and every count, so a share
can be checked against its numerator and denominator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any, Final, Protocol

from kernelindex_sdk.base.escaping import markdown_cell
from kernelindex_sdk.base.metrics import METRIC_NAMES, RATIO_KINDS
from kernelindex_sdk.cli.report.beforeafter import ratio_text, tally_json, tally_text
from kernelindex_sdk.cli.report.writing import (
    csv_ratio,
    put_line,
    write_aligned,
    write_csv,
    write_json,
    write_markdown_table,
)
from kernelindex_sdk.compare.beforeafter import RATIO_DIRECTION, VERDICTS, Tally
from kernelindex_sdk.compare.summary import SPEEDUP, Summary, threshold_name
from kernelindex_sdk.compare.units import times

#: What the columns mean, printed under the tables: (column, meaning).
LEGEND: Final = (
    ("workloads", "comparable groups (workload × protocol) where both have a passed run"),
    (
        "geomean",
        "geometric mean of baseline ÷ implementation over those (speed-up for latency,"
        " memory saving for peak memory)",
    ),
    ("faster", "share of those above 1×"),
    (
        "fast_p",
        "share of all groups with a passed baseline run where the implementation passed"
        " and is more than p× (KernelBench's fast_p)",
    ),
    ("missing", "groups with a passed baseline run where it failed or has no run"),
)
#: The legend of a summary of pairs (``compare --against|--across ... --summary``).
AGAINST_LEGEND: Final = (
    ("pairs", "pairs judged (same workload, protocol, metric, lineage; GPU unless --across)"),
    (
        "geomean c÷r",
        "geometric mean of the ratio candidate ÷ reference over the pairs with a ratio,"
        " as the gate line: below 1× the candidate is faster (or needs less memory)",
    ),
    (
        "faster, slower",
        "share (and count) of the pairs judged faster or slower: beyond the threshold"
        " and the noise, the verdicts' own counts",
    ),
    (
        "fast_p",
        "KernelBench's fast_p, by its definition: share of all passed reference runs"
        " where the candidate passed with a speed-up reference ÷ candidate above p (the"
        " raw ratio, not a verdict)",
    ),
    ("missing", "passed reference runs whose candidate failed, is unpaired, or has no ratio"),
)
#: Column headings of the people's formats: plain, and with ``--against``.
_NAMES: Final = {False: ("baseline", "implementation"), True: ("reference", "candidate")}


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _cells(summary: Summary, thresholds: Sequence[float], against: bool = False) -> tuple[str, ...]:
    if against:
        return _pair_cells(summary, thresholds)
    return (
        summary.gpu,
        METRIC_NAMES.get(summary.metric, summary.metric),
        summary.baseline,
        summary.implementation,
        str(summary.workloads),
        times(summary.geomean),
        _share(summary.faster_share),
        *(_share(summary.fast_p(t)) for t in thresholds),
        str(summary.missing),
    )


def _pair_cells(summary: Summary, thresholds: Sequence[float]) -> tuple[str, ...]:
    """A summary of pairs: the verdicts' shares with their counts, the ratio c÷r."""
    return (
        summary.gpu,
        METRIC_NAMES.get(summary.metric, summary.metric),
        summary.baseline,
        summary.implementation,
        str(summary.pairs),
        ratio_text(summary.geomean),
        f"{_share(summary.faster_share)} ({summary.faster})",
        f"{_share(summary.slower_share)} ({summary.slower})",
        *(_share(summary.fast_p(t)) for t in thresholds),
        str(summary.missing),
    )


def _header(thresholds: Sequence[float], against: bool = False) -> tuple[str, ...]:
    if against:
        return (
            "gpu", "metric", "reference", "candidate", "pairs", "geomean c÷r", "faster",
            "slower", *(f"fast_{threshold_name(t)}" for t in thresholds), "missing",
        )  # fmt: skip
    return (
        "gpu",
        "metric",
        *_NAMES[against],
        "workloads",
        "geomean",
        "faster",
        *(f"fast_{threshold_name(t)}" for t in thresholds),
        "missing",
    )


#: Which columns are right-aligned: the figures.
def _numeric(thresholds: Sequence[float], against: bool = False) -> tuple[bool, ...]:
    return (False,) * 4 + (True,) * (4 + against + len(thresholds))


def _overall(overall: Tally | None) -> str | None:
    """The line under a summary of pairs: every pair's verdicts and geomean, as the
    gate line counts them."""
    if overall is None:
        return None
    return f"all pairs: {tally_text(overall)} ({RATIO_DIRECTION.replace('/', '÷')})"


def _tail(summaries: Sequence[Summary], against: bool = False) -> str:
    n = len(summaries)
    if not n and against:
        return "no summary: no passed reference run"
    if not n:
        return "no summary: no implementation shares a group with a passed baseline run"
    return f"{n} summar{'y' if n == 1 else 'ies'}"


class _Reporter:
    """What every summary reporter is given: where to write, the ``fast_p`` thresholds,
    and whether the summaries are of ``compare --against`` (columns and legend say
    reference and candidate)."""

    def __init__(self, out: IO[str], thresholds: Sequence[float], against: bool = False) -> None:
        self.out, self.thresholds, self.against = out, tuple(thresholds), against
        #: What the columns mean: ``--against`` reads reference ÷ candidate.
        self.legend = AGAINST_LEGEND if against else LEGEND


class SummaryTextReporter(_Reporter):
    """One aligned table, then the legend and a count."""

    def write(self, summaries: Sequence[Summary], overall: Tally | None = None) -> None:
        if summaries:
            rows = [_header(self.thresholds, self.against)]
            rows += [_cells(s, self.thresholds, self.against) for s in summaries]
            write_aligned(self.out, rows, _numeric(self.thresholds, self.against))
            if (line := _overall(overall)) is not None:
                put_line(self.out, line)
            self.out.write("\n")
            write_aligned(self.out, self.legend, indent="  ")
        self.out.write(_tail(summaries, self.against) + "\n")


class SummaryMarkdownReporter(_Reporter):
    """One GitHub-flavoured table (a PR comment, ``$GITHUB_STEP_SUMMARY``), the legend;
    every piece of text through :func:`~kernelindex_sdk.base.escaping.markdown_cell`."""

    def write(self, summaries: Sequence[Summary], overall: Tally | None = None) -> None:
        if summaries:
            header = _header(self.thresholds, self.against)
            rows = [_cells(summary, self.thresholds, self.against) for summary in summaries]
            numeric = _numeric(self.thresholds, self.against)
            write_markdown_table(self.out, header, rows, numeric)
            if (line := _overall(overall)) is not None:
                self.out.write(f"{markdown_cell(line)}\n\n")
            for column, meaning in self.legend:
                self.out.write(f"- **{markdown_cell(column)}**: {markdown_cell(meaning)}\n")
            self.out.write("\n")
        self.out.write(f"_{markdown_cell(_tail(summaries, self.against))}_\n")


def summary_json(summary: Summary) -> dict[str, Any]:
    """A summary for machines: fractions, and the counts they are made of."""
    if summary.verdicts is not None:
        return _pair_summary_json(summary)
    return {
        "gpu": summary.gpu,
        "hardware": summary.hardware,
        "metric": summary.metric,
        "ratioKind": RATIO_KINDS.get(summary.metric),
        "implementation": summary.implementation,
        "implementationDigest": summary.implementation_digest,
        "provider": summary.provider,
        "baseline": summary.baseline,
        "workloads": summary.workloads,
        "geomeanSpeedup": summary.geomean,
        "fasterShare": summary.faster_share,
        "faster": summary.faster,
        "fastP": {threshold_name(t): summary.fast_p(t) for t in summary.fast},
        "missing": summary.missing,
        "failed": summary.failed,
        "absent": summary.absent,
        "universe": summary.universe,
    }


def _pair_summary_json(summary: Summary) -> dict[str, Any]:
    """A summary of pairs: the verdict counts and ``geomeanRatio`` (candidate ÷
    reference) in place of the plain summary's speed-up."""
    return {
        "gpu": summary.gpu,
        "hardware": summary.hardware,
        "candidateHardware": summary.candidate_hardware,
        "metric": summary.metric,
        "implementation": summary.implementation,
        "implementationDigest": summary.implementation_digest,
        "provider": summary.provider,
        "baseline": summary.baseline,
        "pairs": summary.pairs,
        "verdicts": dict(summary.verdicts or {}),
        "workloads": summary.workloads,
        "geomeanRatio": summary.geomean,
        "fasterShare": summary.faster_share,
        "faster": summary.faster,
        "slowerShare": summary.slower_share,
        "slower": summary.slower,
        "fastP": {threshold_name(t): summary.fast_p(t) for t in summary.fast},
        "missing": summary.missing,
        "failed": summary.failed,
        "absent": summary.absent,
        "universe": summary.universe,
    }


class SummaryJsonReporter(_Reporter):
    """``{"summaries": [...]}``; of pairs, with the ratio's direction and ``overall``."""

    def write(self, summaries: Sequence[Summary], overall: Tally | None = None) -> None:
        report: dict[str, Any] = {
            "summaries": [summary_json(s) for s in summaries],
            "thresholds": [threshold_name(t) for t in self.thresholds],
        }
        if self.against:
            report["ratioDirection"] = RATIO_DIRECTION
            report["fastPSpeedup"] = "reference / candidate"
        else:
            # geomeanSpeedup, fasterShare and fastP read the speed-up.
            report["ratioDirection"] = SPEEDUP
        if overall is not None:
            report["overall"] = tally_json(overall)
        write_json(self.out, report)


class SummaryCsvReporter(_Reporter):
    """One CSV line per summary: fractions as in JSON, a column per threshold."""

    def write(self, summaries: Sequence[Summary], overall: Tally | None = None) -> None:
        if self.against:
            _pair_csv(self.out, summaries, self.thresholds)
            return
        header = [
            "gpu", "metric", "baseline", "implementation", "workloads", "geomean",
            "faster_share",
            *(f"fast_{threshold_name(t)}" for t in self.thresholds),
            "missing", "failed", "absent", "universe", "ratio_kind", "hardware",
            "implementation_digest",
        ]  # fmt: skip
        rows = (
            [
                s.gpu, s.metric, s.baseline, s.implementation,
                s.workloads, csv_ratio(s.geomean), csv_ratio(s.faster_share),
                *(csv_ratio(s.fast_p(t)) for t in self.thresholds),
                s.missing, s.failed, s.absent, s.universe,
                RATIO_KINDS.get(s.metric, ""), s.hardware, s.implementation_digest,
            ]
            for s in summaries
        )  # fmt: skip
        write_csv(self.out, header, rows)


def _pair_csv(out: IO[str], summaries: Sequence[Summary], thresholds: Sequence[float]) -> None:
    """A summary of pairs as CSV: the verdict counts, ``geomean_ratio`` (c ÷ r)."""
    header = [
        "gpu", "metric", "reference", "candidate", "pairs", "slower", "unsure", "faster",
        "same", "workloads", "geomean_ratio", "faster_share", "slower_share",
        *(f"fast_{threshold_name(t)}" for t in thresholds),
        "missing", "failed", "absent", "universe", "hardware", "candidate_hardware",
        "implementation_digest",
    ]  # fmt: skip
    rows = (
        [
            s.gpu, s.metric, s.baseline, s.implementation, s.pairs,
            *((s.verdicts or {}).get(v, 0) for v in VERDICTS),
            s.workloads, csv_ratio(s.geomean), csv_ratio(s.faster_share),
            csv_ratio(s.slower_share), *(csv_ratio(s.fast_p(t)) for t in thresholds),
            s.missing, s.failed, s.absent, s.universe, s.hardware,
            s.candidate_hardware or "", s.implementation_digest,
        ]
        for s in summaries
    )  # fmt: skip
    write_csv(out, header, rows)


SummaryReporter = (
    SummaryTextReporter | SummaryMarkdownReporter | SummaryJsonReporter | SummaryCsvReporter
)


class SummaryReporterFactory(Protocol):
    """A reporter class: ``against`` words the columns for ``compare --against``."""

    def __call__(
        self, out: IO[str], thresholds: Sequence[float], against: bool = False
    ) -> SummaryReporter: ...
