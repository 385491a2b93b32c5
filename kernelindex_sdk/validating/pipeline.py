"""The document pipeline: sources → intake → split → check → tally, in input order.

One loop serves ``kernelindex validate``, ``digest`` and ``compare`` and the library
alike, so every one of them reads, counts and reports input the same way::

    run = Pipeline(["records/", "runs.jsonl"], strict_refs=True, jobs=0)
    for item in run:                    # kernelindex_sdk.validating.validation.Item, in input order
        for problem in item.problems:
            print(problem)              # file[:line]: pointer: message, one line
    for problem in run.late:            # references resolved only at the end
        print(problem)
    print(run.tally.summary())          # "3 valid, 1 invalid in 4 files"
    exit_status = run.tally.exit_status()

**Reading** is :mod:`kernelindex_sdk.reading.sources` (one walking rule; special files,
oversized documents and unreadable directories are problems, never skipped).
**Checking** is a *checker* (:class:`Checker`, and what one may do besides:
:class:`QuickChecker`, :class:`PayloadChecker`):
:class:`~kernelindex_sdk.validating.validation.ValidationSession` by default,
:class:`~kernelindex_sdk.validating.digesting.DigestSession` to list digests.
**Counting**: every item is valid, invalid or unreadable; a path or document that
could not be read is an item too (``Item.unreadable``), so nothing is ever dropped.

**Parallel runs** (``jobs`` > 1) go through the one executor,
:func:`kernelindex_sdk.base.parallel.ordered_map`: whole files in batches, and large
JSON Lines files as byte ranges that each worker reads for itself (a line belongs to
the range it starts in, so no byte is read twice and nothing is sent through pipes
but results). Workers number lines from the start of their range; the parent, taking
results in order, adds the lines of the ranges before. So the items, the problems,
the tally and the late problems are those of ``jobs=1``, for every ``jobs``.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, runtime_checkable

from kernelindex_sdk.base.wording import counted
from kernelindex_sdk.errors import IntakeError, Problem, UnreadableFile
from kernelindex_sdk.reading.intake import Document
from kernelindex_sdk.reading.sources import (
    LINE_BUFFER_BYTES,
    MAX_DOCUMENT_BYTES,
    STDIN,
    FileSource,
    Source,
    StoreSource,
    bounded_lines,
    expand,
    open_regular,
    read,
)
from kernelindex_sdk.validating.validation import (
    Item,
    ValidationSession,
    shifted_pending,
    unreadable_item,
)

# JSON Lines framing and the tail memo are imported where they are needed: a run that
# reads one JSON file loads neither.
if TYPE_CHECKING:
    from kernelindex_sdk.reading.intake.jsonl import OverlongLine
    from kernelindex_sdk.reading.sharedtails import SharedTail, TailMemo, Take

__all__ = [
    "AUTO_MIN_FILES",
    "AUTO_MIN_JSONL_BYTES",
    "CHUNK_BYTES",
    "Checker",
    "FilesTask",
    "PayloadChecker",
    "Pipeline",
    "QuickChecker",
    "RangeTask",
    "Tally",
    "TaskResult",
    "describe",
]

#: JSON Lines files at least twice this size are cut into ranges of this many bytes.
CHUNK_BYTES = 1 << 20
#: Whole files per task.
BATCH_FILES = 32
#: ``jobs=None`` runs on every core for inputs at least this large, else in-process:
#: below, starting workers costs more than they save.
AUTO_MIN_FILES = 500
AUTO_MIN_JSONL_BYTES = 16 << 20
#: First bytes of a byte-order mark or of UTF-16/32 text: such a file is read whole.
_ODD_START = (b"\xef", b"\xff", b"\xfe", b"\x00")


class Checker(Protocol):
    """What the pipeline runs on each document (a :class:`ValidationSession`, a
    :class:`~kernelindex_sdk.validating.digesting.DigestSession`, a checker of your own).
    What a checker may do besides is a protocol of its own: :class:`QuickChecker`,
    :class:`PayloadChecker`."""

    #: Items that passed when checked but failed in :meth:`finish`.
    invalidated: int

    def prepare(self) -> None:
        """Do costly set-up now, before workers are forked (so they inherit it)."""

    def check_document(
        self, value: Any, *, source: str = ..., line: int | None = ...
    ) -> list[Item]:
        """Check every item of one parsed document."""
        ...

    def passes(self, value: Any, written: bytes | None = None) -> bool:
        """True only if :meth:`check_document` would make ``value`` one item with no
        problem, which a run that reports only problems then need not build; False
        when unsure (the document is then checked in full: a checker that needs every
        item always answers False). ``written`` is the document's
        :attr:`~kernelindex_sdk.reading.intake.Document.written`."""
        ...

    def take_references(self) -> tuple[list[tuple[str, str]], list[Any]]:
        """Hand over what was gathered for :meth:`finish` since the last call."""
        ...

    def add_references(self, known: Iterable[tuple[str, str]], pending: Iterable[Any]) -> None:
        """Merge what another checker's :meth:`take_references` handed over."""

    def finish(self) -> list[Problem]:
        """Problems found only once every document was seen."""
        ...


