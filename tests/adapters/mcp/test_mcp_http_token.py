"""Issue 32, item 1: over HTTP, no request without the token, on loopback too.

A real ``memquill-mcp --transport http`` process with nothing configured; the requests come
from another local user (``nobody``, when the test may switch to it) over loopback.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from tests.adapters.mcp.mcp_helpers import http_server, records
from tests.core.other_user import request
from tests.core.store_helpers import manual

from memquill import RecordStore

ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _rpc(method: str, params: dict[str, object], ident: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()


INITIALIZE = _rpc(
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"},
    },
)
RECENT = _rpc("tools/call", {"name": "memory_recent", "arguments": {}}, 2)
REMEMBER = _rpc("tools/call", {"name": "memory_remember", "arguments": {"content": "Owned."}}, 3)


def _host_config(log: Path) -> dict[str, Any]:
    found = re.search(r"an MCP host configuration: (\{.*\})", log.read_text("utf-8"))
    assert found, log.read_text("utf-8")
    servers = json.loads(found.group(1))["mcpServers"]
    (config,) = servers.values()
    return config


def test_no_request_without_the_generated_token(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    RecordStore(workspace).save([manual("The spare key is under the blue pot.")])
    before = records(workspace)
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "MEMQUILL_MCP_TOKEN": ""}
    log = tmp_path / "first.log"
    with http_server(workspace, "--log-level", "DEBUG", log=log, env=env) as server:
        for body in (INITIALIZE, RECENT, REMEMBER):
            for headers in ({}, {"Authorization": "Bearer guess"}, {"Cookie": "token=guess"}):
                answer = request("POST", server.url, {**ACCEPT, **headers}, body)
                assert answer.status == 401, (answer.status, answer.body)
                assert b"spare key" not in answer.body
        config = _host_config(log)
        assert config["url"] == server.url
        header = config["headers"]["Authorization"]
        answer = request("POST", server.url, {**ACCEPT, "Authorization": header}, INITIALIZE)
        assert answer.status == 200, answer.body
    assert records(workspace) == before  # nothing written by the refused calls
    token_file = tmp_path / "data" / "memquill" / "http-token"
    if os.name == "posix":
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text("utf-8").strip()
    assert header == f"Bearer {token}" and len(token) >= 32
    # The server logs no request line, so the token shows only in the printed configuration.
    assert log.read_text("utf-8").count(token) == 1
    again = tmp_path / "again.log"
    with http_server(workspace, log=again, env=env):
        assert _host_config(again)["headers"] == {"Authorization": header}  # reused


def test_a_configured_token_is_never_printed_and_no_token_is_explicit(tmp_path: Path) -> None:
    secret = "configured-token-abcdefghijklmnopqrstuvwxyz-0123"
    log = tmp_path / "log"
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "MEMQUILL_MCP_TOKEN": secret}
    with http_server(tmp_path, "--log-level", "DEBUG", log=log, env=env) as server:
        bearer = {"Authorization": f"Bearer {secret}"}
        assert request("POST", server.url, {**ACCEPT, **bearer}, INITIALIZE).status == 200
        assert request("POST", server.url, ACCEPT, INITIALIZE).status == 401
    assert secret not in log.read_text("utf-8")
    assert "$MEMQUILL_MCP_TOKEN" in log.read_text("utf-8")
    assert not (tmp_path / "data" / "memquill" / "http-token").exists()
    env["MEMQUILL_MCP_TOKEN"] = ""
    with http_server(tmp_path, "--no-token", log=log, env=env) as server:
        assert request("POST", server.url, ACCEPT, INITIALIZE).status == 200
    assert "no token (--no-token)" in log.read_text("utf-8")
