"""Issue 32, item 2: idle and slow connections are dropped, their number capped, and normal
clients keep working meanwhile. Real ``memquill-mcp`` and ``memquill manage`` processes, real
sockets on loopback."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

from tests.adapters.mcp.mcp_helpers import http_server
from tests.core.other_user import request
from tests.slow_clients import CEILING, all_closed

INITIALIZE = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
    b'"2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}'
)


def _drip(connection: socket.socket, until: Callable[[], bool]) -> bool:
    """Send a body a byte every 0.2 s; whether the server closed the connection meanwhile."""
    connection.sendall(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n\r\n"
    )
    deadline = time.monotonic() + CEILING
    while time.monotonic() < deadline and not until():
        try:
            connection.sendall(b" ")
        except OSError:
            return True
        time.sleep(0.2)
    return False


def test_idle_and_slow_connections_are_dropped_and_capped(tmp_path: Path) -> None:
    args = ("--request-timeout", "2", "--max-connections", "20")
    with http_server(tmp_path, *args, log=tmp_path / "log") as server:
        opened = time.monotonic()
        idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(60)]
        # Normal clients keep working while 60 connections send nothing (three times the cap).
        for _ in range(3):
            answer = request(
                "POST",
                server.url,
                {
                    **server.headers,
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                },
                INITIALIZE,
            )
            assert answer.status == 200, answer.body
        assert all_closed(idle)
        assert time.monotonic() - opened < CEILING
        with socket.create_connection(("127.0.0.1", server.port)) as slow:
            started = time.monotonic()
            assert _drip(slow, lambda: False), "a body at 5 bytes/s was held past the deadline"
            assert time.monotonic() - started < 2 + 5  # the deadline, with room for a busy host
        for connection in idle:
            connection.close()
