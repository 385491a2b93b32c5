"""``kernelindex compare PATH...``: speed-up tables and plots across comparable runs.

Click only parses: the options become a plain
:class:`~kernelindex_sdk.cli.compare_options.CompareOptions`, and :func:`run_compare`
checks them, has the library load, select, group and explain
(:mod:`kernelindex_sdk.compare`), and picks the reporter
(:data:`~kernelindex_sdk.cli.report.REPORTERS`); it returns the exit status, so it is
testable without click.

How a user *asks* to compare runs that may not be comparable: by giving exactly two
runs (``kernelindex compare a.json b.json``, or any inputs and filters that select
two), or by ``--explain`` for any number. Then, if the runs fall into more than one
comparability group, the command prints what differs (workload / protocol /
environment hardware / metric) instead of tables, and exits 1. Without either, a
selection simply shows one table per group: runs that are not comparable are never
put in one table, and many groups are the normal case (one per shape of a sweep).

Exit status: 0 done; 1 invalid records were skipped, no run matched, or the runs asked
about are not comparable; 2 usage error, unreadable input, or a plot that cannot be
drawn.

With ``--against REFERENCE`` the command is a before/after gate instead
(:mod:`kernelindex_sdk.cli.beforeafter_cmd`): its options are in blocks marked
``before/after`` below, and it has its own exit status.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TextIO

import click

from kernelindex_sdk.cli.compare_options import (
    FORMATS,
    GATE_FORMATS,
    CompareOptions,
    load_inputs,
    say_to,
)
from kernelindex_sdk.cli.filter_options import filter_options, format_option
from kernelindex_sdk.compare.beforeafter import PAIR_BY

if TYPE_CHECKING:
    from collections.abc import Callable

    from kernelindex_sdk.compare.grouping import Comparison
    from kernelindex_sdk.compare.loading import Side
    from kernelindex_sdk.compare.runs import ResolvedRun

    Say = Callable[[str], None]


def run_compare(
    options: CompareOptions, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Load, validate, group and report; return the exit status. Never raises for bad input."""
    from kernelindex_sdk.cli.filter_options import bad_where, unknown_metric

    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    say = say_to(err)
    if (unknown := unknown_metric(options.metrics)) is not None:
        say(unknown)
        return 2
    if (bad := bad_where(options.wheres)) is not None:
        say(bad)
        return 2
    if options.against:
        from kernelindex_sdk.cli.beforeafter_cmd import run_before_after

        return run_before_after(options, out, err)
    thresholds = _usage(options, say)
    if thresholds is None:
        return 2
    loaded = load_inputs(options, err)
    status = 2 if loaded.unreadable else 1 if loaded.invalid else 0
    if loaded.invalid:
        say(f"{loaded.invalid} invalid item{_s(loaded.invalid)} skipped (see above)")
    selected = _selected(loaded.candidate, options, say)
    if isinstance(selected, int):
        return max(status, selected)
    comparison = _grouped(selected, options, say)
    if options.explain or len(selected) == 2:
        from kernelindex_sdk.cli.report.comparison import write_explanation
        from kernelindex_sdk.compare.explain import explain

        explanation = explain(comparison, loaded.index.lookup)
        if not explanation.comparable:
            write_explanation(explanation, out, options.format)
            return max(status, 1)
    _report(comparison, options, thresholds, out)
    if options.plot is not None and not _plotted(comparison, options, options.plot, say):
        return 2
    return status


def _usage(options: CompareOptions, say: Say) -> tuple[float, ...] | None:
    """The summary's thresholds, once every option of plain ``compare`` is usable (a
    format it has, ``--fast-p`` with ``--summary`` and finite, the plot's options with
    ``--plot`` and a file it can draw); None, said why, when one is not."""
    from kernelindex_sdk.compare.summary import DEFAULT_THRESHOLDS, check_thresholds

    if options.format not in FORMATS:
        say(f"unknown --format {options.format!r} (choose from {', '.join(FORMATS)})")
        if options.format in GATE_FORMATS:
            say(f"--format {options.format} is for before/after: compare --against REFERENCE")
        return None
    if options.fast_p and not options.summary:
        say("--fast-p needs --summary")
        return None
    try:
        thresholds = check_thresholds(options.fast_p or DEFAULT_THRESHOLDS)
    except ValueError as error:
        say(f"--fast-p: {error}")
        return None
    if options.plot is None and (options.plot_ratios or options.plot_speedups):
        say(f"--plot-{'ratios' if options.plot_ratios else 'speedups'} needs --plot FILE")
        return None
    if options.plot_ratios and options.plot_speedups:
        say("--plot-ratios and --plot-speedups draw different views; give one")
        return None
    if options.plot is not None:
        from kernelindex_sdk.compare.plot import PlotError, PlotUnavailable, check_path

        try:
            check_path(options.plot)
            _require_plotting()
        except (PlotError, PlotUnavailable) as error:
            say(str(error))
            return None
    return thresholds


