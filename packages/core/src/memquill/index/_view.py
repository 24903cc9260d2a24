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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from itertools import chain, compress, islice, repeat
from operator import eq, gt
from typing import Final, cast

from memquill.index._codec import (
    ChunkMatrix,
    CorruptBlob,
    FieldCounts,
    NotePage,
    NoteRow,
    Postings,
    decode_block,
    decode_chunk_matrix,
    narrow,
    read_page,
    stored_blob,
)
from memquill.index._db import IndexDamaged, IndexDatabase

_NEW_ROW = cast(
    "Callable[[type[NoteRow], tuple[object, ...]], NoteRow]",
    tuple.__new__,  # pyright: ignore[reportUnknownMemberType]
)


class NoteTable:
    """Every indexed note, by id and by path, at one generation of the index.

    The notes are held as columns indexed by note id (ids count up from 0, :data:`._codec.PAGE`
    to a page, and are never given twice: a removed note leaves a hole), the numbers in arrays;
    a note's row is made when asked for (:meth:`row`). Rows as tuples held about 420 bytes a
    note; the columns hold its numbers in 72 bytes and its path and tags once. A page changed
    since is taken whole: its old notes are dropped, its new ones put in their places.
    """

    ids: dict[str, int]
    """Each note's id, by path."""
    paths: list[str | None]
    """Each id's path (``None``: no note has that id now)."""
    tags: list[str]
    sizes: array[int]
    mtimes: array[int]
    inodes: array[int]
    ctimes: array[int]
    devices: array[int]
    seen: array[int]
    """When each note was read (ns)."""
    byte_sizes: array[int]
    lengths: array[int]
    """Each note's folded body length (what length normalisation divides)."""
    day_numbers: array[int]
    generation: int
    length_total: int
    bytes_total: int
    """UTF-8 size of every indexed note's text, together."""
    day_of: dict[int, int]
    """The day (proleptic ordinal) of each note whose path names one."""
    months: dict[tuple[int, int], set[int]]
    """Dated notes by (year, month)."""
    days: dict[int, int]
    """How many notes each day present names."""
    pages: dict[int, array[int]]
    """The ids on each page."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.ids = {}
        self.paths = []
        self.tags = []
        self._numbers = tuple(array("q") for _ in range(9))
        (
            self.sizes,
            self.mtimes,
            self.inodes,
            self.ctimes,
            self.devices,
            self.seen,
            self.byte_sizes,
            self.lengths,
            self.day_numbers,
        ) = self._numbers
        self.generation = -1
        self.length_total = 0
        self.bytes_total = 0
        self.day_of = {}
        self.months = {}
        self.days = {}
        self.pages = {}

    def __len__(self) -> int:
        return len(self.ids)

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
        for page, blob in changed:
            found = _decode_page(blob)
            # A note the page keeps keeps its entry in ``ids`` and its path's string: a path
            # deleted and added again would use up the dict's room (grown to twice its size
            # after a tenth of the notes changed) and be held twice (by a folder listing too).
            held = self.pages.get(page)
            if held is None:  # a new page (every page of a table loaded afresh)
                self._put(int(page), found)
                continue
            before = {path: path for path in map(self.paths.__getitem__, held)}
            found = found._replace(paths=[before.get(path, path) for path in found.paths])
            self._drop(int(page), before.keys() & set(found.paths))
            self._put(int(page), found)
        if full and len(self.ids) != sum(map(len, self.pages.values())):
            raise IndexDamaged("two notes have one path")
        self.generation = generation
        return True

    def row(self, doc_id: int) -> NoteRow:
        """Note ``doc_id``'s row.

        Raises:
            KeyError: no note has that id.
        """
        path = self.paths[doc_id] if 0 <= doc_id < len(self.paths) else None
        if path is None:
            raise KeyError(doc_id)
        return _NEW_ROW(
            NoteRow,
            (
                doc_id,
                path,
                self.sizes[doc_id],
                self.mtimes[doc_id],
                self.inodes[doc_id],
                self.ctimes[doc_id],
                self.devices[doc_id],
                self.seen[doc_id],
                self.byte_sizes[doc_id],
                self.lengths[doc_id],
                self.tags[doc_id],
                self.day_numbers[doc_id],
            ),
        )

    def get(self, path: str) -> NoteRow | None:
        """The row of the note at ``path``, if indexed."""
        doc_id = self.ids.get(path)
        return None if doc_id is None else self.row(doc_id)

    def page(self, page: int) -> Iterable[NoteRow]:
        """The notes on ``page``."""
        return list(map(self.row, self.pages.get(page, ())))

    @property
    def average_length(self) -> float:
        """Mean folded body length of the indexed notes."""
        return self.length_total / len(self.ids) if self.ids else 0.0

    def _put(self, page: int, found: NotePage) -> None:
        """Put a page's notes in their places (each free: pages hold disjoint ids)."""
        ids, paths = found.ids, self.paths
        lo = ids[0] if ids else 0
        run = ids == array("q", range(lo, lo + len(ids)))  # the usual page: ids in a run
        if not run and (min(ids) < 0 or len(set(ids)) != len(ids)):
            raise IndexDamaged(f"page {page}: note ids")
        top = max(ids, default=-1) + 1
        if top > len(paths):
            paths.extend(repeat(None, top - len(paths)))
            self.tags.extend(repeat("", top - len(self.tags)))
            for column in self._numbers:
                column.frombytes(bytes(8 * (top - len(column))))
        if any(map(paths.__getitem__, ids)):
            raise IndexDamaged("a note is on two pages")
        if run:  # in C
            paths[lo:top] = found.paths
            self.tags[lo:top] = found.tags
            for column, values in zip(self._numbers, found.numbers, strict=True):
                column[lo:top] = values
        else:
            for at, doc_id in enumerate(ids):
                paths[doc_id] = found.paths[at]
                self.tags[doc_id] = found.tags[at]
                for column, values in zip(self._numbers, found.numbers, strict=True):
                    column[doc_id] = values[at]
        self.ids.update(zip(found.paths, ids, strict=True))
        self.length_total += sum(found.numbers[7])
        self.bytes_total += sum(found.numbers[6])
        days = found.numbers[8]
        for doc_id, day in compress(zip(ids, days, strict=True), days):
            self._date(doc_id, day)
        self.pages[page] = ids

    def _date(self, doc_id: int, day: int) -> None:
        self.day_of[doc_id] = day
        self.days[day] = self.days.get(day, 0) + 1
        self.months.setdefault(_month(day), set()).add(doc_id)

    def _drop(self, page: int, staying: set[str] | frozenset[str] = frozenset()) -> None:
        """Take a page's notes out (those at ``staying`` keep their entry in :attr:`ids`, for
        the page's new notes to take over)."""
        for doc_id in self.pages.pop(page, ()):
            path = self.paths[doc_id]
            if path is not None and self.ids.get(path) == doc_id and path not in staying:
                del self.ids[path]
            self.paths[doc_id] = None
            self.tags[doc_id] = ""
            self.length_total -= self.lengths[doc_id]
            self.bytes_total -= self.byte_sizes[doc_id]
            day = self.day_numbers[doc_id]
            if day:
                del self.day_of[doc_id]
                left = self.days[day] - 1
                if left:
                    self.days[day] = left
                else:
                    del self.days[day]
                held = self.months[_month(day)]
                held.discard(doc_id)
                if not held:
                    del self.months[_month(day)]


