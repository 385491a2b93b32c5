"""``kernelindex compare --against REFERENCE CANDIDATE...``: a before/after gate.

``compare`` hands its parsed options here when ``--against`` is given. This module
loads both sides (each exactly as ``validate`` reads it), applies ``compare``'s
filters to both, calls :func:`~kernelindex_sdk.compare.beforeafter.before_after` and
:func:`~kernelindex_sdk.compare.beforeafter.gate`, and picks a reporter (with
``--summary``, the summary's, over the pairs:
:func:`~kernelindex_sdk.compare.summary.summarize_pairs`). Nothing is decided here.

Exit status: 0 no pair with a ``--fail-on`` verdict (default ``slower``); 1 at least
one, invalid records skipped, or no run to compare; 2 usage error or unreadable input.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final, TextIO

if TYPE_CHECKING:
    from kernelindex_sdk.cli.compare_cmd import CompareOptions
    from kernelindex_sdk.compare.records import LoadResult
    from kernelindex_sdk.compare.runs import ResolvedRun

#: ``--format`` values only before/after has.
CI_FORMATS: Final = ("github", "junit")
#: Plain ``compare`` options that mean nothing for a before/after pairing.
NOT_WITH_AGAINST: Final = (
    ("baseline", "--baseline"),
    ("show_all", "--all"),
    ("by_shape", "--by-shape"),
    ("explain", "--explain"),
    ("plot", "--plot"),
    ("plot_ratios", "--plot-ratios"),
)


class UsageError(ValueError):
    """An option value that cannot be used; the message is the one line to print."""


def parse_threshold(text: str) -> float:
    """``5%`` or ``0.05`` → 0.05. A bare number of 1 or more is refused: ``5`` would
    otherwise mean 500 %, which nobody means."""
    body = text.strip()
    percent = body.endswith("%")
    try:
        value = float(body.removesuffix("%").strip())
    except ValueError:
        raise UsageError(f"--threshold {text!r} is not a number (e.g. 5% or 0.05)") from None
    if percent:
        value /= 100
    elif value >= 1:
        raise UsageError(
            f"--threshold {text!r}: give a fraction below 1 or a percentage (did you mean {body}%?)"
        )
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"--threshold {text!r} must be 0 or more")
    return value


def parse_fail_on(values: tuple[str, ...]) -> tuple[str, ...]:
    """``slower,unsure`` (comma-separated, repeatable) → the verdicts that fail the gate."""
    from kernelindex_sdk.compare.beforeafter import VERDICTS

    found = [part.strip() for value in values for part in value.split(",") if part.strip()]
    unknown = [v for v in found if v not in VERDICTS]
    if unknown:
        raise UsageError(
            f"--fail-on {','.join(unknown)!r}: not a verdict (choose from {', '.join(VERDICTS)})"
        )
    return tuple(dict.fromkeys(found)) or ("slower",)


def parse_fast_p(summary: bool, fast_p: tuple[float, ...], format_: str) -> tuple[float, ...]:
    """The ``fast_p`` thresholds of ``--against ... --summary`` (checked as plain
    ``--summary`` checks them); ``--fast-p`` without ``--summary``, or a CI format with
    it, is a usage error."""
    from kernelindex_sdk.compare.summary import DEFAULT_THRESHOLDS, check_thresholds

    if fast_p and not summary:
        raise UsageError("--fast-p needs --summary")
    if summary and format_ in CI_FORMATS:
        raise UsageError(f"--format {format_} does not apply with --summary")
    try:
        return check_thresholds(fast_p or DEFAULT_THRESHOLDS)
    except ValueError as error:
        raise UsageError(f"--fast-p: {error}") from None


def run_before_after(options: CompareOptions, out: TextIO, err: TextIO) -> int:
    """Load both sides, pair, judge, report; return the exit status. Never raises for
    bad input."""
    from kernelindex_sdk.base.escaping import one_line
    from kernelindex_sdk.cli.filter_options import select_runs
    from kernelindex_sdk.cli.report import REPORTERS
    from kernelindex_sdk.cli.report.beforeafter import summary_line
    from kernelindex_sdk.compare import beforeafter, records, runs

    def say(message: str) -> None:
        err.write(one_line(f"kernelindex compare: {message}") + "\n")

    try:
        for field, flag in NOT_WITH_AGAINST:
            if getattr(options, field):
                raise UsageError(f"{flag} does not apply with --against")
        if options.pair_by not in beforeafter.PAIR_BY:
            raise UsageError(
                f"--pair-by {options.pair_by!r}: choose from {', '.join(beforeafter.PAIR_BY)}"
            )
        threshold = parse_threshold(options.threshold)
        fail_on = parse_fail_on(options.fail_on)
        thresholds = parse_fast_p(options.summary, options.fast_p, options.format)
    except UsageError as error:
        say(str(error))
        return 2

    # Each run is resolved as it is read and its parsed record let go at once: only
    # the resolved runs (a fraction of the size) are held, never a side's records.
    # Referenced records may come later, or with the other side (a workload file given
    # once): once both sides are read, each run is resolved again from the digests it
    # keeps against every record given (runs.refresh_runs).
    reference, early_before = _load(options.against, options.progress, err, "reference")
    candidate, early_after = _load(options.paths, options.progress, err, "candidate")
    merged = records.RecordIndex(records={**candidate.index.records, **reference.index.records})
    before, before_resolver = runs.refresh_runs(early_before, merged)
    del early_before
    after, after_resolver = runs.refresh_runs(early_after, merged)
    del early_after
    invalid = reference.invalid + candidate.invalid
    unreadable = reference.unreadable + candidate.unreadable
    if invalid:
        say(f"{invalid} invalid item{'s' * (invalid != 1)} skipped (see above)")

    sides = []
    for resolved, resolver in ((before, before_resolver), (after, after_resolver)):
        if resolver.missing:
            listed = ", ".join(f"{kind} ×{n}" for kind, n in sorted(resolver.missing.items()))
            say(f"note: runs reference records not given ({listed}); they pair by digest")
        sides.append(select_runs(resolved, options, resolver.gpu_names()))
    del before, after
    if not sides[0] or not sides[1]:
        empty = "reference" if not sides[0] else "candidate"
        say(f"no {empty} run to compare (after the filters)")
        return 2 if unreadable else 1

    lookup = merged.lookup
    result = beforeafter.before_after(
        sides[0], sides[1], threshold=threshold, pair_by=options.pair_by, lookup=lookup
    )
    outcome = beforeafter.gate(result, fail_on, invalid=invalid, unreadable=unreadable)
    if options.summary:
        # The same summary as plain --summary, over the pairs; the gate still decides
        # the exit status, and its line goes to stderr (stdout is the table).
        from kernelindex_sdk.compare.summary import summarize_pairs

        summaries = summarize_pairs(result, thresholds)
        REPORTERS["compare --summary", options.format](out, thresholds, against=True).write(
            summaries
        )
        say(summary_line(result, outcome))
        return outcome.status
    REPORTERS["compare --against", options.format](out, fail_on).write(result, outcome)
    if options.format not in ("text", "github"):
        say(summary_line(result, outcome))
    return outcome.status


def _load(
    paths: tuple[str, ...], progress: bool | None, err: TextIO, side: str
) -> tuple[LoadResult, list[ResolvedRun]]:
    """One side's records, validated, its runs resolved as they are read (against the
    records read so far); problems on ``err`` as validate words them."""
    from kernelindex_sdk.base.progress import Progress
    from kernelindex_sdk.cli.report.validate import format_problem
    from kernelindex_sdk.compare import records, runs
    from kernelindex_sdk.reading.sources import FileSource, StdinSource, expand

    found = list(expand(paths))
    streamed = any(isinstance(source, StdinSource) for source in found)
    index = records.RecordIndex()
    resolver = runs.Resolver(index)
    resolved: list[ResolvedRun] = []
    index.on_run = lambda stored: resolved.append(resolver.resolve(stored))
    with Progress(
        total=None if streamed else sum(isinstance(s, FileSource) for s in found),
        label=f"compare: loading {side}",
        stream=err,
        enabled=progress,
    ) as bar:
        loaded = records.load_records(
            paths,
            on_problem=lambda problem: bar.note(format_problem(problem)),
            tick=bar.advance,
            index=index,
            facts=True,
        )
    index.on_run, index.streamed = None, set()  # repeats are counted: let go of the digests
    return loaded, resolved
