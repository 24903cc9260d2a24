"""What a long-lived process keeps of its last walk: each note's identity, read back from the
note table (:class:`memquill.index._tracker.WalkedIdentities`).

This is memory, not behaviour: the identities must answer exactly as a dict of every walked
note's identity did, through edits, removals, renames and additions the watcher reports.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tests.core.index_helpers import mutate, populate
from tests.core.query_helpers import NOW, write

from memquill.index._search_index import SearchIndex
from memquill.index._tracker import WalkedIdentities
from memquill.index._view import NoteTable
from memquill.index._watch import WATCH_ENV
from memquill.query._scan import ScanBudget, walk_workspace
from memquill.query._scanconfig import load_scan_config
from memquill.query._walk import Identity


@pytest.fixture(autouse=True)
def watching(monkeypatch: pytest.MonkeyPatch) -> None:
    """The watcher on, even where the suite runs with ``MEMQUILL_INDEX_WATCH=0``."""
    monkeypatch.delenv(WATCH_ENV, raising=False)


def walked(root: Path) -> dict[str, Identity]:
    """The old representation: every note a walk finds now, with its identity."""
    walk = walk_workspace(root, load_scan_config(root), None, ScanBudget.default())
    return {step[0]: step[1] for step in walk.steps if not isinstance(step, str)}


def kept(index: SearchIndex) -> WalkedIdentities:
    """The identities the index's next synchronisation starts from (made now, as it would)."""
    seen = index._tracker._seen  # pyright: ignore[reportPrivateUsage]
    assert seen is not None, "a watching process keeps its last walk"
    return seen.identities(index._notes)  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_kept_identities_answer_as_every_walked_identity_did(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path.resolve() / "vault"
    populate(root, rng, 30)
    write(root, "big/huge.md", "word " * 4000)  # past the size limit below: walked, not indexed
    write(root, ".assistant/config.json", '{"index": {"maxFileSizeKB": 8}}')
    index = SearchIndex(root, location=":memory:", notice=None, racy_seconds=0)
    try:
        for step in range(8):
            index.search("alpha", now=NOW)
            known, expected = kept(index), walked(root)
            got = {path: known.identity(path) for path in expected}
            assert got == expected, f"step {step}"
            assert all(path in known for path in expected)
            gone = [*(f"{path}.gone" for path in sorted(expected)[:5]), "nowhere.md"]
            assert [known.identity(path) for path in gone] == [None] * len(gone)
            assert not any(path in known for path in gone)
            # Only notes the index does not hold are kept apart (the oversized one).
            others = known._other  # pyright: ignore[reportPrivateUsage]
            assert "big/huge.md" in others
            assert set(others) <= {path for path in expected if path not in index._notes.ids}  # pyright: ignore[reportPrivateUsage]
            mutate(root, rng, step)
    finally:
        index.close()


def test_a_table_loaded_again_vouches_for_nothing(tmp_path: Path) -> None:
    """Note ids restart when the index is replaced: the table's new rows are never taken as
    what the walk saw."""
    root = tmp_path.resolve() / "vault"
    write(root, "a.md", "alpha")
    write(root, "b.md", "bravo")
    index = SearchIndex(root, location=":memory:", notice=None, racy_seconds=0)
    try:
        index.search("alpha", now=NOW)
        known = kept(index)
        assert known.identity("a.md") == walked(root)["a.md"]
        notes: NoteTable = index._notes  # pyright: ignore[reportPrivateUsage]
        notes._clear()  # pyright: ignore[reportPrivateUsage]
        notes.ids["a.md"] = 0
        assert known.identity("a.md") is None
        assert "a.md" not in known
    finally:
        index.close()


def test_a_walk_of_no_notes_keeps_nothing() -> None:
    known = WalkedIdentities(NoteTable(), None)
    assert known.identity("a.md") is None