def _decode_page(blob: object) -> NotePage:
    try:
        return read_page(stored_blob(blob, "note page"))
    except CorruptBlob:
        raise
    except Exception as error:  # noqa: BLE001 - any parse failure is damage
        raise IndexDamaged(str(error)) from None


def _month(day: int) -> tuple[int, int]:
    moment = date.fromordinal(day)
    return (moment.year, moment.month)


class FieldTable:
    """The field counts of the notes whose metadata holds a term, packed: their note ids
    ascending and their five counts each, in the narrowest array types. A process keeps the
    field counts of every term it has read: a dict held about 70 bytes a note (an int key, an
    entry, a tuple), this holds 7 to 9.

    Read like a dict from note id to counts (:meth:`get`, ``in``, iteration over the ids).
    """

    __slots__ = ("counts", "docs")

    def __init__(self, docs: array[int], counts: array[int]) -> None:
        self.docs = docs
        """Note ids, ascending."""
        self.counts = counts
        """Five counts per note, in the order of :attr:`docs`."""

    def __len__(self) -> int:
        return len(self.docs)

    def __iter__(self) -> Iterator[int]:
        return iter(self.docs)

    def __contains__(self, doc: int) -> bool:
        return self._find(doc) >= 0

    def get(self, doc: int) -> FieldCounts | None:
        """Note ``doc``'s counts (``None``: no field of it holds the term)."""
        entry = self._find(doc)
        return None if entry < 0 else self.at(entry)

    def at(self, entry: int) -> FieldCounts:
        """The counts of the ``entry``-th note."""
        counts, base = self.counts, 5 * entry
        return (
            counts[base],
            counts[base + 1],
            counts[base + 2],
            counts[base + 3],
            counts[base + 4],
        )

    def items(self) -> Iterator[tuple[int, FieldCounts]]:
        """Each note id with its counts, ids ascending."""
        return zip(self.docs, map(self.at, range(len(self.docs))), strict=True)

    def among(self, docs: Sequence[int]) -> tuple[list[int], list[int]]:
        """Which of ``docs`` (any order) hold counts: their places in ``docs`` and their
        entries here (a binary search per note, in C)."""
        held = self.docs
        if not held or not docs:
            return [], []
        found = list(map(bisect_left, repeat(held), docs))
        last = len(held) - 1
        hits = list(map(eq, map(held.__getitem__, map(min, found, repeat(last))), docs))
        return list(compress(range(len(docs)), hits)), list(compress(found, hits))

    def part(self, low: int, high: int) -> FieldTable:
        """The entries of the notes ``low <= id < high``."""
        start, end = bisect_left(self.docs, low), bisect_left(self.docs, high)
        return FieldTable(self.docs[start:end], self.counts[5 * start : 5 * end])

    def _find(self, doc: int) -> int:
        held = self.docs
        entry = bisect_left(held, doc)
        return entry if entry < len(held) and held[entry] == doc else -1


