"""What a long-lived process keeps of its last walk: each note's identity, read back from the
note table (:class:`memquill.index._tracker.WalkedIdentities`), and each kept folder listing
sharing the note table's paths (:func:`memquill.index._sync.shared_paths`).

Both are memory, not behaviour: the identities must answer exactly as a dict of every walked
note's identity did, through edits, removals, renames and additions the watcher reports, and
a shared listing must equal the one it replaces.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tests.core.index_helpers import mutate, populate
from tests.core.query_helpers import NOW, write

from memquill.index._search_index import SearchIndex
from memquill.index._sync import shared_paths
from memquill.index._tracker import WalkedIdentities
from memquill.index._view import NoteTable
from memquill.index._watch import WATCH_ENV
from memquill.query._scan import ScanBudget, walk_workspace
from memquill.query._scanconfig import load_scan_config
from memquill.query._walk import FolderListing, Identity


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


def test_a_shared_listing_equals_its_own_and_holds_the_note_tables_paths(tmp_path: Path) -> None:
    root = tmp_path.resolve() / "vault"
    write(root, "a/one.md", "alpha")
    write(root, "a/two.md", "bravo")
    write(root, "a/deeper/three.md", "charlie")
    folder = tmp_path / "index"
    first = SearchIndex(root, location=folder, notice=None, racy_seconds=0)
    try:
        first.search("alpha", now=NOW)  # builds, and keeps the folder listings
    finally:
        first.close()
    index = SearchIndex(root, location=folder, notice=None, racy_seconds=0)
    try:
        assert [hit.document.path for hit in index.search("bravo", now=NOW)[0]] == ["a/two.md"]
        notes: NoteTable = index._notes  # pyright: ignore[reportPrivateUsage]
        held = index._tracker.listings.held_listings(load_scan_config(root))  # pyright: ignore[reportPrivateUsage]
        listing = held["a"][1]
        assert listing.kinds == ("folder", "file", "file")
        assert listing.values == ("a/deeper", "a/one.md", "a/two.md")
        for kind, value in listing.steps:
            if kind == "file":
                assert value is notes.paths[notes.ids[value]], value
    finally:
        index.close()
    # A listing with a warning and a folder: equal, each note's path the table's string.
    table = NoteTable()
    table.ids = {"x/n.md": 0}
    table.paths = ["".join(["x/", "n.md"])]
    made = FolderListing(3, ("skip", "folder", "file"), ("Skipped x/q", "x/y", "x/n.md"), True)
    shared = shared_paths(made, table)
    assert shared == made
    assert shared.values[2] is table.paths[0]
    assert shared_paths(FolderListing(0, (), (), True), table) == FolderListing(0, (), (), True)


def test_rows_that_differ_from_the_walk_are_kept_apart_run_by_run(tmp_path: Path) -> None:
    """The walk is compared with the rows run by run of consecutive note ids (in C): a run
    holding a row that differs (its note read again after the walk) is gone through note by
    note, and only that note's identity is kept apart; every walked note answers as the walk
    saw it."""
    rng = random.Random(7)
    root = tmp_path.resolve() / "vault"
    populate(root, rng, 40)
    index = SearchIndex(root, location=":memory:", notice=None, racy_seconds=0)
    try:
        index.search("alpha", now=NOW)
        walk = walk_workspace(root, load_scan_config(root), None, ScanBudget.default())
        expected = walked(root)
        changed = sorted(expected)[5:8]
        for path in changed:
            with (root / path).open("a", encoding="utf-8") as handle:
                handle.write("\nanother line\n")
        index.search("alpha", now=NOW)  # the rows of the changed notes now differ from the walk
        known = WalkedIdentities(index._notes, walk)  # pyright: ignore[reportPrivateUsage]
        assert {path: known.identity(path) for path in expected} == expected
        assert sorted(known._other) == changed  # pyright: ignore[reportPrivateUsage]
    finally:
        index.close()
