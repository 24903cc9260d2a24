"""Helpers shared by the query tests: workspaces, a fixed clock, records, leak checks."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memquill import scan as scan_module
from memquill.errors import Messages, SourceError
from memquill.query import MemoryQuery
from memquill.results import Candidate, WriteResult
from memquill.scan import DocumentCache
from memquill.store import RecordStore

NOW = datetime(2026, 9, 22, 12, 0, tzinfo=UTC)
"""The fixed clock of every query test (decay is measured from here)."""


def write(root: Path, relative: str, text: str) -> Path:
    """Create ``relative`` (and its folders) under ``root`` with ``text``."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def engine(root: Path, *, cache: bool = True, store: RecordStore | None = None) -> MemoryQuery:
    """A query engine on ``root`` with the fixed clock; its cache trusts files at once."""
    chosen: bool | DocumentCache = DocumentCache(racy_seconds=0) if cache else False
    return MemoryQuery(root, store=store, now=lambda: NOW, cache=chosen)


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
    real = scan_module.read_text_nofollow

    def flaky(path: Path, **kwargs: int) -> str:
        if path.name == name:
            raise SourceError(Messages.SOURCE_UNREADABLE)
        return real(path, **kwargs)

    monkeypatch.setattr(scan_module, "read_text_nofollow", flaky)
