"""The indexed notes and the store's records as one corpus for :func:`memquill.query._rank.rank`.

Slots: a note's slot is its index id; record ``i`` of the projection is slot ``-1 - i``.
Figures that ranking normalises by (``size``, ``frequency``, ``average_length``, month
holders) always describe the whole set; after :meth:`IndexedCorpus.narrow`, ``postings``
lists only the documents that can still reach the re-scored set (:mod:`._prune`).
"""

from __future__ import annotations

import os
import sqlite3
import stat
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from itertools import repeat
from operator import mul
from pathlib import Path
from typing import Any, Final

from memquill.errors import SourceError
from memquill.foundation.safe_read import read_at_most
from memquill.index._codec import ChunkMatrix, NoteRow
from memquill.index._prune import (
    GainFactors,
    Norms,
    Term,
    month_term,
    note_term,
    select,
    select_dense,
)
from memquill.index._view import NoteTable, PostingsReader, find
from memquill.paths import MAX_READ_BYTES, open_regular
from memquill.query import (
    Corpus,
    FileType,
    MonthKey,
    Posting,
    RankDocument,
    RankParams,
    SearchDocument,
    day_factor,
    file_identity,
    idf,
    matches_filters,
    month_gain,
    month_matches,
    note_document,
    path_key,
    query_months,
    query_terms,
)

_NO_POSTINGS: Final[tuple[Posting, ...]] = ()
DOCUMENT_MEMO: Final = 64
"""Hit documents kept per index (by note id and read time: one version of a note). Each holds
its text several ways for excerpts (about 25 KB for a 6 KB note); over 400 different
questions a memo of 64 read 2.7 % more notes than one of 256."""


class StaleNote(Exception):
    """A note changed after the index was brought up to date (search again)."""


