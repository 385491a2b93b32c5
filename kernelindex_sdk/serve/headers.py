"""uvicorn's HTTP/1.1 protocol (h11) with a deadline for each request's headers."""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["with_header_deadline"]


def with_header_deadline(seconds: float) -> type[H11Protocol]:
    """The protocol class, closing a connection whose request's headers have not all
    arrived ``seconds`` after it opened (or after its last response)."""

    class HeaderDeadline(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE and self._deadline is not None:
                self._deadline.cancel()  # the headers are in: the body has its own limit
                self._deadline = None

        def connection_lost(self, exc: Exception | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline = self.loop.call_later(seconds, self._too_slow)

        def _too_slow(self) -> None:
            self._deadline = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadline
