"""``kernelindex validate --jobs N`` reports exactly what ``--jobs 1`` reports."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kernelindex_sdk.cli import parallel
from kernelindex_sdk.cli.validate_cmd import ValidateOptions, run_validate

ROOT = Path(__file__).resolve().parent.parent


def _run(
    capsys: pytest.CaptureFixture[str], paths: list[str], **options: Any
) -> tuple[int, str, str]:
    status = run_validate(ValidateOptions(tuple(paths), **options))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _seed() -> dict[str, Any]:
    path = sorted((ROOT / "examples" / "seeds").glob("*.json"))[0]
    value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return value


@pytest.fixture
def inputs(tmp_path: Path) -> list[str]:
    """Files and JSON Lines with valid, invalid and unreadable documents."""
    seed = _seed()
    bad = json.loads(json.dumps(seed))
    bad["run"]["spec"]["unexpected"] = 1
    lines = []
    for index in range(300):
        if index % 37 == 5:
            lines.append(json.dumps(bad))
        elif index % 53 == 7:
            lines.append('{"broken": ')
        elif index % 41 == 3:
            lines.append("   ")
        else:
            lines.append(json.dumps(seed))
    (tmp_path / "many.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "blank.jsonl").write_text("\n" * 5000, encoding="utf-8")
    (tmp_path / "bom.jsonl").write_bytes(b"\xff\xfe" + b"x" * 5000 + b"\n{}\n")
    files = tmp_path / "files"
    files.mkdir()
    for index in range(70):
        value = bad if index % 9 == 4 else seed
        (files / f"{index:03d}.json").write_text(json.dumps(value), encoding="utf-8")
    (files / "050-broken.json").write_text("{", encoding="utf-8")
    return [
        str(files),
        str(tmp_path / "many.jsonl"),
        str(tmp_path / "blank.jsonl"),
        str(tmp_path / "bom.jsonl"),
        str(tmp_path / "missing.json"),
        str(ROOT / "examples"),
    ]


@pytest.mark.parametrize("chunk", [300, 1 << 20])
@pytest.mark.parametrize(
    "options",
    [{}, {"format": "json"}, {"verbose": True}, {"strict_refs": True}],
    ids=["text", "json", "verbose", "strict-refs"],
)
def test_jobs_report_what_one_process_reports(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    inputs: list[str],
    chunk: int,
    options: dict[str, Any],
) -> None:
    monkeypatch.setattr(parallel, "CHUNK_BYTES", chunk)
    one = _run(capsys, inputs, **options)
    assert one[0] == 2  # something unreadable
    assert "invalid" in one[1]
    for jobs in (2, 3):
        assert _run(capsys, inputs, jobs=jobs, **options) == one


def test_chunks_cover_every_line_once(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"".join(b'{"n": %d}\n' % i for i in range(1000)) + b'{"n": "last"}')
    tasks = list(parallel._chunks(str(path), size=128))
    assert len(tasks) > 10
    lines = 0
    for task in tasks:
        assert isinstance(task, parallel.LinesTask)
        assert task.first_line == lines + 1
        lines += task.data.count(b"\n")
    assert b"".join(t.data for t in tasks if isinstance(t, parallel.LinesTask)) == path.read_bytes()
    assert [t.last for t in tasks if isinstance(t, parallel.LinesTask)][-1]


def test_jobs_zero_means_every_core(capsys: pytest.CaptureFixture[str]) -> None:
    assert parallel.default_jobs() >= 1
    seeds = str(ROOT / "examples" / "seeds")
    assert _run(capsys, [seeds], jobs=0) == _run(capsys, [seeds])


def test_stdin_runs_in_one_process(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import sys

    seed = json.dumps(_seed()).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(seed)))
    status, out, _ = _run(capsys, ["-"], jobs=2)
    assert status == 0
    assert out.strip().endswith("1 valid, 0 invalid in 1 files")


@pytest.fixture
def whole_files(inputs: list[str]) -> list[str]:
    """The inputs less the JSON Lines: the forked path (no pool) takes these."""
    return [path for path in inputs if not path.endswith(".jsonl")]


@pytest.mark.parametrize(
    "options",
    [{}, {"format": "json"}, {"verbose": True}, {"strict_refs": True}],
    ids=["text", "json", "verbose", "strict-refs"],
)
def test_forked_jobs_report_what_one_process_reports(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    whole_files: list[str],
    options: dict[str, Any],
) -> None:
    used: list[int] = []
    real = parallel._forked_results

    def spy(work: Any, jobs: int, *args: Any) -> Any:
        used.append(jobs)
        return real(work, jobs, *args)

    monkeypatch.setattr(parallel, "_forked_results", spy)
    one = _run(capsys, whole_files, jobs=1, **options)
    assert one[0] == 2 and "invalid" in one[1]
    for jobs in (2, 3, 5):
        assert _run(capsys, whole_files, jobs=jobs, **options) == one
    assert used == [2, 3, 5]


@pytest.fixture
def failing_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every task raises ValueError("boom") in a worker process (not in this one)."""
    parent = os.getpid()
    real = parallel.run_task_in

    def flaky(session: Any, task: Any, *, verbose: bool) -> Any:
        if os.getpid() != parent:
            raise ValueError("boom")
        return real(session, task, verbose=verbose)

    monkeypatch.setattr(parallel, "run_task_in", flaky)


