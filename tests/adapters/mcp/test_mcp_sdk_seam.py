"""The one place memquill-mcp leans on SDK internals, pinned and checked loudly.

The server passes a call's raw JSON arguments to the core (which validates them and refuses
unknown keys with its own message) by giving each ``Tool`` a ``FuncMetadata`` whose
``validate_arguments`` returns them untouched. The MCP SDK has no public route for raw
arguments on ``MCPServer`` tools, so the dependency is capped to the tested minor releases and
this test names exactly what must still hold when the cap is raised.
"""

from __future__ import annotations

import inspect
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from memquill import MemorySession
from memquill_mcp import build_server


def test_the_sdk_still_has_the_tool_seam() -> None:
    parameters = inspect.signature(Tool).parameters
    for name in ("fn", "name", "title", "description", "parameters", "fn_metadata", "is_async"):
        assert name in parameters, f"mcp.server.mcpserver.tools.Tool lost {name!r}"
    assert "validate_arguments" in vars(FuncMetadata), "FuncMetadata.validate_arguments moved"
    # The server builds FuncMetadata(arg_model=ArgModelBase, output_schema=...) itself.
    assert issubclass(FuncMetadata, BaseModel) and issubclass(ArgModelBase, BaseModel)
    for field in ("arg_model", "output_schema"):
        assert field in FuncMetadata.model_fields, f"FuncMetadata lost the field {field!r}"
    # A call runs through the metadata's validate_arguments: the override is what it calls.
    assert "fn_metadata.validate_arguments(" in inspect.getsource(Tool.run)


async def test_raw_arguments_reach_the_core_unchanged(tmp_path: Any) -> None:
    server: MCPServer = build_server(MemorySession(tmp_path, "seam", "read_write"))
    result = await server.call_tool("memory_remember", {"content": "x", "source": "model"})
    assert isinstance(result, CallToolResult) and result.is_error
    block = result.content[0]
    assert isinstance(block, TextContent)
    text = block.text
    assert '"code":"invalid"' in text and "source: Extra inputs are not permitted" in text, text
