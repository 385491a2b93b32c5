"""The import path every source shares: map → check → write.

An importer reads its source and *maps* each entry (a CSV row, an nvbench state, a
KernelBench problem) to a run plus the records it references, each referenced record
built once and kept by digest (:meth:`Collector.keep`). The :class:`Collector`
*checks* each mapped entry with ``validate --strict-refs``'s own checks
(:mod:`~bench_adapters.common.checking`) and keeps it, or refuses it with one line
naming the file, the place and what is wrong; an entry that cannot be mapped at all
is refused the same way (:meth:`Collector.refuse`). Nothing is written until every
entry is checked. :func:`write_conversion` then *writes* what was kept as one atomic
batch under the output directory's writer lock (:mod:`~bench_adapters.common.writer`),
merging into the stream already there (``jsonl``) or adding beside it (``bundles``),
so nothing earlier is lost.

The Liger importer uses the checker, :func:`write_conversion` and the writer; its row
reader keeps its own summary (rows, collapsed quantiles, spelling labels). The nvbench
and KernelBench importers use all of this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO, TypeVar

import attrs

from bench_adapters.common.checking import RecordChecker, one_per_entry
from bench_adapters.common.writer import (
    ExistingOutput,
    ExistingStream,
    Layout,
    WriteResult,
    WrittenRun,
    output_lock,
    read_stream,
    write_records,
    write_steps,
)
from kernelindex_sdk.base import recordformat
from kernelindex_sdk.base.progress import Progress
from kernelindex_sdk.canonical import digest
from kernelindex_sdk.errors import KernelIndexError, Problem

SummaryT = TypeVar("SummaryT", bound="ImportCounts")

#: The most entries (states, problems) one import reads, all its files together. Every
#: entry is held in memory, mapped and checked, until the write — about 10 KB each, its
#: records and its line — so a file of a million tiny entries, well under the size limit
#: of one document, would take gigabytes. A file that would pass the limit is refused
#: whole, in one line, before any of its entries is mapped (exit 2, nothing written).
MAX_ENTRIES = 100_000


@attrs.frozen
class Entry:
    """One mapped entry: its run, the run's digest, the four digests it references, and
    where the entry is in its source (for the problems of the records it becomes)."""

    run: dict[str, Any]
    digest: str
    #: protocol, workload, environment, implementation
    refs: tuple[str, str, str, str]
    source: str | None = None
    line: int | None = None
    #: JSON Pointer to the entry in its source file (``/benchmarks/2/states/5``).
    pointer: str | None = None


@attrs.define
class ImportCounts:
    """What every import's summary counts: records written, files, findings."""

    runs: int = 0
    protocols: int = 0
    workloads: int = 0
    environments: int = 0
    implementations: int = 0
    files_written: int = 0
    files_unchanged: int = 0
    #: Records of the stream already in the output, kept in the merge (``jsonl``).
    records_kept: int = 0
    #: Entries of the input kept (before the merge): none means nothing was imported,
    #: and nothing is written (see :func:`write_conversion`).
    kept: int = 0
    problems: list[Problem] = attrs.field(factory=list)
    warnings: list[str] = attrs.field(factory=list)
    #: True when ``strict`` stopped at a bad entry and nothing was written.
    stopped: bool = False

    @property
    def clean(self) -> bool:
        """No entry was refused."""
        return not self.problems

    def record_facts(self) -> list[tuple[str, object]]:
        """The referenced records written, by kind: lines of every summary."""
        return [
            ("protocols", self.protocols),
            ("workloads", self.workloads),
            ("environments", self.environments),
            ("implementations", self.implementations),
        ]

    def file_facts(self) -> list[tuple[str, object]]:
        """What became of the output: the summaries' last lines."""
        return [
            ("records kept", self.records_kept),
            ("files written", self.files_written),
            ("files unchanged", self.files_unchanged),
        ]

    @staticmethod
    def aligned(facts: Sequence[tuple[str, object]]) -> list[str]:
        """``label  value`` lines, the values in one column."""
        width = max(len(label) for label, _ in facts)
        return [f"{label.ljust(width)}  {value}" for label, value in facts]


