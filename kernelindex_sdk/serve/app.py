"""The Starlette application of ``kernelindex serve``: routes, limits, the write token.

Every refusal is one line of text and its status; an error of the server's own is
one line and 500 (its traceback goes to the server's log, never to the client).
Reads are open; ``POST /records`` needs ``Authorization: Bearer <token>`` (missing:
401, wrong: 403, compared in constant time). Store work runs in threads, so a slow
add never holds up the event loop.
"""

from __future__ import annotations

import asyncio
import hmac
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import parse_qs

from orjson import dumps
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from kernelindex_sdk.base.escaping import one_line
from kernelindex_sdk.reading.kistore import keep_open
from kernelindex_sdk.serve import pages, queries, records, schemas
from kernelindex_sdk.serve.limits import Refusal, Settings

__all__ = ["make_app"]

T = TypeVar("T")

_IMMUTABLE = "public, max-age=31536000, immutable"
#: Threads that read the store, and the one that adds to it: a submission waiting for
#: its turn does not take a reader's thread.
_READERS = ThreadPoolExecutor(16, thread_name_prefix="kernelindex-read")
_WRITER = ThreadPoolExecutor(1, thread_name_prefix="kernelindex-write")


async def _in_thread(pool: ThreadPoolExecutor, work: Callable[..., T], *args: Any) -> T:
    return await asyncio.get_running_loop().run_in_executor(pool, work, *args)


def _line(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return PlainTextResponse(one_line(message) + "\n", status, headers=headers)


def _json(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(value) + b"\n", status, headers, media_type="application/json")


async def _body(request: Request, settings: Settings) -> bytes:
    """The request's body, within the size and time it may take (413, 408)."""
    limits = settings.limits
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limits.body_bytes):
        raise Refusal(413, f"request body over {limits.body_bytes} bytes; nothing stored")
    chunks: list[bytes] = []
    size = 0

    async def receive() -> None:
        nonlocal size
        async for chunk in request.stream():
            size += len(chunk)
            if size > limits.body_bytes:
                raise Refusal(413, f"request body over {limits.body_bytes} bytes; nothing stored")
            chunks.append(chunk)

    try:
        await asyncio.wait_for(receive(), limits.body_seconds)
    except asyncio.TimeoutError:
        raise Refusal(
            408, f"request body not received within {limits.body_seconds:g} s; nothing stored"
        ) from None
    return b"".join(chunks)


def _authorized(request: Request, settings: Settings) -> None:
    if settings.token is None:
        raise Refusal(403, "writes are off: the server was started without --token-file")
    given = request.headers.get("authorization")
    if given is None:
        raise Refusal(401, "writing needs a token: Authorization: Bearer <token>")
    scheme, _, token = given.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        token.strip().encode("utf-8", "replace"), settings.token
    ):
        raise Refusal(403, "the token is not the server's")


def make_app(settings: Settings) -> Starlette:
    """The application serving ``settings.store`` (this process owns it: its database
    stays open between reads)."""
    keep_open(settings.store)
    return Starlette(
        routes=_routes(settings, schemas.SchemaIndex(), pages.Site(settings)),
        exception_handlers={
            Refusal: _refused,
            404: _not_found,
            405: _not_allowed,
            Exception: _failed,
        },
    )


def _routes(settings: Settings, index: schemas.SchemaIndex, site: pages.Site) -> list[Route]:
    async def schema_file(request: Request) -> Response:
        entry = index.by_path.get(request.url.path)
        if entry is None:
            raise Refusal(404, f"no schema at {request.url.path}")
        etag = '"' + entry.id + '"'
        body = entry.path.read_bytes()
        return Response(body, media_type=schemas.SCHEMA_TYPE, headers={"ETag": etag})

    async def versions(request: Request) -> Response:
        return _json(index.versions())

    async def check(request: Request) -> Response:
        return await _check(request, settings, index)

    async def record(request: Request) -> Response:
        return await _record(request, settings)

    async def post_records(request: Request) -> Response:
        return await _post_records(request, settings)

    async def documents(request: Request) -> Response:
        return await _documents(settings)

    async def runs(request: Request) -> Response:
        return await _runs(request, settings)

    async def compare(request: Request) -> Response:
        return await _answer("compare", request, settings)

    async def history(request: Request) -> Response:
        return await _answer("history", request, settings)

    async def report(request: Request) -> Response:
        return await site.page(request.path_params["path"])

    return [
        Route("/schemas/versions.json", versions, methods=["GET"]),
        Route("/schemas/check", check, methods=["POST"]),
        Route("/schemas/{path:path}", schema_file, methods=["GET"]),
        Route("/records/{digest:path}", record, methods=["GET"]),
        Route("/records", post_records, methods=["POST"]),
        Route("/documents.jsonl", documents, methods=["GET"]),
        Route("/runs", runs, methods=["GET"]),
        Route("/compare", compare, methods=["GET"]),
        Route("/history", history, methods=["GET"]),
        Route("/report", lambda request: RedirectResponse("/report/"), methods=["GET"]),
        Route("/report/{path:path}", report, methods=["GET"]),
    ]


async def _refused(request: Request, error: Exception) -> Response:
    assert isinstance(error, Refusal)
    return _line(error.status, str(error))


async def _not_found(request: Request, error: Exception) -> Response:
    return _line(404, f"nothing at {request.url.path}")


