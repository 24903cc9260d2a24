"""A note's term list: which terms it holds, with their counts and its chunk matrix.

One per note. It holds every term the note has postings for, as term ids (:mod:`._lexicon`),
in column order, with each term's body count and field counts, and the chunk matrix (each
term's count in each chunk: one row per chunk, one column per term)::

    n, nf, chunks, m, codes(5) | deflated(id steps[n]) (m bytes)
                               | deflated(bodies[n] | field rows[nf] | counts[5 nf]
                                          | matrix[chunks n]) | crc

(The ids are stored as steps from the one before, the first from 0, deflated on their own:
columns are in term order, and the lexicon numbers the terms of a build in term order, so the
steps are small. On their own, so that relabelling rewrites only them; a reader expands them
once per note, into the fixed-width bytes in which :meth:`ChunkMatrix.chunk_counts` finds a
term's column with one search in C.)

It is what a removal needs (which blocks hold the note), what an edit compares (which counts
changed), and what re-scoring reads (a term's column). Analysis, in a worker, numbers terms
within its batch; :func:`relabel` gives the list the index's own ids, rewriting only the ids.
"""

from __future__ import annotations

import struct
import zlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import sub
from typing import Final

from memquill.index._codec import (
    CorruptBlob,
    FieldCounts,
    fives,
    narrow,
    narrow_signed,
    pack,
    seal,
    take,
    unpack,
    unseal,
    zip_numbers,
)

_HEAD: Final = struct.Struct("<IIIIccccc")
_WIDTH: Final = {b"B": 1, b"H": 2, b"I": 4, b"b": 1, b"h": 2, b"i": 4, b"q": 8}


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
    body_array = narrow(bodies)
    rows = sorted(fields)
    row_array = narrow(rows)
    counts = narrow([count for row in rows for count in fields[row]])
    rest = pack(zip_numbers(body_array, row_array, counts, matrix))
    codes = (
        body_array.typecode.encode(),
        row_array.typecode.encode(),
        counts.typecode.encode(),
        matrix.typecode.encode(),
    )
    return _sealed(ids, len(rows), chunks, codes, rest)


def _sealed(
    ids: Sequence[int], nf: int, chunks: int, codes: tuple[bytes, ...], rest: bytes | memoryview
) -> bytes:
    """A term list's blob from its ids and its other parts, deflated (``rest``)."""
    steps = narrow_signed([*ids[:1], *map(sub, ids[1:], ids[:-1])])
    packed = pack(zip_numbers(steps))
    head = _HEAD.pack(len(ids), nf, chunks, len(packed), steps.typecode.encode(), *codes)
    return seal(b"".join((head, packed, rest)))


def _ids(view: memoryview) -> tuple[tuple[int, int, int, tuple[bytes, ...]], list[int], int]:
    """A term list's head (n, nf, chunks, the codes of its other parts), its ids, and the
    offset after them.

    Raises:
        struct.error, zlib.error, KeyError, ValueError: it does not parse.
    """
    n, nf, chunks, size, step_code, *codes = _HEAD.unpack_from(view)
    at = _HEAD.size + size
    if at > len(view):
        raise ValueError("short")
    steps, end = take(memoryview(unpack(view[_HEAD.size : at])), 0, step_code, n)
    ids = list(accumulate(steps))
    if end != _WIDTH[step_code] * n or min(ids, default=0) < 0:
        raise ValueError("ids")
    return (n, nf, chunks, tuple(codes)), ids, at


def relabel(blob: bytes, mapping: Sequence[int]) -> bytes:
    """``blob`` with each term id ``i`` replaced by ``mapping[i]``.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        (_, nf, chunks, codes), ids, at = _ids(view)
        ids = list(map(mapping.__getitem__, ids))
    except (struct.error, zlib.error, KeyError, ValueError, IndexError):
        raise CorruptBlob("term list") from None
    return _sealed(ids, nf, chunks, codes, view[at:])


def decode_term_list(blob: bytes) -> TermList:
    """Parse a note's term list.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        (n, nf, chunks, (body_code, row_code, count_code, matrix_code)), ids, at = _ids(view)
        numbers = memoryview(unpack(view[at:]))
        bodies, at = take(numbers, 0, body_code, n)
        rows, at = take(numbers, at, row_code, nf)
        counts, at = take(numbers, at, count_code, 5 * nf)
        matrix, at = take(numbers, at, matrix_code, chunks * n)
    except (struct.error, zlib.error, KeyError, ValueError, OverflowError):
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
        (n, nf, chunks, (body_code, row_code, count_code, matrix_code)), ids, at = _ids(view)
        numbers = memoryview(unpack(view[at:]))
        # The matrix comes last, after the counts: its offset follows from the header.
        skip = _WIDTH[body_code] * n + _WIDTH[row_code] * nf + _WIDTH[count_code] * 5 * nf
        matrix, at = take(numbers, skip, matrix_code, chunks * n)
        wide = narrow(ids)
    except (struct.error, zlib.error, KeyError, ValueError, OverflowError):
        raise CorruptBlob("term list") from None
    if at != len(numbers):
        raise CorruptBlob("term list length")
    return ChunkMatrix(zip_numbers(wide), wide.itemsize, chunks, matrix)
