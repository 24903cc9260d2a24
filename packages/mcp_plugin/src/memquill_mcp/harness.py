"""Adapter harnesses: memquill's tools driven through a real MCP client, for the parity suite.

``memquill demo`` and :class:`memquill.testing.ParitySuite` open these through the adapters
registered in :mod:`memquill_mcp.plugin`:

- ``mcp``: :class:`McpClientHarness`, the SDK's ``Client`` talking to an in-process server in
  legacy mode, so every call is a real JSON-RPC message through the protocol stack.
- ``mcp-stdio``: :class:`McpStdioHarness`, a real ``memquill-mcp`` subprocess over stdio.

The harness API is synchronous and the client is async, so each harness runs its client on a
private event-loop thread (an anyio blocking portal) and closes both on :meth:`close`.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile
from collections.abc import Mapping
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any, Final, Literal, TextIO

from anyio.from_thread import start_blocking_portal
from mcp import Client, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, Implementation, TextContent, Tool

from memquill import MemorySession
from memquill.index import INDEX_DIR_ENV
from memquill.plugins import HarnessResult, ToolDescriptor
from memquill.store import STORE_ENV
from memquill.testing import parity_embedder_spec, script_of
from memquill_mcp.scripted import ScriptedSampler
from memquill_mcp.server import build_server

__all__ = ["McpClientHarness", "McpStdioHarness", "server_command"]

_CLIENT: Final = Implementation(name="memquill-harness", version="1")
_TIMEOUT: Final = 60.0  # seconds: a hung server fails the call instead of hanging the run


def server_command() -> list[str]:
    """The command that starts ``memquill-mcp`` from this Python environment."""
    name = "memquill-mcp.exe" if os.name == "nt" else "memquill-mcp"
    script = Path(sysconfig.get_path("scripts")) / name
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "memquill_mcp"]


class _ClientHarness:
    """Drives a connected ``Client`` from synchronous code (a
    :class:`memquill.plugins.AdapterHarness`)."""

    def __init__(self, client: Client) -> None:
        self._stack = ExitStack()
        try:
            self._portal = self._stack.enter_context(start_blocking_portal("asyncio"))
            # Entered and exited by the same task on the portal's loop, as anyio requires.
            self._client = self._stack.enter_context(
                self._portal.wrap_async_context_manager(client)
            )
            self.tools: tuple[Tool, ...] = self._portal.call(self._list_tools)
            """The tools as the server lists them (``tools/list``)."""
        except BaseException:
            self._stack.close()
            raise

    def catalogue(self) -> list[ToolDescriptor]:
        """The listed tools: name, description and input schema as sent over the wire."""
        return [
            ToolDescriptor(tool.name, tool.description or "", tool.input_schema)
            for tool in self.tools
        ]

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Call a tool with ``tools/call``.

        Raises:
            LookupError: the server does not list a tool called ``name``.
        """
        if all(tool.name != name for tool in self.tools):
            raise LookupError(name)
        call = partial(self._client.call_tool, name, dict(arguments), read_timeout_seconds=_TIMEOUT)
        return _harness_result(self._portal.call(call))

    def close(self) -> None:
        """Disconnect the client (ending a subprocess) and stop the event-loop thread."""
        self._stack.close()

    async def _list_tools(self) -> tuple[Tool, ...]:
        tools: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await self._client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tuple(tools)


class McpClientHarness(_ClientHarness):
    """The session's tools served in-process by :func:`~memquill_mcp.build_server`.

    A session whose model is scripted (a parity case with a model) gets a client that declares
    sampling and answers with the script, and a server that re-ranks with the client's model.

    Args:
        session: the session to serve (used as is, so a host's mode switch applies at once).
        mode: ``legacy`` sends real JSON-RPC messages after an ``initialize`` handshake;
            ``auto`` uses the SDK's direct in-process dispatch (no framing).
    """

    def __init__(
        self, session: MemorySession, *, mode: Literal["legacy", "auto"] = "legacy"
    ) -> None:
        script = script_of(session)
        sampler = ScriptedSampler(script) if script is not None else None
        server = build_server(session, client_model=sampler is not None)
        client = Client(server, mode=mode, client_info=_CLIENT, sampling_callback=sampler)
        super().__init__(client)


