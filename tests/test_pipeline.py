"""The document pipeline: one loop, the same results for every number of workers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mixed_inputs import LIMIT, SEEDS, write_mixed
from profiles import examples

from kernelindex_sdk.base.parallel import WorkerFailed
from kernelindex_sdk.reading.intake import Document
from kernelindex_sdk.reading.sources import iter_documents
from kernelindex_sdk.schema.versionstatus import VersionWatch
from kernelindex_sdk.validating import pipeline as pipeline_module
from kernelindex_sdk.validating.digesting import DigestSession
from kernelindex_sdk.validating.pipeline import (
    PayloadChecker,
    Pipeline,
    QuickChecker,
    RangeTask,
    Tally,
    _range_documents,
    _RangeProgress,
)
from kernelindex_sdk.validating.validation import Item, ValidationSession


@pytest.fixture
def mixed(tmp_path: Path) -> list[str]:
    return write_mixed(tmp_path)


def _outcome(paths: list[str], **options: Any) -> tuple[list[Any], Tally, tuple[Any, ...]]:
    run = Pipeline(paths, max_document_bytes=LIMIT, **options)
    items = list(run)
    return items, run.tally, run.late


@pytest.mark.parametrize(
    "options",
    [{}, {"report": "problems"}, {"strict_refs": True}, {"checker": "digest"}],
    ids=["all", "problems", "strict-refs", "digest"],
)
def test_every_job_count_gives_the_same_items_tally_and_late_problems(
    monkeypatch: pytest.MonkeyPatch, mixed: list[str], options: dict[str, Any]
) -> None:
    monkeypatch.setattr(pipeline_module, "CHUNK_BYTES", 4096)  # many ranges per file

    def run(jobs: int) -> tuple[list[Any], Tally, tuple[Any, ...]]:
        chosen = dict(options)
        if chosen.get("checker") == "digest":
            chosen["checker"] = DigestSession()
        return _outcome(mixed, jobs=jobs, **chosen)

    one = run(1)
    assert one[1].unreadable and one[1].valid + one[1].invalid > 400
    for jobs in (2, 3):
        assert run(jobs) == one


def test_the_library_reports_what_the_cli_counts(mixed: list[str]) -> None:
    run = Pipeline(mixed, max_document_bytes=LIMIT)
    items = list(run)
    assert run.jobs_used == 1
    assert run.tally.valid + run.tally.invalid + run.tally.unreadable == len(items)
    assert run.tally.files == 41 + 3 + 4  # files/, three JSON Lines files, the seeds
    assert run.tally.exit_status() == 2
    unreadable = [item for item in items if item.unreadable]
    assert {item.problems[0].code for item in unreadable} >= {
        "malformed-json",
        "duplicate-key",
        "document-too-large",
        "byte-order-mark",
        "empty-document",
        "unreadable-file",
    }
    # A line's items carry the line; whole files do not.
    assert all(item.line for item in items if item.source.endswith("many.jsonl"))
    whole = [item for item in items if item.source.endswith(".json") and not item.unreadable]
    assert whole and all(item.line is None for item in whole)


def test_a_speed_switch_never_changes_a_result(mixed: list[str]) -> None:
    """strict_json skips run digests until asked for: the items are equal all the same."""
    fast = list(Pipeline(mixed, checker=ValidationSession(strict_json=True)))
    slow = list(Pipeline(mixed, checker=ValidationSession(strict_json=False)))
    assert fast == slow
    runs = [ref for item in fast for ref in item.records if ref.kind == "BenchmarkRun"]
    assert runs and all(ref.digest and ref.digest.startswith("sha256:") for ref in runs)


def test_a_pipeline_runs_once_and_checks_its_arguments() -> None:
    run = Pipeline([str(SEEDS)])
    assert run.run().valid == 4
    with pytest.raises(RuntimeError):
        list(run)
    with pytest.raises(TypeError):
        Pipeline(str(SEEDS))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Pipeline([str(SEEDS)], report="some")  # type: ignore[arg-type]


def test_nothing_found_is_an_error(tmp_path: Path) -> None:
    run = Pipeline([str(tmp_path)])
    assert run.run() == Tally()
    assert run.tally.exit_status() == 2


def test_unset_jobs_fork_only_for_large_inputs(
    monkeypatch: pytest.MonkeyPatch, mixed: list[str]
) -> None:
    monkeypatch.setattr("kernelindex_sdk.base.parallel.default_jobs", lambda: 4)
    small = Pipeline(mixed, jobs=None)
    small.run()
    assert small.jobs_used == 1
    monkeypatch.setattr(pipeline_module, "AUTO_MIN_FILES", 20)
    monkeypatch.setattr(pipeline_module, "BATCH_FILES", 1)  # work for four workers
    large = Pipeline(mixed, jobs=None)
    large.run()
    assert large.jobs_used == 4
    assert large.tally == small.tally
    with_stdin = Pipeline(["-", *mixed], jobs=3, stdin=__import__("io").BytesIO(b"{}"))
    with_stdin.run()
    assert with_stdin.jobs_used == 1


def test_a_worker_failure_ends_the_run(monkeypatch: pytest.MonkeyPatch, mixed: list[str]) -> None:
    parent = os.getpid()
    real = Pipeline._run_task

    def flaky(self: Pipeline, task: Any) -> Any:
        if os.getpid() != parent:
            raise ValueError("boom")
        return real(self, task)

    monkeypatch.setattr(Pipeline, "_run_task", flaky)
    with pytest.raises(WorkerFailed, match="ValueError: boom"):
        list(Pipeline(mixed, jobs=2))


# --------------------------------------------------------------------------- ranges

_LINE = st.one_of(
    st.just(b""),
    st.just(b"   "),
    st.just(b"{"),
    st.builds(lambda n: b'{"n": %d}' % n, st.integers(0, 10**6)),
    st.builds(lambda n: b'["' + b"x" * n + b'"]', st.integers(0, 300)),
)


@settings(max_examples=examples(300), deadline=None)
@given(
    lines=st.lists(_LINE, max_size=40),
    final_newline=st.booleans(),
    chunk=st.integers(1, 64),
    crlf=st.booleans(),
)
def test_ranges_read_every_line_exactly_once(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[bytes],
    final_newline: bool,
    chunk: int,
    crlf: bool,
) -> None:
    """Cut anywhere, the ranges of a file give back exactly the whole-file read."""
    end = b"\r\n" if crlf else b"\n"
    data = end.join(lines) + (end if final_newline and lines else b"")
    path = tmp_path_factory.mktemp("ranges") / "x.jsonl"
    path.write_bytes(data)
    whole = [
        (d.line, d.value) if isinstance(d, Document) else (d.problem.line, d.problem.code)
        for d in iter_documents(str(path), max_bytes=200)
        if isinstance(d, Document) or d.problem.code != "empty-document"
    ]
    pieces: list[Any] = []
    offset = 0
    start = 0
    while True:
        last = start + chunk >= len(data)
        task = RangeTask(str(path), start, None if last else start + chunk)
        counter = _RangeProgress()
        for d in _range_documents(task, 200, counter):
            if isinstance(d, Document):
                pieces.append((d.line + offset if d.line else None, d.value))
            else:
                line = d.problem.line
                pieces.append((line + offset if line else None, d.problem.code))
        offset += counter.lines
        if last:
            break
        start += chunk
    assert pieces == whole


def test_lines_across_and_beyond_the_read_buffer_are_read_whole(tmp_path: Path) -> None:
    """A JSON Lines file is read through ``LINE_BUFFER_BYTES``: lines that cross the
    buffer's edge, and one longer than the buffer, come back whole and numbered, read
    whole or in ranges cut near the buffer's edges."""
    import json

    from kernelindex_sdk.reading.sources import LINE_BUFFER_BYTES

    sizes = [10, LINE_BUFFER_BYTES - 40, 7, 3 * LINE_BUFFER_BYTES, 1, LINE_BUFFER_BYTES, 12]
    values = [{"n": n, "pad": "x" * size} for n, size in enumerate(sizes)]
    data = b"".join(json.dumps(v).encode() + b"\n" for v in values)
    path = tmp_path / "wide.jsonl"
    path.write_bytes(data)
    whole = [(d.line, d.value) for d in iter_documents(str(path)) if isinstance(d, Document)]
    assert whole == [(n + 1, v) for n, v in enumerate(values)]
    edge = LINE_BUFFER_BYTES
    for cut in (edge - 1, edge, edge + 1, 2 * edge):
        pieces: list[Any] = []
        offset = 0
        for task in (RangeTask(str(path), 0, cut), RangeTask(str(path), cut, None)):
            counter = _RangeProgress()
            for d in _range_documents(task, 1 << 24, counter):
                assert isinstance(d, Document)
                assert d.line is not None
                pieces.append((d.line + offset, d.value))
            offset += counter.lines
        assert pieces == whole, cut


