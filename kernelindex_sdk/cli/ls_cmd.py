"""``kernelindex ls PATH...``: what a folder of records holds.

Click only parses: the options become a plain :class:`LsOptions`, :func:`run_ls` loads
and validates exactly as ``validate`` and ``compare`` do, asks the library
(:mod:`kernelindex_sdk.compare.inventory`) for the counts, and picks a reporter.

Exit status, as ``validate``: 0 all read and valid; 1 invalid records (reported one
line each on stderr, left out of the counts) or no run matches the filters; 2 usage
error (a ``--kernel`` or ``--gpu`` value naming nothing present too), unreadable input,
or no record files at all.
"""

from __future__ import annotations

import sys
from typing import Final, TextIO

import attrs
import click

from kernelindex_sdk.cli.filter_options import filter_options, format_option
from kernelindex_sdk.cli.report import REPORTERS, formats

FORMATS: Final = formats("ls")


@attrs.frozen
class LsOptions:
    """Everything ``ls`` was asked to do, as plain data."""

    paths: tuple[str, ...]
    kernels: tuple[str, ...] = ()
    passes: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    #: Words of :data:`~kernelindex_sdk.base.metrics.METRIC_ALIASES` (``--metric``).
    metrics: tuple[str, ...] = ()
    #: ``KEY=VALUE`` conditions on the workload's parameters or dtype (``--where``).
    wheres: tuple[str, ...] = ()
    format: str = "text"


def run_ls(options: LsOptions, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Load, validate, count and report; return the exit status. Never raises for bad input."""
    from kernelindex_sdk.base.escaping import one_line
    from kernelindex_sdk.cli.filter_options import bad_where, select_runs, typos, unknown_metric
    from kernelindex_sdk.cli.report.validate import format_problem
    from kernelindex_sdk.compare import inventory, records, runs
    from kernelindex_sdk.errors import Problem
    from kernelindex_sdk.reading.sources import FileSource, StdinSource, StoreSource, expand

    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr

    def say(message: str) -> None:
        err.write(one_line(f"kernelindex ls: {message}") + "\n")

    if options.format not in FORMATS:
        say(f"unknown --format {options.format!r} (choose from {', '.join(FORMATS)})")
        return 2
    if (unknown := unknown_metric(options.metrics)) is not None:
        say(unknown)
        return 2
    if (bad := bad_where(options.wheres)) is not None:
        say(bad)
        return 2

    def report_problem(problem: Problem) -> None:
        err.write(format_problem(problem) + "\n")

    readable = (FileSource, StdinSource, StoreSource)
    found = [s for s in expand(options.paths) if isinstance(s, readable)]
    loaded = records.load_records(options.paths, on_problem=report_problem)
    status = 2 if loaded.unreadable else 1 if loaded.invalid else 0
    if not found and not loaded.unreadable:
        # A script pointed at the wrong place must not be told "nothing here" and pass.
        say(
            "no .json, .jsonl or .ndjson files found under "
            + ", ".join(repr(path) for path in options.paths)
        )
        return 2
    if loaded.invalid:
        say(f"{loaded.invalid} invalid item{'s' * (loaded.invalid != 1)} left out (see above)")

    resolved, resolver = runs.resolve_runs(loaded.index)
    gpu_names = resolver.gpu_names()
    for typo in (wrong := typos(resolved, options, gpu_names)):
        say(typo)
    if wrong:
        return 2
    filtered = bool(
        options.kernels or options.passes or options.gpus or options.metrics or options.wheres
    )
    selected = select_runs(resolved, options, gpu_names)
    if filtered and not selected:
        say(f"no run matches the filters ({len(resolved)} valid runs loaded)")
        return max(status, 1)

    counted = inventory.take_inventory(loaded.index, selected)
    REPORTERS["ls", options.format](out).write(counted)
    return status


@click.command("ls")
@click.argument("paths", nargs=-1, required=True)
@filter_options
@format_option(FORMATS, "text sections for people, one JSON object for scripts.")
def ls_command(
    paths: tuple[str, ...],
    kernels: tuple[str, ...],
    passes: tuple[str, ...],
    gpus: tuple[str, ...],
    metrics: tuple[str, ...],
    wheres: tuple[str, ...],
    format_: str,
) -> None:
    """Say what records hold: counts per kind and run status; the kernels, passes,
    GPUs, providers, implementations, protocols and metrics, with run counts; the time
    range (runs flagged observed_at_unknown count as undated); quality flags.

    PATH is anything validate takes: records, bundles, arrays, JSON Lines, directories,
    or - (stdin). Invalid records are reported one line each and left out.

    Exit status: 0 done; 1 invalid records left out, or no run matches the filters;
    2 usage error (a --kernel, --gpu or --where value naming nothing present),
    unreadable input, or no record files found.
    """
    options = LsOptions(
        paths=paths,
        kernels=kernels,
        passes=passes,
        gpus=gpus,
        metrics=metrics,
        wheres=wheres,
        format=format_,
    )
    sys.exit(run_ls(options))
