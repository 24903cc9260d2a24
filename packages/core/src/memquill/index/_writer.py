"""Writing the index: new segments of analysed notes, removals, and segment merges.

Each call is one transaction. Notes analysed together become one *segment*: their rows in
``docs`` (chunk matrices and terms), their figures as one blob (:mod:`._manifest`) and, per
term, one postings blob. A changed note gets a new id in a new segment and its old id goes to
``gone``; a removed or changed note leaves its old segment in the same transaction
(:mod:`._purge`: its postings and figures are rewritten out of the segment's blobs), and a
segment that is then mostly dead is rewritten whole. After a change that removed notes the
write-ahead log is truncated (:meth:`._db.IndexDatabase.wipe_log`). Segments are merged so
that there are at most :data:`MAX_SEGMENTS`. Ids only grow, so a merge of adjacent segments
is a concatenation.
"""

from __future__ import annotations

import sqlite3
import time
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from memquill.index._analysis import NoteFigures
from memquill.index._codec import (
    Postings,
    SegmentBuilder,
    decode_postings,
    encode_matrix,
    encode_postings,
    encode_terms,
)
from memquill.index._db import IndexDatabase, row_checksum
from memquill.index._manifest import NoteRow, decode_notes, encode_notes
from memquill.index._purge import purge_segment

__all__ = ["MAX_SEGMENTS", "EncodedSegment", "IndexWriter", "SegmentEncoder"]

MAX_SEGMENTS: Final = 64
_GONE_SLACK: Final = 1000
_LOOKUP: Final = 500
"""Paths looked up per statement (well under SQLite's limit on parameters)."""


@dataclass(frozen=True, slots=True)
class EncodedSegment:
    """A batch of analysed notes, ready to store.

    Attributes:
        notes: the notes' rows (``seg`` not yet given), by ascending id.
        matrices: each note's chunk matrix blob, aligned with ``notes``.
        terms: each note's terms blob (:func:`._codec.encode_terms`), aligned with ``notes``.
        table: the notes' blob (:func:`._manifest.encode_notes`), used when every note is kept.
        postings: (term, blob) pairs.
    """

    notes: tuple[NoteRow, ...]
    matrices: tuple[bytes, ...]
    terms: tuple[bytes, ...]
    table: bytes
    postings: tuple[tuple[str, bytes], ...]


class SegmentEncoder:
    """Gathers analysed notes (ids ascending) and encodes them as one segment."""

    def __init__(self) -> None:
        self._builder = SegmentBuilder()
        self._rows: list[NoteRow] = []
        self._matrices: list[bytes] = []
        self._terms: list[bytes] = []

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, doc_id: int, note: NoteFigures, seen: int) -> None:
        """Add note ``doc_id``, whose text was read after ``seen`` (ns since the epoch)."""
        self._builder.add(doc_id, note)
        self._rows.append(
            NoteRow(
                doc_id,
                note.path,
                *note.identity,
                seen,
                note.byte_size,
                note.length,
                "\n".join(note.tags),
                note.day,
                0,
            )
        )
        self._matrices.append(encode_matrix(note.matrix, note.chunks, len(note.terms)))
        self._terms.append(encode_terms(note))

    def encode(self) -> EncodedSegment:
        """The segment of every note added."""
        rows = self._rows
        postings = tuple(self._builder.encode())
        return EncodedSegment(
            tuple(rows), tuple(self._matrices), tuple(self._terms), encode_notes(rows), postings
        )


