"""The lexicon: each term stored once, as text, with the number everything else calls it by.

Postings blocks and term lists name terms by id, so a note's words are written as text in one
place only. A term's id never changes while any note holds it; the row goes in the transaction
that removes its last holder (:func:`drop_unheld`), and ids are never given twice.

The table is keyed by the text alone (a search looks terms up by text), so the text is stored
once; a term is deleted by id with one pass over the table per transaction, which only a
change that leaves a term with no holder makes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Final

from memquill.index._db import IndexDatabase

_LOOKUP: Final = 500
"""Terms looked up per statement (well under SQLite's limit on parameters)."""


def term_ids(database: IndexDatabase, terms: Sequence[str]) -> tuple[list[int], set[int]]:
    """The ids of ``terms`` (inside a write transaction), giving new terms the next ids; and
    which of them are new."""
    connection = database.connection
    found: dict[str, int] = {}
    for start in range(0, len(terms), _LOOKUP):
        chunk = terms[start : start + _LOOKUP]
        marks = ",".join("?" * len(chunk))
        query = f"SELECT term, id FROM lexicon WHERE term IN ({marks})"  # noqa: S608 - placeholders
        found.update((str(term), int(number)) for term, number in connection.execute(query, chunk))
    missing = [term for term in terms if term not in found]
    fresh: set[int] = set()
    if missing:
        first = database.meta_int("next_term")
        rows = [(first + offset, term) for offset, term in enumerate(missing)]
        connection.executemany("INSERT INTO lexicon(id, term) VALUES (?, ?)", rows)
        database.set_meta("next_term", first + len(missing))
        found.update((term, number) for number, term in rows)
        fresh = {number for number, _ in rows}
    return [found[term] for term in terms], fresh


def term_id(connection: sqlite3.Connection, term: str) -> int | None:
    """The id of ``term`` (``None``: no note holds it)."""
    row = connection.execute("SELECT id FROM lexicon WHERE term = ?", (term,)).fetchone()
    return None if row is None else int(row[0])


def drop_unheld(connection: sqlite3.Connection, ids: Iterable[int]) -> None:
    """Delete the terms among ``ids`` that no postings block holds any more."""
    gone = [
        number
        for number in sorted(set(ids))
        if connection.execute("SELECT 1 FROM postings WHERE term = ? LIMIT 1", (number,)).fetchone()
        is None
    ]
    for start in range(0, len(gone), _LOOKUP):
        chunk = gone[start : start + _LOOKUP]
        marks = ",".join("?" * len(chunk))
        query = f"DELETE FROM lexicon WHERE id IN ({marks})"  # noqa: S608 - placeholders
        connection.execute(query, chunk)
