"""A note's term list: which terms it holds, with their counts and its chunk matrix.

One per note. It holds every term the note has postings for, as term ids (:mod:`._lexicon`),
in column order, with each term's body count and field counts, and the chunk matrix (each
term's count in each chunk: one row per chunk, one column per term)::

    n, nf, chunks, codes(4), id bytes | zlib(id steps[n]) | zlib(bodies[n] | field rows[nf]
                                                               | counts[5 nf] | matrix[chunks n])
                                      | crc

(Ids are stored as the first and the steps between them, signed: a batch numbers its terms in
the order the note lists them, so steps are mostly small.)

It is what a removal needs (which blocks hold the note), what an edit compares (which counts
changed), and what re-scoring reads (a term's column). Analysis, in a worker, numbers terms
within its batch; :func:`relabel` gives the list the index's own ids, recompressing only the
ids.
"""

from __future__ import annotations

import struct
import zlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import Final

from memquill.index._codec import (
    CorruptBlob,
    FieldCounts,
    fives,
    narrow,
    narrow_signed,
    seal,
    take,
    unseal,
    zip_numbers,
)

__all__ = [
    "ChunkMatrix",
    "TermList",
    "decode_chunk_matrix",
    "decode_term_list",
    "encode_term_list",
    "relabel",
]

_HEAD: Final = struct.Struct("<IIIccccI")
_WIDTHS: Final = {b"B": 1, b"H": 2, b"I": 4}


@dataclass(frozen=True, slots=True)
class TermList:
    """A note's terms, their counts, and its chunk matrix.

    Attributes:
        ids: every term the note has postings for (term ids), in column order.
        bodies: each term's body count (0: only a field holds it).
        fields: by column, the field counts of the terms a field holds.
        chunks: how many chunks the note has.
        matrix: row ``r``, column ``c`` is the count of term ``ids[c]`` in chunk ``r``.
    """

    ids: array[int]
    bodies: array[int]
    fields: dict[int, FieldCounts]
    chunks: int
    matrix: array[int]

    def chunk_counts(self, term: int) -> tuple[int, ...]:
        """How often term ``term`` occurs in each chunk (zeros when the note lacks it)."""
        try:
            column = self.ids.index(term)
        except ValueError:
            return (0,) * max(1, self.chunks)
        return tuple(self.matrix[column :: len(self.ids)])


class ChunkMatrix:
    """What re-scoring reads of a term list: the term ids and the chunk matrix."""

    __slots__ = ("_columns", "chunks", "ids", "matrix")

    def __init__(self, ids: array[int], chunks: int, matrix: array[int]) -> None:
        self.ids, self.chunks, self.matrix = ids, chunks, matrix
        self._columns: dict[int, int] | None = None

    def chunk_counts(self, term: int) -> tuple[int, ...]:
        """How often term ``term`` occurs in each chunk (zeros when the note lacks it)."""
        columns = self._columns
        if columns is None:
            columns = self._columns = dict(zip(self.ids, range(len(self.ids)), strict=True))
        column = columns.get(term)
        if column is None:
            return (0,) * max(1, self.chunks)
        return tuple(self.matrix[column :: len(self.ids)])


def encode_term_list(
    ids: Sequence[int],
    bodies: Sequence[int],
    fields: dict[int, FieldCounts],
    chunks: int,
    matrix: array[int],
) -> bytes:
    """The blob of a note's term list (see :class:`TermList`)."""
    id_array, body_array = _steps(ids), narrow(bodies)
    rows = sorted(fields)
    counts = narrow([count for row in rows for count in fields[row]])
    packed_ids = zlib.compress(id_array.tobytes(), 6)
    rest = zlib.compress(zip_numbers(body_array, array("I", rows), counts, matrix), 6)
    head = _HEAD.pack(
        len(ids),
        len(rows),
        chunks,
        id_array.typecode.encode(),
        body_array.typecode.encode(),
        counts.typecode.encode(),
        matrix.typecode.encode(),
        len(packed_ids),
    )
    return seal(head + packed_ids + rest)


def relabel(blob: bytes, mapping: Sequence[int]) -> bytes:
    """``blob`` with each term id ``i`` replaced by ``mapping[i]``.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        n, nf, chunks, id_code, body_code, count_code, matrix_code, size = _HEAD.unpack_from(view)
        ids, rest = _ids(view, id_code, n, size)
        ids = _steps([mapping[term] for term in ids])
    except (struct.error, zlib.error, KeyError, ValueError, IndexError):
        raise CorruptBlob("term list") from None
    packed = zlib.compress(ids.tobytes(), 6)
    codes = (ids.typecode.encode(), body_code, count_code, matrix_code)
    return seal(_HEAD.pack(n, nf, chunks, *codes, len(packed)) + packed + bytes(rest))


def decode_term_list(blob: bytes) -> TermList:
    """Parse a note's term list.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        n, nf, chunks, id_code, body_code, count_code, matrix_code, size = _HEAD.unpack_from(view)
        ids, rest = _ids(view, id_code, n, size)
        numbers = memoryview(zlib.decompress(rest))
        bodies, at = take(numbers, 0, body_code, n)
        rows, at = take(numbers, at, b"I", nf)
        counts, at = take(numbers, at, count_code, 5 * nf)
        matrix, at = take(numbers, at, matrix_code, chunks * n)
    except (struct.error, zlib.error, KeyError, ValueError):
        raise CorruptBlob("term list") from None
    if at != len(numbers) or len(ids) != n or any(row >= n for row in rows):
        raise CorruptBlob("term list length")
    fields = dict(zip(rows, fives(counts), strict=True))
    return TermList(array("I", ids), bodies, fields, chunks, matrix)


def decode_chunk_matrix(blob: bytes) -> ChunkMatrix:
    """The term ids and chunk matrix of a term list (its counts are not parsed).

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        n, nf, chunks, id_code, body_code, count_code, matrix_code, size = _HEAD.unpack_from(view)
        ids, rest = _ids(view, id_code, n, size)
        numbers = memoryview(zlib.decompress(rest))
        # The matrix comes last, after the counts: its offset follows from the header.
        skip = _WIDTHS[body_code] * n + 4 * nf + _WIDTHS[count_code] * 5 * nf
        matrix, at = take(numbers, skip, matrix_code, chunks * n)
    except (struct.error, zlib.error, KeyError, ValueError):
        raise CorruptBlob("term list") from None
    if at != len(numbers):
        raise CorruptBlob("term list length")
    return ChunkMatrix(ids, chunks, matrix)


def _ids(view: memoryview, code: bytes, count: int, size: int) -> tuple[array[int], memoryview]:
    """The term ids of a term list (``size`` compressed bytes), and its compressed rest."""
    start = _HEAD.size
    if start + size > len(view):
        raise ValueError("short")
    raw = memoryview(zlib.decompress(view[start : start + size]))
    steps, end = take(raw, 0, code, count)
    if end != len(raw):
        raise ValueError("long")
    return array("I", accumulate(steps)), view[start + size :]


def _steps(ids: Sequence[int]) -> array[int]:
    """The first id and each step to the next."""
    return narrow_signed([*ids[:1], *(b - a for a, b in pairwise(ids))])
