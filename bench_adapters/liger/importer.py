"""Importing Liger CSVs: read and check every row, then write the good ones — or nothing.

Every row is mapped to records and checked with ``kernelindex validate
--strict-refs``'s own checks (:mod:`~bench_adapters.liger.checking`) before anything is
written. A row that fails is reported (file, line, column or pointer, what is wrong),
refused and counted; the others are written. A file that cannot be read stops the
import with the output untouched, and so does, with ``strict``, the first bad row.
The summary tells the caller everything the command line prints and needs for its
exit status.

Each run also gets the labels that let the export give its row back byte for byte
(:mod:`~bench_adapters.liger.spelling`). Writing happens under the output directory's
writer lock, so two imports into one folder never lose each other's records: the
second waits, then merges into (``jsonl``) or adds beside (``bundles``) what the first
wrote.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, BinaryIO, TextIO

import attrs

from bench_adapters.common.checking import one_per_entry
from bench_adapters.common.importing import (
    ImportCounts,
    count_records,
    finish,
    write_conversion,
)
from bench_adapters.common.provenance import parse_declarations
from bench_adapters.liger.catalog import Catalog
from bench_adapters.liger.checking import RecordChecker
from bench_adapters.liger.mapper import MappedRun, Mapper, Warnings
from bench_adapters.liger.source import (
    NOT_A_CSV,
    STDIN_NAME,
    LigerCsv,
    LigerRow,
    RowError,
    open_csv,
)
from bench_adapters.liger.spelling import Referenced, Speller
from bench_adapters.liger.writer import JSONL_NAME, Layout
from kernelindex_sdk.base.progress import Progress
from kernelindex_sdk.errors import Problem
from kernelindex_sdk.reading.sources import STDIN


@attrs.define
class ImportSummary(ImportCounts):
    """Counts and findings of one import (``stopped``: ``strict`` met a bad row)."""

    rows_read: int = 0
    #: Rows reported and not written (a bad cell, or records ``validate`` rejects).
    rows_refused: int = 0
    #: Rows whose run was identical to an earlier row's (written once).
    duplicate_rows: int = 0
    #: Runs whose p20, median and p80 are the same number (too few samples).
    collapsed_quantiles: int = 0

    def lines(self) -> list[str]:
        """The human summary, one fact per line."""
        return self.aligned(
            [
                ("rows read", self.rows_read),
                ("runs written", 0 if self.stopped else self.runs),
                *self.record_facts(),
                ("rows refused", self.rows_refused),
                ("duplicate rows", self.duplicate_rows),
                ("collapsed quantiles", self.collapsed_quantiles),
                *self.file_facts(),
            ]
        )


@attrs.define
class Conversion:
    """Everything an import writes: the runs of the rows that passed, the records they use."""

    runs: list[MappedRun]
    records: dict[str, dict[str, Any]]
    summary: ImportSummary


Paths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def _as_list(paths: Paths) -> list[str | os.PathLike[str]]:
    """One path or several: a lone ``"file.csv"`` must not be read as a sequence of letters."""
    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    return list(paths)


class RowSettler:
    """Gives a row's run its spelling labels, then checks the records it would be written with."""

    def __init__(self, catalog: Catalog) -> None:
        self._speller = Speller(catalog)
        self._checker = RecordChecker()

    def __call__(self, mapped: MappedRun, referenced: Referenced) -> list[Problem]:
        """Every problem ``validate`` would report for the row's records; [] to write it."""
        if mapped.text is not None:
            self._speller.spell(mapped.run, mapped.text, referenced)
        return self._checker.row_problems(mapped.run, referenced, mapped.source, mapped.line)


