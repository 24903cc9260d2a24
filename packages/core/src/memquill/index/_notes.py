"""The indexed notes as one process sees them: every note of every page, kept current.

Notes are stored a page at a time (:mod:`._codec`), each page with the generation of its last
change; loading every page once and then only those of a later generation keeps a long-lived
process's view current for the cost of the change.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import date
from itertools import compress
from operator import itemgetter

from memquill.index._codec import CorruptBlob, NoteRow, decode_page, stored_blob
from memquill.index._db import IndexDamaged

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
    length_total: int
    bytes_total: int
    """UTF-8 size of every indexed note's text, together."""
    lengths: dict[int, int]
    """Each note's folded body length (what length normalisation divides)."""
    day_of: dict[int, int]
    """The day (proleptic ordinal) of each note whose path names one."""
    months: dict[tuple[int, int], set[int]]
    """Dated notes by (year, month)."""
    days: dict[int, int]
    """How many notes each day present names."""
    pages: dict[int, list[int]]
    """The ids on each page."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.by_id = {}
        self.by_path = {}
        self.generation = -1
        self.length_total = 0
        self.bytes_total = 0
        self.lengths = {}
        self.day_of = {}
        self.months = {}
        self.days = {}
        self.pages = {}

    def refresh(self, connection: sqlite3.Connection) -> bool:
        """Catch up with the index (inside a transaction); whether anything changed."""
        meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
        try:
            generation = int(meta["generation"])
        except (KeyError, ValueError):
            raise IndexDamaged("meta") from None
        if generation == self.generation:
            return False
        full = generation < self.generation or self.generation < 0
        since = -1 if full else self.generation
        changed = connection.execute(
            "SELECT page, data FROM pages WHERE gen > ?", (since,)
        ).fetchall()
        if full:
            self._clear()
            rows: list[NoteRow] = []
            for page, blob in changed:
                found = _decode(blob)
                self.pages[int(page)] = list(map(_ID, found))
                rows.extend(found)
            self._load(rows)
        else:
            for page, blob in changed:
                found = _decode(blob)
                for doc_id in self.pages.get(int(page), ()):
                    self._drop(doc_id)
                self.pages[int(page)] = list(map(_ID, found))
                for row in found:
                    self._put(row)
        self.generation = generation
        return True

    def page(self, page: int) -> Iterable[NoteRow]:
        """The notes on ``page``."""
        by_id = self.by_id
        return [by_id[doc_id] for doc_id in self.pages.get(page, ())]

    @property
    def average_length(self) -> float:
        """Mean folded body length of the indexed notes."""
        return self.length_total / len(self.by_id) if self.by_id else 0.0

    def _load(self, rows: list[NoteRow]) -> None:
        """Take every note at once (a fresh process, tens of thousands of them)."""
        ids = list(map(_ID, rows))
        self.by_id = dict(zip(ids, rows, strict=True))
        self.by_path = dict(zip(map(_PATH, rows), rows, strict=True))
        if len(self.by_id) != len(rows) or len(self.by_path) != len(rows):
            raise IndexDamaged("a note is on two pages")
        self.lengths = dict(zip(ids, map(_LENGTH, rows), strict=True))
        self.length_total = sum(self.lengths.values())
        self.bytes_total = sum(map(_BYTES, rows))
        for row in compress(rows, map(_DAY, rows)):
            self._date(row)

    def _put(self, row: NoteRow) -> None:
        if row.id in self.by_id:  # pragma: no cover - pages hold disjoint ids
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


def _decode(blob: object) -> list[NoteRow]:
    try:
        return decode_page(stored_blob(blob, "note page"))
    except CorruptBlob:
        raise
    except Exception as error:  # noqa: BLE001 - any parse failure is damage
        raise IndexDamaged(str(error)) from None


def _month(day: int) -> tuple[int, int]:
    moment = date.fromordinal(day)
    return (moment.year, moment.month)
