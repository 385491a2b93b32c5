"""``kernelindex serve STORE``: the index over HTTP (docs/serve.md).

Click parses and checks what can be checked before serving — the extra installed, the
token file readable and not empty, the store usable (made if missing) — each failure
one line and exit 2; then :mod:`kernelindex_sdk.serve` serves until interrupted.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from kernelindex_sdk.base.escaping import one_line


def _fail(message: str) -> NoReturn:
    sys.stderr.write(one_line(f"kernelindex serve: {message}") + "\n")
    sys.exit(2)


def _say(message: str) -> None:
    sys.stderr.write(one_line(f"kernelindex serve: {message}") + "\n")
    sys.stderr.flush()


def _token(path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            token = handle.read(4097).strip()
    except OSError as error:
        _fail(f"{path}: cannot read the token file: {error.strerror or error}")
    if not token or len(token) > 4096 or b"\n" in token:
        _fail(f"{path}: the token file must hold one line of 1 to 4096 bytes")
    return token


@click.command("serve")
@click.argument("store")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8080, show_default=True,
    help="The port (0: any free port, said on start-up).",
)  # fmt: skip
@click.option(
    "--token-file",
    default=None,
    help="A file holding the write token (POST /records needs Authorization: Bearer"
    " TOKEN). Without it, the index is read-only.",
)
@click.option(
    "--max-body-bytes", type=click.IntRange(1), default=16 << 20, show_default=True,
    help="The largest request body.",
)  # fmt: skip
@click.option(
    "--max-documents", type=click.IntRange(1), default=10_000, show_default=True,
    help="The most documents in one submission.",
)  # fmt: skip
@click.option(
    "--request-seconds", type=click.FloatRange(0.001), default=120.0, show_default=True,
    help="Seconds a submission may take to check before its commit (else nothing stored).",
)  # fmt: skip
@click.option(
    "--body-seconds", type=click.FloatRange(0.001), default=30.0, show_default=True,
    help="Seconds a client may take to send a request body (a slow one gets 408).",
)  # fmt: skip
@click.option(
    "--query-seconds", type=click.FloatRange(0.001), default=60.0, show_default=True,
    help="Seconds a query may run: /runs, /compare, /history, /schemas/check, the report.",
)  # fmt: skip
def serve_command(
    store: str,
    host: str,
    port: int,
    token_file: str | None,
    max_body_bytes: int,
    max_documents: int,
    request_seconds: float,
    body_seconds: float,
    query_seconds: float,
) -> None:
    """Serve the schemas, the records of STORE and queries over HTTP.

    One process owns STORE (made if missing): clients read and add through it. Reads
    are open; POST /records needs the token of --token-file. Stops on Ctrl-C or
    SIGTERM. Exit status: 2 when it cannot start (address in use, unusable store).
    """
    from kernelindex_sdk.serve import INSTALL_HINT

    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        _fail(f"needs Starlette and uvicorn: {INSTALL_HINT}")
    from kernelindex_sdk.reading.kistore import StoreError, connect
    from kernelindex_sdk.serve.limits import Limits, Settings
    from kernelindex_sdk.serve.running import serve

    token = _token(token_file)
    try:
        with connect(store, read_only=False, create=True, appending=True, wait_s=5.0):
            pass
    except StoreError as error:
        _fail(str(error))
    except OSError as error:
        _fail(f"{store}: cannot make the store: {error.strerror or error}")
    limits = Limits(
        body_bytes=max_body_bytes,
        documents=max_documents,
        request_seconds=request_seconds,
        body_seconds=body_seconds,
        query_seconds=query_seconds,
    )
    try:
        serve(Settings(store=store, token=token, limits=limits), host, port, _say)
    except OSError as error:
        _fail(f"cannot listen on {host}:{port}: {error.strerror or error}")
