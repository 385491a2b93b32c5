"""Importing Liger CSVs: read every file, map every row, then write — or write nothing.

The whole import is computed in memory before the first byte is written, so a file
that cannot be read (or, with ``strict``, the first bad row) stops it with the output
directory untouched. Without ``strict`` a bad row is reported (file, line, what is
wrong), skipped, and counted; the good rows are written. The summary tells the
caller everything the command line prints and needs for its exit status.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import attrs

from bench_adapters.liger.catalog import Catalog
from bench_adapters.liger.mapper import MappedRun, Mapper, Warnings
from bench_adapters.liger.source import LigerCsv, RowError, read_text
from bench_adapters.liger.writer import Layout, write_records
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.progress import Progress


@attrs.define
class ImportSummary:
    """Counts and findings of one import."""

    rows_read: int = 0
    rows_skipped: int = 0
    #: Rows whose run was identical to an earlier row's (written once).
    duplicate_rows: int = 0
    runs: int = 0
    protocols: int = 0
    workloads: int = 0
    environments: int = 0
    implementations: int = 0
    #: Runs whose p20, median and p80 are the same number (too few samples).
    collapsed_quantiles: int = 0
    files_written: int = 0
    files_unchanged: int = 0
    problems: list[Problem] = attrs.field(factory=list)
    warnings: list[str] = attrs.field(factory=list)
    #: True when ``strict`` stopped at a bad row and nothing was written.
    stopped: bool = False

    @property
    def clean(self) -> bool:
        """No row was skipped."""
        return not self.problems

    def lines(self) -> list[str]:
        """The human summary, one fact per line."""
        facts = [
            ("rows read", self.rows_read),
            ("runs written", 0 if self.stopped else self.runs),
            ("protocols", self.protocols),
            ("workloads", self.workloads),
            ("environments", self.environments),
            ("implementations", self.implementations),
            ("rows skipped", self.rows_skipped),
            ("duplicate rows", self.duplicate_rows),
            ("collapsed quantiles", self.collapsed_quantiles),
            ("files written", self.files_written),
            ("files unchanged", self.files_unchanged),
        ]
        width = max(len(label) for label, _ in facts)
        return [f"{label.ljust(width)}  {value}" for label, value in facts]


@attrs.define
class Conversion:
    """Everything an import produces before writing: distinct runs and referenced records."""

    runs: list[MappedRun]
    records: dict[str, dict[str, Any]]
    summary: ImportSummary


Paths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def _as_list(paths: Paths) -> list[str | os.PathLike[str]]:
    """One path or several: a lone ``"file.csv"`` must not be read as a sequence of letters."""
    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    return list(paths)


def convert(
    paths: Paths,
    *,
    strict: bool = False,
    quality_flags: bool = False,
    catalog: Catalog | None = None,
    on_warning: Callable[[str], None] | None = None,
    on_problem: Callable[[Problem], None] | None = None,
    progress: Progress | None = None,
) -> Conversion:
    """Read and map every row of ``paths``; raises the SDK's IntakeError if a file is unreadable."""
    summary = ImportSummary()

    def warn(message: str) -> None:
        summary.warnings.append(message)
        if on_warning is not None:
            if progress is not None:
                progress.clear()
            on_warning(message)

    def problem(found: Problem, rows: int = 1) -> None:
        summary.problems.append(found)
        summary.rows_skipped += rows
        if on_problem is not None:
            if progress is not None:
                progress.clear()
            on_problem(found)

    files = [LigerCsv(os.fspath(path), read_text(path)) for path in _as_list(paths)]
    if progress is not None:
        progress.total = sum(csv_file.estimated_rows() for csv_file in files)
    mapper = Mapper(catalog, quality_flags=quality_flags, warn=Warnings(warn))
    runs: dict[str, MappedRun] = {}
    for csv_file in files:
        header_problem = csv_file.header_problem()
        if header_problem is not None:
            unreadable = csv_file.data_rows()
            summary.rows_read += unreadable
            problem(header_problem, rows=unreadable)
            if progress is not None:
                progress.advance(unreadable)
            if strict:
                summary.stopped = True
                break
            continue
        for item in csv_file.rows():
            if isinstance(item, Problem):
                summary.rows_read += 1
                problem(item)
            else:
                summary.rows_read += 1
                try:
                    mapped = mapper.map_row(item)
                except RowError as error:
                    problem(
                        Problem(str(error), code=error.code, source=item.source, line=item.line)
                    )
                else:
                    if mapped.digest in runs:
                        summary.duplicate_rows += 1
                    else:
                        runs[mapped.digest] = mapped
                        summary.collapsed_quantiles += mapped.collapsed
            if progress is not None:
                progress.advance()
            if strict and summary.problems:
                summary.stopped = True
                break
        if summary.stopped:
            break
    kinds = [record["kind"] for record in mapper.records.values()]
    summary.runs = len(runs)
    summary.protocols = kinds.count("BenchmarkProtocol")
    summary.workloads = kinds.count("Workload")
    summary.environments = kinds.count("ExecutionEnvironment")
    summary.implementations = kinds.count("Implementation")
    return Conversion(runs=list(runs.values()), records=mapper.records, summary=summary)


def import_csv(
    paths: Paths,
    out_dir: str | os.PathLike[str],
    *,
    layout: Layout = "bundles",
    strict: bool = False,
    quality_flags: bool = False,
    catalog: Catalog | None = None,
    on_warning: Callable[[str], None] | None = None,
    on_problem: Callable[[Problem], None] | None = None,
    progress_stream: TextIO | None = None,
) -> ImportSummary:
    """Import Liger benchmark CSVs into ``out_dir``; see :func:`convert` for the options.

    Raises the SDK's ``IntakeError`` (unreadable input) or
    :class:`~bench_adapters.liger.writer.OutputError` (unwritable output); bad rows are
    never raised, only reported in the summary. ``progress_stream``: where to draw a
    progress bar (drawn only if it is a terminal).
    """
    # No stream: no bar. A stream: a bar only if it is a terminal (Progress decides).
    enabled = None if progress_stream is not None else False
    stream = progress_stream
    with Progress(None, "liger: reading", stream=stream, enabled=enabled) as bar:
        conversion = convert(
            paths,
            strict=strict,
            quality_flags=quality_flags,
            catalog=catalog,
            on_warning=on_warning,
            on_problem=on_problem,
            progress=bar,
        )
    summary = conversion.summary
    if summary.stopped:
        return summary
    total = len(conversion.runs) if layout == "bundles" else 1
    with Progress(total, "liger: writing", stream=stream, enabled=enabled) as bar:
        result = write_records(
            conversion.runs, conversion.records, Path(out_dir), layout, advance=bar.advance
        )
    summary.files_written = len(result.written)
    summary.files_unchanged = len(result.unchanged)
    return summary
