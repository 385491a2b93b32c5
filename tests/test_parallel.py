"""The one executor: results in order, deaths seen at once, nothing left behind."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest
from acceptance.support import children

from kernelindex_sdk.base import parallel
from kernelindex_sdk.base.parallel import WorkerFailed, ordered_map


def _square_slowly(n: int) -> int:
    time.sleep((n % 3) * 0.002)  # out-of-order completion across workers
    return n * n


_BEFORE: set[int] = set()


@pytest.fixture(autouse=True)
def _children_before() -> None:
    _BEFORE.clear()
    _BEFORE.update(children())


def _no_children_left() -> bool:
    """No worker outlives ordered_map, reaped or not: no child of this process that
    was not there when the test began. (Under xdist, other modules' tests run in
    this process too, and a process one of them left running is not this test's:
    asking ``waitpid(-1)`` made this test fail now and then.)"""
    return not (children() - _BEFORE)


@pytest.mark.parametrize("jobs", [1, 2, 3, 5])
def test_results_come_in_task_order(jobs: int) -> None:
    assert list(ordered_map(_square_slowly, range(60), jobs)) == [n * n for n in range(60)]
    assert _no_children_left()


def test_tasks_are_consumed_lazily_and_memory_stays_bounded() -> None:
    taken: list[int] = []

    def tasks() -> Iterator[int]:
        for n in range(1000):
            taken.append(n)
            yield n

    stream = ordered_map(_square_slowly, tasks(), 2, window=2)
    assert next(stream) == 0
    assert len(taken) <= 2 * 2 + 1  # the window, not the whole input
    stream.close()
    assert _no_children_left()


def _echo(payload: bytes) -> bytes:
    return payload[::-1]


def test_large_messages_both_ways_never_deadlock() -> None:
    """Tasks and results far larger than a pipe's buffer, many in flight at once."""
    payloads = [bytes([n]) * (300_000 + n) for n in range(24)]
    assert list(ordered_map(_echo, payloads, 3)) == [p[::-1] for p in payloads]


def _boom(n: int) -> int:
    if n == 7:
        raise ValueError("boom")
    return n


def test_an_exception_in_a_worker_fails_the_run_in_one_line() -> None:
    with pytest.raises(WorkerFailed) as info:
        list(ordered_map(_boom, range(20), 2, describe=lambda n: f"task {n}"))
    message = str(info.value)
    assert message.startswith("worker process ")
    assert "while checking task 7: ValueError: boom" in message
    assert "\n" not in message
    assert _no_children_left()


def _boom_at_once(n: int) -> int:
    if n == 0:
        raise ValueError("boom")
    return n


def test_a_worker_error_is_reported_when_its_task_pipe_breaks_first() -> None:
    """The worker reports its error and exits; the parent, still handing out tasks,
    writes to it before reading that report and meets a broken pipe. The report the
    worker sent is still the reason given, not a bare 'exited with status 0'."""

    def tasks() -> Iterator[int]:
        for n in range(6):
            yield n
            time.sleep(0.1)  # task 0 fails and its worker exits before task 2 is sent to it

    with pytest.raises(WorkerFailed) as info:
        list(ordered_map(_boom_at_once, tasks(), 2, describe=lambda n: f"task {n}"))
    assert "while checking task 0: ValueError: boom" in str(info.value)
    assert _no_children_left()


def _die(n: int) -> int:
    if n == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    return n


def test_a_killed_worker_is_named_with_what_was_lost() -> None:
    started = time.monotonic()
    with pytest.raises(WorkerFailed) as info:
        list(ordered_map(_die, range(40), 2, describe=lambda n: f"task {n}"))
    assert time.monotonic() - started < 10
    message = str(info.value)
    assert "was killed by SIGKILL (signal 9) while checking task 5" in message
    assert message.endswith("its results are lost")
    assert _no_children_left()


def test_a_worker_killed_while_writing_its_result_is_never_half_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The child writes half a message and dies: the parent must not unpickle it."""
    real = parallel.write_all

    def half_then_die(fd: int, data: bytes) -> None:
        real(fd, data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(parallel, "write_all", half_then_die)
    payloads = [b"x" * 200_000 for _ in range(4)]
    with pytest.raises(WorkerFailed, match="killed by SIGKILL"):
        list(ordered_map(_echo, payloads, 2))
    assert _no_children_left()


def test_a_worker_that_exits_is_a_failure_too() -> None:
    def leave(n: int) -> int:
        if n == 3:
            os._exit(7)
        return n

    with pytest.raises(WorkerFailed, match="exited with status 7"):
        list(ordered_map(leave, range(10), 2))


def test_abandoning_the_results_kills_and_reaps_the_workers() -> None:
    def slow(n: int) -> int:
        time.sleep(0.05)
        return n

    stream = ordered_map(slow, range(100), 3)
    assert next(stream) == 0
    stream.close()
    assert _no_children_left()


def test_one_job_runs_in_this_process() -> None:
    pids = list(ordered_map(lambda _: os.getpid(), range(3), 1))
    assert pids == [os.getpid()] * 3
    assert parallel.default_jobs() >= 1