@dataclass(slots=True)
class HeldPostings:
    """A term's postings as a reader keeps them (every block joined).

    Attributes:
        ids: note ids, ascending.
        bodies: body counts, aligned with ``ids``.
        fields: field counts of the notes whose metadata holds the term.
    """

    ids: array[int]
    bodies: array[int]
    fields: FieldTable


EMPTY: Final = HeldPostings(array("B"), array("B"), FieldTable(array("B"), array("B")))
_HELD: Final = 1 << 22
"""Postings entries kept, over every term (3 to 8 bytes each)."""
_LIST_MEMO: Final = 2048
"""Term lists kept (about 2 KB each decoded; a search re-scores about 50 notes)."""
_SWAP: Final = sys.byteorder != "little"
_BLOCKS: Final = (
    "SELECT lo, gen, CASE WHEN gen > ? THEN data END FROM postings WHERE term = ? ORDER BY lo"
)


@dataclass(slots=True)
class _Term:
    """A term's postings as read: its id, its blocks joined, and where each block lies in them
    (:func:`block_places`)."""

    checked: int
    id: int | None
    places: array[int]
    joined: HeldPostings


def block_places(blocks: Iterable[tuple[int, int, int]]) -> array[int]:
    """Where blocks ``(first note id, generation, length)``, joined in this order, lie: each
    block's first note id, generation and start, in one array (a process keeps them for every
    term it has read: a dict of tuples held about 200 bytes a block, this 24)."""
    places: array[int] = array("q")
    start = 0
    for lo, gen, length in blocks:
        places.extend((lo, gen, start))
        start += length
    return places


def block_place(places: array[int], lo: int, total: int) -> tuple[int, int, int] | None:
    """The generation, start and end of the block whose first note id is ``lo`` (``None``: no
    such block) in ``places`` of postings ``total`` entries long."""
    try:
        at = 3 * places[::3].index(lo)
    except ValueError:
        return None
    end = places[at + 5] if at + 3 < len(places) else total
    return places[at + 1], places[at + 2], end


