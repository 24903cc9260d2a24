"""Four ways the index learns of a change, each with a test that fails when it is dropped.

Real files and the real watcher (Linux inotify); where the case needs a moment no test can
time (two writes inside one timestamp tick, a write between the index's refresh and its read
of a hit), that moment is made exact — timestamps of one second, as on file systems that keep
no finer ones, or a write at the point in the search where another process's could land.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from tests.core.query_helpers import write

from memquill.index import (
    _build as build_module,
    _corpus as corpus_module,
    _search_index as search_index_module,
    _tracker as tracker_module,
)
from memquill.index._search_index import SearchIndex
from memquill.index._watch import WATCH_ENV, open_watcher
from memquill.query import _walk as walk_module
from memquill.query._rank import rank
from memquill.query._walk import Identity, file_identity

NOW = datetime(2026, 9, 22, 12, tzinfo=UTC)


def found(index: SearchIndex, query: str) -> list[str]:
    return [hit.document.path for hit in index.search(query, now=NOW)[0]]


@pytest.fixture
def watching(monkeypatch: pytest.MonkeyPatch) -> None:
    """The watcher on, even where the suite runs with ``MEMQUILL_INDEX_WATCH=0``."""
    monkeypatch.delenv(WATCH_ENV, raising=False)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "vault"
    write(root, "a.md", "alpha bravo")
    write(root, "b.md", "charlie delta")
    write(root, "churn/keep.md", "echo foxtrot")
    return root


@pytest.mark.parametrize("watch", [False, True], ids=["walk", "watcher-falls-back"])
def test_a_note_deleted_before_a_full_walk_is_no_longer_served(vault: Path, watch: bool) -> None:
    """The walk finds a note gone and nothing else changed: its rows must still go (the
    ``removals`` of :func:`memquill.index._sync.synchronise`)."""
    index = SearchIndex(vault, location=":memory:", notice=None, racy_seconds=0, watch=watch)
    try:
        assert found(index, "charlie") == ["b.md"]
        (vault / "b.md").unlink()
        if watch:
            (vault / "new-folder").mkdir()  # a new folder: the watcher's quick path walks
        assert found(index, "charlie") == []
        assert index.status().documents == 2
    finally:
        index.close()


def _coarse(info: os.stat_result) -> Identity:
    """A file identity with whole-second times, as a file system that keeps no finer ones."""
    size, mtime, inode, ctime, device = file_identity(info)
    return (size, mtime // 10**9 * 10**9, inode, ctime // 10**9 * 10**9, device)


def test_a_watched_write_is_read_again_though_its_identity_did_not_change(
    vault: Path, monkeypatch: pytest.MonkeyPatch, watching: None
) -> None:
    """Two writes of the same size within one timestamp tick keep a file's identity; only the
    watcher's event says to read it again (the ``force`` list), also when the watcher's quick
    path hands over to a walk."""
    for module in (walk_module, build_module, corpus_module, tracker_module):
        monkeypatch.setattr(module, "file_identity", _coarse)
    for _ in range(5):
        while time.time() % 1 > 0.2:  # start early in a second: both writes fall inside it
            time.sleep(0.01)
        second = int(time.time())
        write(vault, "a.md", "alpha bravo")
        index = SearchIndex(vault, location=":memory:", notice=None, racy_seconds=0)
        try:
            assert found(index, "bravo") == ["a.md"]
            write(vault, "a.md", "alpha delta")  # the same size, the same second
            (vault / "churn" / f"sub{second}").mkdir()  # and a new folder: a walk is needed
            same_second = int(time.time()) == second
            answer = found(index, "delta")
        finally:
            index.close()
        if same_second:
            assert sorted(answer) == ["a.md", "b.md"]
            return
    pytest.fail("five tries never kept two writes inside one second")


def test_a_walk_after_watched_changes_reads_again_only_the_notes_that_changed(
    vault: Path, watching: None
) -> None:
    """A walk the watcher's events call for takes every note it saw no event for at the
    identity the walk before saw (kept packed between searches): none of them is read again."""
    index = SearchIndex(vault, location=":memory:", notice=None, racy_seconds=0)
    try:
        assert index.refresh().read == frozenset({"a.md", "b.md", "churn/keep.md"})
        assert found(index, "alpha") == ["a.md"]  # a second search: the walk is kept packed
        write(vault, "a.md", "alpha kilo")
        (vault / "churn" / "sub").mkdir()  # a new folder: a walk is needed
        assert index.refresh().read == frozenset({"a.md"})
        assert found(index, "kilo") == ["a.md"]
    finally:
        index.close()


def test_an_overflowed_event_queue_means_a_full_walk(vault: Path, watching: None) -> None:
    """Events past the kernel's queue limit are dropped and one overflow event stands for
    them: the watcher must then vouch for nothing."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    index = SearchIndex(vault, location=":memory:", notice=None, racy_seconds=0)
    try:
        assert found(index, "golf") == []
        churn = vault / "churn"
        # Each file raises three events (create, close after writing, delete).
        for number in range(limit // 3 + 100):
            path = churn / f"t{number}"
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
            path.unlink()
        write(vault, "b.md", "charlie golf hotel")  # its events are dropped
        assert found(index, "golf") == ["b.md"]
    finally:
        index.close()


def test_a_note_changed_between_refresh_and_read_is_searched_again(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note written by another process after the index was brought up to date, before its
    text is read for the answer: the search starts over and answers from the new text."""
    index = SearchIndex(vault, location=":memory:", notice=None, racy_seconds=0, watch=False)
    real_rank: Callable[..., Any] = rank
    edits: list[str] = []

    def rank_after_a_write(*args: Any, **kwargs: Any) -> Any:
        if not edits:  # once: another process saves the note just now
            edits.append("b.md")
            write(vault, "b.md", "charlie delta, and a longer second version")
        return real_rank(*args, **kwargs)

    try:
        index.refresh()
        monkeypatch.setattr(search_index_module, "rank", rank_after_a_write)
        hits, _ = index.search("charlie", now=NOW)
        assert edits == ["b.md"]
        assert [hit.document.path for hit in hits] == ["b.md"]
        assert "longer second version" in hits[0].document.content
    finally:
        index.close()


def test_the_watcher_can_be_turned_off(
    vault: Path, monkeypatch: pytest.MonkeyPatch, watching: None
) -> None:
    """``MEMQUILL_INDEX_WATCH=0``: no watcher, a walk before every answer, the same answers."""
    watcher = open_watcher(vault)
    assert watcher is not None  # Linux, a local file system
    watcher.close()
    monkeypatch.setenv(WATCH_ENV, "0")
    assert open_watcher(vault) is None
    index = SearchIndex(vault, location=":memory:", notice=None, racy_seconds=0)
    try:
        assert found(index, "delta") == ["b.md"]
        write(vault, "sub/c.md", "delta echo")
        (vault / "b.md").unlink()
        assert found(index, "delta") == ["sub/c.md"]
    finally:
        index.close()
