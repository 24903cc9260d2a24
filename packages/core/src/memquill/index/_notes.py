"""The indexed notes as one process sees them: every live note of every segment, kept current.

A segment's notes are one blob (:mod:`._manifest`); loading every segment's once and then only
what changed (segments of a later generation, ids gone since) keeps a long-lived process's view
current for the cost of the change. A process that missed a compaction (``epoch`` moved) loads
everything again.
"""

from __future__ import annotations

import sqlite3
from datetime import date
from itertools import compress
from operator import itemgetter

from memquill.index._db import IndexDamaged
from memquill.index._manifest import NoteRow, decode_notes

__all__ = ["NoteRow", "NoteTable"]

_ID = itemgetter(0)
_PATH = itemgetter(1)
_BYTES = itemgetter(8)
_LENGTH = itemgetter(9)
_DAY = itemgetter(11)


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
        full = epoch != self.epoch or generation < self.generation
        since = -1 if full else self.generation
        segments = connection.execute(
            "SELECT seg, notes FROM segs WHERE gen > ?", (since,)
        ).fetchall()
        gone = connection.execute("SELECT id, seg FROM gone WHERE gen > ?", (since,)).fetchall()
        rows: list[NoteRow] = []
        for seg, blob in segments:
            rows.extend(_decode(blob, int(seg)))
        if full:
            self._clear()
            dead = {int(doc_id) for doc_id, _ in gone}
            self._load([row for row in rows if row.id not in dead] if dead else rows)
        else:
            for row in rows:
                self._put(row)
        for doc_id, seg in gone:
            self._drop(int(doc_id))
            self.dead.setdefault(int(seg), set()).add(int(doc_id))
        self.segments = {
            int(seg): int(lo) for seg, lo in connection.execute("SELECT seg, lo FROM segs")
        }
        for seg in [seg for seg in self.dead if seg not in self.segments]:
            del self.dead[seg]
        self.generation, self.epoch = generation, epoch
        return True

    def _load(self, rows: list[NoteRow]) -> None:
        """Take every live note at once (a fresh process, tens of thousands of them)."""
        ids = list(map(_ID, rows))
        self.by_id = dict(zip(ids, rows, strict=True))
        self.by_path = dict(zip(map(_PATH, rows), rows, strict=True))
        self.lengths = dict(zip(ids, map(_LENGTH, rows), strict=True))
        self.length_total = sum(self.lengths.values())
        self.bytes_total = sum(map(_BYTES, rows))
        for row in compress(rows, map(_DAY, rows)):
            self._date(row)

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
            self._date(row)

    def _date(self, row: NoteRow) -> None:
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


def _decode(blob: object, seg: int) -> list[NoteRow]:
    try:
        return decode_notes(bytes(blob), seg)  # type: ignore[arg-type]
    except Exception as error:  # noqa: BLE001 - any parse failure is damage
        raise IndexDamaged(f"notes of segment {seg}: {error}") from None
