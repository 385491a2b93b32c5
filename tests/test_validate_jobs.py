"""``kernelindex validate --jobs N`` reports exactly what ``--jobs 1`` reports."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mixed_inputs import seed as mixed_seed
from mixed_inputs import write_mixed

from kernelindex_sdk.cli.validate_cmd import ValidateOptions, run_validate
from kernelindex_sdk.validating import pipeline

ROOT = Path(__file__).resolve().parent.parent


def _run(
    capsys: pytest.CaptureFixture[str], paths: list[str], **options: Any
) -> tuple[int, str, str]:
    status = run_validate(ValidateOptions(tuple(paths), **options))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def inputs(tmp_path: Path) -> list[str]:
    """Files and JSON Lines with valid, invalid and unreadable documents."""
    return write_mixed(tmp_path, lines=300)


#: Each reporter with small chunks (many per file: the splitting at work), and the
#: plain text with chunks larger than any input; the other reporters with large chunks
#: are in the slow set (three runs of the validator each).
_JOBS_CASES = [
    pytest.param({}, 4096, id="text-4096"),
    pytest.param({"format": "json"}, 4096, id="json-4096"),
    pytest.param({"verbose": True}, 4096, id="verbose-4096"),
    pytest.param({"strict_refs": True}, 4096, id="strict-refs-4096"),
    pytest.param({}, 1 << 20, id="text-1048576"),
    pytest.param({"format": "json"}, 1 << 20, id="json-1048576", marks=pytest.mark.slow),
    pytest.param({"verbose": True}, 1 << 20, id="verbose-1048576", marks=pytest.mark.slow),
    pytest.param({"strict_refs": True}, 1 << 20, id="strict-refs-1048576", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("options", "chunk"), _JOBS_CASES)
def test_jobs_report_what_one_process_reports(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    inputs: list[str],
    chunk: int,
    options: dict[str, Any],
) -> None:
    monkeypatch.setattr(pipeline, "CHUNK_BYTES", chunk)
    one = _run(capsys, inputs, jobs=1, **options)
    assert one[0] == 2  # something unreadable
    assert "invalid" in one[1]
    for jobs in (2, 3):
        assert _run(capsys, inputs, jobs=jobs, **options) == one


def test_jobs_zero_means_every_core(capsys: pytest.CaptureFixture[str]) -> None:
    seeds = str(ROOT / "tests" / "examples" / "valid" / "seeds")
    assert _run(capsys, [seeds], jobs=0) == _run(capsys, [seeds])


def test_stdin_runs_in_one_process(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import sys

    seed = json.dumps(mixed_seed()).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(seed)))
    status, out, _ = _run(capsys, ["-"], jobs=2)
    assert status == 0
    assert out.strip().endswith("1 valid, 0 invalid in 1 file")


@pytest.fixture
def failing_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every task raises ValueError("boom") in a worker process (not in this one)."""
    parent = os.getpid()
    real = pipeline.Pipeline._run_task

    def flaky(self: pipeline.Pipeline, task: Any) -> Any:
        if os.getpid() != parent:
            raise ValueError("boom")
        return real(self, task)

    monkeypatch.setattr(pipeline.Pipeline, "_run_task", flaky)


@pytest.mark.usefixtures("failing_workers")
def test_a_failing_worker_fails_the_run(
    capsys: pytest.CaptureFixture[str], inputs: list[str]
) -> None:
    """A bug in a worker surfaces in the parent; it is never a silent partial report."""
    status, _, err = _run(capsys, inputs, jobs=2)
    assert status == 2
    assert err.startswith("kernelindex validate: worker process ")
    assert err.strip().endswith(": ValueError: boom (rerun with --jobs 1)")
    assert len(err.strip().splitlines()) == 1


def test_unset_jobs_give_the_same_report(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, inputs: list[str]
) -> None:
    monkeypatch.setattr(pipeline, "AUTO_MIN_FILES", 10)
    monkeypatch.setattr("kernelindex_sdk.base.parallel.default_jobs", lambda: 2)
    assert _run(capsys, inputs) == _run(capsys, inputs, jobs=1)
