"""Shared fixtures for the LlamaIndex adapter tests: a real workspace, and no network.

LlamaIndex can reach the network on its own (tokenizer downloads, default OpenAI models), so
every test here runs with outbound connections and name lookups refused: a test that needed the
network fails instead of passing on a connected machine only.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.adapters.llamaindex.llamaindex_helpers import NOW, Mode, build_workspace

from memquill import MemorySession
from memquill.tools._session import Access


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network access is disabled in the LlamaIndex adapter tests")

    original_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        if self.family == socket.AF_UNIX:  # event-loop self-pipes and local IPC are fine
            return original_connect(self, address)
        return refuse()

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return build_workspace(tmp_path / "workspace")


@pytest.fixture
def mode() -> Mode:
    return Mode()


@pytest.fixture
def make_session(workspace: Path, mode: Mode) -> Callable[..., MemorySession]:
    def make(access: Access = "read_write", session_id: str = "chat-1") -> MemorySession:
        return MemorySession(workspace, session_id, access, mode.authorize, now=lambda: NOW)

    return make


@pytest.fixture
def session(make_session: Callable[..., MemorySession]) -> MemorySession:
    return make_session()
