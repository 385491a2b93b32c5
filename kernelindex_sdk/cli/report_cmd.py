"""``kernelindex report PATH... --out DIR``: a static HTML site of the runs.

Click only parses: :func:`run_report` has the library load the records
(:func:`~kernelindex_sdk.site.loading.load_report`), select with ``compare``'s filters,
pair with ``--against`` (:func:`~kernelindex_sdk.compare.beforeafter.before_after`),
and write the site (:func:`~kernelindex_sdk.site.write_site`), with a progress bar of
the bytes read and of the files written.

Exit status: 0 written, every input read and valid; 1 written, with invalid records
left out (reported one line each, and said on the overview); 2 usage error,
unreadable input or no record files (nothing written), or the output refused (not
empty without ``--force``, not a report's own, an input's place).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

import attrs
import click

from kernelindex_sdk.cli.filter_options import filter_options

if TYPE_CHECKING:
    from kernelindex_sdk.compare.runs import ResolvedRun
    from kernelindex_sdk.site.loading import ReportInput


@attrs.frozen
class ReportOptions:
    """Everything ``report`` was asked to do, as plain data."""

    paths: tuple[str, ...]
    out: str
    against: tuple[str, ...] = ()
    force: bool = False
    title: str = "kernelindex report"
    kernels: tuple[str, ...] = ()
    passes: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    #: ``KEY=VALUE`` conditions on the workload's parameters or dtype (``--where``).
    wheres: tuple[str, ...] = ()
    #: None: a bar only when stderr is a terminal.
    progress: bool | None = None


def run_report(options: ReportOptions, *, err: TextIO | None = None) -> int:
    """Load, select, pair, write; return the exit status. Never raises for bad input."""
    from kernelindex_sdk.base.escaping import one_line
    from kernelindex_sdk.cli.filter_options import bad_where, unknown_metric

    err = err if err is not None else sys.stderr

    def say(message: str) -> None:
        err.write(one_line(f"kernelindex report: {message}") + "\n")

    if (unknown := unknown_metric(options.metrics)) is not None:
        say(unknown)
        return 2
    if (bad := bad_where(options.wheres)) is not None:
        say(bad)
        return 2
    loaded = _load(options, err)
    if loaded.unreadable:
        say(
            f"{loaded.unreadable} unreadable input{'s' * (loaded.unreadable != 1)}: nothing written"
        )
        return 2
    if not loaded.found:
        listed = ", ".join(repr(path) for path in (*options.paths, *options.against))
        say(f"no .json, .jsonl or .ndjson files found under {listed}: nothing written")
        return 2
    if loaded.invalid:
        say(f"{loaded.invalid} invalid item{'s' * (loaded.invalid != 1)} left out (see above)")
    chosen = _select(loaded, options, say)
    if chosen is None:
        return 2
    return _write(loaded, chosen, options, err, say)


def _load(options: ReportOptions, err: TextIO) -> ReportInput:
    from kernelindex_sdk.base.progress import Progress
    from kernelindex_sdk.cli.report.validate import format_problem
    from kernelindex_sdk.errors import Problem
    from kernelindex_sdk.site.loading import load_report

    bars: list[Progress] = []

    def on_bytes(side: str, total: int | None) -> Callable[[int], None]:
        for bar in bars:
            bar.close()
        label = f"report: reading {side} bytes" if options.against else "report: reading bytes"
        bars.append(Progress(total, label=label, stream=err, enabled=options.progress))
        return bars[-1].advance

    def problem(found: Problem) -> None:
        if bars:
            with bars[-1].paused():
                err.write(format_problem(found) + "\n")
        else:
            err.write(format_problem(found) + "\n")

    against = options.against or None
    try:
        return load_report(options.paths, against, on_problem=problem, on_bytes=on_bytes)
    finally:
        for bar in bars:
            bar.close()


def _select(
    loaded: ReportInput, options: ReportOptions, say: Callable[[str], None]
) -> tuple[list[ResolvedRun], list[ResolvedRun] | None] | None:
    """The runs the filters select (each side), or None after saying which filter
    value names nothing present."""
    from kernelindex_sdk.cli.filter_options import select_runs, typos

    every = [*loaded.runs, *(loaded.reference or ())]
    names = loaded.gpu_names
    wrong = list(typos(every, options, names))
    for typo in wrong:
        say(typo)
    if wrong:
        return None
    runs = select_runs(loaded.runs, options, names)
    reference = None if loaded.reference is None else select_runs(loaded.reference, options, names)
    return runs, reference


def _write(
    loaded: ReportInput,
    chosen: tuple[list[ResolvedRun], list[ResolvedRun] | None],
    options: ReportOptions,
    err: TextIO,
    say: Callable[[str], None],
) -> int:
    from kernelindex_sdk.base.progress import Progress
    from kernelindex_sdk.compare.beforeafter import before_after
    from kernelindex_sdk.site import Site, SiteRefused, write_site

    runs, reference = chosen
    against = None
    if reference is not None:
        against = before_after(reference, runs, lookup=loaded.index.lookup)
    notes = _notes(loaded)
    site = Site(
        loaded.index,
        runs,
        reference=reference or (),
        against=against,
        title=options.title,
        notes=notes,
    )
    inputs = (*options.paths, *options.against)
    bar = Progress(
        site.count(), label="report: writing files", stream=err, enabled=options.progress
    )
    try:
        with bar:
            written = write_site(
                site,
                options.out,
                force=options.force,
                inputs=inputs,
                on_file=lambda _: bar.advance(),
            )
    except SiteRefused as error:
        say(str(error))
        return 2
    except OSError as error:
        say(f"{error.filename or options.out}: {error.strerror or error}; nothing written")
        return 2
    say(f"wrote {written} files ({len(runs)} runs) to {options.out}")
    return 1 if loaded.invalid else 0


def _notes(loaded: ReportInput) -> list[str]:
    notes = []
    if loaded.invalid:
        notes.append(
            f"{loaded.invalid} invalid items were left out (kernelindex validate names them)."
        )
    for kind, count in sorted(loaded.missing.items()):
        notes.append(f"{count} runs reference a {kind} record that was not given.")
    return notes


@click.command("report")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--out", "out", required=True, metavar="DIR", help="The folder to write the site into."
)
@click.option(
    "--against",
    multiple=True,
    metavar="REFERENCE",
    help="Add a before/after page: REFERENCE (repeatable) is the reference set, the PATHs"
    " the candidate, paired as compare --against pairs them.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace DIR when it holds an earlier report (and nothing else).",
)
@click.option(
    "--title", default="kernelindex report", show_default=True, help="The overview's title."
)
@filter_options
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show progress bars while reading and writing. Default: only on a terminal.",
)
def report_command(
    paths: tuple[str, ...],
    out: str,
    against: tuple[str, ...],
    force: bool,
    title: str,
    kernels: tuple[str, ...],
    passes: tuple[str, ...],
    gpus: tuple[str, ...],
    metrics: tuple[str, ...],
    wheres: tuple[str, ...],
    progress: bool | None,
) -> None:
    """Write a static HTML site of the runs under PATH (anything validate takes, a
    store too) into DIR: an overview of kernels × GPUs, a page per kernel with its
    sweeps charted, a page per record by its digest, the schemas, and with --against a
    before/after page. Self-contained: no script, nothing fetched; open DIR/index.html.

    DIR is written whole or not at all. A non-empty DIR is replaced only with --force,
    and only when it holds an earlier report and nothing else.

    Exit status: 0 written; 1 written, invalid records left out; 2 usage error,
    unreadable input, no record files, or DIR refused (nothing written).
    """
    options = ReportOptions(
        paths=paths,
        out=out,
        against=against,
        force=force,
        title=title,
        kernels=kernels,
        passes=passes,
        gpus=gpus,
        metrics=metrics,
        wheres=wheres,
        progress=progress,
    )
    sys.exit(run_report(options))
