"""``kernelindex import ...`` and ``kernelindex export ...``: adapter commands for the CLI.

The SDK's ``kernelindex`` finds :data:`import_group` and :data:`export_group` through the
``kernelindex.commands`` entry points (``import = "bench_adapters.cli:import_group"``,
``export = "bench_adapters.cli:export_group"``), so the SDK never imports an adapter by
name. Each adapter's modules are loaded only when its command runs.

``import nvbench`` and ``import kernelbench`` share the import path and the reporting
of ``import liger`` (:func:`run_source_import`, :func:`_run_import`).

``import liger`` exit status (and ``import nvbench``/``kernelbench``, per entry): 0
every row imported; 1 some rows were refused (each reported, the rest written — or,
with ``--strict``, nothing written), or no row was kept (an input with none, or every
one refused: one line says so, and nothing is written); 2 unreadable
input, output that cannot be written or would lose data already there, or a usage
error. ``export liger``: 0 every run written or left out for its status; 1 something
was left out for a problem (reported); 2 unreadable input (nothing written), output
that exists (without ``--force``) or cannot be written, or a usage error. Warnings,
problems and summaries go to stderr, one line each; no traceback reaches the user.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol, TextIO

import click

from bench_adapters.common.provenance import KNOWN_SOFTWARE
from kernelindex_sdk.base.checked_options import utf8_text

if TYPE_CHECKING:
    from kernelindex_sdk.errors import Problem

EXIT_OK = 0
EXIT_ROWS_SKIPPED = 1
EXIT_UNREADABLE = 2
#: How many lines of an output conflict are listed before "and N more".
MAX_LISTED = 20
#: Warnings quote input (an unknown kernel's name): longer ones are cut, never wrapped.
MAX_WARNING = 300
_KNOWN_SOFTWARE = ", ".join(KNOWN_SOFTWARE)


@click.group(name="import")
def import_group() -> None:
    """Import other tools' benchmark results as kernelindex records."""


@click.group(name="export")
def export_group() -> None:
    """Export kernelindex records in other tools' formats."""


_SET_HELP = (
    "Declare what the files do not say, KEY=VALUE (repeatable): a software version "
    "({software}: torch=2.5.0, cuda=12.4; any other as software.NAME=VERSION) or one of "
    "the importer's own keys ({keys}). Any other key is refused. Written with provenance "
    "'caller'; never overrides what a file records."
)