@runtime_checkable
class QuickChecker(Checker, Protocol):
    """A checker whose quick pass also answers for JSON Lines lines read with a shared
    tail (a :class:`ValidationSession`). Where only problems are reported, the pipeline
    reads JSON Lines through a :class:`~kernelindex_sdk.reading.sharedtails.TailMemo`
    keyed by its :attr:`shared_tail_keys`, and asks :meth:`passes_shared` (instead of
    :meth:`passes`) of each document read with a tail."""

    @property
    def shared_tail_keys(self) -> tuple[str, ...]:
        """The members a line's shared tail starts with (none: no memo)."""
        ...

    def passes_shared(self, value: Any, shared: SharedTail) -> bool:
        """:meth:`passes` for a value whose last members are ``shared``'s, or for its
        head alone (the members before the tail, as the memo reads them)."""
        ...


@runtime_checkable
class PayloadChecker(Checker, Protocol):
    """A checker that makes something of every document beside its items (``kernelindex
    store add`` stages the records in the worker that checked them), so that valid items
    need not travel back."""

    def take_payload(self) -> Any:
        """What this process made since the last call: called in a worker at the end of
        each task."""
        ...

    def add_payload(self, payload: Any, offset: int) -> None:
        """A worker's :meth:`take_payload`, given in the parent in input order with the
        lines of the ranges before (``offset``: add it to the worker's line numbers)."""


