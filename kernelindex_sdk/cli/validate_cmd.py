"""``kernelindex validate PATH...``: click options → the document pipeline → a reporter."""

from __future__ import annotations

import sys
from typing import NamedTuple

import click

from kernelindex_sdk.cli.reporters import REPORTERS
from kernelindex_sdk.printable import one_line


class ValidateOptions(NamedTuple):
    """Everything ``validate`` was asked to do, as plain data. (A named tuple rather
    than a frozen dataclass: it is created at every ``validate``'s start-up, where a
    dataclass costs four times as much.)"""

    paths: tuple[str, ...]
    #: A name in :data:`~kernelindex_sdk.cli.reporters.REPORTERS`.
    format: str = "text"
    strict_refs: bool = False
    verbose: bool = False
    #: Refuse number literals whose text and value disagree (a lint; see intake.loads).
    strict_numbers: bool = False
    #: Worker processes: 1 validates in this process, 0 means one per core, and None
    #: (the default) one per core for large inputs, else 1 (see ``pipeline.Pipeline``).
    jobs: int | None = None
    #: Folders or files whose records references may resolve against, not inputs
    #: (``--refs-from``; implies ``strict_refs``).
    refs_from: tuple[str, ...] = ()


def run_validate(options: ValidateOptions) -> int:
    """Validate every document under ``options.paths``; return the exit status.

    Records of a deprecated apiVersion are valid; a line on stderr per such version
    says what replaces it (see :mod:`kernelindex_sdk.versionstatus`).
    """
    from kernelindex_sdk.parallel import WorkerFailed
    from kernelindex_sdk.pipeline import Pipeline
    from kernelindex_sdk.validation import ValidationSession
    from kernelindex_sdk.versionstatus import VersionWatch

    reporter = REPORTERS[options.format](verbose=options.verbose)
    strict_refs = options.strict_refs or bool(options.refs_from)
    session = ValidationSession(strict_refs=strict_refs, strict_json=True)
    watch = VersionWatch(session)
    pipeline = Pipeline(
        options.paths,
        checker=watch if watch.deprecated else session,
        strict_refs=strict_refs,
        strict_numbers=options.strict_numbers,
        jobs=options.jobs,
        refs_from=options.refs_from,
        report="all" if reporter.every_item else "problems",
    )
    try:
        for item in pipeline:
            reporter.item(item)
    except WorkerFailed as error:
        sys.stdout.flush()
        sys.stderr.write(f"kernelindex validate: {error} (rerun with --jobs 1)\n")
        return 2
    reporter.problems(pipeline.late)
    tally = pipeline.tally
    reporter.finish(tally)
    if watch.seen:
        sys.stdout.flush()
        for warning in watch.warnings():
            sys.stderr.write(one_line(f"kernelindex validate: warning: {warning}") + "\n")
    if not tally.files and not tally.unreadable:
        # A pre-commit hook or CI step pointed at the wrong place must not pass silently.
        sys.stdout.flush()
        sys.stderr.write(
            "kernelindex validate: no .json, .jsonl or .ndjson files found under "
            + ", ".join(repr(path) for path in options.paths)
            + "\n"
        )
    return tally.exit_status()


@click.command("validate")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--format",
    "format_",
    type=click.Choice(sorted(REPORTERS)),
    default="text",
    show_default=True,
    help="How to report: text lines for people, one JSON object for machines, GitHub"
    " Actions annotations (github), or JUnit XML for CI test reports (junit).",
)
@click.option(
    "--strict-refs",
    is_flag=True,
    help="Report run references to records not given in this invocation.",
)
@click.option(
    "--refs-from",
    "refs_from",
    multiple=True,
    metavar="DIR",
    type=click.Path(exists=True, allow_dash=False),
    help="Also resolve references against the records under DIR (repeatable), which"
    " are not validated or reported: what a pre-commit hook, given only the staged"
    " files, needs for records committed earlier. Implies --strict-refs.",
)
@click.option(
    "--strict-numbers",
    is_flag=True,
    help="Also refuse number literals whose text and value disagree: 333333333.33333329"
    " (reads as 333333333.3333333), 1e-400 (reads as 0). By default every literal that"
    " reads as a finite double is taken, as RFC 8785 canonicalizes it.",
)
@click.option("-v", "--verbose", is_flag=True, help="Also print a line for each valid item.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    default=None,
    help="Processes to validate with: 1 validates in this one, 0 uses one per core."
    " Default: one per core for 500+ files or 16+ MiB of JSON Lines, else 1."
    " Output is the same for any N.",
)
def validate_command(
    paths: tuple[str, ...],
    format_: str,
    strict_refs: bool,
    strict_numbers: bool,
    verbose: bool,
    jobs: int | None,
    refs_from: tuple[str, ...],
) -> None:
    """Validate records, bundles, arrays of them, JSON Lines, directories, or - (stdin).

    Every problem is reported as FILE[:LINE]: POINTER: MESSAGE, then a summary line.
    Exit status: 0 all valid, 1 any invalid, 2 usage error or unreadable input.
    """
    options = ValidateOptions(
        paths,
        format_,
        strict_refs,
        verbose,
        strict_numbers=strict_numbers,
        jobs=jobs,
        refs_from=refs_from,
    )
    sys.exit(run_validate(options))
