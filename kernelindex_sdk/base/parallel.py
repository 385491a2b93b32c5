"""Running tasks on forked worker processes, results in task order: the one executor.

:func:`ordered_map` is ``map(func, tasks)`` on ``jobs`` processes. It knows nothing of
documents; the pipeline (:mod:`kernelindex_sdk.validating.pipeline`) gives it tasks and reads
results. Why it is built the way it is:

* **Fork and pipes, no pool.** Workers are forked copies of this process, so they
  inherit compiled schemas and ``func`` itself (nothing is imported or compiled
  twice, and ``func`` need not be picklable). Each worker has a task pipe and a
  result pipe; messages are length-prefixed pickles. A fork costs milliseconds
  where a ``multiprocessing`` pool costs tens of them, and — the reason that
  matters more — a pool silently replaces a worker that dies and then waits forever
  for the results the dead one held.
* **A death is seen at once, and said in one line.** The parent waits on every
  result pipe together (``selectors``), so a worker's end of file — it died, for
  whatever reason — wakes it at once, whichever task it was waiting for. It raises
  :class:`WorkerFailed` naming the process, how it ended and what it was working on;
  a message cut short by the death is never unpickled.
* **Never a deadlock.** Task messages are written without blocking, from a buffer,
  whenever a pipe has room; the parent reads results whenever they come. Neither side
  ever waits on a pipe the other is not draining.
* **Results in order, memory flat.** At most ``window`` tasks per worker are in
  flight or waiting to be handed back; results are yielded strictly in task order.
* **Nothing outlives the parent.** On Linux each worker asks the kernel to kill it
  when the parent dies (``PR_SET_PDEATHSIG``); everywhere, a worker leaves at the end
  of its task pipe, and one that writes to a parent that has gone dies of SIGPIPE,
  quietly. When the run ends early (an error, Ctrl-C, a consumer that stops reading,
  SIGTERM) the parent kills and reaps every worker before returning. Workers ignore
  SIGINT: Ctrl-C at a terminal reaches the whole process group, and the parent alone
  decides what it means.

``jobs <= 1``, or a platform without ``fork``, runs the tasks in this process: the
same results, in the same order.

**Workers are capped** (:func:`planned_workers`): never more than :data:`JOBS_PER_CORE`
per core this process may run on (the work is the processor's: more workers only cost
forks, memory and file descriptors), never more than there are tasks (looked ahead
for, so one file never forks a thousand idle workers), and asking for more than
:data:`MAX_JOBS` is a mistake, refused (``ValueError``). A worker that cannot be
started — no file descriptors left for its pipes (``ulimit -n``), no process left to
fork — ends the run with :class:`WorkersUnavailable`, which says so in one line.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from kernelindex_sdk.base.escaping import int_text, one_line
from kernelindex_sdk.base.writes import write_all
from kernelindex_sdk.errors import KernelIndexError

if TYPE_CHECKING:
    import signal  # at run time, imported where workers are: its enums weigh on start-up

T = TypeVar("T")
R = TypeVar("R")

#: Tasks in flight per worker: enough to keep each busy, few enough for flat memory.
WINDOW_PER_JOB = 3
#: The most workers anyone may ask for: more is a mistake (``--jobs 100000``), refused.
MAX_JOBS = 1024
#: Workers per usable core at most: checking records is processor work, and a worker
#: waiting on its disk is rare enough that two per core keep every core busy.
JOBS_PER_CORE = 2

_HEADER = 8  # bytes of the big-endian length before each pickled message
_READ_BYTES = 1 << 20


class WorkerFailed(KernelIndexError):
    """A worker process died or raised: a bug or the system (out of memory, a kill),
    never the input. What it was working on is lost; the run cannot be complete.

    Its message names the task (a file name from input) and may quote the worker's
    error: it is escaped here, where it is made
    (:func:`~kernelindex_sdk.base.escaping.one_line`), so it is one line wherever printed.
    """

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


class WorkersUnavailable(WorkerFailed):
    """A worker could not be started: the system refused its pipes or its fork (too many
    open files, too many processes). Nothing was checked by it; the run ends, its
    workers ended, with one line that says why — never a message about something else."""


def default_jobs() -> int:
    """One worker per core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_limit() -> int:
    """The most workers this machine can keep busy: :data:`JOBS_PER_CORE` per core
    (and never above :data:`MAX_JOBS`)."""
    return min(MAX_JOBS, JOBS_PER_CORE * default_jobs())


