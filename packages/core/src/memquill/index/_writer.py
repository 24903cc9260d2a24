"""Writing the index: a batch of analysed notes in, removed notes out, one transaction a call.

A note keeps its id for as long as its path is indexed: an edited note is compared with what
its term list says it held, and only the postings blocks of terms whose counts changed are
rewritten (:mod:`._blocks`); its term list and its page are replaced. A new note takes the
next id. A removed note (deleted, renamed, out of the limits) leaves every block that held it,
its term list, its page and the lexicon's terms no other note holds, in the same transaction,
so none of its words stays behind; after such a change, or an edit that lost a term or a tag,
the write-ahead log is truncated (:meth:`._db.IndexDatabase.wipe_log`). An edit that only adds
(a line appended) leaves nothing in the log that the index no longer holds, and spares the
checkpoint's writes and sync.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from typing import Final

from memquill.index._batch import AnalysedBatch, AnalysedNote
from memquill.index._blocks import BlockEditor
from memquill.index._db import IndexDamaged, IndexDatabase
from memquill.index._lexicon import drop_unheld, term_ids
from memquill.index._notes import NoteTable
from memquill.index._pages import PAGE, NoteRow, encode_page
from memquill.index._term_lists import TermList, decode_term_list, relabel

_LOOKUP: Final = 500
"""Ids looked up per statement (well under SQLite's limit on parameters)."""
_LARGE_BATCH: Final = 256
"""From this many notes stored or removed at once, a transaction gets SQLite's larger page
cache (a build's batches; an edit or two keep a search's)."""


class IndexWriter:
    """Writes one index (each call is one transaction), keeping ``notes`` current."""

    def __init__(self, database: IndexDatabase, notes: NoteTable) -> None:
        self._db = database
        self._notes = notes

    def store(
        self,
        batch: AnalysedBatch | None = None,
        removals: Iterable[str] = (),
        *,
        synced: bool = False,
    ) -> None:
        """Store a batch of analysed notes (new ones, or new versions of indexed paths) and
        remove the notes of ``removals``.

        A note whose path holds a row with the same identity, read no earlier than this one
        was, is kept as it is (another process indexed it meanwhile).
        """
        db, notes = self._db, self._notes
        wipe = False
        removals = list(removals)
        large = len(removals) + (0 if batch is None else len(batch.notes)) >= _LARGE_BATCH
        with db.writing(large=large) as connection:
            notes.refresh(connection)
            generation = db.meta_int("generation") + 1
            next_id = db.meta_int("next_id")
            editor = BlockEditor(connection, generation)
            pages: dict[int, dict[int, NoteRow | None]] = {}
            gone = [row for row in map(notes.by_path.get, dict.fromkeys(removals)) if row]
            for row, old in zip(gone, _term_lists(connection, [r.id for r in gone]), strict=True):
                editor.remove(row.id, old)
                pages.setdefault(row.id // PAGE, {})[row.id] = None
            connection.executemany("DELETE FROM terms WHERE id = ?", [(r.id,) for r in gone])
            dropped = {row.id for row in gone}
            editor.apply()
            edited: list[tuple[int, AnalysedNote, bytes]] = []
            lost = False  # an edited note lost a term or a tag
            added: list[tuple[int, AnalysedNote, bytes]] = []
            if batch is not None and batch.notes:
                mapping, fresh = term_ids(db, batch.vocabulary)
                for note in batch.notes:
                    row = notes.by_path.get(note.path)
                    if row is not None and row.id not in dropped:
                        if row.identity == note.identity and row.seen >= note.seen:
                            continue  # indexed meanwhile by another process from the same file
                        edited.append((row.id, note, relabel(note.terms, mapping)))
                    else:
                        added.append((next_id, note, relabel(note.terms, mapping)))
                        next_id += 1
                if batch.postings and len(added) == len(batch.notes):
                    # Every note is new: the batch's own blocks, renumbered, extend each term's.
                    editor.append(mapping, batch.postings, added[0][0], fresh)
                else:
                    olds = _term_lists(connection, [doc_id for doc_id, _, _ in edited])
                    for (doc_id, note, blob), old in zip(edited, olds, strict=True):
                        lost |= editor.replace(doc_id, old, decode_term_list(blob))
                        lost |= not _tag_set(note.tags) >= _tag_set(notes.by_id[doc_id].tags)
                    for doc_id, _, blob in added:
                        editor.add(doc_id, decode_term_list(blob))
            changed = [*edited, *added]
            connection.executemany(
                "INSERT OR REPLACE INTO terms(id, data) VALUES (?, ?)",
                [(doc_id, blob) for doc_id, _, blob in changed],
            )
            for doc_id, note, _ in changed:
                pages.setdefault(doc_id // PAGE, {})[doc_id] = note.row(doc_id)
            editor.apply()
            drop_unheld(connection, editor.emptied)
            self._write_pages(connection, pages, generation)
            db.set_meta("generation", generation)
            db.set_meta("next_id", next_id)
            if synced:
                db.set_meta("synced_ns", time.time_ns())
            wipe = bool(gone) or lost
        if wipe or db.wipe_pending:
            db.wipe_log()

    def _write_pages(
        self,
        connection: sqlite3.Connection,
        pages: dict[int, dict[int, NoteRow | None]],
        generation: int,
    ) -> None:
        """Rewrite each changed page from the note table and the changes."""
        notes = self._notes
        written: list[tuple[int, int, bytes]] = []
        for page in sorted(pages):
            rows = {row.id: row for row in notes.page(page)}
            for doc_id, row in pages[page].items():
                if row is None:
                    rows.pop(doc_id, None)
                else:
                    rows[doc_id] = row
            written.append((page, generation, encode_page([rows[key] for key in sorted(rows)])))
        connection.executemany(
            "INSERT OR REPLACE INTO pages(page, gen, data) VALUES (?, ?, ?)", written
        )


def _tag_set(tags: str) -> set[str]:
    return set(tags.split("\n")) if tags else set()


def _term_lists(connection: sqlite3.Connection, ids: list[int]) -> list[TermList]:
    """The stored term lists of the notes ``ids``, in that order.

    Raises:
        IndexDamaged: a note has none.
    """
    found: dict[int, bytes] = {}
    for start in range(0, len(ids), _LOOKUP):
        chunk = ids[start : start + _LOOKUP]
        marks = ",".join("?" * len(chunk))
        query = f"SELECT id, data FROM terms WHERE id IN ({marks})"  # noqa: S608 - placeholders
        found.update(
            (int(doc_id), bytes(blob)) for doc_id, blob in connection.execute(query, chunk)
        )
    try:
        return [decode_term_list(found[doc_id]) for doc_id in ids]
    except KeyError as error:
        raise IndexDamaged(f"no term list for note {error.args[0]}") from None
