"""Shared by the slow-client tests of both HTTP servers (the MCP server and the page): whether
a server closed the connections it should drop. Imports no framework, so the page's tests run
where the MCP SDK is not installed (the lowest-versions core environment)."""

from __future__ import annotations

import socket
import time

CEILING = 30.0
"""A hang guard: without a read timeout a held connection is never closed at all."""


def all_closed(connections: list[socket.socket]) -> bool:
    """Whether the server closed every connection within :data:`CEILING` (an answer, such as
    503, then a close counts)."""
    deadline = time.monotonic() + CEILING
    for connection in connections:
        connection.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            connection.recv(1024)
        except ConnectionResetError:
            pass
        except TimeoutError:
            return False
    return True