class IndexWriter:
    """Writes one index (each method is one transaction)."""

    def __init__(self, database: IndexDatabase) -> None:
        self._db = database

    def reserve(self, count: int) -> int:
        """Reserve ``count`` fresh ids; the first."""
        with self._db.writing():
            first = self._db.meta_int("next_id")
            self._db.set_meta("next_id", first + count)
        return first

    def store(
        self,
        segment: EncodedSegment | None,
        removals: Iterable[str] = (),
        *,
        synced: bool = False,
    ) -> None:
        """Store a segment (replacing notes of the same paths) and remove ``removals``.

        A note whose path already holds a row with the same identity written later than
        this segment's notes were read is kept (another process indexed it meanwhile).
        """
        db = self._db
        removed: dict[int, set[int]] = {}
        with db.writing() as connection:
            generation = db.meta_int("generation") + 1
            for path in removals:
                _remove(connection, path, generation, removed)
            if segment is not None and segment.notes:
                self._insert(connection, segment, generation, removed)
            for seg, ids in sorted(removed.items()):
                self._purge(connection, seg, ids, generation)
            db.set_meta("generation", generation)
            if synced:
                db.set_meta("synced_ns", time.time_ns())
        if removed or db.wipe_pending:
            db.wipe_log()

    def _purge(
        self, connection: sqlite3.Connection, seg: int, ids: set[int], generation: int
    ) -> None:
        """Take the removed notes ``ids`` out of segment ``seg``: rewrite the segment whole if
        it is now mostly dead (as compaction would), else only what held them."""
        docs = connection.execute("SELECT docs FROM segs WHERE seg = ?", (seg,)).fetchone()
        dead = connection.execute("SELECT count(*) FROM gone WHERE seg = ?", (seg,)).fetchone()
        if docs is not None and int(dead[0]) * 2 > int(docs[0]):
            for doc_id in ids:
                connection.execute("DELETE FROM terms WHERE id = ?", (doc_id,))
            self._merge(connection, [seg], generation)
        else:
            purge_segment(connection, seg, ids)

    def compact(self) -> bool:
        """Merge segments as the policy asks (one transaction per merge); whether any was."""
        merged = False
        while True:
            with self._db.writing() as connection:
                plan = _plan(connection)
                if plan is None:
                    break
                generation = self._db.meta_int("generation") + 1
                self._merge(connection, plan, generation)
                self._db.set_meta("generation", generation)
                merged = True
        return merged

    def _insert(
        self,
        connection: sqlite3.Connection,
        segment: EncodedSegment,
        generation: int,
        removed: dict[int, set[int]],
    ) -> None:
        db = self._db
        seg = db.meta_int("next_seg")
        db.set_meta("next_seg", seg + 1)
        next_id = db.meta_int("next_id")
        current = _current(connection, [row.path for row in segment.notes])
        kept: list[NoteRow] = []
        matrices: list[tuple[int, bytes]] = []
        terms: list[tuple[int, bytes]] = []
        for row, matrix, held in zip(segment.notes, segment.matrices, segment.terms, strict=True):
            found = current.get(row.path)
            if found is not None:
                if found[:5] == row.identity and found[5] >= row.seen:
                    continue  # indexed meanwhile by another process from the same file
                _remove(connection, row.path, generation, removed)
            kept.append(row._replace(seg=seg))
            matrices.append((row.id, matrix))
            terms.append((row.id, held))
            next_id = max(next_id, row.id + 1)
        db.set_meta("next_id", next_id)
        if not kept:
            return
        connection.executemany(
            "INSERT INTO docs(id, path, size, mtime, ino, ctime, dev, seen, seg, crc) "
            "VALUES (?,?,?,?,?,?,?,?,?,?)",
            map(_docs_row, kept),
        )
        connection.executemany("INSERT INTO matrices(id, data) VALUES (?, ?)", matrices)
        connection.executemany("INSERT INTO terms(id, data) VALUES (?, ?)", terms)
        postings = segment.postings
        whole = len(kept) == len(segment.notes)
        if not whole:
            postings = tuple(_without(postings, {row.id for row in kept}))
        connection.executemany(
            "INSERT INTO postings(term, seg, data) VALUES (?, ?, ?)",
            ((term, seg, blob) for term, blob in postings),
        )
        connection.execute(
            "INSERT INTO segs(seg, docs, gen, lo, notes) VALUES (?, ?, ?, ?, ?)",
            (
                seg,
                len(kept),
                generation,
                kept[0].id,
                segment.table if whole else encode_notes(kept),
            ),
        )

    def _merge(self, connection: sqlite3.Connection, plan: list[int], generation: int) -> None:
        db = self._db
        seg = db.meta_int("next_seg")
        db.set_meta("next_seg", seg + 1)
        dead: set[int] = set()
        parts: dict[str, list[tuple[int, Postings]]] = {}
        rows: list[NoteRow] = []
        for order, old in enumerate(plan):
            dead.update(
                int(doc)
                for (doc,) in connection.execute("SELECT id FROM gone WHERE seg = ?", (old,))
            )
            for term, blob in connection.execute(
                "SELECT term, data FROM postings WHERE seg = ?", (old,)
            ):
                parts.setdefault(str(term), []).append((order, decode_postings(bytes(blob))))
            for (blob,) in connection.execute("SELECT notes FROM segs WHERE seg = ?", (old,)):
                rows.extend(decode_notes(bytes(blob), seg))
        rows = [row for row in rows if row.id not in dead]
        merged: list[tuple[str, int, bytes]] = []
        for term, pieces in parts.items():
            pieces.sort(key=lambda item: item[0])
            joined = join_postings([piece for _, piece in pieces], dead)
            if joined.ids:
                merged.append((term, seg, encode_postings(joined)))
        for old in plan:
            connection.execute("DELETE FROM postings WHERE seg = ?", (old,))
            connection.execute("DELETE FROM segs WHERE seg = ?", (old,))
        connection.executemany("INSERT INTO postings(term, seg, data) VALUES (?, ?, ?)", merged)
        connection.executemany(
            "UPDATE docs SET seg = ?, crc = ? WHERE id = ?",
            ((seg, _docs_row(row)[-1], row.id) for row in rows),
        )
        if rows:
            connection.execute(
                "INSERT INTO segs(seg, docs, gen, lo, notes) VALUES (?, ?, ?, ?, ?)",
                (seg, len(rows), generation, min(row.id for row in rows), encode_notes(rows)),
            )
        gone = connection.execute("SELECT count(*) FROM gone").fetchone()[0]
        if int(gone) > _GONE_SLACK + 2 * len(rows):
            # Ids of merged segments are gone for good; readers that missed them reload.
            connection.execute("DELETE FROM gone WHERE seg NOT IN (SELECT seg FROM segs)")
            db.set_meta("epoch", db.meta_int("epoch") + 1)


