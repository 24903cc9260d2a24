"""Per-connection sessions and the HTTP guards, tested without a network."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import Implementation
from starlette.types import Receive, Scope, Send
from tests.adapters.mcp.mcp_helpers import text_of

from memquill import MemorySession
from memquill.web._access import TokenGuard
from memquill_mcp import ConnectionSessions, build_server, derive_session_id
from memquill_mcp.http_server import is_loopback, transport_security


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Claude Desktop", "claude-desktop"),
        ("  cursor/ide (beta) ", "cursor-ide-beta"),
        ("", "mcp-client"),
        (None, "mcp-client"),
        ("!!!", "mcp-client"),
        ("x" * 100, "x" * 40),
    ],
)
def test_derived_ids_are_readable(name: str | None, slug: str) -> None:
    value = derive_session_id(name, "transport-session", "salt")
    assert re.fullmatch(rf"{re.escape(slug)}-[0-9a-f]{{12}}", value)


def test_derived_ids_are_stable_per_connection_and_unlinkable() -> None:
    first = derive_session_id("client", "abc", "salt-1")
    assert first == derive_session_id("client", "abc", "salt-1")
    assert first != derive_session_id("client", "abd", "salt-1")
    assert first != derive_session_id("client", "abc", "salt-2")
    assert "abc" not in first


def test_derived_sessions_keep_the_host_settings(tmp_path: Path) -> None:
    asked: list[bool] = []
    moment = datetime(2026, 9, 22, 12, tzinfo=UTC)

    def authorize() -> bool:
        asked.append(True)
        return False

    host = MemorySession(tmp_path, None, "read_write", authorize, now=lambda: moment)
    sessions = ConnectionSessions(host, derive=True, capacity=1)
    toolset = sessions.toolset_for("client", "one")
    assert toolset is sessions.toolset_for("client", "one")
    assert toolset.query is sessions.toolset.query
    derived = toolset.session
    assert derived.session_id is not None and derived.session_id.startswith("client-")
    assert derived.now is not None and derived.now() == moment
    assert derived.store is host.store
    assert derived.write_allowed() is False and asked
    assert host.session_id is None

    other = sessions.toolset_for("client", "two")  # evicts "one" (capacity 1)
    again = sessions.toolset_for("client", "one")
    assert again is not toolset and again.session.session_id == derived.session_id
    assert other.session.session_id != derived.session_id


async def test_an_in_process_server_derives_ids_from_the_client_name(tmp_path: Path) -> None:
    server = build_server(MemorySession(tmp_path, "ignored"), derive_session_ids=True)
    client = Client(server, mode="legacy", client_info=Implementation(name="Zed", version="1"))
    async with client:
        result = await client.call_tool("memory_remember", {"content": "Derived here."})
    assert result.structured_content is not None, text_of(result)
    assert re.fullmatch(r"zed-[0-9a-f]{12}", result.structured_content["sourceSessionId"])


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("192.0.2.10", False),
        ("example.org", False),
    ],
)
def test_loopback_detection(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_loopback_allows_only_local_names() -> None:
    settings = transport_security("127.0.0.1")
    assert settings.enable_dns_rebinding_protection is True
    assert "localhost:*" in settings.allowed_hosts
    assert all(
        "127.0.0.1" in name or "localhost" in name or "::1" in name
        for name in [*settings.allowed_hosts, *settings.allowed_origins]
    )


def test_remote_binds_allow_only_the_names_given() -> None:
    assert transport_security("192.0.2.10").allowed_hosts == ["192.0.2.10", "192.0.2.10:*"]
    assert transport_security("192.0.2.10").allowed_origins == []
    named = transport_security("0.0.0.0", ["memory.lan:8765"], ["https://app.example"])
    assert named.allowed_hosts == ["memory.lan:8765"]
    assert named.allowed_origins == ["https://app.example"]
    with pytest.raises(ValueError, match="--allowed-host"):
        transport_security("0.0.0.0")


async def _app(scope: Scope, receive: Receive, send: Send) -> None:
    raise AssertionError("never reached")


def test_an_empty_bearer_token_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        TokenGuard(_app, "")