# --------------------------------------------------------------------------- checkers


class _Counting(ValidationSession):
    """A session that also makes a payload: the documents it checked in full (their
    lines), handed over at the end of each task."""

    def __init__(self) -> None:
        super().__init__(strict_json=True)
        self.lines: list[int | None] = []
        self.added: list[tuple[list[int | None], int]] = []

    def check_document(
        self, value: Any, *, source: str = "<input>", line: int | None = None
    ) -> list[Item]:
        self.lines.append(line)
        return super().check_document(value, source=source, line=line)

    def take_payload(self) -> list[int | None]:
        lines, self.lines = self.lines, []
        return lines

    def add_payload(self, payload: list[int | None], offset: int) -> None:
        self.added.append((payload, offset))


def test_what_a_checker_does_besides_is_found_by_its_protocols(
    tmp_path: Path, seed_bundle: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checker is a QuickChecker (JSON Lines read with a tail memo, where only problems
    are reported) or a PayloadChecker (its workers' payloads reach it in the parent, in
    input order) by what it has: a session is the first; a VersionWatch around one, which
    answers no shared tail, and a DigestSession are neither."""
    session = ValidationSession(strict_json=True)
    assert isinstance(session, QuickChecker) and not isinstance(session, PayloadChecker)
    for checker in (VersionWatch(session), DigestSession()):
        assert not isinstance(checker, (QuickChecker, PayloadChecker))
        assert Pipeline([], checker=checker, report="problems")._tail_memo() is None
    assert Pipeline([], checker=session, report="problems")._tail_memo() is not None
    assert Pipeline([], checker=session, report="all")._tail_memo() is None
    # Payloads: the lines checked in full (six in seven hold a run of an unknown kind).
    monkeypatch.setattr(pipeline_module, "CHUNK_BYTES", 4096)
    lines = []
    for n in range(40):
        bundle = {
            **seed_bundle,
            "run": {**seed_bundle["run"], "kind": "Nope" if n % 7 else "BenchmarkRun"},
        }
        lines.append(json.dumps(bundle).encode() + b"\n")
    path = tmp_path / "b.jsonl"
    path.write_bytes(b"".join(lines))
    checker = _Counting()
    assert isinstance(checker, PayloadChecker)
    run = Pipeline([str(path)], checker=checker, report="problems", jobs=2)
    problems = [item.line for item in run]
    assert problems == [n + 1 for n in range(40) if n % 7]
    offsets = [offset for _, offset in checker.added]
    assert len(checker.added) > 2 and offsets == sorted(offsets)
    assert [
        offset + line for payload, offset in checker.added for line in payload if line
    ] == problems