def check_jobs(jobs: int) -> None:
    """Raise ``ValueError`` for a worker count no one means: below 0 or above
    :data:`MAX_JOBS` (0 and 1 both mean this process alone, to :func:`ordered_map`)."""
    if not 0 <= jobs <= MAX_JOBS:
        raise ValueError(f"jobs must be 0 to {MAX_JOBS}, not {int_text(jobs)}")


def planned_workers(jobs: int, tasks: Iterable[T]) -> tuple[int, Iterator[T]]:
    """How many of ``jobs`` workers would have work: at most :func:`worker_limit`, and no
    more than there are tasks (up to that many are taken from ``tasks`` to count them);
    and every task, in order, the ones looked at included."""
    source = iter(tasks)
    jobs = min(jobs, worker_limit())
    if jobs <= 1:
        return jobs, source
    head = list(itertools.islice(source, jobs))
    return min(jobs, len(head)), itertools.chain(head, source)


def can_fork() -> bool:
    """Whether :func:`ordered_map` can run workers here (it needs ``os.fork``)."""
    return hasattr(os, "fork") and sys.platform != "win32"


def ordered_map(
    func: Callable[[T], R],
    tasks: Iterable[T],
    jobs: int,
    *,
    describe: Callable[[T], str] = repr,
    window: int = WINDOW_PER_JOB,
) -> Iterator[R]:
    """``func(task)`` for every task, in task order, computed by ``jobs`` workers.

    ``tasks`` is consumed lazily, in this process, as room frees up; results must be
    picklable. ``describe(task)`` names a task in a :class:`WorkerFailed` message.
    An exception raised by ``func`` in a worker ends the run with
    :class:`WorkerFailed` (its type and message); the worker's traceback is not shown.
    Fewer workers than ``jobs`` start where fewer have work (:func:`planned_workers`);
    ``jobs`` outside 0..:data:`MAX_JOBS` is a ``ValueError``.
    """
    check_jobs(jobs)
    jobs, tasks = planned_workers(jobs, tasks)
    if jobs <= 1 or not can_fork():
        for task in tasks:
            yield func(task)
        return
    yield from _Pool(func, jobs, describe, window).run(tasks)


class _Worker:
    __slots__ = ("assigned", "inbox", "outbox", "pid", "results", "tasks")

    def __init__(self, pid: int, tasks: int, results: int) -> None:
        self.pid = pid
        self.tasks = tasks  # the parent's (non-blocking) write end of the task pipe
        self.results = results  # the parent's (non-blocking) read end of the result pipe
        self.outbox = bytearray()
        self.inbox = bytearray()
        self.assigned: deque[int] = deque()


