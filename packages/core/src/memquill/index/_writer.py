"""Writing the index: a batch of analysed notes in, removed notes out, one transaction a call.

A note keeps its id for as long as its path is indexed: an edited note is compared with what
its term list says it held, and only the postings blocks of terms whose counts changed are
rewritten (:class:`BlockEditor`); its term list and its page are replaced. A new note takes the
next id. A removed note (deleted, renamed, out of the limits) leaves every block that held it,
its term list, its page and the lexicon's terms no other note holds, in the same transaction,
so none of its words stays behind; after such a change, or an edit that lost a term or a tag,
the write-ahead log is truncated (:meth:`._db.IndexDatabase.wipe_log`). An edit that only adds
(a line appended) leaves nothing in the log that the index no longer holds, and spares the
checkpoint's writes and sync.

Blocks are changed in place, each change touching only its block. A term's postings are split
into blocks of at most :data:`._codec.BLOCK` notes, keyed by ``(term id, first note id)``; the
blocks of a term cover disjoint, ascending id ranges (a block holds the ids from its own first
id up to the next block's). :class:`BlockEditor` gathers, per term, the notes to add, update or
remove, then rewrites only the blocks they fall in: a block that grows past the limit is split,
one left empty is deleted (a term no note holds any more leaves no row behind, and
:attr:`BlockEditor.emptied` says which terms may have lost their last one). New notes take ids
above every id in use, so they extend a term's last block; a batch of new notes brings its
blocks ready-made (:meth:`BlockEditor.append`). Every block written carries the generation of
its change, which is how readers in other processes know what to read again.
"""

from __future__ import annotations

import sqlite3
import time
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Final

from memquill.index._build import AnalysedBatch, AnalysedNote
from memquill.index._codec import (
    BLOCK,
    PAGE,
    FieldCounts,
    NoteRow,
    Postings,
    TermList,
    block_size,
    decode_block,
    decode_term_list,
    encode_block,
    encode_page,
    join_blocks,
    shift_block,
)
from memquill.index._db import IndexDamaged, IndexDatabase
from memquill.index._view import NoteTable, drop_unheld, term_ids

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
            gone = [row for row in map(notes.get, dict.fromkeys(removals)) if row]
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
                    row = notes.get(note.path)
                    if row is not None and row.id not in dropped:
                        if row.identity == note.identity and row.seen >= note.seen:
                            continue  # indexed meanwhile by another process from the same file
                        edited.append((row.id, note, note.term_list(mapping)))
                    else:
                        added.append((next_id, note, note.term_list(mapping)))
                        next_id += 1
                if batch.postings and len(added) == len(batch.notes):
                    # Every note is new: the batch's own blocks, renumbered, extend each term's.
                    editor.append(mapping, batch.postings, added[0][0], fresh)
                else:
                    olds = _term_lists(connection, [doc_id for doc_id, _, _ in edited])
                    for (doc_id, note, blob), old in zip(edited, olds, strict=True):
                        lost |= editor.replace(doc_id, old, decode_term_list(blob))
                        lost |= not _tag_set(note.tags) >= _tag_set(notes.row(doc_id).tags)
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


# ----------------------------------------------------------------------------------------------
# Blocks changed in place (see the module doc).


Entry = tuple[int, FieldCounts | None]
"""A note's body count and field counts (``None``: no field holds the term)."""
_BLOCKS_OF: Final = (
    "SELECT lo, data FROM postings WHERE term = ?1 AND lo <= ?3 AND lo >= coalesce("
    "(SELECT max(lo) FROM postings WHERE term = ?1 AND lo <= ?2), -1) ORDER BY lo"
)
"""The blocks a term's ids from ``?2`` to ``?3`` fall in (the one holding ``?2``, up to the
last that starts by ``?3``)."""


