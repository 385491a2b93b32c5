"""``kernelindex validate --jobs N``: the same validation, on N worker processes.

The parent walks the PATH arguments in the order ``--jobs 1`` reads them and cuts the
work into tasks: batches of whole files, and JSON Lines files in chunks of whole lines
(read by the parent, which therefore knows each chunk's first line number). Workers
(forked where the platform allows, so they inherit the compiled schemas) run the very
code ``--jobs 1`` runs — :func:`~kernelindex_sdk.cli.inputs.read_documents` for
files, intake's JSON Lines loop for chunks, and a
:class:`~kernelindex_sdk.validation.ValidationSession` — and send back only what the
report needs: counts, and the items a reporter prints (items with problems; every
item with ``--verbose``). The parent takes results strictly in task order, so the
output, the summary and the exit status are those of ``--jobs 1``; at most a few tasks
per worker are in flight, so memory stays flat on inputs of any size.

With ``--strict-refs`` each worker also sends the digests it saw and the references
it could not resolve yet; the parent merges them in order and resolves them at the
end, as one session would. Standard input (``-``) is read by one process: an
invocation that names it runs as ``--jobs 1``.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, NoReturn

from kernelindex_sdk.cli.inputs import expand_paths, read_documents
from kernelindex_sdk.errors import IntakeError
from kernelindex_sdk.intake import JSONL_SUFFIXES, Document
from kernelindex_sdk.validation import Item, ValidationSession

#: Bytes of JSON Lines per task (cut at a line end).
CHUNK_BYTES = 1 << 20
#: Tasks in flight per worker: enough to keep workers busy, few enough for flat memory.
WINDOW_PER_JOB = 3
#: First bytes of a byte-order mark or of UTF-16/32 text: such a file is read whole.
_ODD_START = (b"\xef", b"\xff", b"\xfe", b"\x00")


#: ``--jobs`` left unset forks only for inputs at least this large: below, starting
#: workers costs more than they save (a fork and a few milliseconds of set-up
#: against ~70 µs per file; a pool of workers costs tens of milliseconds more).
AUTO_MIN_FILES = 500
AUTO_MIN_JSONL_BYTES = 16 << 20


def auto_jobs(paths: Sequence[str]) -> int:
    """The worker count for unset ``--jobs``: one per core for large inputs, else 1.

    Large means at least :data:`AUTO_MIN_FILES` whole files or
    :data:`AUTO_MIN_JSONL_BYTES` of JSON Lines; the walk stops as soon as it knows.
    """
    cores = default_jobs()
    if cores < 2 or "-" in paths:
        return 1
    files = jsonl_bytes = 0
    for path in expand_paths(paths):
        if path.lower().endswith(JSONL_SUFFIXES):
            with contextlib.suppress(OSError):
                jsonl_bytes += os.path.getsize(path)
            if jsonl_bytes >= AUTO_MIN_JSONL_BYTES:
                return cores
        else:
            files += 1
            if files >= AUTO_MIN_FILES:
                return cores
    return 1


def default_jobs() -> int:
    """One worker per core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class FilesTask:
    """Whole files, read and validated as ``--jobs 1`` would."""

    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LinesTask:
    """Consecutive lines of one JSON Lines file, starting at line ``first_line``."""

    path: str
    first_line: int
    data: bytes
    #: False only for the first chunk of a file read in one chunk (see intake).
    seen_any: bool
    #: The error that ended reading after these lines, raised where --jobs 1 meets it.
    error: OSError | None = None
    #: True for the last chunk of a file.
    last: bool = True


@dataclass(frozen=True, slots=True)
class Result:
    """What a task produced: counts, and the items the reporter must see, in order."""

    paths: tuple[str, ...]
    valid: int
    invalid: int
    unreadable: int
    items: tuple[Item, ...]
    #: With --strict-refs: digests seen (in order) and references still pending.
    known: tuple[tuple[str, str], ...] = ()
    pending: tuple[Any, ...] = ()


class WorkerFailed(RuntimeError):
    """A worker process died or raised: a bug or the system (e.g. out of memory), never
    the input. ``validate`` reports it in one line and exits 2."""


# --------------------------------------------------------------------------- workers

_SESSION: ValidationSession | None = None
_VERBOSE = False


def _init_worker(strict_refs: bool, verbose: bool) -> None:
    global _SESSION, _VERBOSE
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    _SESSION = ValidationSession(strict_refs=strict_refs, strict_json=True)
    _VERBOSE = verbose


