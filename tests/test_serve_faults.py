"""``kernelindex serve`` killed (SIGKILL) in the middle of a submission: the store is as
it was before that request, and a restarted server serves everything committed."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from pathlib import Path

import pytest

from kernelindex_sdk.canonical import digest
from tests.serve_helpers import Server, token_file
from tests.store_helpers import write_corpus

pytest.importorskip("duckdb")
pytest.importorskip("uvicorn")


def _bundles(tmp_path: Path, count: int, seed: int) -> bytes:
    return write_corpus(tmp_path / f"corpus-{seed}.jsonl", count, seed).read_bytes()


def _runs(body: bytes) -> list[str]:
    return [digest(json.loads(line)["run"]) for line in body.splitlines()]


def _served(server: Server, digests: list[str]) -> int:
    return sum(server.request("GET", f"/records/{d}")[0] == 200 for d in digests)


def _kill_during_post(tmp_path: Path, fractions: tuple[float, ...]) -> None:
    store, token = tmp_path / "index.kistore", token_file(tmp_path)
    server = Server(store, token_file=token)
    try:
        committed = _bundles(tmp_path, 5, seed=21)
        assert server.post("/records", committed, jsonl=True)[0] == 201
        timing = _bundles(tmp_path, 150, seed=22)
        started = time.monotonic()
        assert server.post("/records", timing, jsonl=True)[0] == 201
        whole = time.monotonic() - started
        kept = _runs(committed) + _runs(timing)
        for seed, fraction in enumerate(fractions, start=23):
            doomed = _bundles(tmp_path, 150, seed=seed)
            thread = threading.Thread(
                target=_post_ignoring_errors, args=(server, doomed), daemon=True
            )
            thread.start()
            time.sleep(whole * fraction)
            server.kill()
            thread.join(30)
            server = Server(store, token_file=token)
            assert _served(server, kept) == len(kept)
            got = _served(server, _runs(doomed))
            assert got in (0, 150), f"killed at {fraction:.0%}: {got} of 150 runs stored"
            if got:
                kept += _runs(doomed)
    finally:
        server.stop()


def _post_ignoring_errors(server: Server, body: bytes) -> None:
    with contextlib.suppress(OSError):  # the server was killed under it
        server.post("/records", body, jsonl=True)


def test_a_killed_submission_leaves_the_store_as_before_and_a_restart_serves_it(
    tmp_path: Path,
) -> None:
    _kill_during_post(tmp_path, (0.85,))


@pytest.mark.slow
def test_killed_at_many_moments_a_submission_is_all_or_nothing(tmp_path: Path) -> None:
    _kill_during_post(tmp_path, (0.1, 0.4, 0.6, 0.75, 0.9, 0.95, 1.0, 1.1))


def test_a_query_past_its_time_is_stopped_and_the_store_is_free_again(tmp_path: Path) -> None:
    from urllib.parse import quote

    server = Server(
        tmp_path / "index.kistore", "--query-seconds", "1", token_file=token_file(tmp_path)
    )
    try:
        endless = quote("(SELECT count(*) FROM range(1000000000000) a) > 0")
        started = time.monotonic()
        status, _, body = server.request("GET", f"/runs?where={endless}")
        assert status == 503, body
        assert body.decode().endswith("took longer than 1 s; stopped\n") and body.count(b"\n") == 1
        assert time.monotonic() - started < 15
        body = _bundles(tmp_path, 2, seed=31)
        assert server.post("/records", body, jsonl=True)[0] == 201
        status, _, page = server.request("GET", "/runs")
        assert status == 200 and len(json.loads(page)["runs"]) == 2
    finally:
        server.stop()
    assert not any("Traceback" in line for line in server.log), server.log


@pytest.mark.slow  # four CLI processes: in .ci/run
def test_a_server_that_cannot_start_says_why_in_one_line(tmp_path: Path) -> None:
    import socket

    from tests.store_helpers import kernelindex

    store = tmp_path / "index.kistore"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = kernelindex("serve", store, "--port", port, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    foreign = tmp_path / "notes.kistore"
    foreign.write_text("not a store\n", "utf-8")
    done = kernelindex("serve", foreign, "--port", "0", timeout=60)
    assert done.returncode == 2 and "not a kernelindex store" in done.stderr
    assert foreign.read_text("utf-8") == "not a store\n"
    empty = tmp_path / "token"
    empty.write_text("\n", "utf-8")
    done = kernelindex("serve", store, "--port", "0", "--token-file", empty, timeout=60)
    assert done.returncode == 2 and "must hold one line" in done.stderr
    hidden = tmp_path / "hidden"
    (hidden / "starlette").mkdir(parents=True)
    (hidden / "starlette" / "__init__.py").write_text("raise ImportError('hidden')\n", "utf-8")
    done = kernelindex("serve", store, env={"PYTHONPATH": str(hidden)}, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "pip install 'kernelindex-sdk[serve]'" in done.stderr
    assert "pip install '.[serve]'" in done.stderr
