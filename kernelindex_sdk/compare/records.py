"""Loading records for comparison: validated on the way in, indexed by digest.

A comparison is only as trustworthy as its inputs, so every item is validated exactly
as ``kernelindex validate`` would (same
:class:`~kernelindex_sdk.validating.validation.ValidationSession`, same problems); an
invalid item is reported and left out *whole* (a bundle with a bad protocol contributes
none of its records), never half-used. What stays is indexed:

* runs by their digest: the same run given twice (in a bundle directory and in a JSON
  Lines export of it) is one measurement, and must not count as a re-run;
* every other record by its digest, which is what runs reference. Records may come
  embedded in bundles or as separate files: a run finds its workload either way.

Digests come from the validation items themselves (computed once per record). The
one exception to checking: a store whose every add was checked under the checks this
process runs is trusted, its records indexed with the digests it holds
(:func:`load_records`; docs/store.md, "Trusting a store's checks").
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import attrs

from kernelindex_sdk.base.recordformat import KIND_KEY
from kernelindex_sdk.errors import IntakeError, Problem
from kernelindex_sdk.validating.validation import (
    Item,
    ValidationSession,
    records_of,
    unreadable_item,
)

if TYPE_CHECKING:
    from kernelindex_sdk.reading.kistore import RunFacts
    from kernelindex_sdk.reading.sources import Source

#: Called with each problem as soon as it is found (so a long load streams its errors).
ProblemSink = Callable[[Problem], None]
#: Called once per file read, e.g. to advance a progress bar.
Tick = Callable[[], None]
#: Told the source of each item read (what :func:`load_records` ticks files with).
SourceSeen = Callable[[str], None]


@attrs.frozen
class StoredRun:
    """A valid BenchmarkRun and where it was read."""

    digest: str
    record: Mapping[str, Any] = attrs.field(repr=False)
    source: str
    line: int | None
    pointer: str


@attrs.define
class RecordIndex:
    """Valid runs by digest, and every other valid record by digest.

    A run is a :class:`StoredRun` (its record), or, read from a trusted store with
    ``load_records(..., facts=True)``, its stored facts
    (:class:`~kernelindex_sdk.reading.kistore.RunFacts`): what resolving it needs, without
    the record (:meth:`kernelindex_sdk.compare.runs.Resolver.resolve` takes either).
    """

    runs: dict[str, StoredRun | RunFacts] = attrs.Factory(dict)
    records: dict[str, Mapping[str, Any]] = attrs.Factory(dict)
    #: Runs given more than once (same digest): counted, then ignored.
    duplicate_runs: int = 0
    #: Where valid runs go instead of :attr:`runs`, as they are read (None: held in
    #: :attr:`runs`). ``compare --against`` resolves each at once, so that no side's
    #: parsed run records are ever all held; the item's other records are indexed first.
    on_run: Callable[[StoredRun | RunFacts], None] | None = None
    #: The digests of the runs passed to :attr:`on_run` (to count repeats).
    streamed: set[str] = attrs.Factory(set)

    def lookup(self, digest: str, kind: str) -> Mapping[str, Any] | None:
        """The record with this digest, if one of this kind was given."""
        record = self.records.get(digest)
        if record is None or record.get(KIND_KEY) != kind:
            return None
        return record

    def run_record(self, digest: str) -> Mapping[str, Any] | None:
        """The record of an indexed run; None for one given by its stored facts
        (``load_records(..., facts=True)``) or not indexed."""
        run = self.runs.get(digest)
        return run.record if isinstance(run, StoredRun) else None

    def add(
        self,
        value: Any,
        pointer: str,
        digests: Iterable[str | None],
        where: Origin,
        members: list[tuple[str, Mapping[str, Any]]] | None = None,
    ) -> None:
        """Index every record of one valid item (digests in :func:`records_of` order;
        ``members``: its :func:`records_of`, when the caller has it already)."""
        runs: list[StoredRun] = []
        if members is None:
            members = records_of(value, pointer)
        for (at, record), record_digest in zip(members, digests, strict=False):
            if record_digest is None:  # pragma: no cover - a valid record has a spec
                continue
            if record.get(KIND_KEY) != "BenchmarkRun":
                self.records.setdefault(record_digest, record)
            elif record_digest in self.runs or record_digest in self.streamed:
                self.duplicate_runs += 1
            elif self.on_run is None:
                self.runs[record_digest] = StoredRun(
                    record_digest, record, where.source, where.line, at
                )
            else:
                self.streamed.add(record_digest)
                runs.append(StoredRun(record_digest, record, where.source, where.line, at))
        for run in runs:  # after the records they may reference
            assert self.on_run is not None
            self.on_run(run)

    def add_facts(self, runs: Iterable[RunFacts]) -> None:
        """Index runs given by their stored facts (after the records they reference),
        as :meth:`add` indexes runs: a digest seen before is a repeat."""
        indexed, streamed, on_run = self.runs, self.streamed, self.on_run
        for run in runs:
            digest = run.digest
            if digest in indexed or digest in streamed:
                self.duplicate_runs += 1
            elif on_run is None:
                indexed[digest] = run
            else:
                streamed.add(digest)
                on_run(run)


@attrs.frozen
class Origin:
    """Where an item was read."""

    source: str
    line: int | None


@attrs.define
class LoadResult:
    """What loading found: the index and the tally of what was left out."""

    index: RecordIndex
    #: Items (records or bundles) that failed validation and were skipped.
    invalid: int = 0
    #: Paths and documents that could not be read at all (missing file, malformed JSON, ...).
    unreadable: int = 0
    #: Items read (valid, invalid or unreadable).
    documents: int = 0


def load_records(
    paths: Iterable[str],
    *,
    session: ValidationSession | None = None,
    on_problem: ProblemSink | None = None,
    tick: Tick | None = None,
    on_read: Callable[[int], None] | None = None,
    index: RecordIndex | None = None,
    facts: bool = False,
) -> LoadResult:
    """Read, validate and index every record under ``paths`` (files, dirs, JSONL, ``-``).

    Reading and validation are the document pipeline's (:mod:`kernelindex_sdk.validating.pipeline`),
    exactly as ``kernelindex validate`` runs them. Never raises for bad input:
    unreadable documents and invalid items are counted and their problems passed to
    ``on_problem``. ``tick`` is called once per file read; ``on_read`` with the bytes
    read as they are read (a long JSON Lines file moves a bar line by line). ``index``:
    the index to fill (e.g. one whose :attr:`RecordIndex.on_run` takes the runs as they
    are read).

    A store named in ``paths`` whose every add was checked under the checks this
    process runs (:mod:`kernelindex_sdk.schema.fingerprint`) is trusted: its records are
    indexed with the digests ``add`` stored, without checking them again — they passed
    ``validate --strict-refs``'s checks, which are stricter than these, and a store is
    never updated in place. Any other store is checked like files. (Not with a
    ``strict_refs`` session, whose references span every path: that reads everything
    through one pipeline.) With ``facts``, such a store of the current format gives
    its runs as their stored facts (:meth:`RecordIndex.add_facts`), fetched in bulk,
    instead of as records parsed one by one: what ``compare`` resolves them to is the
    same (docs/store.md, "Trusting a store's checks").
    """
    from kernelindex_sdk.reading.sources import names_store

    if session is None:
        session = default_session()
    paths = [os.fspath(path) if isinstance(path, os.PathLike) else path for path in paths]
    strict = session.strict_refs
    named = [
        _Store(path) if not strict and isinstance(path, str) and names_store(path) else path
        for path in paths
    ]
    parts = _parts(named) if paths else [[]]
    return _load(parts, session, on_problem, _tick_per_file(tick), on_read, index, facts)


def load_walked(
    sources: Iterable[Source | IntakeError],
    *,
    on_problem: ProblemSink | None = None,
    on_read: Callable[[int], None] | None = None,
    index: RecordIndex | None = None,
    facts: bool = False,
) -> LoadResult:
    """:func:`load_records` of what a walk of the paths found
    (:func:`~kernelindex_sdk.reading.sources.expand`), without walking them again: each
    file (and standard input) is read through the pipeline by its name, each store as
    :func:`load_records` reads it, and what the walk could not read is counted
    unreadable in its place. Checked as ``validate`` checks, by the default session."""
    from kernelindex_sdk.reading.sources import STDIN, FileSource, StdinSource, StoreSource

    def named(source: Source | IntakeError) -> str | _Store | IntakeError:
        if isinstance(source, FileSource):
            return source.path
        if isinstance(source, StdinSource):
            return STDIN
        return _Store(source.path) if isinstance(source, StoreSource) else source

    parts = _parts(named(source) for source in sources)
    return _load(parts, default_session(), on_problem, _tick_per_file(None), on_read, index, facts)


class _Store(NamedTuple):
    """A store named among the paths (read by :func:`_load_facts` or :func:`_load_store`)."""

    path: str


#: What :func:`_load` reads, in order: paths for the pipeline, a store, or what could
#: not be walked.
_Part = list[str] | _Store | IntakeError


def _parts(named: Iterable[str | _Store | IntakeError]) -> list[_Part]:
    """What to read, in order: each run of paths in a row as one pipeline's, each store
    and each error in its place."""
    parts: list[_Part] = []
    for entry in named:
        if isinstance(entry, (_Store, IntakeError)):
            parts.append(entry)
        elif parts and isinstance(parts[-1], list):
            parts[-1].append(entry)
        else:
            parts.append([entry])
    return parts


def _load(
    parts: list[_Part],
    session: ValidationSession,
    on_problem: ProblemSink | None,
    tick_per_file: SourceSeen,
    on_read: Callable[[int], None] | None,
    index: RecordIndex | None,
    facts: bool,
) -> LoadResult:
    session.keep_values = True
    result = LoadResult(index if index is not None else RecordIndex())
    report: ProblemSink = on_problem or (lambda problem: None)
    for part in parts:
        if isinstance(part, list):
            _load_checked(part, session, result, report, tick_per_file, on_read)
        elif isinstance(part, IntakeError):
            item = unreadable_item(part)
            tick_per_file(item.source)
            _take(item, result, report)
        elif not (facts and _load_facts(part.path, result, report, tick_per_file)):
            _load_store(part.path, session, result, report, tick_per_file)
    return result


def _tick_per_file(tick: Tick | None) -> SourceSeen:
    """What each item read is told its source with: ``tick`` at the first item of each
    file (a no-op without ``tick``)."""
    last: list[str | None] = [None]

    def seen(source: str) -> None:
        if tick is not None and source != last[0]:
            tick()
        last[0] = source

    return seen


def _load_checked(
    paths: list[str],
    session: ValidationSession,
    result: LoadResult,
    report: ProblemSink,
    tick_per_file: SourceSeen,
    on_read: Callable[[int], None] | None,
) -> None:
    """Every item under ``paths`` through the pipeline, checked (:func:`load_records`)."""
    from kernelindex_sdk.validating.pipeline import Pipeline

    for item in Pipeline(paths, checker=session, on_read=on_read):
        tick_per_file(item.source)
        _take(item, result, report)


def _load_facts(
    path: str, result: LoadResult, report: ProblemSink, tick_per_file: SourceSeen
) -> bool:
    """A trusted store of the current format, its runs as their facts; False (nothing
    read) where it must be read as :func:`_load_store` reads it."""
    from kernelindex_sdk.reading.sources import read_store_facts
    from kernelindex_sdk.schema.fingerprint import checks_fingerprint

    stored = read_store_facts(path, checks_fingerprint())
    if stored is None:
        return False
    index = result.index
    for digest, record in stored.records:
        index.records.setdefault(digest, record)
    result.documents += stored.standalone
    with gc_paused():
        for chunk in stored.runs:
            if isinstance(chunk, IntakeError):
                _take(unreadable_item(chunk), result, report)
                continue
            for run in chunk:
                tick_per_file(run.shape.source)
            result.documents += len(chunk)
            index.add_facts(chunk)
    return True


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while runs are made in bulk: they are
    long-lived and none is garbage, yet each of its full passes walks every object made
    so far (a visible part of ``compare``'s time over a large store). Only
    around code that makes objects, not around checking (whose exceptions may leave
    cycles to collect)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load_store(
    path: str,
    session: ValidationSession,
    result: LoadResult,
    report: ProblemSink,
    tick_per_file: SourceSeen,
) -> None:
    """The documents of one store: trusted ones indexed as they are (with the digests
    the store holds), any other one checked as the pipeline checks it."""
    from kernelindex_sdk.reading.intake import Document
    from kernelindex_sdk.reading.kistore import CheckedDocument
    from kernelindex_sdk.reading.sources import read_trusting_store
    from kernelindex_sdk.schema.fingerprint import checks_fingerprint

    index = result.index
    for document in read_trusting_store(path, checks_fingerprint()):
        if isinstance(document, CheckedDocument):
            value, digests = document.document.value, document.digests
            tick_per_file(document.document.source)
            result.documents += 1
            members = records_of(value)
            named = [digests[at[1:] if at else ""] for at, _ in members]
            where = Origin(document.document.source, document.document.line)
            index.add(value, "", named, where, members)
            continue
        if isinstance(document, Document):
            items = session.check_document(
                document.value, source=document.source, line=document.line
            )
        else:
            items = [unreadable_item(document)]
        for item in items:
            tick_per_file(item.source)
            _take(item, result, report)


def _take(item: Item, result: LoadResult, report: ProblemSink) -> None:
    """Count one checked item, and index it if valid or report its problems."""
    result.documents += 1
    if item.unreadable:
        result.unreadable += 1
        for problem in item.problems:
            report(problem)
    elif item.valid:
        digests = (ref.digest for ref in item.records)
        result.index.add(item.value, item.pointer, digests, Origin(item.source, item.line))
    else:
        result.invalid += 1
        for problem in item.problems:
            report(problem)


def default_session() -> ValidationSession:
    """A session that checks exactly like ``validate``, with the SDK's default engine."""
    return ValidationSession(keep_values=True)