@pytest.mark.usefixtures("failing_workers")
def test_a_failing_worker_fails_the_run(
    capsys: pytest.CaptureFixture[str], whole_files: list[str]
) -> None:
    """A bug in a worker surfaces in the parent; it is never a silent partial report."""
    status, _, err = _run(capsys, whole_files, jobs=2)
    assert status == 2
    assert err.startswith("kernelindex validate: worker process ")
    assert err.strip().endswith("failed: ValueError: boom (rerun with --jobs 1)")
    assert len(err.strip().splitlines()) == 1


def test_abandoned_forked_results_leave_no_workers(whole_files: list[str]) -> None:
    stream = parallel.results(tuple(whole_files), 3, strict_refs=False, verbose=False)
    next(stream)
    stream.close()  # stops and reaps the workers
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_unset_jobs_forks_only_for_large_inputs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, inputs: list[str]
) -> None:
    monkeypatch.setattr(parallel, "default_jobs", lambda: 4)
    assert parallel.auto_jobs(tuple(inputs)) == 1  # 75 files, 23 KB of JSON Lines
    assert parallel.auto_jobs(("-", *inputs)) == 1
    monkeypatch.setattr(parallel, "AUTO_MIN_FILES", 50)
    assert parallel.auto_jobs(tuple(inputs)) == 4
    monkeypatch.setattr(parallel, "AUTO_MIN_FILES", 10**6)
    monkeypatch.setattr(parallel, "AUTO_MIN_JSONL_BYTES", 10_000)
    assert parallel.auto_jobs(tuple(inputs)) == 4
    monkeypatch.setattr(parallel, "default_jobs", lambda: 1)
    assert parallel.auto_jobs(tuple(inputs)) == 1
    # Whatever it decides, the report is the same.
    monkeypatch.setattr(parallel, "default_jobs", lambda: 2)
    assert _run(capsys, inputs) == _run(capsys, inputs, jobs=1)


@pytest.mark.usefixtures("failing_workers")
def test_a_failing_pool_worker_fails_the_run(
    capsys: pytest.CaptureFixture[str], inputs: list[str]
) -> None:
    """The same for JSON Lines, which go to a pool of workers."""
    status, _, err = _run(capsys, inputs, jobs=2)
    assert status == 2
    assert err.strip() == (
        "kernelindex validate: a worker process failed: ValueError: boom (rerun with --jobs 1)"
    )