class BlockEditor:
    """The postings changes of one transaction (each note added, replaced or removed once),
    applied by :meth:`apply`."""

    def __init__(self, connection: sqlite3.Connection, generation: int) -> None:
        self._connection = connection
        self._generation = generation
        # Per term, per note id: its new entry, or None to remove it.
        self._changes: dict[int, dict[int, Entry | None]] = {}
        self._deletes: list[tuple[int, int]] = []
        self._writes: list[tuple[int, int, int, bytes]] = []
        self.emptied: set[int] = set()
        """Terms a block was deleted of (they may be held by no note any more)."""

    def add(self, doc_id: int, terms: TermList) -> None:
        """Note ``doc_id`` holds ``terms`` (it held none before)."""
        changes = self._changes
        fields = terms.fields
        for column, (term, body) in enumerate(zip(terms.ids, terms.bodies, strict=True)):
            changes.setdefault(term, {})[doc_id] = (body, fields.get(column))

    def remove(self, doc_id: int, terms: TermList) -> None:
        """Note ``doc_id``, which held ``terms``, holds nothing any more."""
        changes = self._changes
        for term in terms.ids:
            changes.setdefault(term, {})[doc_id] = None

    def replace(self, doc_id: int, old: TermList, new: TermList) -> bool:
        """Note ``doc_id`` held ``old`` and now holds ``new``: only what differs changes.
        Returns whether it lost a term."""
        before = _entries(old)
        changes = self._changes
        for term, entry in _entries(new).items():
            if before.pop(term, None) != entry:
                changes.setdefault(term, {})[doc_id] = entry
        for term in before:
            changes.setdefault(term, {})[doc_id] = None
        return bool(before)

    def append(
        self, terms: Sequence[int], blocks: Sequence[Sequence[bytes]], base: int, fresh: set[int]
    ) -> None:
        """Add a batch of new notes above every id in use: term ``terms[i]`` gets the blocks
        ``blocks[i]`` (built with note ids from 0, so ``base`` higher). A term's last block
        takes in the first new one if both fit in one (``fresh`` terms have no block yet)."""
        generation = self._generation
        writes = self._writes
        for term, made in zip(terms, blocks, strict=True):
            shifted = [shift_block(blob, base) for blob in made]
            if term not in fresh:
                tail = self._connection.execute(
                    "SELECT lo, data FROM postings WHERE term = ? ORDER BY lo DESC LIMIT 1",
                    (term,),
                ).fetchone()
                if tail is not None and block_size(tail[1]) + block_size(shifted[0][1]) <= BLOCK:
                    self._deletes.append((term, int(tail[0])))
                    shifted[0] = (int(tail[0]), join_blocks(bytes(tail[1]), shifted[0][1]))
            writes.extend((term, lo, generation, blob) for lo, blob in shifted)

    def apply(self) -> None:
        """Rewrite the blocks the gathered changes fall in (in this transaction).

        Raises:
            IndexDamaged: a note to update or remove is missing from its block.
        """
        deletes, writes = self._deletes, self._writes
        for term in sorted(self._changes):
            self._term(term, self._changes[term], deletes, writes)
        self._changes.clear()
        written = {term for term, *_ in writes}
        self.emptied.update(term for term, _ in deletes if term not in written)
        execute = self._connection.executemany
        execute("DELETE FROM postings WHERE term = ? AND lo = ?", deletes)
        execute("INSERT INTO postings(term, lo, gen, data) VALUES (?, ?, ?, ?)", writes)
        deletes.clear()
        writes.clear()

    def _term(
        self,
        term: int,
        changes: dict[int, Entry | None],
        deletes: list[tuple[int, int]],
        writes: list[tuple[int, int, int, bytes]],
    ) -> None:
        ids = sorted(changes)
        blocks = [
            (int(lo), decode_block(bytes(blob)))
            for lo, blob in self._connection.execute(_BLOCKS_OF, (term, ids[0], ids[-1]))
        ]
        generation = self._generation
        if not blocks or (
            ids[0] > blocks[-1][1].ids[-1] and all(changes[doc] is not None for doc in ids)
        ):
            # Only new notes above every id the term holds: they extend its last block.
            tail = blocks[-1][1] if blocks else None
            if tail is not None:
                deletes.append((term, blocks[-1][0]))
            if any(changes[doc] is None for doc in ids):
                raise IndexDamaged(f"postings of {term!r} lack a note to remove")
            added = _postings([(doc, changes[doc]) for doc in ids])
            parts = _split(_joined(tail, added) if tail is not None else added, last=True)
            writes.extend((term, part.ids[0], generation, encode_block(part)) for part in parts)
            return
        starts = [lo for lo, _ in blocks]
        grouped: dict[int, dict[int, Entry | None]] = {}
        for doc in ids:
            grouped.setdefault(max(0, bisect_right(starts, doc) - 1), {})[doc] = changes[doc]
        for index, group in grouped.items():
            lo, block = blocks[index]
            entries = _entry_map(block)
            for doc, entry in group.items():
                if entry is not None:
                    entries[doc] = entry
                elif entries.pop(doc, None) is None:
                    raise IndexDamaged(f"postings of {term!r} lack note {doc}")
            deletes.append((term, lo))
            if entries:
                last = index == len(blocks) - 1
                for part in _split(_postings(sorted(entries.items())), last=last):
                    writes.append((term, part.ids[0], generation, encode_block(part)))


def _entries(terms: TermList) -> dict[int, Entry]:
    fields = terms.fields
    return {
        term: (body, fields.get(column))
        for column, (term, body) in enumerate(zip(terms.ids, terms.bodies, strict=True))
    }


def _entry_map(block: Postings) -> dict[int, Entry | None]:
    fields = block.fields
    return {doc: (body, fields.get(doc)) for doc, body in zip(block.ids, block.bodies, strict=True)}


def _postings(entries: Sequence[tuple[int, Entry | None]]) -> Postings:
    ids = array("I", [doc for doc, _ in entries])
    bodies = array("I", [entry[0] for _, entry in entries if entry is not None])
    fields = {doc: entry[1] for doc, entry in entries if entry is not None and entry[1] is not None}
    return Postings(ids, bodies, fields)


def _joined(first: Postings, second: Postings) -> Postings:
    return Postings(
        first.ids + second.ids, first.bodies + second.bodies, first.fields | second.fields
    )


def _split(postings: Postings, *, last: bool) -> list[Postings]:
    """``postings`` as blocks: full ones then the rest for a term's last block (it grows at
    its end), else as many blocks of equal size as needed."""
    count = len(postings.ids)
    if count <= BLOCK:
        return [postings]
    parts = -(-count // BLOCK)
    size = BLOCK if last else -(-count // parts)
    found: list[Postings] = []
    fields = postings.fields
    for start in range(0, count, size):
        ids = postings.ids[start : start + size]
        held = {doc: fields[doc] for doc in ids if doc in fields} if fields else {}
        found.append(Postings(ids, postings.bodies[start : start + size], held))
    return found