def _selected(side: Side, options: CompareOptions, say: Say) -> list[ResolvedRun] | int:
    """The runs the filters select; else the exit status, said why: 2 for a
    ``--kernel``, ``--gpu`` or ``--baseline`` naming nothing present (a typo), 1 for
    no run selected."""
    from kernelindex_sdk.cli.filter_options import select_runs, typos

    resolved, resolver = side.runs, side.resolver
    if resolver.missing:
        listed = ", ".join(f"{kind} ×{n}" for kind, n in sorted(resolver.missing.items()))
        say(
            f"note: runs reference records not given ({listed});"
            " those runs are grouped and labelled by digest"
        )
    baselines = [options.baseline] if options.baseline else []
    for typo in (wrong := typos(resolved, options, resolver.gpu_names(), baselines)):
        say(typo)
    if wrong:
        return 2
    selected = select_runs(resolved, options, resolver.gpu_names())
    if not selected:
        if resolved:
            say(f"no run matches the filters ({len(resolved)} valid runs loaded)")
        else:
            say("no valid run to compare in the input")
        return 1
    return selected


def _grouped(selected: list[ResolvedRun], options: CompareOptions, say: Say) -> Comparison:
    """The selected runs in comparable groups, over ``--baseline`` if given."""
    from kernelindex_sdk.compare.grouping import group_runs

    comparison = group_runs(selected, baseline=options.baseline)
    if options.baseline and not any(g.baseline for g in comparison.groups):
        say(f"note: no selected run is by provider {options.baseline!r}; ratios are n/a")
    return comparison


def _report(
    comparison: Comparison, options: CompareOptions, thresholds: tuple[float, ...], out: TextIO
) -> None:
    """The tables, or with ``--summary`` the summaries, in ``--format``."""
    from kernelindex_sdk.cli.report import REPORTERS

    if options.summary:
        from kernelindex_sdk.compare.summary import summarize

        summaries = summarize(comparison, thresholds)
        REPORTERS["compare --summary", options.format](out, thresholds).write(summaries)
        return
    from kernelindex_sdk.cli.report.comparison import ReportOptions

    shown = ReportOptions(show_all=options.show_all, by_shape=options.by_shape)
    REPORTERS["compare", options.format](out, shown).write(comparison)


def _plotted(comparison: Comparison, options: CompareOptions, target: str, say: Say) -> bool:
    """Draw the plot (``--plot``): one panel per sweep, or the speed-up per problem;
    False, said why, where it cannot be drawn or written."""
    from kernelindex_sdk.compare.plot import (
        MAX_PANELS,
        PlotError,
        PlotUnavailable,
        render,
        render_speedups,
    )
    from kernelindex_sdk.compare.speedups import no_sweeps, speedup_panels
    from kernelindex_sdk.compare.sweeps import panels

    panel_list, unplaced = panels(comparison)
    if unplaced:
        say(f"note: {unplaced} group{_s(unplaced)} without a Workload record not plotted")
    speedups = options.plot_speedups
    if not speedups and len(panel_list) > MAX_PANELS and no_sweeps(panel_list):
        # A suite of one-shape problems (KernelBench): hundreds of one-point panels
        # say nothing; the speed-up per problem is the view such a set needs.
        say(
            f"note: {len(panel_list)} panels and no sweep; drawing the speed-up per"
            " problem instead (--plot-speedups)"
        )
        speedups = True
    drawn = len(panel_list)
    try:
        if speedups:
            speedup_list = speedup_panels(comparison)
            drawn = len(speedup_list)
            render_speedups(speedup_list, target)
        else:
            render(panel_list, target, ratios=options.plot_ratios)
    except (PlotError, PlotUnavailable) as error:
        say(str(error))
        return False
    except OSError as error:
        say(f"cannot write {target}: {error.strerror or error}")
        return False
    say(f"wrote {target} ({drawn} panel{_s(drawn)})")
    return True


def _require_plotting() -> None:
    """A seam for tests: fails with the install hint when matplotlib is missing."""
    from kernelindex_sdk.compare.plot import require_matplotlib

    require_matplotlib()