def _documents(task: FilesTask | LinesTask) -> Iterator[tuple[str, Document | IntakeError]]:
    if isinstance(task, FilesTask):
        yield from read_documents(task.paths)
        return
    from kernelindex_sdk.intake import jsonl_records

    lines: Iterable[bytes] = io.BytesIO(task.data)
    if task.error is not None:
        lines = chain(lines, _raising(task.error))
    for document in jsonl_records(lines, task.path, task.first_line, task.seen_any):
        yield task.path, document


def _raising(error: OSError) -> Iterator[bytes]:
    raise error
    yield b""  # pragma: no cover - makes this a generator


def run_task(task: FilesTask | LinesTask) -> Result:
    """Validate one task in a pool worker."""
    assert _SESSION is not None, "worker not initialised"
    return run_task_in(_SESSION, task, verbose=_VERBOSE)


def run_task_in(
    session: ValidationSession, task: FilesTask | LinesTask, *, verbose: bool
) -> Result:
    """Validate one task with ``session``."""
    valid = invalid = unreadable = 0
    reported: list[Item] = []
    paths: dict[str, None] = {}
    for path, document in _documents(task):
        paths[path] = None
        if isinstance(document, IntakeError):
            items = [session.unreadable(document)]
            unreadable += 1
        else:
            items = session.check_document(
                document.value, source=document.source, line=document.line
            )
        for item in items:
            if item.valid:
                valid += 1
            else:
                invalid += 1
            if verbose or not item.valid:
                reported.append(item)
    known, pending = session.take_references()
    return Result(
        tuple(paths), valid, invalid, unreadable, tuple(reported), tuple(known), tuple(pending)
    )


# --------------------------------------------------------------------------- tasks


def _tasks_of(files: Iterable[str]) -> Iterator[FilesTask | LinesTask]:
    """The work of expanded paths (``expand_paths``), in the order ``--jobs 1`` reads it."""
    batch: list[str] = []
    for path in files:
        if path.lower().endswith(JSONL_SUFFIXES) and os.path.isfile(path):
            if batch:
                yield FilesTask(tuple(batch))
                batch = []
            yield from _chunks(path)
            continue
        batch.append(path)
        if len(batch) >= 32:
            yield FilesTask(tuple(batch))
            batch = []
    if batch:
        yield FilesTask(tuple(batch))


