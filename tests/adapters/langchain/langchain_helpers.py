"""Workspaces, sessions and small readers shared by the LangChain adapter tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import ToolCall

from memquill import MemorySession, MemoryToolset, SearchResult
from memquill.query import MemoryQuery
from memquill.testing._cases import load_fixtures

NOTES = load_fixtures()["notes"]
"""The parity suite's notes workspace: four notes mention saffron, memory.md holds tea."""

SESSION_ID = "lc-session"


def notes_workspace(root: Path) -> Path:
    """Build the notes fixture under ``root`` and return ``root``."""
    NOTES.build(root)
    return root


def session(
    root: Path,
    *,
    access: Literal["read", "read_write"] = "read_write",
    authorize_write: Callable[[], bool] | None = None,
) -> MemorySession:
    """A session on ``root`` with the fixture's clock."""
    return MemorySession(root, SESSION_ID, access, authorize_write, now=lambda: NOTES.now)


def query(root: Path) -> MemoryQuery:
    """A query engine on ``root`` with the fixture's clock."""
    return MemoryQuery(root, now=lambda: NOTES.now)


def core_search(root: Path, text: str, **options: Any) -> SearchResult:
    """The core ``memory_search`` tool's structured answer (``error`` set on a failure)."""
    tools = MemoryToolset(session(root, access="read"), query=query(root))
    result = tools.call("memory_search", {"query": text, **options})
    return SearchResult.model_validate(result.structured)


def call(name: str, args: dict[str, Any], call_id: str = "call-1") -> ToolCall:
    """A model-style tool call."""
    return ToolCall(name=name, args=args, id=call_id, type="tool_call")


def records_text(root: Path) -> str | None:
    """``memory/records.md`` as text, or ``None`` when it does not exist."""
    path = root / "memory" / "records.md"
    return path.read_text("utf-8") if path.exists() else None
