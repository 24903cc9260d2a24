"""The index as one process sees it: every note, the lexicon, postings and term lists.

Notes are stored a page at a time (:mod:`._codec`), each page with the generation of its last
change; :class:`NoteTable` loads every page once and then only those of a later generation, so
a long-lived process's view stays current for the cost of the change.

The lexicon stores each term once, as text, with the number everything else calls it by.
Postings blocks and term lists name terms by id, so a note's words are written as text in one
place only. A term's id never changes while any note holds it; the row goes in the transaction
that removes its last holder (:func:`drop_unheld`), and ids are never given twice. The table
is keyed by the text alone (a search looks terms up by text, :func:`term_id`), so the text is
stored once; a term is deleted by id with one pass over the table per transaction, which only
a change that leaves a term with no holder makes.

Reading is done with per-process caches (:class:`PostingsReader`). A term's postings are its
blocks joined (:class:`._writer.BlockEditor` writes them). They are kept per term with the
generation they were read at; when the index has changed since, the term's id and block list
are read again and only blocks written since are decoded (each block carries its generation),
so a search after a small change re-reads little. A note's term list (its terms and chunk
matrix) is kept by note id and the time it was read, which name one version of the note.
"""

from __future__ import annotations

import sqlite3
import sys
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from itertools import compress
from operator import itemgetter
from typing import Final

from memquill.index._codec import (
    ChunkMatrix,
    CorruptBlob,
    FieldCounts,
    NoteRow,
    Postings,
    decode_block,
    decode_chunk_matrix,
    decode_page,
    stored_blob,
)
from memquill.index._db import IndexDamaged, IndexDatabase

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
                found = _decode_page(blob)
                self.pages[int(page)] = list(map(_ID, found))
                rows.extend(found)
            self._load(rows)
        else:
            for page, blob in changed:
                found = _decode_page(blob)
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


def _decode_page(blob: object) -> list[NoteRow]:
    try:
        return decode_page(stored_blob(blob, "note page"))
    except CorruptBlob:
        raise
    except Exception as error:  # noqa: BLE001 - any parse failure is damage
        raise IndexDamaged(str(error)) from None


def _month(day: int) -> tuple[int, int]:
    moment = date.fromordinal(day)
    return (moment.year, moment.month)


EMPTY: Final = Postings(array("I"), array("I"), {})
_HELD: Final = 1 << 22
"""Postings entries kept, over every term (3 to 8 bytes each)."""
_LIST_MEMO: Final = 2048
"""Term lists kept (about 2 KB each decoded; a search re-scores about 50 notes)."""
_SWAP: Final = sys.byteorder != "little"
_SHARED_COUNTS: Final = 1 << 16
"""Distinct field counts kept as shared tuples (then they start over)."""
_BLOCKS: Final = (
    "SELECT lo, gen, CASE WHEN gen > ? THEN data END FROM postings WHERE term = ? ORDER BY lo"
)


@dataclass(slots=True)
class _Term:
    """A term's postings as read: its id, its blocks joined, and where each block lies in them
    (first note id -> generation, start, end)."""

    checked: int
    id: int | None
    blocks: dict[int, tuple[int, int, int]]
    joined: Postings


class PostingsReader:
    """Postings and term lists of one index, cached for one process."""

    def __init__(self, notes: NoteTable) -> None:
        self._notes = notes
        self._terms: OrderedDict[str, _Term] = OrderedDict()
        self._held = 0
        self._lists: OrderedDict[tuple[int, int], ChunkMatrix] = OrderedDict()
        self._counts: dict[FieldCounts, FieldCounts] = {}
        """One tuple for each distinct field counts held (most notes hold the same few)."""

    def postings(self, connection: sqlite3.Connection, term: str) -> Postings:
        """The postings of ``term`` over every indexed note, ids ascending."""
        generation = self._notes.generation
        cached = self._terms.get(term)
        if cached is not None:
            self._terms.move_to_end(term)
            if cached.checked == generation:
                return cached.joined
        number = term_id(connection, term)
        if cached is not None and cached.id != number:
            self._held -= len(cached.joined.ids)
            del self._terms[term]
            cached = None
        since = -1 if cached is None else cached.checked
        old = {} if cached is None else cached.blocks
        # A block kept is cut back out of the joined postings (each block is held once), once
        # some other block changed.
        rows: list[tuple[int, int, Postings | None]] = []
        fresh = False
        found = () if number is None else connection.execute(_BLOCKS, (since, number))
        for lo, gen, blob in found:
            if blob is None:
                kept = old.get(int(lo))
                if kept is None or kept[0] != int(gen):
                    raise IndexDamaged(f"block {lo} of {term!r} changed unseen")
                rows.append((int(lo), kept[0], None))
            else:
                rows.append((int(lo), int(gen), _decode(blob)))
                fresh = True
        if cached is not None and not fresh and len(rows) == len(old):
            cached.checked = generation
            return cached.joined
        parts: list[tuple[int, int, Postings]] = []
        for lo, gen, part in rows:
            if part is None:
                assert cached is not None  # a block is left out only for a term read before
                part = _cut(cached.joined, old[lo][1], old[lo][2])
            parts.append((lo, gen, part))
        if len(self._counts) > _SHARED_COUNTS:
            self._counts.clear()
        joined = _join([part for _, _, part in parts], self._counts)
        blocks: dict[int, tuple[int, int, int]] = {}
        start = 0
        for lo, gen, part in parts:
            blocks[lo] = (gen, start, start + len(part.ids))
            start += len(part.ids)
        if cached is not None:
            self._held -= len(cached.joined.ids)
        entry = _Term(generation, number, blocks, joined)
        self._terms[term] = entry
        self._held += len(joined.ids)
        while self._held > _HELD and len(self._terms) > 1:
            _, dropped = self._terms.popitem(last=False)
            self._held -= len(dropped.joined.ids)
        return joined

    def term_number(self, connection: sqlite3.Connection, term: str) -> int | None:
        """The id of ``term`` (``None``: no note holds it), as its postings were read."""
        self.postings(connection, term)
        return self._terms[term].id

    def term_list(self, connection: sqlite3.Connection, doc_id: int) -> ChunkMatrix:
        """Note ``doc_id``'s term ids and chunk matrix."""
        key = (doc_id, self._notes.by_id[doc_id].seen)
        cached = self._lists.get(key)
        if cached is not None:
            return cached
        row = connection.execute("SELECT data FROM terms WHERE id = ?", (doc_id,)).fetchone()
        if row is None:
            raise IndexDamaged(f"no term list for {doc_id}")
        return self._keep(key, row[0])

    def prefetch(self, connection: sqlite3.Connection, doc_ids: list[int]) -> None:
        """Read the term lists of ``doc_ids`` not yet cached, in one statement."""
        by_id = self._notes.by_id
        keys = {doc_id: (doc_id, by_id[doc_id].seen) for doc_id in doc_ids}
        missing = [doc_id for doc_id, key in keys.items() if key not in self._lists]
        if len(missing) < 2:
            return
        marks = ",".join("?" * len(missing))
        query = f"SELECT id, data FROM terms WHERE id IN ({marks})"  # noqa: S608 - placeholders
        for doc_id, blob in connection.execute(query, missing):
            self._keep(keys[int(doc_id)], blob)

    def forget(self) -> None:
        """Drop everything cached (the index file was replaced)."""
        self._terms.clear()
        self._held = 0
        self._lists.clear()
        self._counts.clear()

    def _keep(self, key: tuple[int, int], blob: object) -> ChunkMatrix:
        try:
            terms = decode_chunk_matrix(stored_blob(blob, "term list"))
        except Exception as error:  # noqa: BLE001 - any parse failure is damage
            raise IndexDamaged(str(error)) from None
        if len(self._lists) >= _LIST_MEMO:
            self._lists.popitem(last=False)
        self._lists[key] = terms
        return terms


