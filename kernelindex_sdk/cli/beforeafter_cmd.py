"""``kernelindex compare --against REFERENCE CANDIDATE...``: a before/after gate.

``compare`` hands its parsed options here when ``--against`` is given. This module
checks the options that only a before/after has, has the library load both sides
(each exactly as ``validate`` reads it: :func:`~kernelindex_sdk.compare.loading.load`),
applies ``compare``'s filters to both, calls
:func:`~kernelindex_sdk.compare.beforeafter.before_after` and
:func:`~kernelindex_sdk.compare.beforeafter.gate`, and picks a reporter (with
``--summary``, the summary's, over the pairs:
:func:`~kernelindex_sdk.compare.summary.summarize_pairs`). Nothing is decided here.

Exit status: 0 no pair with a ``--fail-on`` verdict (default ``slower``); 1 at least
one, invalid records skipped, or no run to compare; 2 usage error or unreadable input.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TextIO

from kernelindex_sdk.cli.compare_options import CompareOptions, load_inputs, say_to

if TYPE_CHECKING:
    from kernelindex_sdk.compare.beforeafter import BeforeAfter, Outcome
    from kernelindex_sdk.compare.loading import Loaded
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
    from kernelindex_sdk.compare.beforeafter import before_after, gate

    say = say_to(err)
    try:
        threshold, fail_on, thresholds = _usage(options)
    except UsageError as error:
        say(str(error))
        return 2
    loaded = load_inputs(options, err)
    invalid, unreadable, lookup = loaded.invalid, loaded.unreadable, loaded.index.lookup
    if invalid:
        say(f"{invalid} invalid item{'s' * (invalid != 1)} skipped (see above)")
    for line in (wrong := _where_typos(loaded, options)):
        say(line)
    if wrong:
        return 2
    before, after = _selected(loaded, options, say)
    del loaded  # the runs not selected, and the lists they were in, go now
    if not before or not after:
        say(f"no {'reference' if not before else 'candidate'} run to compare (after the filters)")
        return 2 if unreadable else 1
    result = before_after(
        before, after, threshold=threshold, pair_by=options.pair_by, lookup=lookup
    )
    outcome = gate(result, fail_on, invalid=invalid, unreadable=unreadable)
    _report(result, outcome, options, fail_on, thresholds, out, say)
    return outcome.status


def _usage(options: CompareOptions) -> tuple[float, tuple[str, ...], tuple[float, ...]]:
    """The threshold, the verdicts that fail, and the summary's thresholds, once every
    option is usable with ``--against``; else :class:`UsageError`."""
    from kernelindex_sdk.compare.beforeafter import PAIR_BY

    for field, flag in NOT_WITH_AGAINST:
        if getattr(options, field):
            raise UsageError(f"{flag} does not apply with --against")
    if options.pair_by not in PAIR_BY:
        raise UsageError(f"--pair-by {options.pair_by!r}: choose from {', '.join(PAIR_BY)}")
    threshold = parse_threshold(options.threshold)
    fail_on = parse_fail_on(options.fail_on)
    return threshold, fail_on, parse_fast_p(options.summary, options.fast_p, options.format)


def _where_typos(loaded: Loaded, options: CompareOptions) -> list[str]:
    """Why a ``--where`` names nothing on either side, one line each."""
    from kernelindex_sdk.compare.filters import parse_where, unmatched_where, where_values

    wheres = parse_where(options.wheres)
    sides = [side for side in (loaded.reference, loaded.candidate) if side is not None]
    runs = [run for side in sides for run in side.runs]
    if not wheres or not runs:
        return []
    return unmatched_where((where_values(run) for run in runs), wheres)


def _selected(
    loaded: Loaded, options: CompareOptions, say: Callable[[str], None]
) -> tuple[list[ResolvedRun], list[ResolvedRun]]:
    """The reference's and the candidate's runs the filters select, each side's
    records not given said first."""
    from kernelindex_sdk.cli.filter_options import select_runs

    found = []
    for side in (loaded.reference, loaded.candidate):
        assert side is not None  # a before/after has both
        missing = side.resolver.missing
        if missing:
            listed = ", ".join(f"{kind} ×{n}" for kind, n in sorted(missing.items()))
            say(f"note: runs reference records not given ({listed}); they pair by digest")
        found.append(select_runs(side.runs, options, side.resolver.gpu_names()))
    return found[0], found[1]


def _report(
    result: BeforeAfter,
    outcome: Outcome,
    options: CompareOptions,
    fail_on: tuple[str, ...],
    thresholds: tuple[float, ...],
    out: TextIO,
    say: Callable[[str], None],
) -> None:
    """The pairs in ``--format``, or with ``--summary`` the summary over them; the
    gate's line on stderr where stdout does not end with it."""
    from kernelindex_sdk.cli.report import REPORTERS
    from kernelindex_sdk.cli.report.beforeafter import summary_line

    if options.summary:
        # The same summary as plain --summary, over the pairs; the gate still decides
        # the exit status, and its line goes to stderr (stdout is the table).
        from kernelindex_sdk.compare.summary import summarize_pairs

        summaries = summarize_pairs(result, thresholds)
        REPORTERS["compare --summary", options.format](out, thresholds, against=True).write(
            summaries
        )
    else:
        REPORTERS["compare --against", options.format](out, fail_on).write(result, outcome)
    if options.summary or options.format not in ("text", "github"):
        say(summary_line(result, outcome))
