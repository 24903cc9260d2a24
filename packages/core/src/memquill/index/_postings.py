"""Reading postings and chunk matrices, with per-process caches.

Segments never change once written, so a term's decoded postings in a segment are kept for as
long as the segment exists; what a generation changes is only which ids are dead. A term's
live postings (every segment, dead ids dropped) are kept for the current generation.
"""

from __future__ import annotations

import sqlite3
from array import array
from bisect import bisect_left
from collections import OrderedDict
from typing import Final

from memquill.index._codec import NO_COLUMN, Postings, decode_matrix, decode_postings
from memquill.index._db import IndexDamaged
from memquill.index._notes import NoteTable

__all__ = ["EMPTY", "PostingsReader", "drop_ids"]

EMPTY: Final = Postings(array("I"), array("I"), array("I"), {})
_PART_MEMO: Final = 8192
_TERM_MEMO: Final = 2048
_MATRIX_MEMO: Final = 4096


class PostingsReader:
    """Postings and chunk matrices of one index, cached for one process."""

    def __init__(self, notes: NoteTable) -> None:
        self._notes = notes
        self._parts: OrderedDict[tuple[str, int], Postings] = OrderedDict()
        self._terms: dict[str, Postings] = {}
        self._generation = -1
        self._matrices: OrderedDict[int, tuple[int, array[int]]] = OrderedDict()

    def postings(self, connection: sqlite3.Connection, term: str) -> Postings:
        """The live postings of ``term`` over every indexed note, ids ascending."""
        notes = self._notes
        if notes.generation != self._generation:
            self._terms.clear()
            self._generation = notes.generation
            live = notes.segments
            for key in [key for key in self._parts if key[1] not in live]:
                del self._parts[key]
        cached = self._terms.get(term)
        if cached is not None:
            return cached
        segments = notes.segments
        missing = [seg for seg in segments if (term, seg) not in self._parts]
        if missing:
            found: dict[int, Postings] = {}
            for seg, blob in connection.execute(
                "SELECT seg, data FROM postings WHERE term = ?", (term,)
            ):
                if int(seg) in segments:
                    found[int(seg)] = _decode(blob)
            for seg in missing:
                self._remember((term, seg), found.get(seg, EMPTY))
        pieces: list[Postings] = []
        for seg in sorted(segments, key=segments.__getitem__):
            piece = self._parts[(term, seg)]
            self._parts.move_to_end((term, seg))
            if piece.ids:
                dead = notes.dead.get(seg)
                pieces.append(drop_ids(piece, dead) if dead else piece)
        result = pieces[0] if len(pieces) == 1 else _concatenate(pieces)
        if len(self._terms) >= _TERM_MEMO:
            self._terms.clear()
        self._terms[term] = result
        return result

    def chunk_counts(
        self, connection: sqlite3.Connection, doc_id: int, column: int
    ) -> tuple[int, ...]:
        """How often the term in ``column`` of note ``doc_id``'s matrix occurs per chunk."""
        width, cells = self.matrix(connection, doc_id)
        if column == NO_COLUMN:
            return (0,) * (len(cells) // width if width else 1)
        return tuple(cells[column::width])

    def matrix(self, connection: sqlite3.Connection, doc_id: int) -> tuple[int, array[int]]:
        """Note ``doc_id``'s chunk matrix."""
        cached = self._matrices.get(doc_id)
        if cached is not None:
            return cached
        row = connection.execute("SELECT data FROM matrices WHERE id = ?", (doc_id,)).fetchone()
        if row is None:
            raise IndexDamaged(f"no matrix for {doc_id}")
        return self._keep(doc_id, row[0])

    def prefetch(self, connection: sqlite3.Connection, doc_ids: list[int]) -> None:
        """Read the chunk matrices of ``doc_ids`` not yet cached, in one statement."""
        missing = [doc_id for doc_id in doc_ids if doc_id not in self._matrices]
        if len(missing) < 2:
            return
        marks = ",".join("?" * len(missing))
        query = f"SELECT id, data FROM matrices WHERE id IN ({marks})"  # noqa: S608 - placeholders
        for doc_id, blob in connection.execute(query, missing):
            self._keep(int(doc_id), blob)

    def _keep(self, doc_id: int, blob: object) -> tuple[int, array[int]]:
        try:
            matrix = decode_matrix(bytes(blob))  # type: ignore[arg-type]
        except Exception as error:  # noqa: BLE001 - any parse failure is damage
            raise IndexDamaged(str(error)) from None
        if len(self._matrices) >= _MATRIX_MEMO:
            self._matrices.popitem(last=False)
        self._matrices[doc_id] = matrix
        return matrix

    def forget_matrices(self) -> None:
        """Drop cached matrices (their ids may have been reused by a rebuilt index)."""
        self._matrices.clear()
        self._parts.clear()
        self._terms.clear()
        self._generation = -1

    def _remember(self, key: tuple[str, int], postings: Postings) -> None:
        if len(self._parts) >= _PART_MEMO:
            self._parts.popitem(last=False)
        self._parts[key] = postings


def column_of(postings: Postings, doc_id: int) -> int | None:
    """The matrix column of ``doc_id`` in ``postings`` (``None``: not there)."""
    position = bisect_left(postings.ids, doc_id)
    if position < len(postings.ids) and postings.ids[position] == doc_id:
        return postings.columns[position]
    return None


def find(postings: Postings, doc_id: int) -> int:
    """The position of ``doc_id`` in ``postings`` (-1: not there)."""
    position = bisect_left(postings.ids, doc_id)
    if position < len(postings.ids) and postings.ids[position] == doc_id:
        return position
    return -1


def _decode(blob: object) -> Postings:
    try:
        return decode_postings(bytes(blob))  # type: ignore[arg-type]
    except Exception as error:  # noqa: BLE001 - any parse failure is damage
        raise IndexDamaged(str(error)) from None


def drop_ids(piece: Postings, dead: set[int]) -> Postings:
    """``piece`` without the ids in ``dead`` (``piece`` itself when it holds none of them)."""
    ids = piece.ids
    drop: set[int] = set()
    for doc in dead:
        position = bisect_left(ids, doc)
        if position < len(ids) and ids[position] == doc:
            drop.add(position)
    if not drop:
        return piece
    ids, bodies, columns = array("I", ids), array("I", piece.bodies), array("I", piece.columns)
    for position in sorted(drop, reverse=True):
        del ids[position]
        del bodies[position]
        del columns[position]
    fields = piece.fields
    if any(doc in fields for doc in dead):
        fields = {doc: counts for doc, counts in fields.items() if doc not in dead}
    return Postings(ids, bodies, columns, fields)


def _concatenate(pieces: list[Postings]) -> Postings:
    ids, bodies, columns = array("I"), array("I"), array("I")
    fields: dict[int, tuple[int, int, int, int, int]] = {}
    for piece in pieces:
        ids.extend(piece.ids)
        bodies.extend(piece.bodies)
        columns.extend(piece.columns)
        fields.update(piece.fields)
    return Postings(ids, bodies, columns, fields)
