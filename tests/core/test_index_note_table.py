"""The note table's columns hold every number of a page as the page stores it.

:class:`memquill.index._view.NoteTable` keeps sizes, byte sizes, lengths and days in 4 bytes
and the rest in 8: each row read back must be the row written, and a number a column cannot
hold is damage, never a number cut short.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from tests.core.query_helpers import NOW, write

from memquill.index._codec import NoteRow, encode_page, read_page
from memquill.index._db import IndexDamaged
from memquill.index._search_index import SearchIndex
from memquill.index._view import NoteTable

WIDE = st.integers(-(2**63), 2**63 - 1)
NARROW = st.integers(0, 2**32 - 1)


@st.composite
def rows(draw: st.DrawFn, first: int = 0) -> list[NoteRow]:
    count = draw(st.integers(1, 6))
    run = draw(st.booleans())
    ids = (
        list(range(first, first + count))
        if run
        else sorted(draw(st.sets(st.integers(first, first + 40), min_size=count, max_size=count)))
    )
    return [
        NoteRow(
            doc_id,
            f"n{doc_id}.md",
            draw(NARROW),
            draw(WIDE),
            draw(WIDE),
            draw(WIDE),
            draw(WIDE),
            draw(WIDE),
            draw(NARROW),
            draw(NARROW),
            draw(st.sampled_from(["", "a", "a\nb"])),
            draw(st.sampled_from([0, 1, 739_000, 3_652_059])),
        )
        for doc_id in ids
    ]


@settings(max_examples=200)
@given(first=rows(), second=rows(first=100))
def test_each_row_reads_back_as_written(first: list[NoteRow], second: list[NoteRow]) -> None:
    notes = NoteTable()
    notes._put(0, read_page(encode_page(first)))  # pyright: ignore[reportPrivateUsage]
    notes._put(1, read_page(encode_page(second)))  # pyright: ignore[reportPrivateUsage]
    for row in (*first, *second):
        assert notes.row(row.id) == row
        assert notes.get(row.path) == row
    assert notes.length_total == sum(row.length for row in (*first, *second))
    assert notes.bytes_total == sum(row.byte_size for row in (*first, *second))


@pytest.mark.parametrize("field", ["size", "byte_size", "length", "day"])
@pytest.mark.parametrize("value", [-1, 2**32])
def test_a_number_its_column_cannot_hold_is_damage(field: str, value: int) -> None:
    row = NoteRow(0, "a.md", 1, 2, 3, 4, 5, 6, 7, 8, "", 0)._replace(**{field: value})
    notes = NoteTable()
    with pytest.raises(IndexDamaged, match="out of range"):
        notes._put(0, read_page(encode_page([row])))  # pyright: ignore[reportPrivateUsage]


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