class McpStdioHarness(_ClientHarness):
    """The session's tools served by a real ``memquill-mcp`` subprocess over stdio.

    The subprocess reproduces the session from the command line: its workspace, session id
    (``--session-id ''`` for none), access, and an injected clock, sampled once here
    (``--testing-clock``); its records store comes through ``$MEMQUILL_STORE``. The host's
    write authorisation is mirrored before every call into a Plan-mode file
    (``--plan-mode-file``): it exists exactly while ``authorize_write`` refuses.
    The subprocess runs the built-in secret detectors, as a session built without a scanner
    does; plugin autoloading is off there, which also keeps start-up short. A scripted model
    is played by this side's client through sampling, a parity embedder is rebuilt there
    (``--embed``), and the subprocess keeps its model state (install key, receipts) in a
    private folder, and its search index where this process keeps its own
    (``$MEMQUILL_INDEX_DIR``), else in that folder too: a run never fills the user's cache.

    Args:
        session: the session to reproduce.
        errlog: where the subprocess's log (stderr) goes; this process's stderr by default.
    """

    def __init__(self, session: MemorySession, *, errlog: TextIO | None = None) -> None:
        self._session = session
        self._control = Path(tempfile.mkdtemp(prefix="memquill-mcp-"))
        self._plan_mode = self._control / "plan-mode"
        try:
            self._mirror_authorisation()
            command, *prefix = server_command()
            parameters = StdioServerParameters(
                command=command,
                args=[*prefix, *self._arguments()],
                env={
                    "MEMQUILL_DISABLE_PLUGIN_AUTOLOAD": "1",
                    "XDG_DATA_HOME": str(self._control / "data"),
                    INDEX_DIR_ENV: os.environ.get(INDEX_DIR_ENV) or str(self._control / "index"),
                    # Through the environment: a database URL never shows in the process list.
                    STORE_ENV: session.store_location,
                },
            )
            transport = stdio_client(parameters, errlog=errlog or sys.stderr)
            script = script_of(session)
            sampler = ScriptedSampler(script) if script is not None else None
            client = Client(
                transport, mode="legacy", client_info=_CLIENT, sampling_callback=sampler
            )
            super().__init__(client)
        except BaseException:
            shutil.rmtree(self._control, ignore_errors=True)
            raise

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Mirror the host's current write authorisation, then call the tool."""
        self._mirror_authorisation()
        return super().call(name, arguments)

    def close(self) -> None:
        """End the subprocess and remove the Plan-mode folder."""
        try:
            super().close()
        finally:
            shutil.rmtree(self._control, ignore_errors=True)

    def _arguments(self) -> list[str]:
        session = self._session
        arguments = [
            f"--workspace={session.workspace}",
            f"--session-id={session.session_id or ''}",
            f"--access={session.access}",
            f"--plan-mode-file={self._plan_mode}",
        ]
        if session.now is not None:
            arguments.append(f"--testing-clock={session.now().isoformat()}")
        embed = parity_embedder_spec(session)
        if embed is not None:
            arguments.append(f"--embed={embed}")  # the same deterministic embedder, rebuilt
        if script_of(session) is not None:
            arguments.append("--rerank-with-client-model")
            timeout = getattr(session.ranker, "timeout", None)
            if isinstance(timeout, float | int):
                arguments.append(f"--testing-rerank-timeout={timeout}")
        return arguments

    def _mirror_authorisation(self) -> None:
        if self._session.access != "read_write":
            return  # no write tools are mounted: nothing to authorise
        if self._session.write_allowed():
            self._plan_mode.unlink(missing_ok=True)
        else:
            self._plan_mode.touch()


def _harness_result(result: CallToolResult) -> HarnessResult:
    text = "".join(block.text for block in result.content if isinstance(block, TextContent))
    return HarnessResult(text, bool(result.is_error), result.structured_content)
