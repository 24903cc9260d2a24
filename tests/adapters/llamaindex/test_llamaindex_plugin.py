"""The adapter is found through the ``memquill`` entry point, and these tests run offline."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from memquill import MemorySession
from memquill.plugins import get_plugin_manager, plugin_report
from memquill.testing._runner import CoreHarness
from memquill_llamaindex import LlamaIndexHarness


def test_the_entry_point_registers_the_llamaindex_adapter(tmp_path: Path) -> None:
    report = plugin_report(get_plugin_manager())
    assert not [failure for failure in report.failures if failure.plugin == "llamaindex"]
    (entry,) = [entry for entry in report.adapters if entry.adapter.name == "llamaindex"]
    assert entry.plugin == "llamaindex"
    spec = entry.adapter
    assert (spec.framework, spec.distribution) == ("LlamaIndex", "memquill-llamaindex")
    assert any(
        (plugin.name, plugin.distribution) == ("llamaindex", "memquill-llamaindex")
        for plugin in report.plugins
    )

    session = MemorySession(tmp_path, "chat-1", "read")
    harness = spec.open(session)
    try:
        assert isinstance(harness, LlamaIndexHarness)
        assert [tool.name for tool in harness.catalogue()] == [
            tool.name for tool in CoreHarness(session).catalogue()
        ]
        result = harness.call("memory_recent", {})
        assert (result.text, result.is_error) == ("No recent memories found.", False)
    finally:
        harness.close()
    assert list(tmp_path.iterdir()) == []  # opening and reading wrote nothing


def test_autoload_off_means_no_llamaindex_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMQUILL_DISABLE_PLUGIN_AUTOLOAD", "1")
    adapters = plugin_report(get_plugin_manager()).adapters
    assert "llamaindex" not in [entry.adapter.name for entry in adapters]


def test_the_network_is_off_in_these_tests() -> None:
    with pytest.raises(OSError, match="network access is disabled"):
        socket.create_connection(("example.com", 443), timeout=1)
    with pytest.raises(OSError, match="network access is disabled"):
        socket.getaddrinfo("example.com", 443)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as raw, pytest.raises(OSError):
        raw.connect(("192.0.2.1", 443))
