"""``kernelindex history PATH|STORE...``: each measurement over implementation versions,
with its change points, and a gate on the newest.

Click only parses: the options become a plain :class:`HistoryOptions`, and
:func:`run_history` loads exactly as ``compare`` does (or, given one trusted store, asks
the store's SQL for the points: :mod:`kernelindex_sdk.compare.history_store`), has the
library build the series (:mod:`kernelindex_sdk.compare.history`) and picks a reporter.

Exit status: 0 done, no series whose newest version is a change for the worse; 1 at
least one (``--fail-on slower``, the default; ``--fail-on none`` never fails), invalid
records skipped, or no run matches the filters; 2 usage error (a filter value naming
nothing present too), unreadable input, or no record files at all.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TextIO

import attrs
import click

from kernelindex_sdk.cli.filter_options import filter_options, format_option
from kernelindex_sdk.cli.report import formats

if TYPE_CHECKING:
    from kernelindex_sdk.compare.history import History

FORMATS: Final = formats("history")
#: ``--fail-on`` choices: the direction that fails the gate, or ``none``.
FAIL_ON: Final = ("slower", "faster", "none")

Say = Callable[[str], None]


@attrs.frozen
class HistoryOptions:
    """Everything ``history`` was asked to do, as plain data."""

    paths: tuple[str, ...]
    kernels: tuple[str, ...] = ()
    passes: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    wheres: tuple[str, ...] = ()
    format: str = "text"
    #: A change below this is no change (``5%`` or ``0.05``).
    threshold: str = "5%"
    #: The newest change in this direction fails (``none``: never).
    fail_on: str = "slower"
    #: List every point under its series (text and Markdown).
    points: bool = False
    progress: bool | None = None


def run_history(
    options: HistoryOptions, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Load, select, build the series and report; return the exit status. Never raises
    for bad input."""
    from kernelindex_sdk.base.escaping import one_line
    from kernelindex_sdk.cli.report import REPORTERS

    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr

    def say(message: str) -> None:
        err.write(one_line(f"kernelindex history: {message}") + "\n")

    threshold = _usage(options, say)
    if threshold is None:
        return 2
    built: tuple[History, int] | int | None = _from_store(options, threshold, say)
    if built is None:
        built = _from_records(options, threshold, err, say)
    if isinstance(built, int):
        return built
    found, status = built
    REPORTERS["history", options.format](out, options.points).write(found)
    if options.fail_on != "none":
        worse = found.worse_now(options.fail_on)
        if worse:
            say(
                f"{len(worse)} series {'is' if len(worse) == 1 else 'are'} {options.fail_on}"
                " at the newest version (--fail-on " + options.fail_on + ")"
            )
            return max(status, 1)
    return status


def _usage(options: HistoryOptions, say: Say) -> float | None:
    """The threshold, once every option is usable; None, said why, when one is not."""
    from kernelindex_sdk.cli.beforeafter_cmd import UsageError, parse_threshold
    from kernelindex_sdk.cli.filter_options import bad_where, unknown_metric

    if options.format not in FORMATS:
        say(f"unknown --format {options.format!r} (choose from {', '.join(FORMATS)})")
        return None
    if options.fail_on not in FAIL_ON:
        say(f"unknown --fail-on {options.fail_on!r} (choose from {', '.join(FAIL_ON)})")
        return None
    for problem in (unknown_metric(options.metrics), bad_where(options.wheres)):
        if problem is not None:
            say(problem)
            return None
    try:
        return parse_threshold(options.threshold)
    except UsageError as error:
        say(str(error))
        return None