def _chunks(path: str, size: int = CHUNK_BYTES) -> Iterator[FilesTask | LinesTask]:
    """A JSON Lines file as tasks of whole lines (or as one task when it must be)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        yield FilesTask((path,))  # read_documents reports it exactly as --jobs 1 does
        return
    with handle:
        try:
            data = handle.read(size)
        except OSError:
            yield FilesTask((path,))
            return
        if data.startswith(_ODD_START) or len(data) < size:
            # A byte-order mark or UTF-16/32 text (intake may stop at line 1), or a
            # small file: one task, read exactly as --jobs 1 reads it.
            yield FilesTask((path,))
            return
        first_line = 1
        rest = b""
        while True:
            error: OSError | None = None
            try:
                more = handle.read(size)
            except OSError as exc:
                more, error = b"", exc
            block = rest + data
            last = not more or error is not None
            if last and error is None:
                chunk, rest = block, b""
            else:  # whole lines only (after a read error too: the rest never became a line)
                cut = block.rfind(b"\n") + 1
                chunk, rest = block[:cut], block[cut:]
            if chunk or last:
                yield LinesTask(path, first_line, chunk, True, error, last)
                first_line += chunk.count(b"\n")
            if last:
                return
            data = more


# --------------------------------------------------------------------------- parent


def results(
    paths: tuple[str, ...], jobs: int, *, strict_refs: bool, verbose: bool
) -> Iterator[Result]:
    """Every task's result, in task order, computed on ``jobs`` processes.

    Whole files only (no JSON Lines): the task list is known before any process
    starts, so :func:`_forked_results` splits it among forked copies of this process
    with no queue at all. Otherwise a pool of workers takes the tasks as the parent
    reads them, which keeps memory flat on JSON Lines of any size.
    """
    import multiprocessing  # here: ``validate`` on a few files never needs it

    expanded = list(expand_paths(paths))
    if "fork" in multiprocessing.get_all_start_methods() and not any(
        path.lower().endswith(JSONL_SUFFIXES) for path in expanded
    ):
        yield from _forked_results(list(_tasks_of(expanded)), jobs, strict_refs, verbose)
        return
    yield from _pool_results(expanded, jobs, strict_refs=strict_refs, verbose=verbose)


def _forked_results(
    work: list[FilesTask | LinesTask], jobs: int, strict_refs: bool, verbose: bool
) -> Iterator[Result]:
    """The results of ``work``, task ``i`` computed by process ``i % jobs``.

    Process 0 is this one; the others are forked after the schemas are compiled, so
    they start validating at once. Each writes its results, pickled, in order, to its
    own pipe; this process computes its own share in turn with reading theirs, so
    results come out in task order as soon as they exist. A fork costs a few
    milliseconds where a ``multiprocessing`` pool costs tens, which on small files
    is what decides whether a second core helps at all.
    """
    import pickle

    session = ValidationSession(strict_refs=strict_refs, strict_json=True)
    session.prepare()
    jobs = max(1, min(jobs, len(work)))
    sys.stdout.flush()
    sys.stderr.flush()
    children: list[tuple[int, Any]] = []  # (pid, pipe to read)
    complete = False
    try:
        for worker in range(1, jobs):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child; coverage cannot follow it
                os.close(read_end)
                for _, inherited in children:  # other workers' pipes are not its business
                    inherited.close()
                _child(session, work[worker::jobs], write_end, verbose)
            os.close(write_end)
            children.append((pid, os.fdopen(read_end, "rb")))
        for index, task in enumerate(work):
            worker = index % jobs
            if worker == 0:
                yield run_task_in(session, task, verbose=verbose)
                continue
            pid, pipe = children[worker - 1]
            try:
                status, payload = pickle.load(pipe)
            except EOFError:
                raise WorkerFailed(f"worker process {pid} ended without its results") from None
            if status != "ok":
                raise WorkerFailed(f"worker process {pid} failed: {payload}")
            yield payload
        complete = True
    finally:
        for pid, pipe in children:
            pipe.close()
            if not complete:  # abandoned early (an error, Ctrl-C): stop the rest now
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)


def _child(
    session: ValidationSession, share: list[FilesTask | LinesTask], fd: int, verbose: bool
) -> NoReturn:  # pragma: no cover - runs in a forked child
    """A forked worker: validate ``share``, send each result, and leave at once.

    ``os._exit``: the child must never return into the parent's code (the CLI's
    reporting, ``atexit`` hooks, buffered output) however it ends.
    """
    import pickle

    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
        with os.fdopen(fd, "wb") as pipe:
            for task in share:
                try:
                    message: tuple[str, Any] = ("ok", run_task_in(session, task, verbose=verbose))
                except Exception as error:  # sent to the parent, which raises it there
                    message = ("error", f"{type(error).__name__}: {error}")
                pickle.dump(message, pipe, protocol=pickle.HIGHEST_PROTOCOL)
                pipe.flush()
                if message[0] != "ok":
                    break
        status = 0
    except BaseException:  # a broken pipe: the parent stopped reading
        pass
    finally:
        os._exit(status)


def _pool_results(
    files: list[str], jobs: int, *, strict_refs: bool, verbose: bool
) -> Iterator[Result]:
    """Every task's result, in task order, from a pool of ``jobs`` worker processes."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    fork = "fork" in methods
    context = multiprocessing.get_context("fork" if fork else "spawn")
    if fork:  # workers inherit the compiled schemas instead of compiling their own
        ValidationSession(strict_refs=strict_refs).prepare()
    pool = context.Pool(jobs, initializer=_init_worker, initargs=(strict_refs, verbose))
    try:
        window: deque[tuple[FilesTask | LinesTask, Any]] = deque()
        touched = [False]
        for task in _tasks_of(files):
            window.append((task, pool.apply_async(run_task, (task,))))
            while len(window) > WINDOW_PER_JOB * jobs:
                yield _next(window, touched, pool)
        while window:
            yield _next(window, touched, pool)
        pool.close()
        pool.join()
    finally:
        pool.terminate()


def _next(
    window: deque[tuple[FilesTask | LinesTask, Any]], touched: list[bool], pool: Any
) -> Result:
    """The oldest task's result (``touched``: whether the current JSONL file yielded any)."""
    task, pending = window.popleft()
    try:
        result: Result = pending.get()
    except Exception as error:  # raised in the worker, re-raised here by the pool
        raise WorkerFailed(f"a worker process failed: {type(error).__name__}: {error}") from error
    if isinstance(task, LinesTask):
        touched[0] = touched[0] or bool(result.paths)
        if task.last:
            if not touched[0]:
                # Nothing in any chunk: re-read the file whole, so that an all-blank
                # file gets intake's "empty" problem exactly as with --jobs 1.
                result = pool.apply(run_task, (FilesTask((task.path,)),))
            touched[0] = False
    return result
