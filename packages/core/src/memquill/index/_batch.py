"""A batch of analysed notes, as an analyser hands it to the writer.

Analysis runs in worker processes (:mod:`._build`), which know nothing of the index: a batch
numbers its terms by its own sorted vocabulary and its notes from 0. It carries each note's
figures and term list, and, already cut into blocks, every term's postings over the batch;
the writer gives terms the index's ids (:func:`._term_lists.relabel`) and, when every note of
the batch is new, notes the next ids (:func:`._codec.shift_block`), so a large build does no
per-posting work in the writing process.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass
from itertools import repeat
from typing import Final, NamedTuple

from memquill.index._analysis import NoteFigures
from memquill.index._codec import BLOCK, FieldCounts, Postings, encode_block
from memquill.index._pages import NoteRow
from memquill.index._term_lists import encode_term_list
from memquill.query import Identity

BLOCKS_FROM: Final = 32
"""A batch of this many notes or more comes with its postings cut into blocks."""
_EXTEND = list[int].extend


class AnalysedNote(NamedTuple):
    """One note of a batch (a tuple: many cross from workers).

    Attributes:
        path: the workspace path.
        identity: the file identity the text was read at.
        seen: when the text was read (ns since the epoch; see :mod:`._sync`).
        byte_size: UTF-8 size of the text.
        length: length of the folded body.
        tags: the lowercased tags, sorted, one a line.
        day: the day the path names (proleptic ordinal), or 0.
        terms: its term list, terms numbered by the batch's vocabulary.
    """

    path: str
    identity: Identity
    seen: int
    byte_size: int
    length: int
    tags: str
    day: int
    terms: bytes

    def row(self, doc_id: int) -> NoteRow:
        """Its row in the note table, under ``doc_id``."""
        return NoteRow(
            doc_id,
            self.path,
            *self.identity,
            self.seen,
            self.byte_size,
            self.length,
            self.tags,
            self.day,
        )


@dataclass(frozen=True, slots=True)
class AnalysedBatch:
    """Notes analysed together.

    Attributes:
        vocabulary: every term of the batch, sorted (a term's number is its position).
        notes: the notes, in the order they were analysed.
        postings: per term number, its postings over the batch as blocks, notes numbered
            from 0 in ``notes`` order; empty for a batch of fewer than :data:`BLOCKS_FROM`
            notes (an edit of a few notes: the writer changes their terms' blocks in place,
            and blocks made here would go unused).
    """

    vocabulary: tuple[str, ...]
    notes: tuple[AnalysedNote, ...]
    postings: tuple[tuple[bytes, ...], ...]


class BatchBuilder:
    """Gathers analysed notes into a batch (with blocks from ``blocks_from`` notes)."""

    def __init__(self, *, blocks_from: int = BLOCKS_FROM) -> None:
        self._notes: list[tuple[NoteFigures, int]] = []
        self._blocks_from = blocks_from

    def __len__(self) -> int:
        return len(self._notes)

    def add(self, figures: NoteFigures, seen: int) -> None:
        """Add a note whose text was read after ``seen`` (ns since the epoch)."""
        self._notes.append((figures, seen))

    def build(self) -> AnalysedBatch:
        """The batch of every note added."""
        vocabulary = sorted({term for figures, _ in self._notes for term in figures.terms})
        number = {term: index for index, term in enumerate(vocabulary)}
        flat: list[list[int]] = [[] for _ in vocabulary]
        held: dict[int, list[tuple[int, FieldCounts]]] = {}
        notes: list[AnalysedNote] = []
        blocks = len(self._notes) >= self._blocks_from
        for doc, (figures, seen) in enumerate(self._notes):
            terms = figures.terms
            columns = list(map(number.__getitem__, terms))
            bodies = list(map(figures.body.get, terms, repeat(0)))
            if blocks:
                # One (note, body count) pair per term, appended in C: a note holds hundreds.
                deque(
                    map(_EXTEND, map(flat.__getitem__, columns), zip(repeat(doc), bodies)),
                    maxlen=0,
                )
            # Few terms are in a field (a dozen of hundreds): each found by its column.
            fields = {bisect_left(terms, term): counts for term, counts in figures.fields.items()}
            if blocks:
                for column, counts in fields.items():
                    held.setdefault(columns[column], []).append((doc, counts))
            blob = encode_term_list(columns, bodies, fields, figures.chunks, figures.matrix)
            notes.append(
                AnalysedNote(
                    figures.path,
                    figures.identity,
                    seen,
                    figures.byte_size,
                    figures.length,
                    "\n".join(figures.tags),
                    figures.day,
                    blob,
                )
            )
        postings = (
            tuple(_blocks(entries, dict(held.get(term, ()))) for term, entries in enumerate(flat))
            if blocks
            else ()
        )
        return AnalysedBatch(tuple(vocabulary), tuple(notes), postings)


def _blocks(entries: list[int], fields: dict[int, FieldCounts]) -> tuple[bytes, ...]:
    """A term's (note, body count) pairs and field counts, as blocks."""
    ids, bodies = array("I", entries[0::2]), array("I", entries[1::2])
    found: list[bytes] = []
    for start in range(0, len(ids), BLOCK):
        part = ids[start : start + BLOCK]
        held = {doc: fields[doc] for doc in part if doc in fields} if fields else {}
        found.append(encode_block(Postings(part, bodies[start : start + BLOCK], held)))
    return tuple(found)