class _Pool:
    """The parent's side of one :func:`ordered_map` run (module docstring)."""

    def __init__(
        self, func: Callable[[T], R], jobs: int, describe: Callable[[T], str], window: int
    ) -> None:
        self.func = func
        self.jobs = jobs
        self.describe = describe
        self.window = max(1, window)
        self.workers: list[_Worker] = []

    def run(self, tasks: Iterable[Any]) -> Iterator[Any]:
        import pickle
        import selectors

        previous_term = _on_sigterm()
        selector = selectors.DefaultSelector()
        finished = False
        try:
            self._start(selector)
            pending: dict[int, Any] = {}  # task index -> task, until its result is yielded
            done: dict[int, Any] = {}  # task index -> result, waiting for its turn
            source = iter(tasks)
            exhausted = False
            issued = handed = 0
            limit = self.window * self.jobs
            while True:
                while not exhausted and issued - handed < limit:
                    try:
                        task = next(source)
                    except StopIteration:
                        exhausted = True
                        break
                    worker = min(self.workers, key=lambda w: len(w.assigned))
                    payload = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
                    worker.outbox += len(payload).to_bytes(_HEADER, "big") + payload
                    worker.assigned.append(issued)
                    pending[issued] = task
                    issued += 1
                    self._send(selector, worker, pending)
                if handed in done:
                    result = done.pop(handed)
                    del pending[handed]
                    handed += 1
                    yield result
                    continue
                if exhausted and handed == issued:
                    break
                for key, _ in selector.select():
                    worker, writable = key.data
                    if writable:
                        self._send(selector, worker, pending)
                    else:
                        self._receive(worker, pending, done, pickle)
            finished = True
        finally:
            self._stop(finished)
            selector.close()
            _restore_sigterm(previous_term)

    # ------------------------------------------------------------------ workers

    def _start(self, selector: Any) -> None:
        import selectors
        import signal

        sys.stdout.flush()
        sys.stderr.flush()
        import gc

        gc.freeze()  # forked workers then share these pages instead of copying them
        parent = os.getpid()
        try:
            for number in range(1, self.jobs + 1):
                task_read, task_write, result_read, result_write = self._fork(
                    parent, number, signal
                )
                os.close(task_read)
                os.close(result_write)
                os.set_blocking(task_write, False)
                os.set_blocking(result_read, False)
                worker = self.workers[-1]
                # Results are always awaited; the task pipe is watched only while a
                # message to it waits for room (see _send).
                selector.register(result_read, selectors.EVENT_READ, (worker, False))
        finally:
            gc.unfreeze()

    def _fork(self, parent: int, number: int, signal: Any) -> tuple[int, int, int, int]:
        """Make worker ``number``'s two pipes and fork it (added to :attr:`workers`):
        the four ends. Raises :class:`WorkersUnavailable` when the system refuses,
        with every end made so far closed."""
        made: list[int] = []
        try:
            made.extend(os.pipe())
            made.extend(os.pipe())
            task_read, task_write, result_read, result_write = made
            # Ctrl-C or SIGTERM arriving during the fork would run the parent's handlers
            # in the child before it can ignore them (a stray traceback from Python's
            # after-fork hooks): held back until both sides have set up.
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            try:
                pid = os.fork()
                if pid == 0:  # pragma: no cover - the child; coverage cannot follow it
                    others = [fd for w in self.workers for fd in (w.tasks, w.results)]
                    others += [task_write, result_read]
                    _serve(self.func, task_read, result_write, others, parent, mask)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        except OSError as error:
            for fd in made:
                with contextlib.suppress(OSError):
                    os.close(fd)
            raise WorkersUnavailable(_unavailable(error, number, self.jobs)) from None
        self.workers.append(_Worker(pid, task_write, result_read))
        return task_read, task_write, result_read, result_write

    def _send(self, selector: Any, worker: _Worker, pending: dict[int, Any]) -> None:
        """Write what the pipe takes now; watch it for room while anything is left."""
        import selectors

        try:
            written = os.write(worker.tasks, worker.outbox)
        except BlockingIOError:
            written = 0
        except OSError:  # EPIPE: it is gone
            self._failed(worker, pending)
        del worker.outbox[:written]
        watched = worker.tasks in selector.get_map()
        if worker.outbox and not watched:
            selector.register(worker.tasks, selectors.EVENT_WRITE, (worker, True))
        elif not worker.outbox and watched:
            selector.unregister(worker.tasks)

    def _receive(
        self, worker: _Worker, pending: dict[int, Any], done: dict[int, Any], pickle: Any
    ) -> None:
        try:
            data = os.read(worker.results, _READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._failed(worker, pending)
        worker.inbox += data
        self._take_messages(worker, pending, done, pickle)

    def _take_messages(
        self, worker: _Worker, pending: dict[int, Any], done: dict[int, Any], pickle: Any
    ) -> None:
        """Every whole message in the worker's inbox: a result goes to ``done``, an
        error the worker reports ends the run with its own words."""
        inbox = worker.inbox
        while len(inbox) >= _HEADER:
            size = int.from_bytes(inbox[:_HEADER], "big")
            if len(inbox) < _HEADER + size:
                break
            status, payload = pickle.loads(inbox[_HEADER : _HEADER + size])
            del inbox[: _HEADER + size]
            index = worker.assigned.popleft()
            if status != "ok":
                raise WorkerFailed(
                    f"worker process {worker.pid} failed while checking"
                    f" {self.describe(pending[index])}: {payload}"
                )
            done[index] = payload

    def _failed(self, worker: _Worker, pending: dict[int, Any]) -> NoReturn:
        how = _how_it_ended(worker.pid)
        # A worker that reported an error exits at once, so the parent may meet its
        # broken task pipe before reading the report: what it sent is the reason.
        self._drain(worker, pending)
        if worker.assigned:
            lost = self.describe(pending[worker.assigned[0]])
            more = len(worker.assigned) - 1
            also = f" (and {more} more task{'s' if more > 1 else ''})" if more else ""
            raise WorkerFailed(
                f"worker process {worker.pid} {how} while checking {lost}{also};"
                " its results are lost"
            )
        raise WorkerFailed(f"worker process {worker.pid} {how}")

    def _drain(self, worker: _Worker, pending: dict[int, Any]) -> None:
        """Read what an ended worker left in its result pipe (raising its error report,
        if it sent one). Called after it is reaped: its end is closed, so this stops at
        end of file; a worker still alive (not reaped in time) leaves a pipe that would
        block, and then nothing more is read."""
        import pickle

        while True:
            try:
                data = os.read(worker.results, _READ_BYTES)
            except OSError:  # BlockingIOError included
                break
            if not data:
                break
            worker.inbox += data
        self._take_messages(worker, pending, {}, pickle)

    def _stop(self, finished: bool) -> None:
        """Close the task pipes (workers leave at their end) and reap every worker;
        when the run ends early, kill them first."""
        import signal

        for worker in self.workers:
            if not finished:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.pid, signal.SIGKILL)
            for fd in (worker.tasks, worker.results):
                with contextlib.suppress(OSError):
                    os.close(fd)
        for worker in self.workers:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(worker.pid, 0)
        self.workers.clear()


