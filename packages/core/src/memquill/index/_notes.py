"""The indexed notes as one process sees them: a mirror of the ``docs`` table, kept current.

Loading every row once and then only what changed (rows of a later generation, ids gone since)
keeps a long-lived process's view current for the cost of the change. A process that missed a
compaction (``epoch`` moved) loads everything again.
"""

from __future__ import annotations

import sqlite3
import struct
from datetime import date
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
    bytes_total: int
    """UTF-8 size of every indexed note's text, together."""
    dead: dict[int, set[int]]
    """Per segment, the ids removed from it (their postings are still in its blobs)."""
    segments: dict[int, int]
    """Every segment, with its lowest id (segments hold disjoint, ascending id ranges)."""
    lengths: dict[int, int]
    """Each note's folded body length (what length normalisation divides)."""
    day_of: dict[int, int]
    """The day (proleptic ordinal) of each note whose path names one."""
    months: dict[tuple[int, int], set[int]]
    """Dated notes by (year, month)."""
    days: dict[int, int]
    """How many notes each day present names."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.by_id = {}
        self.by_path = {}
        self.generation = -1
        self.epoch = -1
        self.length_total = 0
        self.bytes_total = 0
        self.dead = {}
        self.segments = {}
        self.lengths = {}
        self.day_of = {}
        self.months = {}
        self.days = {}

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
        if row.id in self.by_id:
            self._drop(row.id)
        self.by_id[row.id] = row
        self.by_path[row.path] = row
        self.length_total += row.length
        self.bytes_total += row.byte_size
        self.lengths[row.id] = row.length
        if row.day:
            self.day_of[row.id] = row.day
            self.days[row.day] = self.days.get(row.day, 0) + 1
            self.months.setdefault(_month(row.day), set()).add(row.id)

    def _drop(self, doc_id: int) -> None:
        old = self.by_id.pop(doc_id, None)
        if old is None:
            return
        self.length_total -= old.length
        self.bytes_total -= old.byte_size
        del self.lengths[doc_id]
        if self.by_path.get(old.path) is old:
            del self.by_path[old.path]
        if old.day:
            del self.day_of[doc_id]
            left = self.days[old.day] - 1
            if left:
                self.days[old.day] = left
            else:
                del self.days[old.day]
            held = self.months[_month(old.day)]
            held.discard(doc_id)
            if not held:
                del self.months[_month(old.day)]


def _month(day: int) -> tuple[int, int]:
    moment = date.fromordinal(day)
    return (moment.year, moment.month)


def _row(values: tuple[object, ...]) -> NoteRow:
    try:
        row = NoteRow._make(values)
        if row_checksum(row) != row.crc:
            raise IndexDamaged(f"docs row {row.id}")
    except (ValueError, TypeError, struct.error):
        raise IndexDamaged("docs row") from None
    return row
