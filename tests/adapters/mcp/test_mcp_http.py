"""Streamable HTTP: a real ``memquill-mcp`` on a loopback port, real clients, real refusals."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation
from tests.adapters.mcp.mcp_helpers import (
    TEST_TOKEN,
    HttpServer,
    http_server,
    records,
    text_of,
)

from memquill import MemorySession, MemoryToolset
from memquill.tools import CATALOGUE

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-http", "version": "1"},
    },
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("http-workspace")
    (root / "notes.md").write_text("# Notes\n\nThe kettle is in the left cupboard.\n", "utf-8")
    return root


@pytest.fixture(scope="module")
def server(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    # The default start-up: plugins load, as they do for a host.
    log = tmp_path_factory.mktemp("http-log") / "stderr.log"
    with http_server(workspace, log=log, plugins=True) as running:
        yield running


@asynccontextmanager
async def _client(
    server: HttpServer, mode: str, name: str = "memquill-test"
) -> AsyncGenerator[Client]:
    info = Implementation(name=name, version="1")
    async with httpx2.AsyncClient(headers=server.headers, timeout=60) as http:
        transport = streamable_http_client(server.url, http_client=http)
        async with Client(transport, mode=mode, client_info=info) as client:
            yield client


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_http_calls_match_the_core(server: HttpServer, workspace: Path, mode: str) -> None:
    core = MemoryToolset(MemorySession(workspace, "core-reference"))
    async with _client(server, mode) as client:
        tools = (await client.list_tools()).tools
        assert [(t.name, t.description, t.input_schema) for t in tools] == [
            (spec.name, spec.description, spec.input_schema()) for spec in CATALOGUE
        ]
        saved = await client.call_tool("memory_remember", {"content": f"Kettle descaled ({mode})."})
        receipt = saved.structured_content
        assert receipt is not None and receipt["status"] == "saved", text_of(saved)
        reads: list[tuple[str, dict[str, Any]]] = [
            ("memory_search", {"query": "kettle"}),
            ("memory_get", {"file_path": f"memory/records/{receipt['recordId']}.md"}),
            ("memory_get", {"file_path": "../etc/passwd"}),
            ("memory_recent", {}),
        ]
        for name, arguments in reads:
            ours = await client.call_tool(name, arguments)
            reference = core.call(name, arguments)
            assert (text_of(ours), ours.is_error) == (reference.text, reference.is_error)
            assert ours.structured_content == reference.structured
        updated = await client.call_tool(
            "memory_update",
            {
                "id": receipt["recordId"],
                "content": f"Kettle descaled twice ({mode}).",
                "expected_revision": receipt["recordRevision"],
            },
        )
        assert updated.structured_content is not None, text_of(updated)
        stale = await client.call_tool(
            "memory_forget",
            {"id": receipt["recordId"], "expected_revision": receipt["recordRevision"]},
        )
        forgotten = await client.call_tool(
            "memory_forget",
            {
                "id": updated.structured_content["recordId"],
                "expected_revision": updated.structured_content["recordRevision"],
            },
        )
    assert stale.is_error is True and stale.structured_content is None
    assert forgotten.is_error is False, text_of(forgotten)
    assert re.fullmatch(r"memquill-test-[0-9a-f]{12}", receipt["sourceSessionId"])


async def test_each_http_session_gets_its_own_derived_id(server: HttpServer) -> None:
    ids: list[str] = []
    for index in range(2):
        async with _client(server, "legacy", name="Cursor") as client:
            for attempt in range(2):
                result = await client.call_tool(
                    "memory_remember", {"content": f"Session fact {index}.{attempt}."}
                )
                assert result.structured_content is not None, text_of(result)
                ids.append(result.structured_content["sourceSessionId"])
    assert all(re.fullmatch(r"cursor-[0-9a-f]{12}", value) for value in ids), ids
    assert ids[0] == ids[1] and ids[2] == ids[3] and ids[0] != ids[2]


def _post(port: int, headers: dict[str, str], *, token: str | None = TEST_TOKEN) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(
            "POST",
            "/mcp",
            body=json.dumps(INITIALIZE),
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **({} if token is None else {"Authorization": f"Bearer {token}"}),
                **headers,
            },
        )
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_a_foreign_origin_or_host_is_refused(server: HttpServer, workspace: Path) -> None:
    before = records(workspace)
    own = f"127.0.0.1:{server.port}"
    assert _post(server.port, {"Host": own, "Origin": f"http://{own}"}) == 200
    assert _post(server.port, {"Host": own, "Origin": "http://evil.example"}) == 403
    assert _post(server.port, {"Host": own, "Origin": f"http://evil.example:{server.port}"}) == 403
    assert _post(server.port, {"Host": f"evil.example:{server.port}"}) == 421
    # The SDK takes anything after "localhost:" for a port; memquill wants a number.
    assert _post(server.port, {"Host": "localhost:evil.com"}) == 421
    assert _post(server.port, {"Host": "127.0.0.1:evil.com"}) == 421
    assert _post(server.port, {"Host": own, "Origin": "http://localhost:evil.com"}) == 403
    assert _post(server.port, {"Host": f"localhost:{server.port}"}) == 200
    assert records(workspace) == before


def test_a_bearer_token_is_required_when_configured(tmp_path: Path) -> None:
    token = "correct-horse-battery-staple-0123456789"
    with http_server(tmp_path, log=tmp_path / "log", env={"MEMQUILL_MCP_TOKEN": token}) as server:
        assert _post(server.port, {}, token=None) == 401
        assert _post(server.port, {}) == 401  # the default token is not this server's
        assert _post(server.port, {"Authorization": "Bearer wrong"}, token=None) == 401
        assert _post(server.port, {"Authorization": f"Basic {token}"}, token=None) == 401
        assert _post(server.port, {}, token=token) == 200


async def test_an_authorised_client_can_use_the_tools(tmp_path: Path) -> None:
    token = "another-secret-value-abcdefghijklmnop"
    with http_server(tmp_path, log=tmp_path / "log", env={"MEMQUILL_MCP_TOKEN": token}) as server:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(server.url, http_client=http)
            async with Client(transport, mode="legacy") as client:
                saved = await client.call_tool("memory_remember", {"content": "Tokens work."})
    assert saved.is_error is False, text_of(saved)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
async def test_concurrent_gets_of_a_fifo_never_starve_the_server(tmp_path: Path) -> None:
    # Each get of a FIFO used to hold a worker thread forever; with every worker stuck, the
    # server answered nothing more. The ceiling turns a hang into a failure.
    (tmp_path / "notes.md").write_text("The kettle is in the left cupboard.\n", "utf-8")
    os.mkfifo(tmp_path / "pipe.md")
    with http_server(tmp_path, log=tmp_path / "log") as running:
        async with _client(running, "legacy") as client:
            gets = [client.call_tool("memory_get", {"file_path": "pipe.md"}) for _ in range(16)]
            answers = await asyncio.wait_for(asyncio.gather(*gets), timeout=60)
            found = await asyncio.wait_for(
                client.call_tool("memory_search", {"query": "kettle"}), timeout=60
            )
    assert {text_of(answer) for answer in answers} == {
        "Memory read failed: Memory path is not a regular file."
    }
    assert all(answer.is_error for answer in answers)
    assert "notes.md" in text_of(found) and not found.is_error
