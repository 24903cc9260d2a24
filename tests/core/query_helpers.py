"""Helpers shared by the query tests: workspaces, a fixed clock, records, leak checks."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic

import pytest

from memquill import MemorySession, MemoryToolset
from memquill.errors import Messages, SourceError
from memquill.index import _build as build_module
from memquill.index._search_index import IN_MEMORY, IndexSearcher
from memquill.paths import read_text_nofollow, read_text_stat
from memquill.query import MemoryQuery, _scan as scan_module
from memquill.query._models import GetResult, RecentResult, ResultT, SearchResult
from memquill.query._walk import DocumentCache
from memquill.store._results import Candidate, WriteResult
from memquill.store._store import RecordStore

NOW = datetime(2026, 9, 22, 12, 0, tzinfo=UTC)
"""The fixed clock of every query test (decay is measured from here)."""


def write(root: Path, relative: str, text: str) -> Path:
    """Create ``relative`` (and its folders) under ``root`` with ``text``."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@dataclass(frozen=True, slots=True)
class Response(Generic[ResultT]):
    """A read tool's answer as the tests read it: the text, and the result model."""

    text: str
    result: ResultT

    @property
    def ok(self) -> bool:
        return self.result.error is None


class ReadTools:
    """The three read tools over one query engine, called through the tool boundary."""

    def __init__(self, query: MemoryQuery) -> None:
        self.query = query
        self._tools = MemoryToolset(MemorySession(query.workspace, access="read"), query=query)

    def search(
        self,
        query: str,
        *,
        tags: Sequence[str] = (),
        file_type: str = "all",
        limit: int = 5,
    ) -> Response[SearchResult]:
        arguments = {"query": query, "tags": list(tags), "file_type": file_type, "limit": limit}
        return self._call("memory_search", arguments, SearchResult)

    def get(
        self,
        file_path: str,
        *,
        line_start: int | None = None,
        line_end: int | None = None,
        char_start: int = 0,
    ) -> Response[GetResult]:
        arguments = {
            "file_path": file_path,
            "line_start": line_start,
            "line_end": line_end,
            "char_start": char_start,
        }
        return self._call("memory_get", arguments, GetResult)

    def recent(self, *, days: int = 3) -> Response[RecentResult]:
        return self._call("memory_recent", {"days": days}, RecentResult)

    def _call(
        self, tool: str, arguments: dict[str, Any], model: type[ResultT]
    ) -> Response[ResultT]:
        result = self._tools.call(tool, arguments)
        parsed = model.model_validate(result.structured)
        assert result.is_error is (parsed.error is not None)
        return Response(result.text, parsed)


def engine(
    root: Path, *, cache: bool = True, store: RecordStore | None = None, indexed: bool = False
) -> ReadTools:
    """The read tools on ``root`` with the fixed clock; the cache trusts files at once.

    ``indexed`` searches through a search index (kept in memory) instead of the full scan.
    """
    chosen: bool | DocumentCache = DocumentCache(racy_seconds=0) if cache else False
    searcher = IndexSearcher(IN_MEMORY, notice=None) if indexed else None
    return ReadTools(
        MemoryQuery(root, store=store, now=lambda: NOW, cache=chosen, searcher=searcher)
    )


def remember(root: Path, content: str, session: str = "session-1") -> WriteResult:
    """Save ``content`` as a tool record of ``session``."""
    source = {"kind": "tool", "sessionId": session}
    key = f"tool:{session}:{hashlib.sha256(content.encode()).hexdigest()}"
    return RecordStore(root).save([Candidate(content, source, key)])


def assert_no_leak(text: str, root: Path, *secrets: str) -> None:
    """``text`` names no absolute workspace path and none of ``secrets``."""
    for needle in (str(root), str(root.resolve()), *secrets):
        assert needle not in text, f"{needle!r} leaked into {text!r}"


def make_unreadable(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make the scan's reader fail for files called ``name`` (as a permission error would)."""
    real = read_text_nofollow

    def flaky(path: Path, **kwargs: Any) -> str:
        if path.name == name:
            raise SourceError(Messages.SOURCE_UNREADABLE)
        return real(path, **kwargs)

    monkeypatch.setattr(scan_module, "read_text_nofollow", flaky)

    real_stat = read_text_stat

    def flaky_stat(path: Path, **kwargs: Any) -> tuple[str, os.stat_result]:
        if path.name == name:
            raise SourceError(Messages.SOURCE_UNREADABLE)
        return real_stat(path, **kwargs)

    monkeypatch.setattr(build_module, "read_text_stat", flaky_stat)
