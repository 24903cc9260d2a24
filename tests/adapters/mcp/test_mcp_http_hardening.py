"""HTTP hardening (issue 11, item 6): strict Host/Origin ports, token length, token file mode,
constant-time comparison."""

from __future__ import annotations

import hmac
import os
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from memquill import MemorySession
from memquill.web._access import TokenGuard
from memquill_mcp import build_server, http_app
from memquill_mcp.cli import main
from memquill_mcp.host_guard import HostOriginGuard, parse_host, parse_origin
from memquill_mcp.http_server import MIN_REMOTE_TOKEN, transport_security

LONG_TOKEN = "k" * MIN_REMOTE_TOKEN


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("localhost", ("localhost", None)),
        ("LocalHost:8765", ("localhost", 8765)),
        ("127.0.0.1:1", ("127.0.0.1", 1)),
        ("[::1]:65535", ("[::1]", 65535)),
        ("memory.lan", ("memory.lan", None)),
        ("localhost:evil.com", None),
        ("localhost:80@evil.com", None),
        ("localhost:0", None),
        ("localhost:65536", None),
        ("localhost:", None),
        ("localhost:+80", None),
        ("localhost:８０", None),  # full-width digits are not a port
        ("local host", None),
        ("", None),
    ],
)
def test_hosts_parse_strictly(value: str, parsed: tuple[str, int | None] | None) -> None:
    endpoint = parse_host(value)
    assert (None if endpoint is None else (endpoint.name, endpoint.port)) == parsed


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("http://localhost:8765", True),
        ("https://app.example", True),
        ("http://localhost:evil.com", False),
        ("http://localhost:80@evil.example", False),
        ("http://localhost:80/path", False),
        ("null", False),
        ("file://", False),
    ],
)
def test_origins_parse_strictly(value: str, ok: bool) -> None:
    assert (parse_origin(value) is not None) is ok


def _echo() -> Starlette:
    async def hello(request: object) -> PlainTextResponse:
        return PlainTextResponse("hello")

    return Starlette(routes=[Route("/", hello)])


def test_the_guard_admits_numeric_ports_only() -> None:
    loopback = transport_security("127.0.0.1")
    guarded = HostOriginGuard(_echo(), loopback.allowed_hosts, loopback.allowed_origins)
    client = TestClient(guarded, base_url="http://localhost:8765")
    assert client.get("/").status_code == 200
    for host in (
        "localhost:evil.com",
        "127.0.0.1:evil.com",
        "[::1]:x",
        "evil.com:8765",
        "localhost:99999",
        "localhost:8765.evil.com",
    ):
        assert client.get("/", headers={"Host": host}).status_code == 421, host
    assert client.get("/", headers={"Origin": "http://localhost:8765"}).status_code == 200
    for origin in (
        "http://localhost:evil.com",
        "http://evil.com:8765",
        "null",
        "http://localhost:8765@evil.com",
    ):
        assert client.get("/", headers={"Origin": origin}).status_code == 403, origin


def test_the_guard_keeps_exact_ports_exact() -> None:
    guarded = HostOriginGuard(_echo(), ["memory.lan:8765"], ["https://app.example"])
    client = TestClient(guarded, base_url="http://memory.lan:8765")
    assert client.get("/").status_code == 200
    assert client.get("/", headers={"Host": "memory.lan:8766"}).status_code == 421
    assert client.get("/", headers={"Host": "memory.lan"}).status_code == 421
    assert client.get("/", headers={"Origin": "https://app.example"}).status_code == 200
    assert client.get("/", headers={"Origin": "https://app.example:444"}).status_code == 403
    with pytest.raises(ValueError, match="allowed host"):
        HostOriginGuard(_echo(), ["bad host"], [])


def test_tokens_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    client = TestClient(TokenGuard(_echo(), LONG_TOKEN))
    assert client.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/", headers={"Authorization": f"Bearer {LONG_TOKEN}"}).status_code == 200
    assert compared == [(b"wrong", LONG_TOKEN.encode()), (LONG_TOKEN.encode(), LONG_TOKEN.encode())]


def test_a_remote_app_needs_a_long_token(tmp_path: Path) -> None:
    server = build_server(MemorySession(tmp_path, "s"))
    for token in (None, "short", "k" * (MIN_REMOTE_TOKEN - 1)):
        with pytest.raises(ValueError, match=f"at least {MIN_REMOTE_TOKEN}"):
            http_app(server, host="192.0.2.10", token=token)
    assert http_app(server, host="192.0.2.10", token=LONG_TOKEN) is not None
    assert http_app(server, host="127.0.0.1", token="short") is not None  # loopback: your call


def _usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    monkeypatch.delenv("MEMQUILL_MCP_TOKEN", raising=False)
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    return capsys.readouterr().err


REMOTE = ["--transport", "http", "--host", "192.0.2.10", "--allow-remote"]


def test_the_command_refuses_a_short_remote_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("short-token\n")
    token_file.chmod(0o600)
    argv = ["--workspace", str(tmp_path), *REMOTE, "--token-file", str(token_file)]
    assert f"at least {MIN_REMOTE_TOKEN} characters" in _usage_error(argv, capsys, monkeypatch)
    monkeypatch.setenv("MEMQUILL_MCP_TOKEN", "short-token")
    with pytest.raises(SystemExit):
        main(["--workspace", str(tmp_path), *REMOTE])
    assert f"at least {MIN_REMOTE_TOKEN} characters" in capsys.readouterr().err


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o660])
def test_a_token_file_others_can_access_is_refused(
    tmp_path: Path, mode: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(LONG_TOKEN)
    token_file.chmod(mode)
    argv = ["--workspace", str(tmp_path), "--transport", "http", "--token-file", str(token_file)]
    err = _usage_error(argv, capsys, monkeypatch)
    assert "group or others" in err and f"{mode:03o}" in err and LONG_TOKEN not in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_token_file_is_refused_without_waiting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    os.mkfifo(tmp_path / "token", 0o600)
    argv = [
        "--workspace",
        str(tmp_path),
        "--transport",
        "http",
        "--token-file",
        str(tmp_path / "token"),
    ]
    assert "regular file" in _usage_error(argv, capsys, monkeypatch)