def convert(
    paths: Paths,
    *,
    strict: bool = False,
    quality_flags: bool = False,
    catalog: Catalog | None = None,
    on_warning: Callable[[str], None] | None = None,
    on_problem: Callable[[Problem], None] | None = None,
    progress: Progress | None = None,
    stdin: BinaryIO | None = None,
    provenance: bool = False,
    declarations: Sequence[str] = (),
) -> Conversion:
    """Read, map and check every row of ``paths`` (``-``: standard input); writes nothing.

    Raises the SDK's IntakeError if a file is unreadable. The result holds only what
    would be written: the runs of rows that passed, and the records those reference.
    ``provenance``: environments say where each field came from and which software
    versions are unknown (off by default: the published seeds carry none).
    ``declarations``: ``--set`` items declaring software versions (``torch=2.4.0``);
    they imply ``provenance`` (a declared value must say it was declared). A bad one
    raises :class:`~bench_adapters.common.provenance.DeclarationError`.
    """
    declared = parse_declarations(declarations).software
    summary = ImportSummary()

    def tell(callback: Callable[[Any], None] | None, value: Any) -> None:
        if callback is not None:
            if progress is not None:
                progress.clear()
            callback(value)

    def warn(message: str) -> None:
        summary.warnings.append(message)
        tell(on_warning, message)

    def refuse(found: Sequence[Problem], rows: int = 1) -> None:
        summary.problems.extend(found)
        summary.rows_refused += rows
        for item in found:
            tell(on_problem, item)

    sources = _as_list(paths)
    if progress is not None:
        progress.total = _total_bytes(sources)
    mapper = Mapper(
        catalog,
        quality_flags=quality_flags,
        warn=Warnings(warn),
        provenance=provenance,
        declared=declared,
    )
    reader = _RowReader(mapper, RowSettler(mapper.catalog), summary, warn, refuse, strict)
    done = 0  # bytes of the files before this one
    for path in sources:
        name = STDIN_NAME if os.fspath(path) == STDIN else os.fspath(path)
        stream = open_csv(path, stdin)
        csv_file = LigerCsv(name, stream)
        if progress is not None:
            # Bytes read so far, after every row: the bar moves while a file is read,
            # not once it is done (a single 50,000-row file drew nothing for seconds).
            reader.read_to = lambda offset, base=done: progress.update(base + offset)
        try:
            reader.read(csv_file)
        finally:
            if os.fspath(path) != STDIN:
                stream.close()
        done += csv_file.bytes_read
        if summary.stopped:
            break
    return _conversion(reader.runs, mapper.records, summary)


@attrs.define
class _RowReader:
    """Reads CSVs row by row into ``runs``: each row mapped, spelled and checked at once."""

    mapper: Mapper
    settle: RowSettler
    summary: ImportSummary
    warn: Callable[[str], None]
    refuse: Callable[[Sequence[Problem], int], None]
    strict: bool
    runs: dict[str, MappedRun] = attrs.field(factory=dict)
    #: Told the bytes of the file read so far after every row (a progress bar's).
    read_to: Callable[[int], None] | None = None

    def read(self, csv_file: LigerCsv) -> None:
        """Read one CSV; refused rows are reported through ``refuse``."""
        summary = self.summary
        header_problem = csv_file.header_problem()
        if header_problem is not None:
            # A JSON file has no rows to refuse: it is one problem, not thousands.
            unreadable = 0 if header_problem.code == NOT_A_CSV else csv_file.data_rows()
            summary.rows_read += unreadable
            self.refuse([header_problem], unreadable)
            summary.stopped = self.strict
            return
        read_to = self.read_to
        for item in csv_file.rows():
            if read_to is not None:
                read_to(csv_file.bytes_read)
            summary.rows_read += 1
            found = [item] if isinstance(item, Problem) else self._map_and_check(item)
            if found:
                self.refuse(found, 1)
            if self.strict and summary.problems:
                summary.stopped = True
                return

    def _map_and_check(self, row: LigerRow) -> list[Problem]:
        """Map one parsed row and check its records; its problems ([] when kept or a duplicate)."""
        try:
            mapped = self.mapper.map_row(row)
        except RowError as error:
            return [Problem(str(error), code=error.code, source=row.source, line=row.line)]
        earlier = self.runs.get(mapped.digest)
        if earlier is not None:
            self.summary.duplicate_rows += 1
            if earlier.text != mapped.text:
                self.warn(
                    f"{row.source}:{row.line}: the same run as {earlier.source}:{earlier.line}, "
                    "written differently: kept once, as the earlier row wrote it"
                )
            return []
        records = self.mapper.records
        referenced = (
            records[mapped.refs[0]],
            records[mapped.refs[1]],
            records[mapped.refs[2]],
            records[mapped.refs[3]],
        )
        found = self.settle(mapped, referenced)
        if not found:
            self.runs[mapped.digest] = mapped
            self.summary.collapsed_quantiles += mapped.collapsed
        return one_per_row(found)


