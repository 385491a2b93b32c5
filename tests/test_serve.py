"""``kernelindex serve`` in a real process on loopback: the schema registry, records by
digest, submissions (the token, all or nothing, limits, hostile input), queries and
compare's JSON. One server for the module; each test uses records of its own."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from hypothesis import given, settings

from kernelindex_sdk.canonical import canonicalize, digest
from kernelindex_sdk.models.strategies import bundles
from kernelindex_sdk.schema.registry import default_registry
from tests.profiles import examples
from tests.serve_helpers import TOKEN, Server, token_file
from tests.store_helpers import STREAM, kernelindex, write_corpus

pytest.importorskip("duckdb")
pytest.importorskip("uvicorn")

BODY_LIMIT = 200_000
DOCUMENT_LIMIT = 40


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("serve")
    limits = ["--max-body-bytes", str(BODY_LIMIT), "--max-documents", str(DOCUMENT_LIMIT)]
    running = Server(
        folder / "index.kistore",
        *limits,
        "--body-seconds",
        "1",
        token_file=token_file(folder),
    )
    running.store = folder / "index.kistore"  # type: ignore[attr-defined]
    # Every test finds the shared stream stored, whichever worker runs it first.
    status, _, answer = running.post("/records", Path(STREAM).read_bytes(), jsonl=True)
    assert status == 201, answer
    try:
        yield running
    finally:
        running.stop()
    assert not any("Traceback" in line for line in running.log), running.log


def _bundles(tmp_path: Path, count: int, seed: int) -> list[dict]:
    path = write_corpus(tmp_path / f"corpus-{seed}.jsonl", count, seed)
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _jsonl(values: list[dict]) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


def _one_line_each(body: bytes) -> list[str]:
    text = body.decode("utf-8")
    assert text.endswith("\n") and "Traceback" not in text
    return text.splitlines()


# --- the schema registry


def test_every_shipped_schema_is_served_at_the_path_of_its_id(server: Server) -> None:
    registry = default_registry()
    for entry in registry.all_entries:
        status, headers, body = server.request("GET", urlsplit(entry.id).path)
        assert status == 200, entry.id
        assert body == entry.path.read_bytes()
        assert headers["content-type"].startswith("application/schema+json")
    status, _, body = server.request("GET", "/schemas/versions.json")
    listed = json.loads(body)["versions"]
    assert [v["apiVersion"] for v in listed] == registry.api_versions()
    for version in listed:
        assert version["status"] == registry.status(version["apiVersion"]).status
        ids = {s["$id"] for s in version["schemas"]}
        assert {e.id for e in registry.all_entries if e.api_version == version["apiVersion"]} == ids
    assert server.request("GET", "/schemas/v1alpha1/nothing.schema.json")[0] == 404


def test_schema_check_runs_schema_diff_against_a_served_schema(server: Server) -> None:
    entry = default_registry().find("Workload")
    served = entry.path.read_bytes()
    path = f"/schemas/check?against={quote(entry.id)}&mode=backward"
    status, headers, body = server.request("POST", path, served)
    assert (status, headers["kernelindex-exit-status"]) == (200, "0")
    assert json.loads(body)["compatible"] is True
    changed = json.loads(served)
    changed["$defs"]["spec"]["required"].append("shape")
    changed["$defs"]["spec"]["properties"]["shape"] = {"type": "string"}
    status, headers, body = server.request("POST", path, json.dumps(changed).encode())
    assert (status, headers["kernelindex-exit-status"]) == (200, "1")
    assert json.loads(body)["violations"]
    for hostile in (b"{not json", b"\xff\xfe{}", b"[" * 100_000):
        status, _, body = server.request("POST", path, hostile)
        assert status == 400 and len(_one_line_each(body)) == 1
        assert b"/tmp" not in body and b"kernelindex-serve-check" not in body
    status, _, body = server.request("POST", path, b" " * (BODY_LIMIT + 1))
    assert status == 413 and len(_one_line_each(body)) == 1
    status, _, body = server.request("POST", "/schemas/check?against=Nothing", served)
    assert status == 400 and len(_one_line_each(body)) == 1


# --- records by digest


def test_a_record_is_served_by_digest_canonical_and_immutable(server: Server) -> None:
    values = [json.loads(line) for line in STREAM.read_text("utf-8").splitlines()]
    status, _, body = server.post("/records", _jsonl(values), jsonl=True)
    assert status in (200, 201), body
    answer = json.loads(body)
    assert [d["digest"] for d in answer["documents"]] == [digest(v) for v in values]
    for value in values:
        wanted = digest(value)
        status, headers, body = server.request("GET", f"/records/{wanted}")
        assert status == 200
        assert body == canonicalize(value)
        assert headers["etag"] == f'"{wanted}"'
        assert "immutable" in headers["cache-control"]
        status, _, body = server.request(
            "GET", f"/records/{wanted}", headers={"If-None-Match": f'"{wanted}"'}
        )
        assert (status, body) == (304, b"")
    status, _, body = server.request("GET", "/records/sha256:" + "0" * 64)
    assert status == 404 and len(_one_line_each(body)) == 1


@pytest.mark.parametrize(
    "path",
    [
        "/records/sha256:abc",
        "/records/sha256:" + "A" * 64,
        "/records/md5:" + "0" * 64,
        "/records/sha256:" + "0" * 64 + "/x",
        "/records/sha256:..%2F..%2Fetc%2Fpasswd",
        "/records/sha256%3A" + "0" * 63 + "%00",
        "/records/..%2Fschemas%2Fversions.json",
    ],
)
def test_a_malformed_digest_is_400_in_one_line(server: Server, path: str) -> None:
    status, _, body = server.request("GET", path)
    assert status == 400
    assert len(_one_line_each(body)) == 1


# --- submissions


def test_writes_need_the_token(server: Server, tmp_path: Path) -> None:
    (bundle,) = _bundles(tmp_path, 1, seed=11)
    body = json.dumps(bundle).encode()
    for headers, expected in [
        ({}, 401),
        ({"Authorization": "Bearer wrong"}, 403),
        ({"Authorization": f"Basic {TOKEN}"}, 403),
        ({"Authorization": f"Bearer {TOKEN}x"}, 403),
    ]:
        status, _, answer = server.request("POST", "/records", body, headers)
        assert status == expected
        assert len(_one_line_each(answer)) == 1
    assert server.request("GET", f"/records/{digest(bundle['run'])}")[0] == 404


def test_an_invalid_document_refuses_the_whole_request(server: Server, tmp_path: Path) -> None:
    bundles = _bundles(tmp_path, 4, seed=12)
    bundles[2]["run"]["spec"]["observedAt"] = "2024-13-45T99:00:00Z"
    status, _, body = server.post("/records", _jsonl(bundles), jsonl=True)
    assert status == 422
    lines = _one_line_each(body)
    assert len(lines) == 2
    assert lines[0].startswith("posted/") and ".jsonl:3: /run/spec/observedAt: " in lines[0]
    assert lines[1] == "nothing stored: 1 refused, 0 unreadable"
    for bundle in bundles:
        assert server.request("GET", f"/records/{digest(bundle['run'])}")[0] == 404


def test_a_bundle_is_stored_with_every_member(server: Server, tmp_path: Path) -> None:
    (bundle,) = _bundles(tmp_path, 1, seed=13)
    status, _, body = server.post("/records", json.dumps(bundle).encode())
    assert status == 201, body
    (document,) = json.loads(body)["documents"]
    assert document["digest"] == digest(bundle["run"])
    for pointer, member in document["records"].items():
        assert member == digest(bundle[pointer.lstrip("/")])
        assert server.request("GET", f"/records/{member}")[0] == 200
    status, _, body = server.post("/records", json.dumps(bundle).encode())
    assert status == 200 and json.loads(body)["stored"] == 0


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"apiVersion": \xff}', "invalid UTF-8"),
        (b"[" * 5000 + b"]" * 5000, "nested deeper than"),
        (b'{"apiVersion": "kernelindex.dev/v1alpha1", ', ""),
        (b"", ""),
    ],
    ids=["invalid-utf8", "deep-nesting", "truncated", "empty"],
)
def test_unreadable_input_is_400_and_nothing_is_stored(
    server: Server, body: bytes, said: str
) -> None:
    status, _, answer = server.post("/records", body)
    assert status == 400
    lines = _one_line_each(answer)
    assert said in lines[0]
    assert lines[-1] == "nothing stored: 0 refused, 1 unreadable"


def test_limits_are_said_when_exceeded(server: Server, tmp_path: Path) -> None:
    status, _, body = server.post("/records", b" " * (BODY_LIMIT + 1))
    assert status == 413 and "over 200000 bytes" in _one_line_each(body)[0]
    chunks = iter([b" " * 100_000] * 3)  # no Content-Length: counted as it arrives
    status, _, body = server.post("/records", chunks)  # type: ignore[arg-type]
    assert status == 413 and len(_one_line_each(body)) == 1
    bundles = _bundles(tmp_path, 1, seed=14) * (DOCUMENT_LIMIT + 1)
    status, _, body = server.post("/records", _jsonl(bundles), jsonl=True)
    assert status == 413 and "41 documents, over the limit of 40" in _one_line_each(body)[0]
    status, _, body = server.post("/records", json.dumps(bundles).encode())  # one JSON array
    assert status == 413 and "41 documents, over the limit of 40" in _one_line_each(body)[0]
    assert server.request("GET", f"/records/{digest(bundles[0]['run'])}")[0] == 404


def _whole_answer(sock: socket.socket) -> bytes:
    """One HTTP answer, its head and as much body as its Content-Length says (the two
    may come in separate packets), or what came before the server closed."""
    answer = b""
    while True:
        head, ended, body = answer.partition(b"\r\n\r\n")
        if ended:
            length = re.search(rb"content-length: (\d+)", head.lower())
            if len(body) >= (int(length.group(1)) if length else 0):
                return answer
        chunk = sock.recv(4096)
        if not chunk:
            return answer
        answer += chunk


def test_a_slow_client_is_cut_off_with_408(server: Server) -> None:
    # A body that stops short and a head that never ends, both waiting at once.
    address = (server.host, server.port)
    with (
        socket.create_connection(address, timeout=30) as body,
        socket.create_connection(address, timeout=30) as head,
    ):
        started = time.monotonic()
        body.sendall(
            b"POST /records HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n"
            + f"Authorization: Bearer {TOKEN}\r\n\r\n".encode()
            + b'{"apiVersion": '
        )
        head.sendall(b"GET /schemas/versions.json HTTP/1.1\r\nHost: x\r\n")
        answer = _whole_answer(body)
        waited = time.monotonic() - started
        assert head.recv(4096) == b""  # closed
        assert time.monotonic() - started < 20
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"not received within 1 s; nothing stored" in answer
    assert 0.9 < waited < 20


def test_concurrent_posts_of_one_record_store_it_once(server: Server, tmp_path: Path) -> None:
    (bundle,) = _bundles(tmp_path, 1, seed=15)
    body = json.dumps(bundle).encode()
    answers: list[tuple[int, bytes]] = []

    def post() -> None:
        status, _, answer = server.post("/records", body)
        answers.append((status, answer))

    threads = [threading.Thread(target=post) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(status for status, _ in answers) == [200] * 5 + [201]
    stored = sorted(json.loads(answer)["stored"] for _, answer in answers)
    assert stored[:5] == [0] * 5 and stored[5] >= 1
    where = quote(f"digest = '{digest(bundle['run'])}'")
    status, _, page = server.request("GET", f"/runs?where={where}")
    assert status == 200 and len(json.loads(page)["runs"]) == 1


# --- queries


def test_runs_are_filtered_and_paged(server: Server, tmp_path: Path) -> None:
    bundles = _bundles(tmp_path, 7, seed=16)
    status, _, body = server.post("/records", _jsonl(bundles), jsonl=True)
    assert status == 201, body
    added = quote(f"origin = '{json.loads(body)['origin']}'")
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        status, _, page = server.request("GET", f"/runs?where={added}&limit=3&offset={offset}")
        assert status == 200
        answer = json.loads(page)
        assert len(answer["runs"]) <= 3
        seen += [run["digest"] for run in answer["runs"]]
        offset = answer["next"]
    assert sorted(seen) == sorted(digest(b["run"]) for b in bundles)
    kernel = bundles[0]["workload"]["spec"]["kernel"]
    status, _, page = server.request("GET", f"/runs?where={added}&kernel={kernel}&metric=speed")
    runs = json.loads(page)["runs"]
    assert runs and all(r["kernel"] == kernel and r["metric"] == "latency" for r in runs)
    for where in [
        "1 = ",
        "1=1) ; DROP TABLE records; --",
        "nothing_here = 1",
        "(SELECT count(*) FROM read_text('/etc/passwd')) > 0",
    ]:
        status, _, body = server.request("GET", f"/runs?where={quote(where)}")
        assert status == 400 and len(_one_line_each(body)) == 1
    assert server.request("GET", "/runs?limit=0")[0] == 400
    status, _, page = server.request("GET", "/runs?kernel=%FF%FE&gpu=%00")
    assert status == 200 and json.loads(page)["runs"] == []


def test_compare_answers_the_commands_json(server: Server) -> None:
    status, headers, body = server.request("GET", "/compare?metric=speed")
    expected = kernelindex("compare", server.store, "--metric", "speed", "--format", "json")  # type: ignore[attr-defined]
    assert status == 200, body
    assert headers["kernelindex-exit-status"] == str(expected.returncode)
    assert body.decode("utf-8") == expected.stdout


# --- kernelindex as a client


def test_store_add_posts_each_file_to_a_server_url(server: Server, tmp_path: Path) -> None:
    good = write_corpus(tmp_path / "good.jsonl", 3, seed=17)
    bad = tmp_path / "bad.json"
    (bundle,) = _bundles(tmp_path, 1, seed=18)
    bundle["run"]["spec"]["observedAt"] = "2024-13-45T99:00:00Z"
    bad.write_text(json.dumps(bundle), "utf-8")
    done = kernelindex(
        "store", "add", good, bad, "--store", server.url, env={"KERNELINDEX_TOKEN": TOKEN}
    )
    assert done.returncode == 1, done
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{bad}: /run/spec/observedAt: ")
    assert lines[-1].startswith(f"{server.url}: ") and "1 files refused in 2 files" in lines[-1]
    for line in good.read_text("utf-8").splitlines():
        assert server.request("GET", f"/records/{digest(json.loads(line)['run'])}")[0] == 200
    assert server.request("GET", f"/records/{digest(bundle['run'])}")[0] == 404
    refused = kernelindex("store", "add", good, "--store", server.url)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "401 writing needs a token" in refused.stderr


def test_validate_and_compare_read_a_server_url(server: Server, tmp_path: Path) -> None:
    done = kernelindex("validate", server.url)
    assert done.returncode == 0, done
    assert done.stdout.strip().endswith("0 invalid in 1 file")
    done = kernelindex("history", server.url, "--format", "json", "--fail-on", "none")
    assert done.returncode == 0, done
    assert json.loads(done.stdout)["series"]
    candidate = write_corpus(tmp_path / "new.jsonl", 2, seed=16)
    gate = kernelindex("compare", candidate, "--against", server.url + "/", "--format", "json")
    assert gate.returncode in (0, 1), gate
    assert json.loads(gate.stdout)["pairs"]


def test_a_server_that_cannot_be_reached_is_one_line_and_exit_2() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: refused
        for args in (["validate"], ["compare", "--against", STREAM]):
            done = kernelindex(*args, f"http://127.0.0.1:{port}/")
            assert done.returncode == 2
            assert done.stderr.count("\n") == 1 and "cannot reach the server" in done.stderr
        done = kernelindex("store", "add", STREAM, "--store", f"http://127.0.0.1:{port}")
        assert done.returncode == 2 and done.stderr.count("\n") == 1


def test_history_answers_the_commands_json(server: Server) -> None:
    status, headers, body = server.request("GET", "/history?metric=speed&points=1")
    expected = kernelindex(
        "history",
        server.store,  # type: ignore[attr-defined]
        "--metric",
        "speed",
        "--points",
        "--format",
        "json",
    )
    assert status == 200, body
    assert headers["kernelindex-exit-status"] == str(expected.returncode)
    assert body.decode("utf-8") == expected.stdout
    status, _, body = server.request("GET", "/history?threshold=lots")
    assert status == 400 and len(_one_line_each(body)) == 1


def test_the_report_is_served_from_the_live_store(server: Server, tmp_path: Path) -> None:
    status, headers, page = server.request("GET", "/report/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert page.startswith(b"<!DOCTYPE html>")
    (bundle,) = _bundles(tmp_path, 1, seed=19)
    run = digest(bundle["run"])
    assert run.encode() not in page
    assert server.post("/records", json.dumps(bundle).encode())[0] == 201
    status, _, page = server.request("GET", f"/report/records/{run.removeprefix('sha256:')}.html")
    assert status == 200, "the new run's page: in the report written again after the add"
    assert run.encode() in page
    for path in ["/report/..%2F..%2Fetc%2Fpasswd", "/report/%2e%2e/x"]:
        status, _, body = server.request("GET", path)
        assert status == 400 and len(_one_line_each(body)) == 1
    assert server.request("GET", "/report/nothing.html")[0] == 404


@settings(max_examples=examples(50), deadline=None)
@given(bundle=bundles())
def test_a_posted_bundle_is_all_stored_or_all_refused_and_served_canonical(
    server: Server, bundle: dict
) -> None:
    """The law of a submission: all of it stored — each record then served as its
    canonical form, under its digest — or none of it, said in one line a problem."""
    members = {k: v for k, v in bundle.items() if isinstance(v, dict) and "kind" in v}
    status, _, body = server.post("/records", json.dumps(bundle).encode())
    served = {k: server.request("GET", f"/records/{digest(v)}") for k, v in members.items()}
    if status in (200, 201):
        for name, record in members.items():
            code, headers, form = served[name]
            assert code == 200 and headers["etag"] == f'"{digest(record)}"'
            assert digest(json.loads(form)) == digest(record)
            assert form == canonicalize(json.loads(form))
    else:
        assert status == 422, body
        lines = _one_line_each(body)
        assert all(line.startswith("posted/") for line in lines[:-1])
        assert lines[-1].startswith("nothing stored: 1 refused")
        assert served[next(k for k in members if members[k]["kind"] == "BenchmarkRun")][0] == 404