class Tally:
    """Counts for the summary line and the exit status. (A plain class with the
    behaviour of a slotted dataclass — equality by the counts, its ``repr``, no hash —
    without compiling those methods at import: tests/test_frozenvalue.py.)"""

    __match_args__ = __slots__ = ("valid", "invalid", "unreadable", "files")
    valid: int
    invalid: int
    #: Paths and documents that could not be read.
    unreadable: int
    #: Regular files (and standard input) read.
    files: int

    def __init__(self, valid: int = 0, invalid: int = 0, unreadable: int = 0, files: int = 0):
        self.valid = valid
        self.invalid = invalid
        self.unreadable = unreadable
        self.files = files

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return (self.valid, self.invalid, self.unreadable, self.files) == (
                other.valid,
                other.invalid,
                other.unreadable,
                other.files,
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(valid={self.valid!r}, invalid={self.invalid!r},"
            f" unreadable={self.unreadable!r}, files={self.files!r})"
        )

    def count(self, item: Item) -> None:
        if item.unreadable:
            self.unreadable += 1
        elif item.problems:
            self.invalid += 1
        else:
            self.valid += 1

    def summary(self) -> str:
        """``3 valid, 1 invalid in 4 files`` (``, 2 unreadable`` when any were)."""
        unreadable = f", {self.unreadable} unreadable" if self.unreadable else ""
        files = counted(self.files, "file")
        return f"{self.valid} valid, {self.invalid} invalid{unreadable} in {files}"

    def exit_status(self) -> int:
        """2 when anything could not be read or nothing was found, 1 when anything is
        invalid, else 0."""
        if self.unreadable or not self.files:
            return 2
        return 1 if self.invalid else 0


# --------------------------------------------------------------------------- tasks


# Tasks and their results are named tuples rather than frozen dataclasses: they
# pickle to and from workers alike, and creating the classes at import costs far less
# (a dataclass compiles its methods from source), which is part of every
# ``validate``'s start-up.


class FilesTask(NamedTuple):
    """Whole files to read, with the unreadable paths between them (in input order)."""

    entries: tuple[FileSource | StoreSource | Item, ...]


class RangeTask(NamedTuple):
    """The lines of a JSON Lines file that start in bytes ``[start, end)``."""

    path: str
    start: int
    #: None: to the end of the file, however long it has grown.
    end: int | None

    @property
    def last(self) -> bool:
        return self.end is None


Task = FilesTask | RangeTask


class TaskResult(NamedTuple):
    """What a worker sends back: counts, the items to report, and what merging needs."""

    task: Task
    items: tuple[Item, ...]
    tally: Tally
    #: Range tasks: the lines that started in the range; whether any held anything;
    #: whether reading failed (later ranges of the file are then not reported).
    lines: int = 0
    seen_any: bool = False
    read_failed: bool = False
    known: tuple[tuple[str, str], ...] = ()
    pending: tuple[Any, ...] = ()
    #: What the checker's ``take_payload`` made of the task (None: it has none).
    payload: Any = None


def describe(task: Task) -> str:
    """A task in a :class:`~kernelindex_sdk.base.parallel.WorkerFailed` message."""
    if isinstance(task, RangeTask):
        span = (
            f"from byte {task.start} to the end"
            if task.end is None
            else (f"bytes {task.start}-{task.end - 1}")
        )
        return f"{task.path} ({span})"
    names = [e.source if isinstance(e, Item) else e.path for e in task.entries]
    return names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more paths"


# --------------------------------------------------------------------------- pipeline


class Pipeline:
    """Read, check and count every document under ``paths``; iterate for the items.

    ``report="problems"`` yields only items with problems (the tally still counts
    every item): what a report of a large input needs, and much less to send back
    from workers. ``jobs``: 1 runs in this process, ``n`` on ``n`` workers, 0 on one
    per core, None on one per core only for large inputs (:data:`AUTO_MIN_FILES`,
    :data:`AUTO_MIN_JSONL_BYTES`); never more workers than two per core or than there
    are tasks (:func:`~kernelindex_sdk.base.parallel.planned_workers`), and ``jobs`` above
    :data:`~kernelindex_sdk.base.parallel.MAX_JOBS` is a ``ValueError``. Standard input
    (``-``) is always read in this process, so an invocation that names it runs with
    ``jobs=1``.

    A pipeline runs once. After the iteration ends, :attr:`late` holds the problems
    found only at the end (``strict_refs``) and :attr:`tally` the final counts.
    ``refs_from``: paths whose records references may also resolve against, without
    being read as inputs (:meth:`_referable`). ``on_read``: told the bytes of input
    read as they are read (in this process), to move a progress bar.
    """

    def __init__(
        self,
        paths: Sequence[str],
        *,
        checker: Checker | None = None,
        strict_refs: bool = False,
        jobs: int | None = 1,
        report: Literal["all", "problems"] = "all",
        keep_values: bool = False,
        stdin: typing.BinaryIO | None = None,
        max_document_bytes: int = MAX_DOCUMENT_BYTES,
        strict_numbers: bool = False,
        refs_from: Sequence[str] = (),
        on_read: typing.Callable[[int], None] | None = None,
    ) -> None:
        if isinstance(paths, (str, bytes)):
            raise TypeError("paths must be a sequence of path strings, not one string")
        if isinstance(refs_from, (str, bytes)):
            raise TypeError("refs_from must be a sequence of path strings, not one string")
        if report not in ("all", "problems"):
            raise ValueError(f"report must be 'all' or 'problems', not {report!r}")
        if jobs is not None:
            from kernelindex_sdk.base.parallel import check_jobs

            check_jobs(jobs)
        self.paths = tuple(paths)
        self.checker: Checker = checker or ValidationSession(
            strict_refs=strict_refs, strict_json=True, keep_values=keep_values
        )
        self.jobs = jobs
        self.report = report
        self.stdin = stdin
        self.max_document_bytes = max_document_bytes
        #: Refuse number literals whose text and value disagree (``--strict-numbers``).
        self.strict_numbers = strict_numbers
        #: Where else references may resolve (``--refs-from``): see :meth:`_referable`.
        self.refs_from = tuple(refs_from)
        #: Told the bytes of input read as they are read, for a progress bar (runs in
        #: this process only; see :func:`~kernelindex_sdk.reading.sources.read`).
        self.on_read = on_read
        self.tally = Tally()
        #: Problems found once everything was read (unresolved references).
        self.late: tuple[Problem, ...] = ()
        #: The worker count the run used (known once iteration starts).
        self.jobs_used: int | None = None
        self._started = False
        #: Reads JSON Lines lines for the quick pass (:meth:`_tail_memo`), in this
        #: process or in each worker (one each), once :meth:`_memo` has made it.
        self._tails: TailMemo | None = None
        self._tails_made = False
        #: The checker when it makes payloads (:class:`PayloadChecker`), for parallel runs.
        self._payloads: PayloadChecker | None = None

    def __iter__(self) -> Iterator[Item]:
        if self._started:
            raise RuntimeError("a Pipeline runs once; make a new one")
        self._started = True
        jobs, sources = self._plan()
        self.jobs_used = jobs
        if jobs > 1:
            yield from self._parallel(sources, jobs)
        else:
            yield from self._in_process(sources)
        if self.refs_from:
            self.checker.add_references(self._referable(), [])
        late = self.checker.finish()
        invalidated = self.checker.invalidated
        self.tally.invalid += invalidated
        self.tally.valid -= invalidated
        self.late = tuple(late)

    def _referable(self) -> list[tuple[str, str]]:
        """``(digest, kind)`` of every record under :attr:`refs_from`, for references
        to resolve against — records a commit does not touch, which a pre-commit hook
        is not given (``--refs-from``). They are digested, not validated, and never
        reported or counted: they are not inputs. What cannot be read there (or holds
        no record) is passed over; the inputs' own records, added first, win.
        """
        from kernelindex_sdk.validating.digesting import DigestSession

        known: list[tuple[str, str]] = []
        found = Pipeline(
            self.refs_from,
            checker=DigestSession(),
            jobs=self.jobs,
            max_document_bytes=self.max_document_bytes,
        )
        for item in found:
            known.extend((ref.digest, ref.kind) for ref in item.records if ref.digest)
        return known

    def _tail_memo(self) -> TailMemo | None:
        """A :class:`~kernelindex_sdk.reading.sharedtails.TailMemo` for the JSON Lines lines,
        where only problems are reported and the checker's quick pass takes documents
        with shared tails (a :class:`QuickChecker`): the documents are checked and
        dropped, so sharing their last members changes nothing but the time. None
        otherwise."""
        checker = self.checker
        if self.report == "all" or not isinstance(checker, QuickChecker):
            return None
        keys = checker.shared_tail_keys
        if not keys:
            return None
        from kernelindex_sdk.reading.sharedtails import TailMemo

        return TailMemo(keys)

    def _memo(self, source: Source | FilesTask | RangeTask) -> TailMemo | None:
        """The tail memo to read ``source``'s lines with: :meth:`_tail_memo`, made at the
        first source that may hold JSON Lines and kept for the rest of the run (in a
        worker, for the rest of its tasks); None for a source that holds none."""
        if isinstance(source, FilesTask):
            if not any(isinstance(entry, FileSource) and entry.jsonl for entry in source.entries):
                return None
        elif not isinstance(source, RangeTask) and (
            isinstance(source, StoreSource) or source.jsonl is False
        ):
            return None
        if not self._tails_made:
            self._tails, self._tails_made = self._tail_memo(), True
        return self._tails

    def _take(self, tally: Tally, progress: _RangeProgress | None) -> Take:
        """The ``take`` of a memo's reads (:func:`_quick_take`), counting in ``tally``. A
        memo is made only for a :class:`QuickChecker` (:meth:`_tail_memo`)."""
        return _quick_take(typing.cast(QuickChecker, self.checker), tally, progress)

    def run(self) -> Tally:
        """Consume the whole pipeline (items unused) and return the final tally."""
        for _ in self:
            pass
        return self.tally

    # ------------------------------------------------------------------ planning

    def _plan(self) -> tuple[int, Iterator[Source | IntakeError]]:
        from kernelindex_sdk.base.parallel import can_fork, default_jobs

        sources = expand(self.paths)
        if STDIN in self.paths or not can_fork():
            return 1, sources
        if self.jobs is not None:
            return (default_jobs() if self.jobs == 0 else self.jobs), sources
        cores = default_jobs()
        if cores < 2:
            return 1, sources
        seen: list[Source | IntakeError] = []
        files = jsonl_bytes = 0
        for source in sources:  # look ahead just far enough to decide
            seen.append(source)
            if isinstance(source, FileSource):
                if source.jsonl:
                    jsonl_bytes += _size(source)
                else:
                    files += 1
                if files >= AUTO_MIN_FILES or jsonl_bytes >= AUTO_MIN_JSONL_BYTES:
                    return cores, chain(seen, sources)
        return 1, iter(seen)

    # ------------------------------------------------------------------ in process

    def _in_process(self, sources: Iterator[Source | IntakeError]) -> Iterator[Item]:
        checker, tally, every = self.checker, self.tally, self.report == "all"
        take: Take | None = None  # made with the memo
        for source in sources:
            if isinstance(source, IntakeError):
                item = unreadable_item(source)
                tally.count(item)
                yield item
                continue
            tally.files += 1
            tails = self._memo(source)
            if tails is not None and take is None:
                take = self._take(tally, None)
            documents = read(
                source,
                max_bytes=self.max_document_bytes,
                stdin=self.stdin,
                strict_numbers=self.strict_numbers,
                on_read=self.on_read,
                tails=tails,
                take=take,
            )
            yield from _items_to_report(checker, documents, tally, every)

    # ------------------------------------------------------------------ parallel

    def _parallel(self, sources: Iterator[Source | IntakeError], jobs: int) -> Iterator[Item]:
        from kernelindex_sdk.base.parallel import ordered_map, planned_workers
        from kernelindex_sdk.reading.intake.jsonl import empty_jsonl

        self.checker.prepare()
        if isinstance(self.checker, PayloadChecker):  # (before the workers are forked)
            self._payloads = self.checker
        # The workers that would have work: never more than the cores can keep busy, nor
        # than there are tasks (one small file forks none).
        jobs, tasks = planned_workers(jobs, self._tasks(sources))
        self.jobs_used = max(jobs, 1)
        tally = self.tally
        offset = 0  # lines before the current range of the current JSON Lines file
        seen_any = failed = False
        for result in ordered_map(self._run_task, tasks, jobs, describe=describe):
            task = result.task
            if isinstance(task, RangeTask):
                if task.start == 0:
                    offset, seen_any, failed = 0, False, False
                if not failed:
                    yield from self._merge(result, offset)
                    offset += result.lines
                    seen_any = seen_any or result.seen_any
                    failed = result.read_failed
                    if task.last and not seen_any and not failed:
                        item = unreadable_item(empty_jsonl(task.path))
                        tally.count(item)
                        yield item
                continue
            yield from self._merge(result, 0)

    def _merge(self, result: TaskResult, offset: int) -> Iterator[Item]:
        tally = self.tally
        tally.valid += result.tally.valid
        tally.invalid += result.tally.invalid
        tally.unreadable += result.tally.unreadable
        pending = result.pending
        if offset:
            pending = tuple(shifted_pending(p, offset) for p in pending)
        self.checker.add_references(result.known, pending)
        if result.payload is not None and self._payloads is not None:
            self._payloads.add_payload(result.payload, offset)
        for item in result.items:
            yield _shifted(item, offset) if offset else item

    def _tasks(self, sources: Iterator[Source | IntakeError]) -> Iterator[Task]:
        """The work, in input order: batches of whole files, and ranges of large JSON Lines."""
        batch: list[FileSource | StoreSource | Item] = []
        for source in sources:
            if isinstance(source, IntakeError):
                batch.append(unreadable_item(source))
                continue
            self.tally.files += 1
            if isinstance(source, StoreSource):  # one worker reads a store whole
                batch.append(source)
                continue
            assert isinstance(source, FileSource)  # stdin never runs in parallel
            if source.jsonl and _size(source) >= 2 * CHUNK_BYTES and _plain_start(source.path):
                if batch:
                    yield FilesTask(tuple(batch))
                    batch = []
                yield from _ranges(source.path, _size(source))
                continue
            batch.append(source)
            if len(batch) >= BATCH_FILES:
                yield FilesTask(tuple(batch))
                batch = []
        if batch:
            yield FilesTask(tuple(batch))

    def _run_task(self, task: Task) -> TaskResult:
        """One task, in a worker: the very reading and checking of ``jobs=1``."""
        checker, every = self.checker, self.report == "all"
        tally = Tally()
        progress = _RangeProgress()
        tails = self._memo(task)
        take = None  # (this worker's memo: each task counts its own)
        if tails is not None:
            take = self._take(tally, None if isinstance(task, FilesTask) else progress)
        if isinstance(task, FilesTask):
            documents: Iterable[Document | IntakeError | Item] = _files(
                task, self.max_document_bytes, self.strict_numbers, tails, take
            )
        else:
            documents = _range_documents(
                task, self.max_document_bytes, progress, self.strict_numbers, tails, take
            )
        kept = list(_items_to_report(checker, documents, tally, every))
        known, pending = checker.take_references()
        payloads = self._payloads
        return TaskResult(
            task,
            tuple(kept),
            tally,
            progress.lines,
            progress.seen_any,
            progress.read_failed,
            tuple(known),
            tuple(pending),
            payloads.take_payload() if payloads is not None else None,
        )


def _items_to_report(
    checker: Checker,
    documents: Iterable[Document | IntakeError | Item],
    tally: Tally,
    every: bool,
) -> Iterator[Item]:
    """The items of ``documents`` to report (every one, or those with problems), each
    counted in ``tally``; in this process and in a worker alike.

    Where only problems are reported, the checker's quick pass answers first: a
    document it passes is counted valid and builds no item. A document the quick pass
    was asked for as it was read (:func:`_quick_take`) is not asked again: it is here
    because it was not taken. Every document a tail memo read was asked so (the
    pipeline gives the memo's reads a ``take`` wherever it uses one), so those with a
    shared tail, which ``passes_shared`` answers, never get this far unasked.
    """
    passes = None if every else checker.passes
    for document in documents:
        if (
            passes is not None
            and type(document) is Document
            and not document.offered
            and passes(document.value, document.written)
        ):
            tally.valid += 1
            continue
        items = [document] if isinstance(document, Item) else _check(checker, document)
        for item in items:
            tally.count(item)
            if every or item.problems:
                yield item


def _quick_take(checker: QuickChecker, tally: Tally, progress: _RangeProgress | None) -> Take:
    """The ``take`` of a memo's reads (:data:`~kernelindex_sdk.reading.sharedtails.Take`):
    the quick pass of :func:`_items_to_report`, asked as each JSON Lines line is read, so that
    a document that passes is counted valid there and is never made, yielded through
    the readers' generators or looked at again (the interpreter's work a line, which
    is most of what the line costs beside the Rust parse and schema check).
    ``progress``: a range task's, told that its range held a document.
    ``passes_shared`` takes the head of a line read with a shared tail as it is given."""
    passes = checker.passes
    passes_shared = checker.passes_shared

    def take(value: Any, written: bytes | None, shared: SharedTail | None) -> bool:
        if passes(value, written) if shared is None else passes_shared(value, shared):
            tally.valid += 1
            return True
        return False

    if progress is None:
        return take

    def take_in_range(value: Any, written: bytes | None, shared: SharedTail | None) -> bool:
        progress.seen_any = True
        return take(value, written, shared)

    return take_in_range


def _check(checker: Checker, document: Document | IntakeError) -> list[Item]:
    if isinstance(document, IntakeError):
        return [unreadable_item(document)]
    return checker.check_document(document.value, source=document.source, line=document.line)


def _shifted(item: Item, offset: int) -> Item:
    """An item of a range task, its lines made absolute."""
    if item.line is None:
        return item
    problems = tuple(
        [p._replace(line=p.line + offset) if p.line is not None else p for p in item.problems]
    )
    return item._replace(line=item.line + offset, problems=problems)


def _size(source: FileSource) -> int:
    if source.size is not None:
        return source.size
    try:
        return os.stat(source.path).st_size
    except OSError:
        return 0  # read as a whole; the reader reports what is wrong


def _plain_start(path: str) -> bool:
    """False for a file starting like a byte-order mark or UTF-16/32 text, or that
    cannot be read: those are read whole, as ``jobs=1`` reads them."""
    try:
        fd, _ = open_regular(path)
    except IntakeError:
        return False
    try:
        head = os.pread(fd, 2, 0)
    except OSError:
        return False
    finally:
        os.close(fd)
    return not (head[:1] in _ODD_START or head[1:2] == b"\x00")


def _ranges(path: str, size: int) -> Iterator[RangeTask]:
    start = 0
    while start + CHUNK_BYTES < size:
        yield RangeTask(path, start, start + CHUNK_BYTES)
        start += CHUNK_BYTES
    yield RangeTask(path, start, None)


def _files(
    task: FilesTask,
    max_bytes: int,
    strict_numbers: bool,
    tails: TailMemo | None = None,
    take: Take | None = None,
) -> Iterator[Document | IntakeError | Item]:
    for entry in task.entries:
        if isinstance(entry, Item):
            yield entry
        else:
            yield from read(
                entry, max_bytes=max_bytes, strict_numbers=strict_numbers, tails=tails, take=take
            )


class _RangeProgress:
    """What a range task has read so far: the lines that started in its range, whether
    any held a document, whether reading failed (a plain class: see :class:`FilesTask`)."""

    __slots__ = ("lines", "read_failed", "seen_any")

    def __init__(self) -> None:
        self.lines = 0
        self.seen_any = False
        self.read_failed = False


def _range_documents(
    task: RangeTask,
    max_bytes: int,
    progress: _RangeProgress,
    strict_numbers: bool = False,
    tails: TailMemo | None = None,
    take: Take | None = None,
) -> Iterator[Document | IntakeError]:
    """The documents of the lines that start in the task's range, numbered from 1;
    ``progress`` follows what was read."""
    from kernelindex_sdk.reading.intake.jsonl import jsonl_records

    try:
        fd, _ = open_regular(task.path)
    except IntakeError as exc:
        progress.seen_any = progress.read_failed = True
        yield UnreadableFile(str(exc.problem.message), source=task.path)
        return
    with open(fd, "rb", buffering=LINE_BUFFER_BYTES) as handle:
        try:
            start = _first_line_start(handle, task)
        except OSError as exc:
            progress.seen_any = progress.read_failed = True
            yield UnreadableFile(f"read failed: {exc.strerror or exc}", source=task.path)
            return
        if start is None:
            return
        handle.seek(start)
        lines = _lines_until(bounded_lines(handle, max_bytes), start, task.end, progress)
        for document in jsonl_records(lines, task.path, 1, True, strict_numbers, tails, take):
            progress.seen_any = True
            if isinstance(document, UnreadableFile):
                progress.read_failed = True
            yield document


def _first_line_start(handle: typing.BinaryIO, task: RangeTask) -> int | None:
    """Where the first line starting in the range starts (None: no line does)."""
    if task.start == 0:
        return 0
    handle.seek(task.start - 1)
    if handle.read(1) == b"\n":
        return task.start
    position = task.start
    while task.end is None or position < task.end:
        want = CHUNK_BYTES if task.end is None else min(CHUNK_BYTES, task.end - position)
        block = handle.read(want)
        if not block:
            return None
        found = block.find(b"\n")
        if found >= 0:
            start = position + found + 1
            return start if task.end is None or start < task.end else None
        position += len(block)
    return None


def _lines_until(
    lines: Iterable[bytes | OverlongLine], position: int, end: int | None, progress: _RangeProgress
) -> Iterator[bytes | OverlongLine]:
    for line in lines:
        if end is not None and position >= end:
            return
        progress.lines += 1
        yield line
        position += len(line) if isinstance(line, bytes) else line.size