def find(postings: Postings, doc_id: int) -> int:
    """The position of ``doc_id`` in ``postings`` (-1: not there)."""
    position = bisect_left(postings.ids, doc_id)
    if position < len(postings.ids) and postings.ids[position] == doc_id:
        return position
    return -1


def _decode(blob: object) -> Postings:
    try:
        return decode_block(stored_blob(blob, "postings block"))
    except Exception as error:  # noqa: BLE001 - any parse failure is damage
        raise IndexDamaged(str(error)) from None


def _cut(postings: Postings, start: int, end: int) -> Postings:
    """The entries ``start`` to ``end`` of ``postings`` (one block of them)."""
    ids = postings.ids[start:end]
    held = postings.fields
    fields = {doc: held[doc] for doc in ids if doc in held} if held else {}
    return Postings(ids, postings.bodies[start:end], fields)


def _join(parts: list[Postings], shared: dict[FieldCounts, FieldCounts]) -> Postings:
    """Blocks of ascending id ranges as one postings list, each column in the narrowest type
    that holds it (a process keeps many: ids below 65,536 take two bytes, most counts one),
    and equal field counts as one tuple (taken from ``shared``, which keeps each new one)."""
    if not parts:
        return EMPTY
    if len(parts) == 1:
        ids, bodies = parts[0].ids, parts[0].bodies
    else:
        ids, bodies = array("I"), array("I")
        for part in parts:
            ids.extend(_wide(part.ids))
            bodies.extend(_wide(part.bodies))
    fields: dict[int, FieldCounts] = {}
    for part in parts:
        held = part.fields
        if held:
            counts = held.values()
            fields.update(zip(held.keys(), map(shared.setdefault, counts, counts), strict=True))
    return Postings(_narrowed(ids), _narrowed(bodies), fields)


def _wide(values: array[int]) -> array[int]:
    """``values`` as unsigned 32-bit numbers (what a block decodes to)."""
    return values if values.typecode == "I" else _recode(values, "I")


def _narrowed(values: array[int]) -> array[int]:
    """``values`` (unsigned) in the narrowest type that holds them."""
    if _SWAP:  # pragma: no cover - big-endian hosts
        return _narrowed_slowly(values)
    if not values or values.typecode == "B":
        return values
    raw = values.tobytes()
    width, count = values.itemsize, len(values)
    # How many low bytes of each number are not all zero (a pass in C per byte position).
    used = width
    while used > 1 and raw[used - 1 :: width].count(0) == count:
        used -= 1
    code = "B" if used == 1 else "H" if used == 2 else values.typecode
    return values if code == values.typecode else _recode(values, code, raw)


def _narrowed_slowly(values: array[int]) -> array[int]:  # pragma: no cover - big-endian
    top = max(values, default=0)
    code = "B" if top < 1 << 8 else "H" if top < 1 << 16 else "I"
    return values if code == values.typecode else array(code, values)


def _recode(values: array[int], code: str, raw: bytes | None = None) -> array[int]:
    """``values`` (unsigned, each fitting ``code``) as an array of type ``code``, moved byte by
    byte in C (converting number by number would make an object of each)."""
    if _SWAP:  # pragma: no cover - big-endian hosts
        return array(code, values)
    raw = values.tobytes() if raw is None else raw
    source, target = values.itemsize, array(code).itemsize
    moved = bytearray(target * len(values))
    for byte in range(min(source, target)):
        moved[byte::target] = raw[byte::source]
    return array(code, moved)


# ----------------------------------------------------------------------------------------------
# The lexicon (see the module doc).


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