def join_postings(pieces: Sequence[Postings], dead: set[int]) -> Postings:
    """Postings of adjacent segments (in id order) as one, without the ``dead`` ids."""
    ids, bodies, columns = array("I"), array("I"), array("I")
    fields: dict[int, tuple[int, int, int, int, int]] = {}
    for piece in pieces:
        if dead and not dead.isdisjoint(piece.ids):
            keep = [position for position, doc in enumerate(piece.ids) if doc not in dead]
            ids.extend(piece.ids[position] for position in keep)
            bodies.extend(piece.bodies[position] for position in keep)
            columns.extend(piece.columns[position] for position in keep)
            fields.update((doc, counts) for doc, counts in piece.fields.items() if doc not in dead)
        else:
            ids.extend(piece.ids)
            bodies.extend(piece.bodies)
            columns.extend(piece.columns)
            fields.update(piece.fields)
    return Postings(ids, bodies, columns, fields)


def _plan(connection: sqlite3.Connection) -> list[int] | None:
    """The adjacent segments to merge next, or ``None``.

    A segment that is mostly dead is rewritten alone. Past :data:`MAX_SEGMENTS`, the adjacent
    pair with the fewest live notes is merged: the small segments single edits leave behind
    pair up first, which keeps each merge (done within a search) small.
    """
    segs = [
        (int(seg), int(docs), int(lo))
        for seg, docs, lo in connection.execute("SELECT seg, docs, lo FROM segs ORDER BY lo")
    ]
    dead: dict[int, int] = {
        int(seg): int(count)
        for seg, count in connection.execute("SELECT seg, count(*) FROM gone GROUP BY seg")
    }
    live = [docs - dead.get(seg, 0) for seg, docs, _ in segs]
    for seg, docs, _ in segs:
        if dead.get(seg, 0) * 2 > docs:
            return [seg]
    if len(segs) <= MAX_SEGMENTS:
        return None
    best = min(range(len(segs) - 1), key=lambda i: (live[i] + live[i + 1], i))
    return [segs[best][0], segs[best + 1][0]]


def _remove(
    connection: sqlite3.Connection, path: str, generation: int, removed: dict[int, set[int]]
) -> None:
    """Remove the note of ``path`` (its id goes to ``gone``; ``removed`` collects it by
    segment, for :meth:`IndexWriter._purge`)."""
    row = connection.execute(
        "DELETE FROM docs WHERE path = ? RETURNING id, seg", (path,)
    ).fetchone()
    if row is not None:
        doc_id, seg = int(row[0]), int(row[1])
        connection.execute("DELETE FROM matrices WHERE id = ?", (doc_id,))
        connection.execute(
            "INSERT OR REPLACE INTO gone(id, seg, gen) VALUES (?, ?, ?)", (doc_id, seg, generation)
        )
        removed.setdefault(seg, set()).add(doc_id)


def _current(connection: sqlite3.Connection, paths: list[str]) -> dict[str, tuple[int, ...]]:
    """The identity and read time (size, mtime, ino, ctime, dev, seen) of the notes of
    ``paths`` the index holds, looked up a few hundred at a time."""
    found: dict[str, tuple[int, ...]] = {}
    for start in range(0, len(paths), _LOOKUP):
        chunk = paths[start : start + _LOOKUP]
        marks = ",".join("?" * len(chunk))
        for path, *values in connection.execute(
            f"SELECT path, size, mtime, ino, ctime, dev, seen FROM docs WHERE path IN ({marks})",  # noqa: S608 - only placeholders
            chunk,
        ):
            found[str(path)] = tuple(int(value) for value in values)
    return found


def _docs_row(row: NoteRow) -> tuple[int | str, ...]:
    """A note's ``docs`` row (id, path, identity, seen, seg, crc)."""
    values = (row.id, row.path, row.size, row.mtime, row.ino, row.ctime, row.dev, row.seen, row.seg)
    return (*values, row_checksum(values))


def _without(postings: Iterable[tuple[str, bytes]], kept: set[int]) -> Iterable[tuple[str, bytes]]:
    for term, blob in postings:
        decoded = decode_postings(blob)
        joined = join_postings([decoded], {doc for doc in decoded.ids if doc not in kept})
        if joined.ids:
            yield term, encode_postings(joined)