class PostingsReader:
    """Postings and term lists of one index, cached for one process."""

    def __init__(self, notes: NoteTable) -> None:
        self._notes = notes
        self._terms: OrderedDict[str, _Term] = OrderedDict()
        self._held = 0
        self._lists: OrderedDict[tuple[int, int], ChunkMatrix] = OrderedDict()

    def postings(self, connection: sqlite3.Connection, term: str) -> HeldPostings:
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
        old = array("q") if cached is None else cached.places
        held = 0 if cached is None else len(cached.joined.ids)
        # A block kept is cut back out of the joined postings (each block is held once), once
        # some other block changed.
        rows: list[tuple[int, int, Postings | HeldPostings | None]] = []
        fresh = False
        found = () if number is None else connection.execute(_BLOCKS, (since, number))
        for lo, gen, blob in found:
            if blob is None:
                kept = block_place(old, int(lo), held)
                if kept is None or kept[0] != int(gen):
                    raise IndexDamaged(f"block {lo} of {term!r} changed unseen")
                rows.append((int(lo), kept[0], None))
            else:
                rows.append((int(lo), int(gen), _decode(blob)))
                fresh = True
        if cached is not None and not fresh and 3 * len(rows) == len(old):
            cached.checked = generation
            return cached.joined
        parts: list[tuple[int, int, Postings | HeldPostings]] = []
        for lo, gen, part in rows:
            if part is None:
                assert cached is not None  # a block is left out only for a term read before
                _, start, end = cast("tuple[int, int, int]", block_place(old, lo, held))
                part = _cut(cached.joined, start, end)
            parts.append((lo, gen, part))
        joined = _join([part for _, _, part in parts])
        places = block_places((lo, gen, len(part.ids)) for lo, gen, part in parts)
        if cached is not None:
            self._held -= len(cached.joined.ids)
        entry = _Term(generation, number, places, joined)
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
        key = (doc_id, self._notes.seen[doc_id])
        cached = self._lists.get(key)
        if cached is not None:
            return cached
        row = connection.execute("SELECT data FROM terms WHERE id = ?", (doc_id,)).fetchone()
        if row is None:
            raise IndexDamaged(f"no term list for {doc_id}")
        return self._keep(key, row[0])

    def prefetch(self, connection: sqlite3.Connection, doc_ids: list[int]) -> None:
        """Read the term lists of ``doc_ids`` not yet cached, in one statement."""
        seen = self._notes.seen
        keys = {doc_id: (doc_id, seen[doc_id]) for doc_id in doc_ids}
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

    def _keep(self, key: tuple[int, int], blob: object) -> ChunkMatrix:
        try:
            terms = decode_chunk_matrix(stored_blob(blob, "term list"))
        except Exception as error:  # noqa: BLE001 - any parse failure is damage
            raise IndexDamaged(str(error)) from None
        if len(self._lists) >= _LIST_MEMO:
            self._lists.popitem(last=False)
        self._lists[key] = terms
        return terms


def find(postings: HeldPostings, doc_id: int) -> int:
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


def _cut(postings: HeldPostings, start: int, end: int) -> HeldPostings:
    """The entries ``start`` to ``end`` of ``postings`` (one block of them)."""
    ids = postings.ids[start:end]
    fields = postings.fields.part(ids[0], ids[-1] + 1) if ids else EMPTY.fields
    return HeldPostings(ids, postings.bodies[start:end], fields)


def _join(parts: Sequence[Postings | HeldPostings]) -> HeldPostings:
    """Blocks of ascending id ranges as one postings list, each column in the narrowest type
    that holds it (a process keeps many: ids below 65,536 take two bytes, most counts one),
    the field counts packed (:class:`FieldTable`).

    Raises:
        IndexDamaged: the blocks' field counts are not in ascending note order.
    """
    if not parts:
        return EMPTY
    if len(parts) == 1:
        ids, bodies = parts[0].ids, parts[0].bodies
    else:
        ids, bodies = array("I"), array("I")
        for part in parts:
            ids.extend(_wide(part.ids))
            bodies.extend(_wide(part.bodies))
    docs: list[int] = []
    counts: list[int] = []
    for part in parts:
        held = part.fields
        if isinstance(held, FieldTable):
            docs.extend(held.docs)
            counts.extend(held.counts)
        elif held:
            docs.extend(held.keys())
            counts.extend(chain.from_iterable(held.values()))
    if not all(map(gt, islice(docs, 1, None), docs)):
        raise IndexDamaged("field counts out of order")
    return HeldPostings(_narrowed(ids), _narrowed(bodies), FieldTable(narrow(docs), narrow(counts)))


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