def _s(count: int) -> str:
    return "" if count == 1 else "s"


@click.command("compare")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--baseline",
    metavar="PROVIDER",
    help="Provider the ratios are relative to. Default: the group's reference provider"
    " (huggingface, torch, megatron, ...).",
)
@filter_options
@format_option(
    GATE_FORMATS,
    "text tables for people, markdown for docs, json or csv for machines;"
    " with --against also github (annotations) and junit.",
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="List every run, older re-runs too, not just the newest.",
)
@click.option(
    "--by-shape",
    is_flag=True,
    help="One table per workload shape (every comparable group) instead of one per"
    " sweep. Implied by --all; json and csv are always per shape.",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Treat the selection as one comparison: if its runs are not all comparable,"
    " say what differs and exit 1.",
)
@click.option(
    "--plot",
    metavar="FILE",
    help="Also draw one panel per kernel, pass, metric, GPU and sweep into FILE"
    " (.png, .svg or .pdf; needs matplotlib: pip install matplotlib).",
)
@click.option(
    "--plot-ratios",
    is_flag=True,
    help="With --plot: under each panel, a small one with the speed-up (or memory"
    " saving) over the baseline against x.",
)
@click.option(
    "--plot-speedups",
    is_flag=True,
    help="With --plot: instead of sweeps, each implementation's speed-up (or memory"
    " saving) per problem over the baseline, sorted, one panel per GPU and metric"
    " (drawn anyway when sweeps would be over 60 one-point panels).",
)
@click.option(
    "--summary",
    is_flag=True,
    help="Instead of the tables, one line per GPU, metric and implementation against"
    " the baseline: paired workloads, geometric-mean speed-up, share faster, fast_p,"
    " and workloads it failed or lacks. With --against: the same over the pairs, per"
    " implementation lineage (speed-up = reference / candidate: above 1 the candidate"
    " is faster).",
)
@click.option(
    "--fast-p",
    "fast_p",
    multiple=True,
    type=click.FloatRange(min=0.0),
    metavar="P",
    help="With --summary: KernelBench's fast_p at P, the share of workloads where the"
    " implementation passed and is more than P times the baseline (repeatable;"
    " default 1).",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show a progress bar while loading. Default: only on a terminal.",
)
# --- before/after (--against) options
@click.option(
    "--against",
    multiple=True,
    metavar="REFERENCE",
    help="Before/after: REFERENCE (repeatable; anything validate takes) is the reference"
    " set, the PATHs the candidate. Pairs each candidate run with the reference run of the"
    " same workload, protocol, GPU, metric and implementation lineage, and gives a verdict.",
)
@click.option(
    "--threshold",
    default="5%",
    show_default=True,
    metavar="T",
    help="With --against: a change smaller than this is 'same' (5% or 0.05).",
)
@click.option(
    "--fail-on",
    multiple=True,
    metavar="VERDICTS",
    help="With --against: verdicts that make the exit status 1 (comma-separated;"
    " default slower; e.g. slower,unsure).",
)
@click.option(
    "--pair-by",
    type=click.Choice(PAIR_BY),
    default=PAIR_BY[0],
    show_default=True,
    help="With --against: pair implementations by lineage (provider, package, entry point,"
    " backend: versions may differ) or by exact implementation digest.",
)
# --- end before/after options
def compare_command(**given: Any) -> None:
    """Compare runs: per comparable group, each implementation's median, p20–p80 and
    speed-up (or memory saving) over a baseline.

    PATH is anything validate takes: records, bundles, arrays, JSON Lines, directories,
    or - (stdin). Runs are comparable when they share workload, protocol and GPU
    hardware (and metric); where several runs share all that and an implementation,
    the newest is shown. Given exactly two runs (or --explain), says what differs if
    they are not comparable.

    With --against REFERENCE: before/after. Each candidate run (PATH) is paired with
    the reference run of the same workload, protocol, GPU, metric and implementation
    lineage; the verdict is faster, slower, same or unsure from the threshold and
    the noise each run records.

    Exit status: 0 done; 1 invalid records skipped, no run matched, or runs not
    comparable; 2 usage error, unreadable input, or a plot that cannot be drawn.
    With --against: 0 no regression, 1 a --fail-on verdict (default slower) or
    invalid records, 2 usage error or unreadable input.
    """
    given["format"] = given.pop("format_")
    given["fail_on"] = given["fail_on"] or ("slower",)
    sys.exit(run_compare(CompareOptions(**given)))