def _stacked(
    options: list[Callable[[Callable[..., None]], Callable[..., None]]],
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """One decorator applying ``options`` in order (the first listed shows first)."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def _output_options(source: str, noun: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Where and how every importer writes: ``--out``, ``--layout``, ``--strict``,
    ``--force`` (``noun``: what one bad input is, a row or an entry)."""
    return _stacked(
        [
            click.option(
                "--out",
                "out_dir",
                required=True,
                metavar="DIR",
                help="Directory to write into (created if missing).",
            ),
            click.option(
                "--layout",
                type=click.Choice(["bundles", "jsonl"]),
                default="bundles",
                show_default=True,
                help=f"bundles: one bundle file per run; jsonl: one stream "
                f"DIR/{source}.jsonl, merged with the stream already there.",
            ),
            click.option(
                "--strict", is_flag=True, help=f"Stop at the first bad {noun} and write nothing."
            ),
            click.option(
                "--force",
                is_flag=True,
                help=f"Replace bundle files of the same name that hold other content, and a "
                f"DIR/{source}.jsonl that cannot be merged. Without it such data is never "
                "replaced.",
            ),
        ]
    )


def _source_options(
    source: str, reserved: tuple[str, ...]
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The options ``import nvbench`` and ``import kernelbench`` share."""
    return _stacked(
        [
            _output_options(source, "entry"),
            click.option(
                "--set",
                "declarations",
                multiple=True,
                metavar="KEY=VALUE",
                callback=utf8_text,
                help=_SET_HELP.format(keys=", ".join(reserved), software=_KNOWN_SOFTWARE),
            ),
        ]
    )


@import_group.command("liger")
@click.argument("csv_paths", metavar="CSV...", nargs=-1, required=True)
@_output_options("liger", "row")
@click.option(
    "--quality-flags",
    is_flag=True,
    help="Also mark runs whose p20 = median = p80 with spec.qualityFlags "
    "[collapsed_quantiles]. Off by default: the published seeds carry no such flag.",
)
@click.option(
    "--provenance",
    is_flag=True,
    help="Also say, in each environment, where every field came from (the row's gpu_name, "
    "the GPU catalog) and which software versions are unknown. Off by default: the "
    "published seeds carry none.",
)
@click.option(
    "--set",
    "declarations",
    multiple=True,
    metavar="COMPONENT=VERSION",
    callback=utf8_text,
    help=f"Declare a software version the CSV does not record ({_KNOWN_SOFTWARE}: "
    "torch=2.4.0, cuda=12.4; any other as software.NAME=VERSION; repeatable): written "
    "with provenance 'caller' (implies --provenance).",
)
def liger_command(
    csv_paths: tuple[str, ...],
    out_dir: str,
    layout: str,
    strict: bool,
    force: bool,
    quality_flags: bool,
    provenance: bool,
    declarations: tuple[str, ...],
) -> None:
    """Import Liger-Kernel benchmark CSVs (all_benchmark_data*.csv; - reads stdin).

    Every row becomes a BenchmarkRun plus the protocol, workload, environment and
    implementation it references, checked as `kernelindex validate --strict-refs`
    checks before anything is written; a row that fails is reported and refused.
    Importing again into the same directory changes nothing.
    """
    sys.exit(
        run_liger_import(
            csv_paths,
            out_dir,
            layout=layout,
            strict=strict,
            quality_flags=quality_flags,
            force=force,
            provenance=provenance,
            declarations=declarations,
        )
    )


def _source_command(source: str, metavar: str, reserved: tuple[str, ...], doc: str) -> None:
    """Register ``kernelindex import <source>``: the options every JSON source shares."""

    @_source_options(source, reserved)
    def command(
        paths: tuple[str, ...],
        out_dir: str,
        layout: str,
        declarations: tuple[str, ...],
        strict: bool,
        force: bool,
    ) -> None:
        sys.exit(
            run_source_import(
                source,
                paths,
                out_dir,
                layout=layout,
                strict=strict,
                force=force,
                declarations=declarations,
            )
        )

    command.__doc__ = doc
    argument = click.argument("paths", metavar=metavar, nargs=-1, required=True)
    import_group.command(source)(argument(command))


# The reserved --set keys are the importers' RESERVED (tests check they agree); written
# here so that listing commands does not import the importers.
_source_command(
    "nvbench",
    "FILE...",
    ("observed-at",),
    """Import nvbench JSON output (--json FILE; format 1.0.0).

    Every state becomes a BenchmarkRun (skipped states too, with their reason) plus
    the protocol, workload, environment (the device, every field's provenance said)
    and implementation it references, checked as `kernelindex validate --strict-refs`
    checks before anything is written. Another format version is refused (exit 2).
    """,
)
_source_command(
    "kernelbench",
    "PATH...",
    ("timer", "warmup", "gpu", "dtype", "observed-at", "implementation"),
    """Import KernelBench baseline timings (baseline_time_*.json files, or folders of them).

    Every level/problem entry becomes a BenchmarkRun (null entries as runs that failed)
    with its environment from the entry's own hardware, never the folder; the
    implementation (eager or torch.compile backend and mode) comes from the file name.
    What the files do not say is unknown unless declared with --set.
    """,
)


def run_liger_import(
    csv_paths: tuple[str, ...] | list[str],
    out_dir: str,
    *,
    layout: str = "bundles",
    strict: bool = False,
    quality_flags: bool = False,
    force: bool = False,
    err: TextIO | None = None,
    stdin: BinaryIO | None = None,
    provenance: bool = False,
    declarations: tuple[str, ...] | list[str] = (),
) -> int:
    """The ``import liger`` command without click: returns the exit status."""
    from bench_adapters.liger import import_csv

    prog = "kernelindex import liger"
    stream, usage = _error_channel(prog, err)
    out = _output_dir(out_dir, layout, usage, csv_paths, "liger")
    if isinstance(out, int):
        return out
    if list(csv_paths).count("-") > 1:
        return usage("- (standard input) can be read only once")
    if any(not path for path in csv_paths):
        return usage("'': an empty path names no file")

    def run(reporting: _Reporting) -> _ImportSummary:
        return import_csv(
            list(csv_paths),
            out,
            layout="jsonl" if layout == "jsonl" else "bundles",
            strict=strict,
            quality_flags=quality_flags,
            force=force,
            on_warning=reporting.on_warning,
            on_problem=reporting.on_problem,
            progress_stream=stream,
            stdin=stdin,
            provenance=provenance,
            declarations=list(declarations),
        )

    return _run_import(prog, "row", stream, usage, run)


def run_source_import(
    source: str,
    paths: tuple[str, ...] | list[str],
    out_dir: str,
    *,
    layout: str = "bundles",
    strict: bool = False,
    force: bool = False,
    declarations: tuple[str, ...] | list[str] = (),
    err: TextIO | None = None,
) -> int:
    """``import nvbench`` and ``import kernelbench`` without click: the exit status."""
    prog = f"kernelindex import {source}"
    stream, usage = _error_channel(prog, err)
    out = _output_dir(out_dir, layout, usage, paths, source)
    if isinstance(out, int):
        return out
    if any(not path for path in paths):
        return usage("'': an empty path names no file")
    if "-" in paths:
        return usage(f"- (standard input) is not read by import {source}: name the files")

    def run(reporting: _Reporting) -> _ImportSummary:
        if source == "nvbench":
            from bench_adapters.nvbench import import_files as run_import
        else:
            from bench_adapters.kernelbench import import_paths as run_import
        return run_import(
            list(paths),
            out,
            layout="jsonl" if layout == "jsonl" else "bundles",
            declarations=list(declarations),
            strict=strict,
            force=force,
            on_warning=reporting.on_warning,
            on_problem=reporting.on_problem,
            progress_stream=stream,
        )

    noun = "state" if source == "nvbench" else "entry"
    return _run_import(prog, noun, stream, usage, run)


class _ImportSummary(Protocol):
    """What every importer's summary tells the command line."""

    @property
    def stopped(self) -> bool: ...

    @property
    def clean(self) -> bool: ...

    @property
    def kept(self) -> int: ...

    def lines(self) -> list[str]: ...


class _Reporting:
    """Where an import's warnings and refused entries go: one printable line each."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def on_warning(self, message: str) -> None:
        from kernelindex_sdk.base.escaping import one_line

        line = one_line(f"warning: {message}")
        if len(line) > MAX_WARNING:
            line = line[: MAX_WARNING - 1] + "…"
        self.stream.write(line + "\n")

    def on_problem(self, problem: object) -> None:
        self.stream.write(f"{problem}\n")


def _output_dir(
    out_dir: str,
    layout: str,
    usage: Callable[[str], int],
    inputs: Sequence[str] = (),
    source: str = "",
) -> Path | int:
    """``--out`` as a path, or the exit status of a usage error: also an ``--out``
    over an input (:func:`_import_over_input`)."""
    if not out_dir:
        return usage("--out '': an empty path names no directory")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        return usage(f"--out {out_dir}: exists and is not a directory")
    if layout not in ("bundles", "jsonl"):
        return usage(f"--layout {layout}: expected bundles or jsonl")
    over = _import_over_input(out_dir, [p for p in inputs if p and p != "-"], source)
    if over is not None:
        return usage(over)
    return out


#: The importers that read the files under a folder named as input (the others say
#: that a folder is not a file).
_WALKS_FOLDERS = frozenset({"kernelbench"})
#: A bundle file an import writes: ``<run name>-<16 hex digits>.json``.
_BUNDLE_NAME = re.compile(r".*-[0-9a-f]{16}\.json")


def _import_over_input(out_dir: str, inputs: list[str], source: str) -> str | None:
    """Why an import may not write into ``out_dir``, or None: it is, or is inside, an
    input folder it walks (what it writes would be read as input next time), or an
    input file in it has a name the import writes (``<source>.jsonl``, a bundle's),
    which a write — with ``--force``, a replacement — would take over. ``--force`` or
    not."""
    from kernelindex_sdk.base.outputs import folder_holding, real

    folder = folder_holding(out_dir, inputs) if source in _WALKS_FOLDERS else None
    if folder is not None:
        return f"--out {out_dir}: is inside the input folder {folder}; nothing written"
    inside = real(out_dir)
    for name in inputs:
        resolved = real(name)
        base = os.path.basename(resolved)
        if os.path.dirname(resolved) == inside and (
            base == f"{source}.jsonl" or _BUNDLE_NAME.fullmatch(base)
        ):
            return (
                f"--out {out_dir}: would write over the input {name} (a name this import"
                " writes there); nothing written"
            )
    return None


def _run_import(
    prog: str,
    noun: str,
    stream: TextIO,
    usage: Callable[[str], int],
    run: Callable[[_Reporting], _ImportSummary],
) -> int:
    """Run an import and report it as every import command does: refused entries and
    warnings as they come, one line each; unreadable input, output that cannot be
    written or would lose data, and bad declarations as one line and exit 2; the summary
    last; exit 1 when entries were refused, or when none was kept (nothing written: a
    source with no entries is not a successful import)."""
    from bench_adapters.common.catalogdata import CatalogError
    from bench_adapters.common.importing import UnreadableSource
    from bench_adapters.common.provenance import DeclarationError
    from bench_adapters.common.writer import ExistingOutput, OutputError
    from kernelindex_sdk.base.escaping import one_line
    from kernelindex_sdk.errors import IntakeError

    try:
        summary = run(_Reporting(stream))
    except (IntakeError, UnreadableSource) as error:
        stream.write(f"{error.problem}\n")
        return EXIT_UNREADABLE
    except DeclarationError as error:
        return usage(str(error))
    except ExistingOutput as error:
        _list_problems(error.problems, stream)
        stream.write(one_line(f"{prog}: error: {error}") + "\n")
        return EXIT_UNREADABLE
    except OutputError as error:
        stream.write(one_line(f"{prog}: error: {error}") + "\n")
        return EXIT_UNREADABLE
    except CatalogError as error:
        stream.write(f"{prog}: internal error: {error}\n")
        return EXIT_UNREADABLE
    if summary.stopped:
        stream.write(f"{prog}: stopped at the first bad {noun} (--strict): nothing written\n")
    elif not summary.kept:
        stream.write(f"{prog}: no {noun} imported: nothing written\n")
    for line in summary.lines():
        stream.write(f"{line}\n")
    return EXIT_OK if summary.clean and summary.kept else EXIT_ROWS_SKIPPED


def _error_channel(prog: str, err: TextIO | None) -> tuple[TextIO, Callable[[str], int]]:
    """Where a command reports (``err`` or stderr), and how it fails: one line, exit 2."""
    from kernelindex_sdk.base.escaping import one_line

    stream = err if err is not None else sys.stderr

    def fail(message: str) -> int:
        stream.write(one_line(f"{prog}: error: {message}") + "\n")
        return EXIT_UNREADABLE

    return stream, fail


def _list_problems(problems: Sequence[object], stream: TextIO) -> None:
    for problem in problems[:MAX_LISTED]:
        stream.write(f"{problem}\n")
    if len(problems) > MAX_LISTED:
        stream.write(f"... and {len(problems) - MAX_LISTED} more\n")


@export_group.command("liger")
@click.argument("record_paths", metavar="RECORDS...", nargs=-1, required=True)
@click.option(
    "--out",
    "out_path",
    required=True,
    metavar="FILE|-",
    help="The CSV to write (- writes it to stdout).",
)
@click.option("--force", is_flag=True, help="Replace FILE if it exists with other content.")
def export_liger_command(record_paths: tuple[str, ...], out_path: str, force: bool) -> None:
    """Write records as Liger-Kernel's benchmark CSV (all_benchmark_data.csv).

    RECORDS are read as `kernelindex validate --strict-refs` reads them (files,
    folders, JSON Lines, - for stdin). One row per BenchmarkRun of speed or memory;
    runs that failed, ran out of memory or were skipped are left out and counted.
    Imported runs give back their source rows byte for byte; a run edited since its
    import is written from its own values, with a warning.
    """
    sys.exit(run_liger_export(record_paths, out_path, force=force))


def _over_input(out_path: str, inputs: Sequence[str]) -> str | None:
    """Why ``export liger --out`` may not be written where it is named, or None: it
    is one of the inputs (a records file, a store), or a name a walk reads inside an
    input folder (the CSV would be read as records next time). ``--force`` or not."""
    from kernelindex_sdk.base.outputs import folder_holding, same_input
    from kernelindex_sdk.reading.sources import is_walked_name

    named = [path for path in inputs if path != "-"]
    source = same_input(out_path, named)
    if source is not None:
        return f"--out {out_path}: is the input {source}; nothing written (--force or not)"
    folder = folder_holding(out_path, named)
    if folder is not None and is_walked_name(os.path.basename(out_path)):
        return (
            f"--out {out_path}: is inside the input folder {folder}, which would read it as"
            " records; nothing written"
        )
    return None


def _say_unexpressed(
    prog: str, groups: Mapping[str, Sequence[Problem]], nothing: bool, stream: TextIO
) -> None:
    """Runs no Liger row can express: a run alone as its problem line, many left out
    for one reason as one line with their count and the first of them. ``nothing``:
    no row can be written at all; with one reason, its line says so and is the only one."""
    from kernelindex_sdk.base.escaping import one_line
    from kernelindex_sdk.base.wording import counted

    single = nothing and len(groups) == 1
    for reason, problems in groups.items():
        first = problems[0]
        if len(problems) == 1 and not single:
            stream.write(f"{first}\n")
            continue
        where = first.source if first.line is None else f"{first.source}:{first.line}"
        said = (
            f"{counted(len(problems), 'run')} not exported: {reason} (the first: {where})"
            if len(problems) > 1
            else f"{where}: {first.message}"
        )
        stream.write(one_line(f"{prog}: {'nothing written: ' if single else ''}{said}") + "\n")
    if nothing and not single:
        stream.write(f"{prog}: nothing written: no run can be a Liger row\n")


def run_liger_export(
    record_paths: tuple[str, ...] | list[str],
    out_path: str,
    *,
    force: bool = False,
    out: BinaryIO | None = None,
    err: TextIO | None = None,
    stdin: BinaryIO | None = None,
) -> int:
    """The ``export liger`` command without click: returns the exit status."""
    from bench_adapters.liger.export import Exporter, csv_bytes
    from kernelindex_sdk.base.fileio import atomic_write_bytes, directory_lock
    from kernelindex_sdk.reading.positions import Locator

    prog = "kernelindex export liger"
    stream, fail = _error_channel(prog, err)
    if not out_path:
        return fail("--out '': an empty path names no file (- writes to stdout)")
    target = Path(out_path)
    if out_path != "-" and target.is_dir():
        return fail(f"--out {out_path}: is a directory, not a file")
    if out_path != "-":
        over = _over_input(out_path, record_paths)
        if over is not None:
            return fail(over)

    locator = Locator()  # a .json file's problems on their lines, once the file is done

    def on_problem(problem: Problem) -> None:
        for ready in locator.add(problem):
            stream.write(f"{ready}\n")

    exporter = Exporter()
    exporter.read(list(record_paths), stdin=stdin, on_problem=on_problem)
    for ready in locator.flush():
        stream.write(f"{ready}\n")
    summary = exporter.summary
    if summary.unreadable or not summary.files:
        if not summary.files:
            stream.write(f"{prog}: error: no input files\n")
        stream.write(f"{prog}: unreadable input: nothing written\n")
        return EXIT_UNREADABLE

    def on_row_problem(problem: Problem) -> None:
        if problem.code != "not-expressible":  # said below, counted by reason
            on_problem(problem)

    rows = exporter.rows(on_row_problem, on_warning=on_problem)
    for ready in locator.flush():  # the warnings of the last file read, held until now
        stream.write(f"{ready}\n")
    nothing = not rows and summary.not_expressible > 0
    _say_unexpressed(prog, summary.unexpressed, nothing, stream)
    if nothing:
        return EXIT_ROWS_SKIPPED
    data = csv_bytes(rows)
    if out_path == "-":
        sink = out if out is not None else sys.stdout.buffer
        sink.write(data)
        sink.flush()
    else:
        try:
            with directory_lock(target.parent):
                if target.exists() and not force and target.read_bytes() != data:
                    return fail(
                        f"--out {out_path}: exists with other content (--force replaces it)"
                    )
                atomic_write_bytes(target, data)
        except OSError as error:
            return fail(f"{error.filename or out_path}: cannot write: {error.strerror or error}")
    for line in summary.lines():
        stream.write(f"{line}\n")
    return summary.exit_status()
