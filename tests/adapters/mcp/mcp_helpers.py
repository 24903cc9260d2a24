"""Helpers shared by the MCP adapter tests: real ``memquill-mcp`` processes and their clients."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters
from mcp.types import CallToolResult, TextContent

from memquill_mcp import server_command

NO_PLUGINS = {"MEMQUILL_DISABLE_PLUGIN_AUTOLOAD": "1"}
"""Child environment that skips plugin autoloading (built-in detectors only; faster start)."""


def stdio_env(*, plugins: bool = False) -> dict[str, str]:
    """What a stdio child gets beyond the SDK's default environment (HOME, PATH, ...).

    The test run's index folder is passed on, so a child's index never lands in the user cache.
    """
    env = {"MEMQUILL_INDEX_DIR": os.environ["MEMQUILL_INDEX_DIR"]}
    return env if plugins else {**env, **NO_PLUGINS}


TEST_TOKEN = "test-token-for-memquill-mcp-over-http-0123456789"
"""The bearer token :func:`http_server` gives its server unless the test passes its own."""

START_CEILING = 60.0
"""Seconds a server may take to start before the test gives up: a hang guard, not a speed test."""


def stdio_server(workspace: Path, *args: str, plugins: bool = False) -> StdioServerParameters:
    """Parameters that start ``memquill-mcp --workspace WORKSPACE ARGS`` over stdio."""
    command, *prefix = server_command()
    return StdioServerParameters(
        command=command,
        args=[*prefix, "--workspace", str(workspace), *args],
        env=stdio_env(plugins=plugins),
    )


def text_of(result: CallToolResult) -> str:
    """The text content of a tool result."""
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def records(workspace: Path) -> bytes | None:
    """The raw bytes of ``memory/records.md``, or ``None`` when it does not exist."""
    path = workspace / "memory" / "records.md"
    return path.read_bytes() if path.exists() else None


def free_port() -> int:
    """A loopback TCP port that is free right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class HttpServer:
    """A running ``memquill-mcp --transport http`` process."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        """The MCP endpoint."""
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def headers(self) -> dict[str, str]:
        """What an authorised client sends (the default :data:`TEST_TOKEN`)."""
        return {"Authorization": f"Bearer {TEST_TOKEN}"}


@contextmanager
def http_server(
    workspace: Path,
    *args: str,
    log: Path,
    env: Mapping[str, str] | None = None,
    plugins: bool = False,
) -> Generator[HttpServer]:
    """Start an HTTP server on a free loopback port, wait until it accepts, and stop it after.

    The server requires :data:`TEST_TOKEN` unless ``env`` sets ``MEMQUILL_MCP_TOKEN``.
    """
    port = free_port()
    child_env: dict[str, Any] = {**os.environ, "MEMQUILL_MCP_TOKEN": TEST_TOKEN, **(env or {})}
    if not plugins:
        child_env.update(NO_PLUGINS)
    command = [
        *server_command(),
        "--workspace",
        str(workspace),
        "--transport",
        "http",
        "--port",
        str(port),
        *args,
    ]
    with log.open("wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=child_env)
    try:
        _wait_until_accepting(process, port, log)
        yield HttpServer(process, port, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=START_CEILING)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_accepting(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + START_CEILING
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"memquill-mcp exited early:\n{log.read_text('utf-8', 'replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"memquill-mcp did not start:\n{log.read_text('utf-8', 'replace')}")
