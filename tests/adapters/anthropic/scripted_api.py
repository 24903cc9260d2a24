"""A real HTTP server on 127.0.0.1 that plays the Messages API from a script, for the SDK.

Each ``POST …/v1/messages`` is answered with the next scripted reply: an assistant message
whose content blocks are the script's (``tool_use`` blocks get ids ``toolu_01``, ``toolu_02``,
…; a reply with one stops with ``tool_use``, any other with ``end_turn``). Every request body
and its headers are kept, so a test can read exactly what the SDK sent back: the tool results
of the previous reply are the ``tool_result`` blocks of the last user message. A request past
the end of the script gets a 500, so a runner that calls once too often fails loudly.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from types import TracebackType
from typing import Any, Self

Block = Mapping[str, Any]


def tool_use(name: str, **arguments: Any) -> dict[str, Any]:
    """A ``tool_use`` block for the tool ``name`` (its id is given when it is sent)."""
    return {"type": "tool_use", "name": name, "input": arguments}


def text(words: str) -> dict[str, Any]:
    """A ``text`` block."""
    return {"type": "text", "text": words}


class ScriptedMessagesAPI:
    """The server, as a context manager: ``url`` is the ``base_url`` to give the client.

    Args:
        replies: the assistant's replies in order, each a list of content blocks.
    """

    def __init__(self, replies: Sequence[Sequence[Block]]) -> None:
        self.replies = [list(reply) for reply in replies]
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._ids = count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The server's base URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def tool_results(self, request: int) -> list[dict[str, Any]]:
        """The ``tool_result`` blocks the SDK sent with request ``request`` (0-based)."""
        last = self.requests[request]["messages"][-1]
        assert last["role"] == "user", last
        return [block for block in last["content"] if block["type"] == "tool_result"]

    def _reply(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any] | None:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            index = len(self.requests) - 1
            if index >= len(self.replies):
                return None
            content = [
                {**block, "id": f"toolu_{next(self._ids):02d}"}
                if block["type"] == "tool_use"
                else dict(block)
                for block in self.replies[index]
            ]
        uses_tools = any(block["type"] == "tool_use" for block in content)
        return {
            "id": f"msg_{index + 1:02d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-test"),
            "content": content,
            "stop_reason": "tool_use" if uses_tools else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.split("?")[0].endswith("/v1/messages"):
                    self._send(404, {"type": "error", "error": {"type": "not_found_error"}})
                    return
                reply = api._reply(body, {k.lower(): v for k, v in self.headers.items()})
                if reply is None:
                    error = {"type": "api_error", "message": "the script has no more replies"}
                    self._send(500, {"type": "error", "error": error})
                    return
                self._send(200, reply)

            def _send(self, status: int, payload: Mapping[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", "req_scripted")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the test reads the requests, not a log."""

        return Handler
