"""The folder listings an index keeps for the next process's walk (``index/_sync.py``).

A fresh process reuses the listing of each folder whose identity is unchanged and lists the
others again; every note is still ``lstat``ed. These tests use real files and a new searcher
(a new process's view of the same index file) after each change.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.core.index_helpers import indexed
from tests.core.query_helpers import write

from memquill.index._location import index_path
from memquill.index._search_index import IndexSearcher
from memquill.index._sync import decode_listing


def hits(root: Path, folder: Path, query: str) -> list[str]:
    """The hit paths of ``query`` from a fresh searcher (no watcher: a walk, as a new process)."""
    searcher = IndexSearcher(folder, notice=None, watch=False, racy_seconds=0)
    try:
        text = indexed(root, searcher).search(query=query, limit=20).text
    finally:
        searcher.close()
    return sorted(
        line.split("[")[1].split(":")[0] for line in text.splitlines() if "] (score:" in line
    )


def kept(root: Path, folder: Path) -> dict[str, list[str]]:
    with sqlite3.connect(f"file:{index_path(root, folder)}?mode=ro", uri=True) as connection:
        rows = connection.execute("SELECT path, data FROM folders").fetchall()
    return {
        bytes(path).decode(): [step for _, step in decode_listing(bytes(blob))[1].steps]
        for path, blob in rows
    }


def test_a_fresh_process_sees_notes_added_edited_and_removed_in_kept_folders(
    tmp_path: Path,
) -> None:
    root, folder = (tmp_path / "vault").resolve(), tmp_path / "index"
    write(root, "a/one.md", "# One\n\nThe heron fishes at dawn.\n")
    write(root, "b/two.md", "# Two\n\nThe heron nests by the lake.\n")
    write(root, "c/three.md", "# Three\n\nA heron feather on the path.\n")
    assert hits(root, folder, "heron") == ["a/one.md", "b/two.md", "c/three.md"]
    assert kept(root, folder) == {
        "": ["a", "b", "c"],
        "a": ["a/one.md"],
        "b": ["b/two.md"],
        "c": ["c/three.md"],
    }
    # An edit leaves its folder's listing as it was; an added and a removed note change theirs.
    (root / "a/one.md").write_text("# One\n\nThe kingfisher fishes at dawn.\n")
    write(root, "b/four.md", "# Four\n\nA heron and a kingfisher.\n")
    (root / "c/three.md").unlink()
    assert hits(root, folder, "heron") == ["b/four.md", "b/two.md"]
    assert hits(root, folder, "kingfisher") == ["a/one.md", "b/four.md"]
    assert kept(root, folder) == {
        "": ["a", "b", "c"],
        "a": ["a/one.md"],
        "b": ["b/four.md", "b/two.md"],
        "c": [],
    }


def test_a_damaged_listing_is_found_by_the_check_and_rebuilt_by_a_search(tmp_path: Path) -> None:
    root, folder = (tmp_path / "vault").resolve(), tmp_path / "index"
    write(root, "a/one.md", "# One\n\nThe heron fishes at dawn.\n")
    assert hits(root, folder, "heron") == ["a/one.md"]
    with sqlite3.connect(index_path(root, folder)) as connection:
        path, blob = connection.execute("SELECT path, data FROM folders LIMIT 1").fetchone()
        damaged = bytes(blob[:-1]) + bytes([blob[-1] ^ 1])  # its checksum no longer matches
        connection.execute("UPDATE folders SET data = ? WHERE path = ?", (damaged, path))
    problems = IndexSearcher(folder, notice=None).index(root).check()
    assert len(problems) == 1 and "listing of folder" in problems[0] and "checksum" in problems[0]
    assert hits(root, folder, "heron") == ["a/one.md"]
    assert IndexSearcher(folder, notice=None).index(root).check() == []
