"""A fresh process's check of which walked notes are current (``_sync._stale``: the walk's
packed identities compared with the note table's columns in C, run by run of consecutive
note ids) and the limits it then skips.

Both are speed, not behaviour: whenever the check says current, the note-by-note comparison
(:func:`memquill.index._sync.stale_notes`) finds nothing to read, and :func:`admit` keeps every
walked note with the walk's own summary as its only warning. Every change a note can undergo
(its size, its times, its inode, a new or oversized note, a read too soon after a change) is
still seen, wherever it lies in a run.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.core.index_helpers import age, mutate, populate
from tests.core.query_helpers import NOW, write

from memquill.index._search_index import SearchIndex
from memquill.index._sync import (  # pyright: ignore[reportPrivateUsage]
    _stale,
    _stale_by_note,
    stale_notes,
)
from memquill.index._view import NoteTable
from memquill.query._scan import ScanBudget, admit, walk_warnings, walk_workspace
from memquill.query._scanconfig import load_scan_config
from memquill.query._walk import Walk, WalkedFile

SETTLED = 0
"""A racy window every note is outside of (its row read after its last change)."""


def walked(root: Path, budget: ScanBudget | None = None) -> Walk:
    return walk_workspace(root, load_scan_config(root), None, budget or ScanBudget.default())


def indexed(root: Path) -> tuple[SearchIndex, NoteTable]:
    index = SearchIndex(root, location=":memory:", notice=None, racy_seconds=0)
    index.search("alpha", now=NOW)
    return index, index._notes  # pyright: ignore[reportPrivateUsage]


def _all_current(walk: Walk, notes: NoteTable, racy_ns: int) -> bool:
    """Current as the run-by-run comparison sees it: every walked note indexed, none to read
    and none too large."""
    oversized: list[str] = []
    pending, indexed = _stale(walk, notes, racy_ns, frozenset(), oversized)
    return indexed and not pending and not oversized


def by_loop(walk: Walk, notes: NoteTable, racy_ns: int) -> bool:
    """Current as the note-by-note comparison sees it (no warning, none to read, none too
    large)."""
    oversized: list[str] = []
    limit = walk.config.max_file_bytes
    pending = _stale_by_note(walk.steps, notes, limit, racy_ns, frozenset(), oversized)
    return not pending and not oversized and all(not isinstance(s, str) for s in walk.steps)


def same_as_by_note(walk: Walk, notes: NoteTable, racy_ns: int, force: set[str]) -> None:
    """The notes to read and those too large, run by run as note by note."""
    runs: list[str] = []
    notes_: list[str] = []
    limit = walk.config.max_file_bytes
    fast = stale_notes(walk, notes, racy_ns, force, runs)
    slow = _stale_by_note(walk.steps, notes, limit, racy_ns, force, notes_)
    assert fast == slow
    assert runs == notes_


def test_every_change_to_a_note_is_still_seen(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "vault"
    for number in range(40):
        write(root, f"f{number % 3}/n{number:02d}.md", f"note alpha {number}")
    index, notes = indexed(root)
    try:
        assert _all_current(walked(root), notes, SETTLED)
        assert by_loop(walked(root), notes, SETTLED)
        # Read "just now" for a window as long as the notes' age: each is unsettled.
        assert not _all_current(walked(root), notes, 10**18)
        assert not by_loop(walked(root), notes, 10**18)
        target = root / "f1" / "n19.md"  # inside a run of consecutive ids
        info = target.stat()
        changes = {
            "size": lambda: target.write_text("note alpha 19, edited", encoding="utf-8"),
            "times": lambda: os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns + 1)),
            "inode": lambda: _replaced(target),
            "new note": lambda: write(root, "f1/n19b.md", "note alpha new").touch(),
        }
        for name, change in changes.items():
            change()
            walk = walked(root)
            same_as_by_note(walk, notes, SETTLED, set())
            assert not by_loop(walk, notes, SETTLED), name
            assert not _all_current(walk, notes, SETTLED), name
            index.search("alpha", now=NOW)  # read again: current once more
            assert _all_current(walked(root), notes, SETTLED), name
        # Written 10 s ago, its inode changed just now: unsettled by its ctime alone.
        age(root)
        index.search("alpha", now=NOW)
        walk = walked(root)
        same_as_by_note(walk, notes, 5 * 10**9, set())
        assert stale_notes(walk, notes, 5 * 10**9), "read just after its ctime: read again"
        write(root, ".assistant/config.json", '{"index": {"maxFileSizeKB": 1}}')
        write(root, "f2/big.md", "alpha " * 400)
        index.search("alpha", now=NOW)
        assert not _all_current(walked(root), notes, SETTLED)  # a note too large to index
    finally:
        index.close()


def _replaced(path: Path) -> None:
    """The same text at the same times in a new file (a new inode)."""
    info = path.stat()
    copy = path.with_suffix(".tmp")
    copy.write_bytes(path.read_bytes())
    copy.replace(path)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_when_current_nothing_is_read_and_every_walked_note_is_kept(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    root = tmp_path.resolve() / "vault"
    populate(root, rng, 40)
    write(root, "a/b/c/d/e/f/g/h/i/deep.md", "alpha, too deep to walk")  # the walk's summary
    index, notes = indexed(root)
    try:
        for step in range(6):
            walk = walked(root)
            current = _all_current(walk, notes, SETTLED)
            assert current == by_loop(walk, notes, SETTLED), f"step {step}"
            texts = sorted(walk.texts)
            for racy_ns in (SETTLED, 10**18):
                for force in (set[str](), set(rng.sample(texts, 3)) if texts else set[str]()):
                    same_as_by_note(walk, notes, racy_ns, force)
            if current:
                admitted = admit(walk, _resolver(notes), ScanBudget.default())
                assert admitted.paths == walk.texts
                assert admitted.warnings == walk_warnings(walk, ScanBudget.default())
                assert admitted.warnings, "a folder too deep is warned of"
            mutate(root, rng, step)
            index.search("alpha", now=NOW)
    finally:
        index.close()


def _resolver(notes: NoteTable) -> Callable[[WalkedFile], tuple[int, int]]:
    def resolve(walked: WalkedFile) -> tuple[int, int]:
        at = notes.ids[walked.path]
        return at, notes.byte_sizes[at]

    return resolve