@attrs.define
class Summary(ImportCounts):
    """Counts and findings of one import; ``noun`` names what was read (states, entries)."""

    noun: str = "entries"
    read: int = 0
    #: Entries reported and not written (unreadable, or records ``validate`` rejects).
    refused: int = 0
    #: Entries whose run was identical to an earlier one's (written once).
    duplicates: int = 0
    #: Runs written by status (passed, failed, skipped, ...).
    statuses: dict[str, int] = attrs.field(factory=dict)
    #: Quality flag → how many runs written carry it.
    flags: dict[str, int] = attrs.field(factory=dict)

    def lines(self) -> list[str]:
        """The human summary, one fact per line."""
        return self.aligned(
            [
                (f"{self.noun} read", self.read),
                ("runs written", 0 if self.stopped else self.runs),
                *((f"  {status}", count) for status, count in sorted(self.statuses.items())),
                *self.record_facts(),
                (f"{self.noun} refused", self.refused),
                (f"duplicate {self.noun}", self.duplicates),
                *((f"flagged {flag}", count) for flag, count in sorted(self.flags.items())),
                *self.file_facts(),
            ]
        )


@attrs.define
class Conversion:
    """Everything an import writes: the kept runs, and only the records they reference."""

    runs: list[Entry]
    records: dict[str, dict[str, Any]]
    summary: Summary