def _from_records(
    options: HistoryOptions, threshold: float, err: TextIO, say: Say
) -> tuple[History, int] | int:
    """The history of every record under the paths, read as ``compare`` reads them;
    else the exit status, said why."""
    from kernelindex_sdk.base.progress import Progress
    from kernelindex_sdk.cli.filter_options import select_runs, typos
    from kernelindex_sdk.cli.report.validate import format_problem
    from kernelindex_sdk.compare.history import history
    from kernelindex_sdk.compare.loading import load
    from kernelindex_sdk.errors import Problem
    from kernelindex_sdk.reading.sources import FileSource, StdinSource, StoreSource, expand

    readable = (FileSource, StdinSource, StoreSource)
    found = [s for s in expand(options.paths) if isinstance(s, readable)]

    def bar(side: str, total: int | None) -> Progress:
        return Progress(total, label="history: loading bytes", stream=err, enabled=options.progress)

    def problem(found: Problem) -> None:
        err.write(format_problem(found) + "\n")

    loaded = load(options.paths, on_problem=problem, progress=bar)
    status = 2 if loaded.unreadable else 1 if loaded.invalid else 0
    if not found and not loaded.unreadable:
        listed = ", ".join(repr(path) for path in options.paths)
        say(f"no .json, .jsonl or .ndjson files found under {listed}")
        return 2
    if loaded.invalid:
        say(f"{loaded.invalid} invalid item{'s' * (loaded.invalid != 1)} skipped (see above)")
    runs, resolver = loaded.candidate.runs, loaded.candidate.resolver
    for typo in (wrong := typos(runs, options, resolver.gpu_names())):
        say(typo)
    if wrong:
        return 2
    selected = select_runs(runs, options, resolver.gpu_names())
    if not selected:
        said = f"no run matches the filters ({len(runs)} valid runs loaded)"
        say(said if runs else "no valid run in the input")
        return max(status, 1)
    return history(selected, threshold=threshold), status


def _from_store(
    options: HistoryOptions, threshold: float, say: Say
) -> tuple[History, int] | int | None:
    """The history of one trusted store through its SQL (else the exit status, said
    why); None where the paths are not one such store (read them as records instead:
    they say what is wrong with a store that cannot be read)."""
    from kernelindex_sdk.cli.filter_options import select_runs, typos
    from kernelindex_sdk.reading.kistore import is_store_file

    if len(options.paths) != 1 or not is_store_file(options.paths[0]):
        return None
    from kernelindex_sdk.compare.history_store import open_store
    from kernelindex_sdk.schema.fingerprint import checks_fingerprint

    opened = open_store(options.paths[0], trusted_by=checks_fingerprint(), on_wait=say)
    if opened is None:
        return None
    runs, gpu_names = list(opened.runs), opened.resolver.gpu_names()
    for typo in (wrong := typos(runs, options, gpu_names)):
        say(typo)
    if wrong:
        return 2
    selected = select_runs(runs, options, gpu_names)
    if not selected:
        say(f"no run matches the filters ({opened.total} passed runs in the store)")
        return 1
    return opened.history(selected, threshold=threshold), 0


@click.command("history")
@click.argument("paths", nargs=-1, required=True)
@filter_options
@format_option(FORMATS, "one line per series for people, Markdown, CSV (a row per point), JSON.")
@click.option(
    "--threshold",
    default="5%",
    show_default=True,
    metavar="T",
    help="A change smaller than this (5% or 0.05) is no change.",
)
@click.option(
    "--fail-on",
    "fail_on",
    type=click.Choice(FAIL_ON),
    default="slower",
    show_default=True,
    help="Exit 1 when a series' newest version starts a change this way (none: never).",
)
@click.option("--points", is_flag=True, help="List every point under its series.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show a progress bar on stderr (default: when stderr is a terminal).",
)
def history_command(
    paths: tuple[str, ...],
    kernels: tuple[str, ...],
    passes: tuple[str, ...],
    gpus: tuple[str, ...],
    metrics: tuple[str, ...],
    wheres: tuple[str, ...],
    format_: str,
    threshold: str,
    fail_on: str,
    points: bool,
    progress: bool | None,
) -> None:
    """Each measurement over implementation versions, and where it changed.

    One series per kernel, pass, workload, GPU, implementation lineage (provider,
    package, entry point, backend: every version of it), metric and protocol; its
    points are its passed runs ordered by version, then observedAt, each its primary
    statistic (the median) and recorded spread. Change points: PELT on the log values,
    each point's noise the larger of its recorded spread and the series' own scatter;
    each change says where (version, date), its direction and its ratio, new ÷ old.

    PATH is anything validate takes, or a store (read through its SQL when trusted).

    Exit status: 0 done; 1 a series whose newest version starts a change --fail-on
    names (default slower), invalid records skipped, or no run matches the filters;
    2 usage error, unreadable input, or no record files found.
    """
    options = HistoryOptions(
        paths=paths,
        kernels=kernels,
        passes=passes,
        gpus=gpus,
        metrics=metrics,
        wheres=wheres,
        format=format_,
        threshold=threshold,
        fail_on=fail_on,
        points=points,
        progress=progress,
    )
    sys.exit(run_history(options))