class IndexedCorpus:
    """Indexed notes plus in-memory records, read inside one read transaction."""

    def __init__(
        self,
        root: Path,
        connection: sqlite3.Connection,
        notes: NoteTable,
        reader: PostingsReader,
        records: Corpus,
        documents: OrderedDict[tuple[int, int], SearchDocument] | None = None,
        factors: GainFactors | None = None,
    ) -> None:
        self._root = root
        self._factors = GainFactors() if factors is None else factors
        self._connection = connection
        self._notes = notes
        self._reader = reader
        self._records = records
        self._months = notes.months
        self._days = notes.days
        self._day_of = notes.day_of
        self._candidates: set[int] | None = None
        self._numbers: dict[str, int | None] = {}
        """Each term re-scoring asked for: its id (``None``: no note holds it)."""
        self._matrices: dict[int, ChunkMatrix] = {}
        """The term lists re-scoring read, by note (one search asks for each several times)."""
        self._rows: dict[int, NoteRow] = {}
        self._materialised: OrderedDict[tuple[int, int], SearchDocument] = (
            OrderedDict() if documents is None else documents
        )
        record_average = records.average_length["record"]
        self.average_length: Mapping[str, float] = {
            "note": notes.average_length,
            "record": record_average,
        }

    @property
    def size(self) -> int:
        """Notes plus records."""
        return len(self._notes) + self._records.size

    def narrow(
        self,
        query: str,
        *,
        params: RankParams,
        now: datetime,
        file_type: FileType,
        tags: frozenset[str],
        depth: int,
        numpy: Any = None,
    ) -> None:
        """Keep in ``postings`` only the documents that can reach the best ``depth`` (in bulk
        with ``numpy``, unless a filter applies: :func:`._prune.select_dense`)."""

        def passes(slot: int) -> bool:
            return matches_filters(self.stats(slot), file_type, tags)

        filtered = file_type != "all" or bool(tags)
        allowed: Callable[[int], bool] | None = passes if filtered else None

        half_life = params.half_life_days
        # Decay factors by day: the days present are few, the notes many.
        by_day: dict[int, float] = {0: 1.0}
        if half_life is not None:
            for day in self._days:
                by_day[day] = day_factor(date.fromordinal(day), now, params)
        day_of = self._day_of
        dated = half_life is not None and len(by_day) > 1

        def factor(slot: int) -> float:
            return by_day[day_of.get(slot, 0)]

        def scale(acc: dict[int, float]) -> list[float]:
            days = map(day_of.get, acc.keys(), repeat(0))
            return list(map(mul, acc.values(), map(by_day.__getitem__, days)))

        terms: list[Term] = []
        size = self.size
        norms = self._norms(params)
        factors = self._factors
        factors.prepare(self._notes, norms, params)
        for term in query_terms(query):
            notes = self._reader.postings(self._connection, term)
            records = self._records.postings(term)
            # The records' corpus may list only those that can rank, and count them all.
            held = len(notes.ids) + self._records.frequency(term)
            if held:
                weight = idf(size, held)
                terms.append(
                    note_term(term, notes, factors, records, weight, params, norms, allowed)
                )
        if params.date_weight:
            for key in query_months(query):
                holding, slots = self.month_holders(key)
                if holding:
                    gain = month_gain(size, holding, params)
                    terms.append(month_term(gain, slots, allowed))
        if numpy is not None and allowed is None:
            self._candidates = select_dense(
                numpy,
                terms,
                depth,
                len(self._notes.paths),
                self._decay(numpy, by_day, dated),
                factor,
            )
            return
        # No decay factor exceeds the largest among the days present (1 for undated paths).
        undated = self._records.size > 0 or len(day_of) < len(self._notes)
        ceiling = max([by_day.get(day, 1.0) for day in self._days] + [1.0 if undated else 0.0])
        self._candidates = select(terms, depth, scale if dated else None, factor, ceiling)

    def _decay(
        self, numpy: Any, by_day: dict[int, float], dated: bool
    ) -> Callable[[Any], Any] | None:
        """The decay factors of an array of note slots, in bulk (``None``: no decay)."""
        if not dated:
            return None
        days = sorted(by_day)  # every day a note names, and 0 (undated: 1)
        keys = numpy.array(days, numpy.int64)
        values = numpy.array([by_day[day] for day in days])
        numbers = self._notes.day_numbers

        def decay(slots: Any) -> Any:
            # A view of the note table's column, dropped at once: an array lent to numpy
            # cannot grow.
            return values[numpy.searchsorted(keys, numpy.frombuffer(numbers, numpy.int64)[slots])]

        return decay

    def postings(self, term: str) -> Sequence[Posting]:
        """The (narrowed) postings of ``term``."""
        notes = self._reader.postings(self._connection, term)
        records = self._records.postings(term)
        candidates = self._candidates
        found: list[Posting] = []
        if candidates is None:
            ids, bodies = notes.ids, notes.bodies
            found.extend(zip(ids, bodies, repeat(None)))
            # Holders of field counts are among the notes: each one's place, then its entry.
            for entry, doc in enumerate(notes.fields.docs):
                place = bisect_left(ids, doc)
                found[place] = (doc, bodies[place], notes.fields.at(entry))
            found.extend((-1 - index, body, counts) for index, body, counts in records)
            return found
        kept: list[int] = []
        positions: list[int] = []
        for slot in sorted(candidates):
            if slot >= 0:
                position = find(notes, slot)
                if position >= 0:
                    kept.append(slot)
                    positions.append(position)
        # Their field counts found in bulk (a binary search each, in C).
        counts: list[tuple[int, ...] | None] = [None] * len(kept)
        fields = notes.fields
        places, entries = fields.among(kept)
        for place, entry in zip(places, entries, strict=True):
            counts[place] = fields.at(entry)
        found.extend(zip(kept, map(notes.bodies.__getitem__, positions), counts, strict=True))
        if records:
            wanted = {-1 - slot for slot in candidates if slot < 0}
            found.extend((-1 - i, body, counts) for i, body, counts in records if i in wanted)
        return found or _NO_POSTINGS

    def frequency(self, term: str) -> int:
        """How many notes and records hold ``term``."""
        notes = self._reader.postings(self._connection, term)
        return len(notes.ids) + self._records.frequency(term)

    def stats(self, index: int) -> RankDocument:
        """A note's row, or a record's document."""
        if index < 0:
            return self._records.documents[-1 - index]
        # Ranking asks once per term a note holds: its row is made once per search.
        row = self._rows.get(index)
        if row is None:
            row = self._rows[index] = self._notes.row(index)
        return row

    def day(self, index: int) -> date | None:
        """The day a note's path names."""
        if index < 0:
            return self._records.day(-1 - index)
        day = self._notes.day_numbers[index]
        return date.fromordinal(day) if day else None

    def path_key(self, index: int) -> bytes:
        """The tie-break key."""
        return path_key(self.stats(index).path)

    def month_holders(self, key: MonthKey) -> tuple[int, Sequence[int]]:
        """Notes and records dated in ``key`` (narrowed to the candidates, if narrowed)."""
        slots = [
            slot
            for (year, month), held in self._months.items()
            if month_matches(key, year, month)
            for slot in held
        ]
        held_records, records = self._records.month_holders(key)
        slots.extend(-1 - index for index in records)
        holding = len(slots) - len(records) + held_records
        candidates = self._candidates
        if candidates is not None:
            slots = [slot for slot in slots if slot in candidates]
        return holding, slots

    def rescoring(self, indexes: Sequence[int]) -> None:
        """Fetch the term lists of the notes about to be re-scored, in one statement."""
        self._reader.prefetch(self._connection, [index for index in indexes if index >= 0])

    def chunk_counts(self, index: int, term: str) -> tuple[int, ...]:
        """Per chunk, the count of ``term`` (from the note's stored term list)."""
        if index < 0:
            return self._records.chunk_counts(-1 - index, term)
        numbers = self._numbers
        if term in numbers:
            number = numbers[term]
        else:
            number = numbers[term] = self._reader.term_number(self._connection, term)
        matrix = self._matrices.get(index)
        if matrix is None:
            matrix = self._matrices[index] = self._reader.term_list(self._connection, index)
        return (0,) * max(1, matrix.chunks) if number is None else matrix.chunk_counts(number)

    def document(self, index: int) -> SearchDocument:
        """The note read from its file (it must still be what was indexed), or the record."""
        if index < 0:
            return self._records.documents[-1 - index]
        # A note id and read time name one version of the note: its document can be kept.
        row = self._notes.row(index)
        key = (index, row.seen)
        cached = self._materialised.get(key)
        if cached is None:
            cached = note_document(row.path, read_indexed(self._root, row))
            if len(self._materialised) >= DOCUMENT_MEMO:
                self._materialised.popitem(last=False)
            self._materialised[key] = cached
        else:
            self._materialised.move_to_end(key)
        return cached

    def _norms(self, params: RankParams) -> Norms:
        records: dict[int, float] = {}
        b = params.record_b
        average = self.average_length["record"]
        for index, document in enumerate(self._records.documents):
            records[-1 - index] = 1.0 - b + (b * document.length / average if average else b)
        b = params.b
        average = self._notes.average_length
        scale = b / average if average else 0.0
        return Norms(1.0 - b + (0.0 if average else b), scale, self._notes.lengths, records)


def read_indexed(root: Path, row: NoteRow) -> str:
    """The text of an indexed note, if its file still has the identity it was indexed at.

    Raises:
        StaleNote: the file changed, vanished or cannot be read since.
    """
    try:
        # Never waits: a FIFO swapped in where an indexed note was is refused at once.
        fd = open_regular(root / row.path)
    except (OSError, SourceError):
        raise StaleNote(row.path) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or file_identity(info) != row.identity:
            raise StaleNote(row.path)
        data = read_at_most(fd, MAX_READ_BYTES + 1)
    except OSError:
        raise StaleNote(row.path) from None
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")
