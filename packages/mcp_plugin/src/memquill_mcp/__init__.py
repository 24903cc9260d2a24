"""memquill for MCP: memory tools for any MCP host, over stdio or streamable HTTP.

- :func:`build_server`: an ``MCPServer`` offering a session's memory tools, with the core's
  names, descriptions, input and output schemas, annotations, text and error flags.
- :func:`http_app`: that server as an ASGI app, with DNS-rebinding protection and a required
  bearer token (:class:`memquill.web.TokenGuard`).
- :class:`ConnectionSessions`: one derived session per client connection when the host gives
  no session id.
- :class:`McpClientHarness`, :class:`McpStdioHarness`: the tools driven through a real MCP
  client (in-process JSON-RPC, or a ``memquill-mcp`` subprocess), as the parity suite and
  ``memquill demo`` use them; :func:`server_command` starts the subprocess.

The ``memquill-mcp`` command (:mod:`memquill_mcp.cli`) serves a workspace from a host's config.
"""

from __future__ import annotations

import typing

from memquill import __version__ as __version__  # released together: one version
from memquill.plugins import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill_mcp.cli import (
        DEFAULT_PORT as DEFAULT_PORT,
        TOKEN_ENV as TOKEN_ENV,
        WORKSPACE_ENV as WORKSPACE_ENV,
    )
    from memquill_mcp.connections import ConnectionSessions, derive_session_id
    from memquill_mcp.harness import McpClientHarness, McpStdioHarness, server_command
    from memquill_mcp.http_server import DEFAULT_PATH as DEFAULT_PATH, http_app
    from memquill_mcp.server import (
        READ_SERVER_NAME as READ_SERVER_NAME,
        WRITE_SERVER_NAME as WRITE_SERVER_NAME,
        build_server,
    )

__all__ = [
    "ConnectionSessions",
    "McpClientHarness",
    "McpStdioHarness",
    "__version__",
    "build_server",
    "derive_session_id",
    "http_app",
    "server_command",
]


# The framework is imported on first use of a name, not when memquill loads this plugin.
__getattr__, __dir__ = _lazy_exports(__name__)
