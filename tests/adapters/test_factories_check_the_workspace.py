"""Every factory checks its workspace when it is called, not at the first tool call (issue 23,
item 3): a folder that does not exist is ``storage``, a file ``unsafe_path``, raised by the
factory itself. The default folder (``memquill/workspace`` in the user data folder) is the
one exception: it is created on the first write, so a factory given it does not fail."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memquill import MemquillError, open_session
from memquill.errors import Messages
from memquill.paths import fallback_workspace
from memquill_langchain import MemquillRetriever as LangChainRetriever, MemquillToolkit
from memquill_llamaindex import MemquillRetriever as LlamaIndexRetriever, MemquillToolSpec
from memquill_mcp import build_server

FACTORIES: dict[str, Callable[[Path], Any]] = {
    "open_session": lambda ws: open_session(ws, "chat-1"),
    "langchain toolkit": lambda ws: MemquillToolkit.from_workspace(ws, "chat-1"),
    "langchain toolkit, read": lambda ws: MemquillToolkit.from_workspace(ws, access="read"),
    "langchain retriever": lambda ws: LangChainRetriever.from_workspace(ws),
    "llamaindex tool spec": lambda ws: MemquillToolSpec.from_workspace(ws, "chat-1"),
    "llamaindex retriever": lambda ws: LlamaIndexRetriever.from_workspace(ws),
    "mcp server": lambda ws: build_server(open_session(ws, access="read")),
}


@pytest.mark.parametrize("factory", FACTORIES.values(), ids=list(FACTORIES))
def test_a_missing_folder_fails_at_construction(
    tmp_path: Path, factory: Callable[[Path], Any]
) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(MemquillError) as refused:
        factory(missing)
    assert (refused.value.code, refused.value.message) == ("storage", Messages.WORKSPACE_MISSING)
    assert not missing.exists()


@pytest.mark.parametrize("factory", FACTORIES.values(), ids=list(FACTORIES))
def test_a_file_fails_at_construction(tmp_path: Path, factory: Callable[[Path], Any]) -> None:
    a_file = tmp_path / "notes.md"
    a_file.write_text("not a folder")
    with pytest.raises(MemquillError) as refused:
        factory(a_file)
    assert (refused.value.code, refused.value.message) == (
        "unsafe_path",
        Messages.WORKSPACE_NOT_DIR,
    )


@pytest.mark.parametrize("factory", FACTORIES.values(), ids=list(FACTORIES))
def test_the_default_folder_may_not_exist_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: Callable[[Path], Any]
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    default = fallback_workspace()
    assert default == tmp_path / "data" / "memquill" / "workspace"
    assert factory(default) is not None
    assert not default.exists()  # nothing is created by constructing
