"""A bound on the time a request may take to arrive (issue 51, low: slow headers and bodies
were held open without end). uvicorn (0.55, the h11 protocol) times out an idle keep-alive
connection only after a response; a client that opens a connection and sends half a request
line, or headers and then a body a byte a minute, held a connection and its memory for as
long as it liked.

Here the request line, the headers and the body together must arrive within REQUEST_S
seconds of the connection opening (or of the first byte of the next request on a kept-alive
one); otherwise the connection is closed. The clock stops once the whole request is in: the
time the app takes to answer is not bounded here. The header size is already bounded by h11
(16 KiB), a form's body by forms.MAX_FORM_BYTES.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

REQUEST_S = 10.0  # generous for a browser on loopback or a LAN: its requests arrive in milliseconds


class Deadline(H11Protocol):
    """uvicorn's h11 protocol, with the connection closed when a request has not fully
    arrived within `limit_s` seconds."""

    limit_s = REQUEST_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._disarm()  # the request is in: the app's time is its own
        elif self._deadline is None:
            self._arm()  # the first bytes of the next request on a kept-alive connection

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.limit_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing() and self.conn.their_state not in (h11.DONE, h11.MUST_CLOSE):
            self.transport.close()


def protocol(limit_s: float = REQUEST_S) -> type[Deadline]:
    """The protocol class uvicorn.Config(http=…) takes, with this bound."""
    return type("Deadline", (Deadline,), {"limit_s": limit_s})
