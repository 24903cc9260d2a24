"""The indexed notes as one process sees them: a mirror of the ``docs`` table, kept current.

Loading every row once and then only what changed (rows of a later generation, ids gone since)
keeps a long-lived process's view current for the cost of the change. A process that missed a
compaction (``epoch`` moved) loads everything again.
"""

from __future__ import annotations

import sqlite3
import struct
from typing import Final, Literal, NamedTuple

from memquill.index._db import IndexDamaged, row_checksum
from memquill.query._scan import Identity

__all__ = ["NoteRow", "NoteTable"]

_NO_TAGS: Final[frozenset[str]] = frozenset()
_SELECT: Final = (
    "SELECT id, path, size, mtime, ino, ctime, dev, seen, bytes, length, tags, day, seg, crc "
    "FROM docs"
)


class NoteRow(NamedTuple):
    """One indexed note, as stored (what ranking and the walk compare need; never its text)."""

    id: int
    path: str
    size: int
    mtime: int
    ino: int
    ctime: int
    dev: int
    seen: int
    byte_size: int
    length: int
    tags: str
    day: int
    seg: int
    crc: int

    @property
    def identity(self) -> Identity:
        """The file identity the note was read at."""
        return (self.size, self.mtime, self.ino, self.ctime, self.dev)

    @property
    def tag_keys(self) -> frozenset[str]:
        """The lowercased tags."""
        return frozenset(self.tags.split("\n")) if self.tags else _NO_TAGS

    @property
    def kind(self) -> Literal["note"]:
        """Always ``note`` (records are served from the store)."""
        return "note"


class NoteTable:
    """Every indexed note, by id and by path, at one generation of the index."""

    by_id: dict[int, NoteRow]
    by_path: dict[str, NoteRow]
    generation: int
    epoch: int
    length_total: int
    dead: dict[int, set[int]]
    """Per segment, the ids removed from it (their postings are still in its blobs)."""
    segments: dict[int, int]
    """Every segment, with its lowest id (segments hold disjoint, ascending id ranges)."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.by_id = {}
        self.by_path = {}
        self.generation = -1
        self.epoch = -1
        self.length_total = 0
        self.dead = {}
        self.segments = {}

    def refresh(self, connection: sqlite3.Connection) -> bool:
        """Catch up with the index (inside a read transaction); whether anything changed."""
        meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
        try:
            generation, epoch = int(meta["generation"]), int(meta["epoch"])
        except (KeyError, ValueError):
            raise IndexDamaged("meta") from None
        if generation == self.generation and epoch == self.epoch:
            return False
        if epoch != self.epoch or generation < self.generation:
            self._clear()
            rows = connection.execute(_SELECT)
            gone = connection.execute("SELECT id, seg FROM gone")
        else:
            rows = connection.execute(_SELECT + " WHERE gen > ?", (self.generation,))
            gone = connection.execute("SELECT id, seg FROM gone WHERE gen > ?", (self.generation,))
        for row in rows.fetchall():
            self._put(_row(row))
        for doc_id, seg in gone.fetchall():
            self._drop(int(doc_id))
            self.dead.setdefault(int(seg), set()).add(int(doc_id))
        self.segments = {
            int(seg): int(lo) for seg, lo in connection.execute("SELECT seg, lo FROM segs")
        }
        for seg in [seg for seg in self.dead if seg not in self.segments]:
            del self.dead[seg]
        self.generation, self.epoch = generation, epoch
        return True

    @property
    def average_length(self) -> float:
        """Mean folded body length of the indexed notes."""
        return self.length_total / len(self.by_id) if self.by_id else 0.0

    def _put(self, row: NoteRow) -> None:
        old = self.by_id.get(row.id)
        if old is not None:
            self.length_total -= old.length
            if self.by_path.get(old.path) is old:
                del self.by_path[old.path]
        self.by_id[row.id] = row
        self.by_path[row.path] = row
        self.length_total += row.length

    def _drop(self, doc_id: int) -> None:
        old = self.by_id.pop(doc_id, None)
        if old is not None:
            self.length_total -= old.length
            if self.by_path.get(old.path) is old:
                del self.by_path[old.path]


def _row(values: tuple[object, ...]) -> NoteRow:
    try:
        row = NoteRow._make(values)
        if row_checksum(row) != row.crc:
            raise IndexDamaged(f"docs row {row.id}")
    except (ValueError, TypeError, struct.error):
        raise IndexDamaged("docs row") from None
    return row
