"""``--jobs N``: never more workers than the machine and the work can use, an absurd N
refused in one line, and workers the system will not start said so in one line."""

from __future__ import annotations

import errno
import math
import os
import resource
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from acceptance.support import assert_no_traceback, children, cli_process

from kernelindex_sdk.base import parallel
from kernelindex_sdk.base.escaping import int_text
from kernelindex_sdk.base.parallel import (
    MAX_JOBS,
    WorkersUnavailable,
    ordered_map,
    planned_workers,
    worker_limit,
)
from kernelindex_sdk.validating.pipeline import BATCH_FILES, Pipeline

ROOT = Path(__file__).resolve().parent.parent
ONE_SEED = sorted((ROOT / "tests" / "examples" / "valid" / "seeds").glob("*.json"))[0]
#: Files in the many-files input: several tasks of BATCH_FILES files each.
MANY = 300
TASKS = math.ceil(MANY / BATCH_FILES)

#: Runs the CLI in this process after wrapping ``os.fork`` (and, if asked, ``os.pipe``):
#: each fork the parent asks for is counted, and written to FORKS_FILE at exit; with
#: FAIL_FORK_AT=k the k-th fork fails with EAGAIN, with FAIL_PIPE_AT=k the k-th pipe
#: with EMFILE, as the system would.
_SEAM = textwrap.dedent(
    """
    import atexit, errno, os, sys
    counts = {"fork": 0, "pipe": 0}
    real_fork, real_pipe = os.fork, os.pipe
    parent = os.getpid()

    def fork():
        counts["fork"] += 1
        if counts["fork"] == int(os.environ.get("FAIL_FORK_AT", "0")):
            raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN))
        return real_fork()

    def pipe():
        counts["pipe"] += 1
        if counts["pipe"] == int(os.environ.get("FAIL_PIPE_AT", "0")):
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        return real_pipe()

    def report():
        if os.getpid() == parent:
            with open(os.environ["FORKS_FILE"], "w") as out:
                out.write(str(counts["fork"]))

    os.fork, os.pipe = fork, pipe
    atexit.register(report)
    from kernelindex_sdk.cli.main import main
    main(sys.argv[1:])
    """
)


def _seamed(
    tmp_path: Path, *args: str, **environ: str
) -> tuple[subprocess.CompletedProcess[str], int]:
    """The CLI in a real process through :data:`_SEAM`: what it did, and its forks."""
    forks = tmp_path / "forks"
    done = subprocess.run(
        [sys.executable, "-c", _SEAM, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "FORKS_FILE": str(forks), **environ},
        timeout=120,
        check=False,
    )
    assert_no_traceback(done.stderr)
    return done, int(forks.read_text())


def _kernelindex(*args: str, **popen: object) -> subprocess.CompletedProcess[str]:
    return cli_process(*args, text=True, **popen)


@pytest.fixture
def many(tmp_path: Path) -> Path:
    """A folder of :data:`MANY` valid records: :data:`TASKS` tasks."""
    folder = tmp_path / "many"
    folder.mkdir()
    for number in range(MANY):
        shutil.copyfile(ONE_SEED, folder / f"r{number:03}.json")
    return folder


@pytest.mark.parametrize("jobs", ["100000", str(10**40), "-1", "1025"])
@pytest.mark.parametrize("command", [["validate"], ["store", "add"]], ids=["validate", "store"])
def test_an_absurd_jobs_is_refused_in_one_line(command: list[str], jobs: str) -> None:
    done = _kernelindex(*command, "-j", jobs, str(ONE_SEED))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"kernelindex {' '.join(command)}: error: --jobs {int_text(int(jobs))}: expected 0"
        " (one per core)"
        f" to {MAX_JOBS}"
    ]


def test_one_file_with_the_most_jobs_forks_no_worker(tmp_path: Path) -> None:
    done, forks = _seamed(tmp_path, "validate", "-j", str(MAX_JOBS), str(ONE_SEED))
    assert (done.returncode, done.stdout) == (0, "1 valid, 0 invalid in 1 file\n")
    assert forks == 0


