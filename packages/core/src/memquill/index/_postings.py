"""Terms in the index: the lexicon that numbers them, and reading postings and term lists back.

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
from typing import Final

from memquill.index._codec import (
    ChunkMatrix,
    FieldCounts,
    Postings,
    decode_block,
    decode_chunk_matrix,
    stored_blob,
)
from memquill.index._db import IndexDamaged, IndexDatabase
from memquill.index._notes import NoteTable

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
