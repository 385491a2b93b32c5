"""``kernelindex validate PATH...``: options → the document pipeline → a reporter.

This module does not import click. It holds what ``validate`` was asked (a plain
:class:`ValidateOptions`), the one description of its options (:data:`OPTIONS`), and
:func:`run_validate`. Two parsers read :data:`OPTIONS`: click's command
(:mod:`kernelindex_sdk.cli.validate_click`), which every ``--help``, every error and
every unusual spelling goes to, and :func:`parse_plain`, which takes only command lines
it understands completely and answers exactly as click would — so that
``kernelindex validate one.json`` starts without importing click and what it imports
(a large share of its start-up, benchmarks/README.md). Anything else is left to click,
whose messages and exit statuses are therefore the only ones there are.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Literal, NamedTuple

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.base.parallel import MAX_JOBS
from kernelindex_sdk.cli.report import REPORTERS, formats


class ValidateOptions(NamedTuple):
    """Everything ``validate`` was asked to do, as plain data. (A named tuple rather
    than a frozen dataclass: it is created at every ``validate``'s start-up, where a
    dataclass costs several times as much.)"""

    paths: tuple[str, ...]
    #: One of ``validate``'s formats (:func:`~kernelindex_sdk.cli.report.formats`).
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


#: What an option's value is: ``flag`` takes none (True when given); ``choice`` one of
#: ``choices``; ``count`` a decimal integer from 0 to :data:`~kernelindex_sdk.base.parallel.
#: MAX_JOBS`; ``path`` a path that exists and can be read (``-`` is not standard input
#: here).
Kind = Literal["flag", "choice", "count", "path"]


class OptionSpec(NamedTuple):
    """One option of ``validate``, as both parsers read it."""

    #: Its spellings, short first, as click lists them in ``--help``.
    names: tuple[str, ...]
    #: The :class:`ValidateOptions` field it sets.
    dest: str
    kind: Kind
    help: str
    #: Given more than once, every value is kept (a tuple), else the last one wins.
    multiple: bool = False
    choices: tuple[str, ...] = ()
    metavar: str | None = None


#: ``validate``'s options, in ``--help`` order. Defaults are :class:`ValidateOptions`'.
OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        ("--format",),
        "format",
        "choice",
        choices=formats("validate"),
        help="How to report: text lines for people, one JSON object for machines, GitHub"
        " Actions annotations (github), or JUnit XML for CI test reports (junit).",
    ),
    OptionSpec(
        ("--strict-refs",),
        "strict_refs",
        "flag",
        help="Report run references to records not given in this invocation.",
    ),
    OptionSpec(
        ("--refs-from",),
        "refs_from",
        "path",
        multiple=True,
        metavar="DIR",
        help="Also resolve references against the records under DIR (repeatable), which"
        " are not validated or reported: what a pre-commit hook, given only the staged"
        " files, needs for records committed earlier. Implies --strict-refs.",
    ),
    OptionSpec(
        ("--strict-numbers",),
        "strict_numbers",
        "flag",
        help="Also refuse number literals whose text and value disagree: 333333333.33333329"
        " (reads as 333333333.3333333), 1e-400 (reads as 0). By default every literal that"
        " reads as a finite double is taken, as RFC 8785 canonicalizes it.",
    ),
    OptionSpec(
        ("-v", "--verbose"), "verbose", "flag", help="Also print a line for each valid item."
    ),
    OptionSpec(
        ("-j", "--jobs"),
        "jobs",
        "count",
        help="Processes to validate with: 1 validates in this one, 0 uses one per core."
        " Default: one per core for 500+ files or 16+ MiB of JSON Lines, else 1."
        " Never more than two per core, nor than there is work for (one small file is"
        f" validated in this process); N above {MAX_JOBS} is refused."
        " Output is the same for any N.",
    ),
)

#: The command's help (click's ``--help`` shows it; the plain parser never does).
HELP = """Validate records, bundles, arrays of them, JSON Lines, directories, or - (stdin).

    Every problem is reported as FILE[:LINE]: POINTER: MESSAGE, then a summary line.
    Exit status: 0 all valid, 1 any invalid, 2 usage error or unreadable input.
    """

#: Every spelling of every option → its spec.
_BY_NAME: dict[str, OptionSpec] = {name: spec for spec in OPTIONS for name in spec.names}
#: Set, click answers a shell's request for completions instead of running anything
#: (click's ``_main_shell_completion``, for the program name ``kernelindex``).
COMPLETION_VARIABLE = "_KERNELINDEX_COMPLETE"


def parse_plain(args: Sequence[str]) -> ValidateOptions | None:
    """``kernelindex ARGS`` as :class:`ValidateOptions` when ARGS is ``validate`` with
    options and paths spelled the plain way; None for anything else, which click parses.

    Taken: PATHs (``-`` included) anywhere; ``--`` before the last of them; each option
    of :data:`OPTIONS` by one of its names, its value as the next argument or, for a long
    name, after ``=``. Left to click: ``--help``, unknown or bundled short options
    (``-vj4``), a value click would refuse or that starts with ``-``, a flag given a
    value, no PATH, a shell's completion request. What is taken is what click makes of
    it (``tests/test_validate_plain.py`` runs both on many command lines).
    """
    if not args or args[0] != "validate" or os.environ.get(COMPLETION_VARIABLE):
        return None
    values: dict[str, object] = {}
    multiple: dict[str, list[str | int]] = {}
    paths: list[str] = []
    rest = list(args[1:])
    rest.reverse()  # popped from the end: the next argument is rest[-1]
    while rest:
        arg = rest.pop()
        if arg == "--":
            paths.extend(reversed(rest))
            break
        if len(arg) < 2 or arg[0] != "-":
            paths.append(arg)
            continue
        name, equals, attached = arg.partition("=") if arg[:2] == "--" else (arg, "", "")
        spec = _BY_NAME.get(name)
        if spec is None:
            return None
        if spec.kind == "flag":
            if equals:
                return None
            values[spec.dest] = True
            continue
        if equals:
            text = attached
        elif rest:
            text = rest.pop()
        else:
            return None
        value = _value(spec, text)
        if value is None:
            return None
        if spec.multiple:
            multiple.setdefault(spec.dest, []).append(value)
        else:
            values[spec.dest] = value
    if not paths:
        return None
    values.update((dest, tuple(given)) for dest, given in multiple.items())
    return ValidateOptions(tuple(paths), **values)  # type: ignore[arg-type]


def _value(spec: OptionSpec, text: str) -> str | int | None:
    """The value click's type for ``spec`` makes of ``text``, or None where click would
    refuse it — or might (anything starting with ``-``: it is left to click)."""
    if text[:1] == "-":
        return None
    if spec.kind == "choice":
        return text if text in spec.choices else None
    if spec.kind == "count":
        # click's int() also takes " 4", "+4", "4_0" and other digits: left to click.
        if not (text.isascii() and text.isdigit()):
            return None
        try:
            number = int(text)
        except ValueError:  # more digits than the interpreter converts
            return None
        return number if number <= MAX_JOBS else None  # click refuses it
    # path: click.Path(exists=True) stats it, and refuses what cannot be read.
    try:
        os.stat(text)
        return text if os.access(text, os.R_OK) else None
    except (OSError, ValueError):
        return None


def run_validate(options: ValidateOptions) -> int:
    """Validate every document under ``options.paths``; return the exit status.

    Records of a deprecated apiVersion are valid; a line on stderr per such version
    says what replaces it (see :mod:`kernelindex_sdk.schema.versionstatus`).
    """
    from kernelindex_sdk.base.parallel import WorkerFailed
    from kernelindex_sdk.reading.sources import STDIN, standard_input
    from kernelindex_sdk.schema.versionstatus import VersionWatch
    from kernelindex_sdk.validating.pipeline import Pipeline
    from kernelindex_sdk.validating.validation import ValidationSession

    reporter = REPORTERS["validate", options.format](verbose=options.verbose)
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
        stdin=standard_input() if STDIN in options.paths else None,
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