def _unavailable(error: OSError, number: int, jobs: int) -> str:
    """Why worker ``number`` of ``jobs`` could not start, and what to do about it."""
    name = errno.errorcode.get(error.errno or 0, "")
    why = f"{error.strerror or error}" + (f" ({name})" if name else "")
    if error.errno in (errno.EMFILE, errno.ENFILE):
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        why += f"; each worker needs two pipes, and this process may open {soft} files (ulimit -n)"
    return f"cannot start worker process {number} of {jobs}: {why}"


def _how_it_ended(pid: int) -> str:
    """How a worker whose result pipe closed ended; reaps it."""
    import signal
    import time

    deadline = time.monotonic() + 2.0
    while True:
        try:
            reaped, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return "ended"
        if reaped:
            break
        if time.monotonic() > deadline:
            return "closed its result pipe without its results"
        time.sleep(0.005)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"was killed by {name} (signal {number})"
    return f"exited with status {os.WEXITSTATUS(status)}"


def _on_sigterm() -> Any:
    """While workers run, SIGTERM ends this process through ``finally`` (exit 143),
    so the workers are killed and reaped even where PR_SET_PDEATHSIG does not exist.
    Only when SIGTERM has its default action and this is the main thread."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None

    def terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    return signal.SIG_DFL


def _restore_sigterm(previous: Any) -> None:
    import signal

    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


# --------------------------------------------------------------------------- child


def _die_with_parent(parent: int) -> None:  # pragma: no cover - runs in a child
    """Linux: be killed when the parent dies, even by SIGKILL."""
    import signal

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it died before we asked
        os._exit(1)


def _read_exactly(fd: int, size: int) -> bytes | None:  # pragma: no cover - child
    parts = []
    while size:
        data = os.read(fd, min(size, _READ_BYTES))
        if not data:
            return None
        parts.append(data)
        size -= len(data)
    return b"".join(parts)


def _serve(
    func: Callable[[Any], Any],
    tasks: int,
    results: int,
    close: list[int],
    parent: int,
    mask: set[int | signal.Signals],
) -> NoReturn:  # pragma: no cover - runs in a forked child
    """A worker: read a task, send ``("ok", result)`` or ``("error", why)``, repeat.

    ``os._exit`` always: the child must never return into the parent's code (its
    reporting, ``atexit`` hooks, buffered output), however it ends.
    """
    import pickle
    import signal

    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # the parent is gone: end quietly
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for fd in close:  # other workers' pipes and the parent's ends of ours
            with contextlib.suppress(OSError):
                os.close(fd)
        _die_with_parent(parent)
        while True:
            header = _read_exactly(tasks, _HEADER)
            if header is None:
                break
            body = _read_exactly(tasks, int.from_bytes(header, "big"))
            if body is None:
                break
            try:
                message: tuple[str, Any] = ("ok", func(pickle.loads(body)))
                data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as error:  # sent to the parent, which reports it
                message = ("error", f"{type(error).__name__}: {error}")
                data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
            write_all(results, len(data).to_bytes(_HEADER, "big") + data)
            if message[0] != "ok":
                break
        status = 0
    except BaseException:
        pass
    finally:
        os._exit(status)
