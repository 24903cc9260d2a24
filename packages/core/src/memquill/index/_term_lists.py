"""A note's term list: which terms it holds, with their counts and its chunk matrix.

One per note. It holds every term the note has postings for, as term ids (:mod:`._lexicon`),
in column order, with each term's body count and field counts, and the chunk matrix (each
term's count in each chunk: one row per chunk, one column per term)::

    n, nf, chunks, codes(4) | ids[n] | zlib(bodies[n] | field rows[nf] | counts[5 nf]
                                           | matrix[chunks n]) | crc

(The ids are stored as they are, in the narrowest type that holds them, uncompressed: compressed,
they shrink by less than a tenth, and as they are a reader finds a term's column with one
search in C, :meth:`ChunkMatrix.chunk_counts`, and relabelling rewrites only them.)

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
from typing import Final

from memquill.index._codec import (
    CorruptBlob,
    FieldCounts,
    fives,
    narrow,
    seal,
    take,
    unseal,
    zip_numbers,
)

_HEAD: Final = struct.Struct("<IIIcccc")
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
    """What re-scoring reads of a term list: the term ids (as stored: little-endian, each
    ``width`` bytes) and the chunk matrix."""

    __slots__ = ("_ids", "_width", "chunks", "matrix")

    def __init__(self, ids: bytes, width: int, chunks: int, matrix: array[int]) -> None:
        self._ids, self._width, self.chunks, self.matrix = ids, width, chunks, matrix

    def chunk_counts(self, term: int) -> tuple[int, ...]:
        """How often term ``term`` occurs in each chunk (zeros when the note lacks it)."""
        ids, width = self._ids, self._width
        if term < 0 or term >> (8 * width):
            return (0,) * max(1, self.chunks)
        # A byte search in C (re-scoring asks for a few terms of each of many notes); a hit
        # must start on an id's boundary.
        needle = term.to_bytes(width, "little")
        at = ids.find(needle)
        while at > 0 and at % width:
            at = ids.find(needle, at + 1)
        if at < 0:
            return (0,) * max(1, self.chunks)
        return tuple(self.matrix[at // width :: len(ids) // width])


def encode_term_list(
    ids: Sequence[int],
    bodies: Sequence[int],
    fields: dict[int, FieldCounts],
    chunks: int,
    matrix: array[int],
) -> bytes:
    """The blob of a note's term list (see :class:`TermList`)."""
    id_array, body_array = narrow(ids), narrow(bodies)
    rows = sorted(fields)
    counts = narrow([count for row in rows for count in fields[row]])
    rest = zlib.compress(zip_numbers(body_array, array("I", rows), counts, matrix), 6)
    head = _HEAD.pack(
        len(ids),
        len(rows),
        chunks,
        id_array.typecode.encode(),
        body_array.typecode.encode(),
        counts.typecode.encode(),
        matrix.typecode.encode(),
    )
    return seal(head + zip_numbers(id_array) + rest)


def relabel(blob: bytes, mapping: Sequence[int]) -> bytes:
    """``blob`` with each term id ``i`` replaced by ``mapping[i]``.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        n, nf, chunks, id_code, body_code, count_code, matrix_code = _HEAD.unpack_from(view)
        ids, at = take(view, _HEAD.size, id_code, n)
        ids = narrow([mapping[term] for term in ids])
    except (struct.error, KeyError, ValueError, IndexError):
        raise CorruptBlob("term list") from None
    codes = (ids.typecode.encode(), body_code, count_code, matrix_code)
    return seal(_HEAD.pack(n, nf, chunks, *codes) + zip_numbers(ids) + bytes(view[at:]))


def decode_term_list(blob: bytes) -> TermList:
    """Parse a note's term list.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        n, nf, chunks, id_code, body_code, count_code, matrix_code = _HEAD.unpack_from(view)
        ids, at = take(view, _HEAD.size, id_code, n)
        numbers = memoryview(zlib.decompress(view[at:]))
        bodies, at = take(numbers, 0, body_code, n)
        rows, at = take(numbers, at, b"I", nf)
        counts, at = take(numbers, at, count_code, 5 * nf)
        matrix, at = take(numbers, at, matrix_code, chunks * n)
    except (struct.error, zlib.error, KeyError, ValueError):
        raise CorruptBlob("term list") from None
    if at != len(numbers) or any(row >= n for row in rows):
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
        n, nf, chunks, id_code, body_code, count_code, matrix_code = _HEAD.unpack_from(view)
        width = _WIDTHS[id_code]
        at = _HEAD.size + width * n
        if at > len(view):
            raise ValueError("short")
        ids = bytes(view[_HEAD.size : at])
        numbers = memoryview(zlib.decompress(view[at:]))
        # The matrix comes last, after the counts: its offset follows from the header.
        skip = _WIDTHS[body_code] * n + 4 * nf + _WIDTHS[count_code] * 5 * nf
        matrix, at = take(numbers, skip, matrix_code, chunks * n)
    except (struct.error, zlib.error, KeyError, ValueError):
        raise CorruptBlob("term list") from None
    if at != len(numbers):
        raise CorruptBlob("term list length")
    return ChunkMatrix(ids, width, chunks, matrix)
