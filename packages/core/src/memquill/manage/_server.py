"""Serving the page: a socket bound to 127.0.0.1 (a free port unless one is asked for), uvicorn.

The socket is bound before the server starts, so the URL (with the real port) is known and
printed before the first request, and the app pins ``Host`` to that port.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import Final
from urllib.parse import quote

import uvicorn

from memquill.manage._app import create_app
from memquill.manage._state import Backend
from memquill.web import LOGIN_PARAMETER, bounded_protocol

LOOPBACK: Final = "127.0.0.1"
_STARTUP_TIMEOUT: Final = 30.0
"""Only stops a server that never comes up from hanging its caller; never a speed target."""


class ManageServer:
    """One workspace's management page on a loopback port.

    Args:
        backend: the workspace session, jobs source and clock.
        token: the secret every request must carry (:func:`memquill.web.load_token`); a
            browser brings it once in :attr:`login_url` and keeps it in a cookie. ``None``
            opens the page to every local user.
        port: the port to listen on; 0 (the default) picks a free one.

    Raises:
        OSError: the port cannot be bound (in use, or not allowed).
    """

    def __init__(self, backend: Backend, *, token: str | None, port: int = 0) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._socket.bind((LOOPBACK, port))
        except OSError:
            self._socket.close()
            raise
        self.port: int = self._socket.getsockname()[1]
        self.url = f"http://{LOOPBACK}:{self.port}/"
        self.login_url = self.url
        """The address to open: :attr:`url` with the token, which the page trades for a cookie."""
        if token is not None:
            self.login_url += f"?{LOGIN_PARAMETER}={quote(token, safe='')}"
        config = uvicorn.Config(
            create_app(backend, token=token, port=self.port),
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
            http=bounded_protocol(),  # idle and slow connections are dropped, their number capped
            ws="none",
        )
        self._server = uvicorn.Server(config)

    def serve(self, on_started: Callable[[], None] | None = None) -> None:
        """Serve until interrupted (Ctrl+C); ``on_started`` runs once requests are answered."""
        if on_started is not None:
            threading.Thread(target=self._after_start, args=(on_started,), daemon=True).start()
        try:
            self._server.run(sockets=[self._socket])
        finally:
            self._socket.close()

    def _after_start(self, callback: Callable[[], None]) -> None:
        if self._wait_started():
            callback()

    def _wait_started(self) -> bool:
        deadline = time.monotonic() + _STARTUP_TIMEOUT
        while not self._server.started:
            if time.monotonic() > deadline or self._server.should_exit:
                return False
            time.sleep(0.02)
        return True

    @contextmanager
    def running(self) -> Generator[str]:
        """Serve in a background thread for the ``with`` block; yields :attr:`login_url`."""
        thread = threading.Thread(target=self.serve, daemon=True)
        thread.start()
        try:
            if not self._wait_started():
                raise TimeoutError("the management page did not start")
            yield self.login_url
        finally:
            self._server.should_exit = True
            thread.join(_STARTUP_TIMEOUT)
