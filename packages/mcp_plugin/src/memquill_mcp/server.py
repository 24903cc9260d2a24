"""``build_server``: memquill's tools as a native MCP server (``MCPServer`` of the MCP SDK).

Every field comes from the core and nothing is added: each tool's name, title, description,
input schema (the core's ``Args`` model), output schema (its ``Result`` model) and annotations
(its hints), and the server ``instructions`` (the core's prompt fragments for exactly the
tools mounted). A call hands the raw JSON arguments to :meth:`memquill.MemoryTool.invoke`, so
the core validates them: unknown keys are refused by write tools with the core's own message,
exactly as in Python, instead of being stripped by an MCP-side argument model.

What a call returns:

- text content: the core's text, identical on every adapter;
- ``is_error``: the core's failure flag, with that same text;
- ``structured_content``: the core's structured result whenever it conforms to the tool's
  ``outputSchema``. That is every success and every read-tool failure (the ``Result`` model
  with ``error`` set). A write failure's ``memory_write_error`` object does not conform to the
  receipt schema, and MCP clients that validate structured content even on ``is_error`` results
  (the TypeScript SDK does) would turn it into a protocol error, so it is left out: the text
  content is that same JSON document.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from typing import Any, Final

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import (
    CallToolResult,
    ContentBlock,
    InputRequiredResult,
    TextContent,
    ToolAnnotations,
)
from pydantic import ValidationError

from memquill import MemorySession, MemoryToolset, ToolResult, ToolSpec
from memquill.enhance import ModelDeferred, ModelRanker
from memquill.tools import MemoryTool
from memquill_mcp.connections import ConnectionSessions
from memquill_mcp.sampling import sampling_model

__all__ = ["READ_SERVER_NAME", "WRITE_SERVER_NAME", "build_server"]

READ_SERVER_NAME: Final = "memquill"
"""The server name when read tools are mounted (with or without the write tools)."""

WRITE_SERVER_NAME: Final = "memquill-write"
"""The server name of a write-only server, configured beside a read-only one."""

MCP_SESSION_HEADER: Final = "mcp-session-id"


def build_server(
    session: MemorySession,
    *,
    write_only: bool = False,
    derive_session_ids: bool = False,
    name: str | None = None,
    client_model: bool = False,
    rerank_timeout: float | None = None,
) -> MCPServer:
    """An MCP server offering ``session``'s memory tools.

    Args:
        session: the workspace, the trusted session id, the access (``read`` mounts the three
            read tools; ``read_write`` all six) and the write authorisation, re-checked by the
            core at every write.
        write_only: mount only the write tools (``session.access`` must be ``read_write``), so
            a host can run this server beside a read-only one and auto-approve only the reads.
        derive_session_ids: ignore ``session.session_id`` and derive one per client connection
            from the client's name and a fresh id (see :class:`ConnectionSessions`).
        name: the server name; ``memquill`` (``memquill-write`` when ``write_only``) by default.
        client_model: re-rank ``memory_search`` candidates with the client's own model through
            MCP sampling, for clients that declare the capability (each search then sends one
            ``sampling/createMessage``). Other clients, and every client when off, get the
            session's own ranker if it has one, else keyword order. A ranker on ``session``
            lends its runner and timeout to the client's model.
        rerank_timeout: seconds the client's model has to rank (3 by default).

    Raises:
        ValueError: ``write_only`` with a read-only session (there would be no tools).
    """
    sessions = ConnectionSessions(session, derive=derive_session_ids)
    mounted = sessions.toolset.tools
    if write_only:
        if session.access != "read_write":
            raise ValueError("a write-only server needs a session with read_write access")
        mounted = tuple(tool for tool in mounted if tool.spec.access == "write")
    # The core's fragments for exactly what is mounted: search always, write only with writes.
    instructions = sessions.toolset.system_prompt(read=not write_only)
    return MCPServer(
        name or (WRITE_SERVER_NAME if write_only else READ_SERVER_NAME),
        title="memquill memory",
        instructions=instructions,
        version=_version(),
        tools=[_native_tool(tool, sessions, client_model, rerank_timeout) for tool in mounted],
        # The SDK configures root logging only when the host has not; keep that quiet.
        log_level="WARNING",
    )


class _CoreValidates(FuncMetadata):
    """Passes a call's raw arguments through untouched: the core's ``Args`` model validates."""

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        """Hand the JSON arguments over as one value (extra keys included)."""
        return {"arguments": dict(arguments_to_validate)}


def _native_tool(
    tool: MemoryTool, sessions: ConnectionSessions, client_model: bool, timeout: float | None
) -> Tool:
    spec = tool.spec
    samples = client_model and spec.name == "memory_search"

    async def call(
        arguments: dict[str, Any], ctx: Context[Any, Any]
    ) -> CallToolResult | InputRequiredResult:
        toolset = sessions.toolset_for(*_caller(ctx)) if sessions.derive else sessions.toolset
        if samples:
            toolset = _with_client_model(toolset, ctx, timeout)
        try:
            result = await toolset.acall(spec.name, arguments)
        except ModelDeferred as deferred:
            # The 2026-07-28 protocol: the client samples, then calls again with the answer.
            if isinstance(deferred.payload, InputRequiredResult):
                return deferred.payload
            raise
        return _call_result(spec, result)

    return Tool(
        fn=call,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        parameters=spec.input_schema(),
        # No output model: the core built and validated the result; the schema is advertised.
        fn_metadata=_CoreValidates(arg_model=ArgModelBase, output_schema=spec.output_schema()),
        is_async=True,
        context_kwarg="ctx",
        annotations=ToolAnnotations(
            read_only_hint=spec.hints.read_only,
            destructive_hint=spec.hints.destructive,
            idempotent_hint=spec.hints.idempotent,
            open_world_hint=spec.hints.open_world,
        ),
    )


def _with_client_model(
    toolset: MemoryToolset, ctx: Context[Any, Any], timeout: float | None
) -> MemoryToolset:
    """The toolset for this call, ranking with the client's model when it can sample."""
    model = sampling_model(ctx)
    if model is None:
        return toolset
    base = toolset.session.ranker
    if isinstance(base, ModelRanker):
        ranker = ModelRanker(model, runner=base.runner, timeout=timeout or base.timeout)
    elif timeout is not None:
        ranker = ModelRanker(model, timeout=timeout)
    else:
        ranker = ModelRanker(model)
    return MemoryToolset(toolset.session.with_ranker(ranker), query=toolset.query)


def _call_result(spec: ToolSpec, result: ToolResult) -> CallToolResult:
    """The MCP result of a core result (see the module docstring for ``structured_content``)."""
    content: list[ContentBlock] = [TextContent(type="text", text=result.text)]
    structured = result.structured
    if structured is not None and (not result.is_error or _conforms(spec, structured)):
        return CallToolResult(
            content=content, structured_content=structured, is_error=result.is_error
        )
    return CallToolResult(content=content, is_error=result.is_error)


def _conforms(spec: ToolSpec, structured: Mapping[str, Any]) -> bool:
    try:
        spec.result.model_validate(structured)
    except ValidationError:
        return False
    return True


def _caller(ctx: Context[Any, Any]) -> tuple[str | None, str | None]:
    """The client's declared name and the transport's connection id, when there are any."""
    try:
        request = ctx.request_context
    except ValueError:  # called directly through ``MCPServer.call_tool``: no client at all
        return None, None
    params = request.session.client_params
    headers = ctx.headers
    return (
        params.client_info.name if params is not None else None,
        headers.get(MCP_SESSION_HEADER) if headers is not None else None,
    )


def _version() -> str:
    try:
        return importlib.metadata.version("memquill-mcp")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "0.0.0"