@pytest.mark.parametrize("jobs", [str(MAX_JOBS), "0"])
def test_many_files_fork_no_more_than_the_cores_and_the_tasks(
    tmp_path: Path, many: Path, jobs: str
) -> None:
    done, forks = _seamed(tmp_path, "validate", "-j", jobs, str(many))
    assert (done.returncode, done.stdout) == (0, f"{MANY} valid, 0 invalid in {MANY} files\n")
    cores = len(os.sched_getaffinity(0))
    asked = cores if jobs == "0" else int(jobs)
    assert forks == min(asked, 2 * cores, TASKS)


def test_a_fork_the_system_refuses_is_one_line(tmp_path: Path, many: Path) -> None:
    done, forks = _seamed(tmp_path, "validate", "-j", "2", str(many), FAIL_FORK_AT="2")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "kernelindex validate: cannot start worker process 2 of 2: Resource temporarily"
        " unavailable (EAGAIN) (rerun with --jobs 1)"
    ]
    assert forks == 2


def test_pipes_the_system_refuses_are_one_line_naming_the_limit(tmp_path: Path, many: Path) -> None:
    done, _ = _seamed(tmp_path, "validate", "-j", "2", str(many), FAIL_PIPE_AT="3")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        "kernelindex validate: cannot start worker process 2 of 2: Too many open files"
        " (EMFILE); each worker needs two pipes, and this process may open "
    )
    assert line.endswith(" files (ulimit -n) (rerun with --jobs 1)")
    assert "cannot write output" not in line


def _few_files(limit: int) -> None:  # pragma: no cover - runs in the child, before exec
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))


@pytest.mark.parametrize("limit", [32, 10])
def test_under_a_low_open_file_limit_it_works_or_says_why(many: Path, limit: int) -> None:
    """Few file descriptors (``ulimit -n``): the run succeeds with the workers it can
    start, or ends in one line saying workers could not be started — never a message
    about writing output, never a traceback."""
    done = _kernelindex(
        "validate", "-j", str(MAX_JOBS), str(many), preexec_fn=lambda: _few_files(limit)
    )
    if done.returncode == 0:
        assert done.stdout == f"{MANY} valid, 0 invalid in {MANY} files\n"
        return
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("kernelindex validate: cannot start worker process ")
    assert f"this process may open {limit} files (ulimit -n)" in line


def test_planned_workers_are_capped_by_the_cores_and_the_tasks() -> None:
    limit = worker_limit()
    assert limit == min(MAX_JOBS, 2 * len(os.sched_getaffinity(0)))
    jobs, tasks = planned_workers(MAX_JOBS, iter(range(3)))
    assert jobs == min(3, limit) and list(tasks) == [0, 1, 2]
    jobs, tasks = planned_workers(MAX_JOBS, range(10_000))
    assert jobs == limit and list(tasks) == list(range(10_000))
    assert planned_workers(5, [])[0] == 0


def test_the_library_refuses_an_absurd_jobs_too() -> None:
    with pytest.raises(ValueError, match=f"jobs must be 0 to {MAX_JOBS}"):
        Pipeline([str(ONE_SEED)], jobs=MAX_JOBS + 1)
    with pytest.raises(ValueError, match=f"jobs must be 0 to {MAX_JOBS}"):
        list(ordered_map(abs, range(3), 10**40))


def test_a_refused_fork_leaves_no_worker_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    before = children()
    monkeypatch.setattr(parallel, "worker_limit", lambda: 3)
    real_fork, calls = os.fork, []

    def fork() -> int:
        calls.append(1)
        if len(calls) == 2:
            raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN))
        return real_fork()

    monkeypatch.setattr(os, "fork", fork)
    with pytest.raises(WorkersUnavailable, match="cannot start worker process 2 of 3"):
        list(ordered_map(abs, range(10), 3))
    assert not children() - before  # the one worker started was killed and reaped
