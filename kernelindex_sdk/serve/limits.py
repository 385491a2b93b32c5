"""What one request may ask of the server, how a request is refused, and the server's
settings as plain data."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits", "Refusal", "Settings"]


class Refusal(Exception):
    """A request refused: its status and one line saying why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one request; each exceeded is one line and its status (413, 408, 503)."""

    #: Bytes of a request body (``POST /records``, ``POST /schemas/check``).
    body_bytes: int = 16 << 20
    #: Documents in one submission (JSON Lines lines, a top-level array's elements).
    documents: int = 10_000
    #: Seconds to receive a request's body (a client that trickles it is cut off).
    body_seconds: float = 30.0
    #: Seconds from a submission's arrival to its commit; past them nothing is stored.
    request_seconds: float = 120.0
    #: Seconds a query may run (``/runs``, whose ``where`` is the caller's SQL;
    #: ``/compare``, ``/history``, ``/schemas/check``, writing the report).
    query_seconds: float = 60.0
    #: Rows of ``/runs`` per page, at most.
    page_rows: int = 1000


@dataclass(frozen=True, slots=True)
class Settings:
    """What ``kernelindex serve`` was started with."""

    store: str
    #: The write token (``--token-file``); None: writes are refused.
    token: bytes | None = None
    limits: Limits = Limits()
