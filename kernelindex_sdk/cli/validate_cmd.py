"""``kernelindex validate PATH...``."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from kernelindex_sdk.cli.inputs import read_documents
from kernelindex_sdk.cli.reporters import REPORTERS, JsonReporter, Tally, TextReporter
from kernelindex_sdk.errors import IntakeError

if TYPE_CHECKING:
    from kernelindex_sdk.validation import ValidationSession


@dataclass(frozen=True, slots=True)
class ValidateOptions:
    """Everything ``validate`` was asked to do, as plain data."""

    paths: tuple[str, ...]
    format: str = "text"
    strict_refs: bool = False
    verbose: bool = False
    #: Worker processes: 1 validates in this process, 0 means one per core, and None
    #: (the default) one per core for large inputs, else 1 (``parallel.auto_jobs``).
    jobs: int | None = None


def run_validate(options: ValidateOptions) -> int:
    """Validate every document under ``options.paths``; return the exit status."""
    from kernelindex_sdk.validation import ValidationSession

    reporter = REPORTERS[options.format](verbose=options.verbose)
    session = ValidationSession(strict_refs=options.strict_refs, strict_json=True)
    tally = Tally()
    files: set[str] = set()
    jobs = options.jobs
    if jobs is None:
        from kernelindex_sdk.cli.parallel import auto_jobs

        jobs = auto_jobs(options.paths)
    elif jobs == 0:
        from kernelindex_sdk.cli.parallel import default_jobs

        jobs = default_jobs()
    if jobs > 1 and "-" not in options.paths:  # stdin is read by one process
        from kernelindex_sdk.cli.parallel import WorkerFailed, results

        try:
            for result in results(
                options.paths, jobs, strict_refs=options.strict_refs, verbose=options.verbose
            ):
                files.update(result.paths)
                tally.valid += result.valid
                tally.invalid += result.invalid
                tally.unreadable += result.unreadable
                for item in result.items:
                    reporter.item(item)
                session.add_references(result.known, result.pending)
        except WorkerFailed as error:
            sys.stderr.write(f"kernelindex validate: {error} (rerun with --jobs 1)\n")
            return 2
        return _finish(options, session, reporter, tally, files)
    for path, document in read_documents(options.paths):
        files.add(path)
        if isinstance(document, IntakeError):
            items = [session.unreadable(document)]
            tally.unreadable += 1
        else:
            items = session.check_document(
                document.value, source=document.source, line=document.line
            )
        for item in items:
            if item.valid:
                tally.valid += 1
            else:
                tally.invalid += 1
            reporter.item(item)
    return _finish(options, session, reporter, tally, files)


def _finish(
    options: ValidateOptions,
    session: ValidationSession,
    reporter: TextReporter | JsonReporter,
    tally: Tally,
    files: set[str],
) -> int:
    """Late reference problems, the summary, and the exit status."""
    late = session.finish()
    if late:
        reporter.problems(late)
        # A run whose reference does not resolve was counted valid above; it is not.
        tally.invalid += session.invalidated
        tally.valid -= session.invalidated
    tally.files = len(files)
    reporter.finish(tally)
    if not files:
        # A pre-commit hook or CI step pointed at the wrong place must not pass silently.
        sys.stderr.write(
            "kernelindex validate: no .json, .jsonl or .ndjson files found under "
            + ", ".join(options.paths)
            + "\n"
        )
        return 2
    if tally.unreadable:
        return 2
    return 1 if tally.invalid else 0


@click.command("validate")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--format",
    "format_",
    type=click.Choice(sorted(REPORTERS)),
    default="text",
    show_default=True,
    help="How to report: text lines for people, one JSON object for machines.",
)
@click.option(
    "--strict-refs",
    is_flag=True,
    help="Report run references to records not given in this invocation.",
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
    paths: tuple[str, ...], format_: str, strict_refs: bool, verbose: bool, jobs: int | None
) -> None:
    """Validate records, bundles, arrays of them, JSON Lines, directories, or - (stdin).

    Every problem is reported as FILE[:LINE]: POINTER: MESSAGE, then a summary line.
    Exit status: 0 all valid, 1 any invalid, 2 usage error or unreadable input.
    """
    options = ValidateOptions(paths, format_, strict_refs, verbose, jobs)
    sys.exit(run_validate(options))
