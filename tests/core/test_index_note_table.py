"""The note table of a long-lived process, as the index changes under it
(:class:`memquill.index._view.NoteTable`)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.core.query_helpers import NOW, write

from memquill.index._search_index import SearchIndex
from memquill.index._view import NoteTable


def test_a_page_read_again_keeps_its_notes_entries_and_path_strings(tmp_path: Path) -> None:
    """A changed page is taken whole: the notes it keeps keep their entry in the path -> id
    dict (deleted and added again, they used up its room and doubled it) and their path's
    string (held by the folder listings too)."""
    root = tmp_path.resolve() / "vault"
    for number in range(300):
        write(root, f"n{number:03}.md", f"alpha note {number}")
    index = SearchIndex(root, location=":memory:", notice=None, racy_seconds=0, watch=False)
    try:
        index.search("alpha", now=NOW)
        notes: NoteTable = index._notes  # pyright: ignore[reportPrivateUsage]
        size = sys.getsizeof(notes.ids)
        before = {path: notes.paths[doc_id] for path, doc_id in notes.ids.items()}
        for number in range(0, 300, 5):  # a fifth of the notes, on every page
            write(root, f"n{number:03}.md", f"bravo note {number}")
        assert len(index.search("bravo", now=NOW)[0]) > 0
        assert len(notes.ids) == 300
        assert sys.getsizeof(notes.ids) == size
        for path, doc_id in notes.ids.items():
            assert notes.paths[doc_id] is before[path], path
    finally:
        index.close()
