"""Running the application: uvicorn on a socket bound first, so the address said on
start-up is the one served (port 0 picks a free port, and the line names it).

uvicorn gives a connection no deadline for its request's headers (its keep-alive
timeout runs only between requests, and any byte resets it): a client sending a
header a byte at a time would hold its connection for ever. Here each connection has
``body_seconds`` from its opening (and from each response) to the end of its next
request's headers; past them it is closed."""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable

from kernelindex_sdk.serve.limits import Settings

__all__ = ["serve"]


def serve(settings: Settings, host: str, port: int, say: Callable[[str], None]) -> None:
    """Serve ``settings.store`` on ``host:port`` until interrupted (SIGINT, SIGTERM).

    Raises ``OSError`` when the address cannot be bound."""
    import uvicorn

    from kernelindex_sdk.serve.app import make_app
    from kernelindex_sdk.serve.headers import with_header_deadline

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(256)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    config = uvicorn.Config(
        make_app(settings),
        log_level="warning",
        access_log=False,
        timeout_keep_alive=5,
        server_header=False,
        lifespan="off",
        http=with_header_deadline(settings.limits.body_seconds),
    )
    server = uvicorn.Server(config)
    say(f"serving {settings.store} on http://{shown}:{bound}")
    # uvicorn stops gracefully on SIGTERM, then raises the signal again; handled, it
    # ends the process as an exit (status 143) that runs the clean-ups, not as a kill.
    signal.signal(signal.SIGTERM, _terminated)
    server.run(sockets=[sock])


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