class Collector:
    """The check step: keeps referenced records by digest, checks each entry, keeps the good.

    ``on_problem`` and ``on_warning`` hear each refused entry (one line) and each
    warning (once per key) as it happens; ``strict`` stops at the first refused entry
    (``summary.stopped``: the caller writes nothing).
    """

    def __init__(
        self,
        summary: Summary,
        *,
        on_problem: Callable[[Problem], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
        strict: bool = False,
        checker: RecordChecker | None = None,
    ) -> None:
        self.summary = summary
        self.records: dict[str, dict[str, Any]] = {}
        self.runs: dict[str, Entry] = {}
        self._on_problem = on_problem
        self._on_warning = on_warning
        self._strict = strict
        self._checker = checker or RecordChecker()
        self._warned: set[tuple[str, ...]] = set()
        self._expected = 0

    def expect(self, count: int, source: str) -> None:
        """Before a file's entries are mapped: its ``count`` entries, with those of the
        files before it, must not pass :data:`MAX_ENTRIES`; else the file is refused,
        whole, in one line (:class:`UnreadableSource`: the import stops, nothing
        written), before memory grows with them."""
        self._expected += count
        if self._expected <= MAX_ENTRIES:
            return
        noun = self.summary.noun
        before = self._expected - count
        earlier = f" ({self._expected:,} with the files before it)" if before else ""
        raise UnreadableSource(
            Problem(
                f"{count:,} {noun} in this file{earlier}: more than {MAX_ENTRIES:,} "
                f"{noun} in one import, the limit (each is held in memory until the "
                "write): not read; import the files in parts",
                code="too-many-entries",
                source=source,
            )
        )

    def keep(self, record: dict[str, Any]) -> str:
        """A referenced record's digest; the first copy of each digest is kept."""
        value = digest(record)
        self.records.setdefault(value, record)
        return value

    def warn(self, message: str, key: tuple[str, ...] | None = None) -> None:
        """Tell the caller once per ``key`` (once per message without one)."""
        seen = key if key is not None else (message,)
        if seen in self._warned:
            return
        self._warned.add(seen)
        self.summary.warnings.append(message)
        if self._on_warning is not None:
            self._on_warning(message)

    def refuse(self, problems: Sequence[Problem]) -> None:
        """Refuse one entry: its first problem is reported, saying how many more there are."""
        found = one_per_entry(list(problems))
        self.summary.problems.extend(found)
        self.summary.refused += 1
        if self._on_problem is not None:
            for problem in found:
                self._on_problem(problem)
        if self._strict:
            self.summary.stopped = True

    def attempt(self, source: str, pointer: str, build: Callable[[], Entry]) -> None:
        """Read one entry: map it (``build``) and check it; an entry that cannot be
        mapped — an :class:`EntryError`, or values RFC 8785 cannot write — is refused in
        one line at ``pointer`` in ``source``."""
        self.summary.read += 1
        try:
            entry = build()
        except EntryError as error:
            self.refuse([error.problem(source)])
        except (ValueError, TypeError, RecursionError) as error:
            message = f"the records this entry becomes cannot be canonicalized (RFC 8785): {error}"
            self.refuse([EntryError(message, pointer, "not-canonicalizable").problem(source)])
        else:
            self.add(entry)

    def refuse_read(self, problem: Problem) -> None:
        """Read one entry that is refused as it stands (not an object, ...)."""
        self.summary.read += 1
        self.refuse([problem])

    def add(self, entry: Entry) -> bool:
        """Check an entry and keep it (True), or refuse it (False). A run identical to one
        already kept is counted as a duplicate and written once."""
        if entry.digest in self.runs:
            self.summary.duplicates += 1
            return True
        referenced = [self.records[ref] for ref in entry.refs]
        found = self._checker.entry_problems(
            entry.run, referenced, entry.source, entry.line, entry.pointer
        )
        if found:
            self.refuse(found)
            return False
        self.runs[entry.digest] = entry
        return True

    def conversion(self) -> Conversion:
        """The kept runs and only the records they reference (a refused entry's are not)."""
        summary = self.summary
        runs = list(self.runs.values())
        used = {ref for entry in runs for ref in entry.refs}
        kept = {value: record for value, record in self.records.items() if value in used}
        count_records(summary, kept.values(), runs)
        for entry in runs:
            spec = entry.run[recordformat.SPEC_KEY]
            status = spec[recordformat.STATUS_KEY]
            summary.statuses[status] = summary.statuses.get(status, 0) + 1
            for flag in spec.get(recordformat.QUALITY_FLAGS_KEY, ()):
                summary.flags[flag] = summary.flags.get(flag, 0) + 1
        return Conversion(runs=runs, records=kept, summary=summary)


class _Counts(Protocol):
    runs: int
    kept: int
    protocols: int
    workloads: int
    environments: int
    implementations: int


def count_records(summary: _Counts, records: Any, runs: Sequence[object]) -> None:
    """Fill a summary's counts of runs and referenced records by kind."""
    kinds = [record[recordformat.KIND_KEY] for record in records]
    summary.runs = summary.kept = len(runs)
    summary.protocols = kinds.count("BenchmarkProtocol")
    summary.workloads = kinds.count("Workload")
    summary.environments = kinds.count("ExecutionEnvironment")
    summary.implementations = kinds.count("Implementation")


class Writable(Protocol):
    """What :func:`write_conversion` writes: runs and the records they reference."""

    runs: Any
    records: Any


@attrs.frozen
class Written:
    """What a write did, and how many records of the stream already there were kept."""

    result: WriteResult
    records_kept: int


def write_conversion(
    conversion: Writable,
    out_dir: str | os.PathLike[str],
    *,
    layout: Layout,
    jsonl_name: str,
    force: bool = False,
    settle: Callable[[Mapping[str, dict[str, Any]]], None] | None = None,
    progress_stream: TextIO | None = None,
    label: str = "writing",
) -> Written:
    """The write step: ``conversion`` under ``out_dir``'s writer lock, as one batch.

    ``jsonl``: the stream already there is read and checked first (a broken one raises
    :class:`~bench_adapters.common.writer.ExistingOutput`, or with ``force`` is
    replaced), ``settle`` may re-check the runs against the copies it holds, and
    everything is written back merged. ``bundles``: a file of the same name with other
    content is replaced only with ``force``. A progress bar is drawn on
    ``progress_stream`` when it is a terminal.

    A conversion that kept no run writes nothing at all — no file, no folder, no lock
    taken: an import that kept nothing is not a write (the command line says so, exit 1).
    """
    if not conversion.runs:
        return Written(result=WriteResult(), records_kept=0)
    # No stream: no bar. A stream: a bar only if it is a terminal (Progress decides).
    enabled = None if progress_stream is not None else False
    with output_lock(out_dir) as directory:
        existing = _existing_stream(directory, layout, force, jsonl_name)
        if existing is not None and settle is not None:
            settle(existing.first)
        runs: list[WrittenRun] = list(conversion.runs)
        total = write_steps(len(runs), layout)
        with Progress(
            total, label, stream=progress_stream, enabled=enabled, show_counts=False
        ) as bar:
            result = write_records(
                runs,
                conversion.records,
                directory,
                layout,
                jsonl_name=jsonl_name,
                advance=bar.advance,
                force=force,
                existing=existing,
            )
    return Written(result=result, records_kept=len(existing.lines) if existing else 0)


def _existing_stream(
    directory: Path, layout: Layout, force: bool, jsonl_name: str
) -> ExistingStream | None:
    """The stream to merge into (jsonl), or None; with ``force`` a broken one is replaced."""
    if layout != "jsonl":
        return None
    try:
        return read_stream(directory, jsonl_name)
    except ExistingOutput:
        if force:
            return None
        raise


def finish(summary: SummaryT, written: Written) -> SummaryT:
    """The summary with what the write did."""
    summary.records_kept = written.records_kept
    summary.files_written = len(written.result.written)
    summary.files_unchanged = len(written.result.unchanged)
    return summary


class EntryError(Exception):
    """One entry cannot be mapped: refused with this message, at ``pointer`` in its file."""

    def __init__(self, message: str, pointer: str = "", code: str = "bad-entry") -> None:
        super().__init__(message)
        self.message = message
        self.pointer = pointer
        self.code = code

    def problem(self, source: str) -> Problem:
        """The one line this entry is refused with."""
        return Problem(self.message, code=self.code, pointer=self.pointer, source=source)


class UnreadableSource(KernelIndexError):
    """A file that is JSON but not the importer's format, or a version of it not read.

    Like an unreadable file, it stops the import before anything is written (exit 2).
    """

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


Paths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def as_list(paths: Paths) -> list[str | os.PathLike[str]]:
    """One path or several: a lone ``"file.json"`` is not a sequence of letters."""
    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    return list(paths)


@attrs.frozen
class SourceImport:
    """One source's importer: what it reads (``noun``), where ``jsonl`` goes, and how
    to map (``prepare(paths, declarations)`` checks the declarations at once — a bad one
    raises — and returns the ``map_all(collector)`` to run)."""

    noun: str
    jsonl_name: str
    prepare: Callable[[Paths, Any], Callable[[Collector], None]]

    def convert(
        self,
        paths: Paths,
        *,
        declarations: Any = (),
        strict: bool = False,
        on_problem: Callable[[Problem], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> Conversion:
        """Read, map and check every entry of ``paths``; writes nothing.

        ``declarations``: ``--set`` items (``cuda=12.4``). Raises the SDK's IntakeError,
        :class:`UnreadableSource` or
        :class:`~bench_adapters.common.provenance.DeclarationError`.
        """
        summary = Summary(noun=self.noun)
        collector = Collector(summary, on_problem=on_problem, on_warning=on_warning, strict=strict)
        self.prepare(paths, declarations)(collector)
        return collector.conversion()

    def import_into(
        self,
        paths: Paths,
        out_dir: str | os.PathLike[str],
        *,
        layout: Layout = "bundles",
        declarations: Any = (),
        strict: bool = False,
        force: bool = False,
        on_problem: Callable[[Problem], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
        progress_stream: TextIO | None = None,
    ) -> Summary:
        """The whole import path: :meth:`convert`, then :func:`write_conversion` into
        ``out_dir`` (``DIR/<jsonl_name>`` with ``jsonl``).

        Nothing is written when a file cannot be read (raised), when ``strict`` met a bad
        entry (``summary.stopped``), when no entry was kept (``summary.kept`` is 0: an
        input with no entries, or every entry refused), or when the output would lose
        data already there (:class:`~bench_adapters.common.writer.ExistingOutput`, raised).
        """
        conversion = self.convert(
            paths,
            declarations=declarations,
            strict=strict,
            on_problem=on_problem,
            on_warning=on_warning,
        )
        summary = conversion.summary
        if summary.stopped:
            return summary
        written = write_conversion(
            conversion,
            out_dir,
            layout=layout,
            jsonl_name=self.jsonl_name,
            force=force,
            progress_stream=progress_stream,
            label=f"{self.jsonl_name.partition('.')[0]}: writing",
        )
        return finish(summary, written)