async def _not_allowed(request: Request, error: Exception) -> Response:
    return _line(405, f"{request.method} is not allowed on {request.url.path}")


async def _failed(request: Request, error: Exception) -> Response:
    return _line(500, f"the server failed: {type(error).__name__}: {error}")


async def _check(request: Request, settings: Settings, index: schemas.SchemaIndex) -> Response:
    params = request.query_params
    against = params.get("against", "")
    entry = index.find(against)
    if entry is None:
        raise Refusal(400, f"against={against!r}: no served schema by that $id, path or kind")
    options = {
        "mode": params.get("mode", "backward"),
        "policy": params.get("policy", "strict"),
        "format_assertion": params.get("format_assertion", ""),
    }
    if options["mode"] not in schemas.MODES or options["policy"] not in schemas.POLICIES:
        raise Refusal(400, f"mode is one of {schemas.MODES}, policy one of {schemas.POLICIES}")
    posted = await _body(request, settings)
    seconds = settings.limits.query_seconds
    status, out, err = await schemas.check_schema(entry, posted, options, seconds)
    if status in (0, 1, 3):
        return Response(
            out,
            200,
            {"Kernelindex-Exit-Status": str(status)},
            media_type="application/json",
        )
    if status < 0:
        raise Refusal(503, f"schema diff {err}; stopped")
    raise Refusal(400, err or "schema diff could not read the posted schema")


async def _record(request: Request, settings: Settings) -> Response:
    wanted = request.path_params["digest"]
    if not records.DIGEST.fullmatch(wanted):
        raise Refusal(400, f"not a digest: {wanted!r} (sha256: and 64 lowercase hex digits)")
    etag = f'"{wanted}"'
    headers = {"ETag": etag, "Cache-Control": _IMMUTABLE}
    found = await _in_thread(_READERS, records.read_record, settings.store, wanted)
    if found is None:
        raise Refusal(404, f"no record {wanted} in this index")
    tags = [
        m.strip().removeprefix("W/") for m in request.headers.get("if-none-match", "").split(",")
    ]
    if "*" in tags or etag in tags:
        return Response(b"", 304, headers)
    return Response(found, 200, headers, media_type="application/json")


async def _post_records(request: Request, settings: Settings) -> Response:
    arrived = time.monotonic()
    _authorized(request, settings)
    body = await _body(request, settings)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    jsonl = kind in records.JSONL_TYPES or request.query_params.get("format") == "jsonl"
    count = records.count_documents(body, jsonl)
    limit = settings.limits.documents
    if count > limit:
        raise Refusal(413, f"{count} documents, over the limit of {limit}; nothing stored")
    deadline = arrived + settings.limits.request_seconds
    try:
        done = await _in_thread(_WRITER, records.submit, settings.store, body, jsonl, deadline)
    except records.TooSlow:
        seconds = settings.limits.request_seconds
        raise Refusal(503, f"not checked within {seconds:g} s; nothing stored") from None
    result = done.result
    if done.problems:
        status = 400 if result.unreadable else 422
        summary = f"nothing stored: {result.refused} refused, {result.unreadable} unreadable"
        text = "".join(one_line(p) + "\n" for p in [*done.problems, summary])
        return PlainTextResponse(text, status)
    answer = {
        "stored": result.stored,
        "present": result.present,
        "origin": done.label,
        "documents": done.documents,
    }
    return _json(answer, 201 if result.stored else 200)


async def _documents(settings: Settings) -> Response:
    folder = tempfile.mkdtemp(prefix="kernelindex-serve-export-")
    try:
        path = await _in_thread(_READERS, records.export_documents, settings.store, folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    cleanup = BackgroundTask(shutil.rmtree, folder, ignore_errors=True)
    return FileResponse(path, media_type="application/x-ndjson", background=cleanup)


async def _runs(request: Request, settings: Settings) -> Response:
    params = parse_qs(request.url.query, keep_blank_values=True)
    try:
        limit = min(int(params.get("limit", ["100"])[-1]), settings.limits.page_rows)
        offset = int(params.get("offset", ["0"])[-1])
    except ValueError:
        raise Refusal(400, "limit and offset are whole numbers") from None
    if limit < 1 or offset < 0:
        raise Refusal(400, "limit is at least 1, offset at least 0")
    try:
        seconds = settings.limits.query_seconds
        page = await _in_thread(
            _READERS, queries.runs_page, settings.store, params, limit, offset, seconds
        )
    except queries.QueryTimedOut as error:
        raise Refusal(503, f"the query {error}") from None
    except queries.QueryRefused as error:
        first = str(error).strip().splitlines()
        raise Refusal(400, f"where: {first[0] if first else error}") from None
    return _json(page)


async def _answer(name: str, request: Request, settings: Settings) -> Response:
    """``compare`` or ``history``'s JSON over the store, the command's exit status in
    ``Kernelindex-Exit-Status`` (a usage error, its line, 400)."""
    params = parse_qs(request.url.query, keep_blank_values=True)
    command = queries.answer_command(name, settings.store, params)
    seconds = settings.limits.query_seconds
    status, out, err = await schemas.run_bounded(command, seconds)
    if status < 0:
        raise Refusal(503, f"{name} {err}; stopped")
    if status == 2:
        raise Refusal(400, err or f"{name} could not run")
    headers = {"Kernelindex-Exit-Status": str(status)}
    return Response(out, 200, headers, media_type="application/json")
