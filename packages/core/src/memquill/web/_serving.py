"""Bounded connections for uvicorn: a deadline for each request, a cap on open connections.

uvicorn waits forever for the first request of a connection and for a body sent a byte at a
time, so idle or slow clients could hold every file handle. :func:`bounded_protocol` gives
uvicorn's h11 protocol two rules:

- A connection must deliver a complete request (headers and body) within ``request_timeout``
  seconds of opening, or of its previous response; otherwise it is closed. A request being
  answered (a long response, an event stream) is not limited.
- At most ``max_connections`` are open. A new one displaces the oldest connection still waiting
  for its request (idle or slow); when every connection is busy with a request, the new one gets
  503 and is closed. Normal clients, which send their request at once, keep working meanwhile.

Neither server keeps an access log, so no request line (and no token in it) is logged.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Final

DEFAULT_REQUEST_TIMEOUT: Final = 10.0
"""Seconds a connection has to deliver a complete request."""

DEFAULT_MAX_CONNECTIONS: Final = 100
"""Connections open at once."""

_BUSY: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 12\r\n\r\nServer busy."
)


def bounded_protocol(
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with the two rules above (pass it as ``uvicorn.Config(http=...)``).

    Raises:
        ValueError: a limit that is not positive.
    """
    if not request_timeout > 0 or max_connections < 1:
        raise ValueError("the request timeout and the connection cap must be positive")
    from uvicorn.protocols.http.h11_impl import H11Protocol  # only a server needs uvicorn

    class BoundedH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._deadline: asyncio.TimerHandle | None = None
            self._waiting_since = 0.0

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self._arm()
            if len(self.connections) > max_connections:
                self._make_room()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            cycle: Any = self.cycle  # None until a request's headers arrived
            if cycle is not None and not cycle.more_body:
                self._disarm()  # the request is complete: answering it is not limited

        def on_response_complete(self) -> None:
            if not self.transport.is_closing():
                self._arm()  # the next request, if any, has the same time
            super().on_response_complete()

        def _arm(self) -> None:
            self._disarm()
            self._waiting_since = time.monotonic()
            self._deadline = self.loop.call_later(request_timeout, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.close()

        def _make_room(self) -> None:
            waiting = [
                other
                for other in self.connections
                if isinstance(other, BoundedH11Protocol)
                and other is not self
                and other._deadline is not None
            ]
            if waiting:
                oldest = min(waiting, key=lambda other: other._waiting_since)
                oldest._disarm()
                oldest.transport.close()
                return
            self._disarm()
            self.transport.write(_BUSY)
            self.transport.close()

    return BoundedH11Protocol