#: A refused row is one line: its first problem, saying how many more there are.
one_per_row = one_per_entry


def _conversion(
    runs: dict[str, MappedRun], records: dict[str, dict[str, Any]], summary: ImportSummary
) -> Conversion:
    """The kept runs and only the records they reference (a refused row's records are not)."""
    used = {ref for mapped in runs.values() for ref in mapped.refs}
    kept = {value: record for value, record in records.items() if value in used}
    count_records(summary, kept.values(), list(runs.values()))
    return Conversion(runs=list(runs.values()), records=kept, summary=summary)


def _total_bytes(paths: Sequence[str | os.PathLike[str]]) -> int | None:
    total = 0
    for path in paths:
        if os.fspath(path) == STDIN:
            return None
        try:
            total += os.stat(path).st_size
        except OSError:
            return None
    return total


def import_csv(
    paths: Paths,
    out_dir: str | os.PathLike[str],
    *,
    layout: Layout = "bundles",
    strict: bool = False,
    quality_flags: bool = False,
    force: bool = False,
    catalog: Catalog | None = None,
    on_warning: Callable[[str], None] | None = None,
    on_problem: Callable[[Problem], None] | None = None,
    progress_stream: TextIO | None = None,
    stdin: BinaryIO | None = None,
    provenance: bool = False,
    declarations: Sequence[str] = (),
) -> ImportSummary:
    """Import Liger benchmark CSVs into ``out_dir``; see :func:`convert` for the options.

    Raises the SDK's ``IntakeError`` (unreadable input) or
    :class:`~bench_adapters.liger.writer.OutputError` (unwritable output, or
    :class:`~bench_adapters.liger.writer.ExistingOutput`: data already there that
    would be lost, and ``force`` not given); bad rows are never raised, only reported
    in the summary. ``progress_stream``: where to draw a progress bar (drawn only if it
    is a terminal).
    """
    # No stream: no bar. A stream: a bar only if it is a terminal (Progress decides).
    enabled = None if progress_stream is not None else False
    stream = progress_stream
    bar = Progress(None, "liger: reading bytes", stream=stream, enabled=enabled, unit="bytes")
    with bar:
        conversion = convert(
            paths,
            strict=strict,
            quality_flags=quality_flags,
            catalog=catalog,
            on_warning=on_warning,
            on_problem=on_problem,
            progress=bar,
            stdin=stdin,
            provenance=provenance,
            declarations=declarations,
        )
    summary = conversion.summary
    if summary.stopped:
        return summary

    def settle(existing: Mapping[str, dict[str, Any]]) -> None:
        _settle_against(conversion, existing, catalog, on_problem)

    written = write_conversion(
        conversion,
        out_dir,
        layout=layout,
        jsonl_name=JSONL_NAME,
        force=force,
        settle=settle,
        progress_stream=stream,
        label="liger: writing",
    )
    return finish(summary, written)


def _settle_against(
    conversion: Conversion,
    existing: Mapping[str, dict[str, Any]],
    catalog: Catalog | None,
    on_problem: Callable[[Problem], None] | None,
) -> None:
    """Spell and check again the runs whose records the stream already holds another copy of.

    The merge keeps the copy already there (its metadata may differ: another import's
    spelling, another title), so the runs that reference it must be exact against it.
    """
    settle: RowSettler | None = None
    kept = []
    summary = conversion.summary
    for mapped in conversion.runs:
        if mapped.digest in existing:
            summary.runs -= 1  # already there: the copy there is kept
            continue
        copies = [existing.get(ref, conversion.records[ref]) for ref in mapped.refs]
        if all(
            copy is conversion.records[ref] for copy, ref in zip(copies, mapped.refs, strict=True)
        ):
            kept.append(mapped)
            continue
        if settle is None:
            from bench_adapters.liger.catalog import load_catalog

            settle = RowSettler(catalog or load_catalog())
        found = one_per_row(settle(mapped, (copies[0], copies[1], copies[2], copies[3])))
        if found:
            summary.problems.extend(found)
            summary.rows_refused += 1
            for problem in found:
                if on_problem is not None:
                    on_problem(problem)
        else:
            kept.append(mapped)
    conversion.runs = kept
    used = {ref for mapped in kept for ref in mapped.refs}
    conversion.records = {k: v for k, v in conversion.records.items() if k in used}
