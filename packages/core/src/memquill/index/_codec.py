"""The index's binary forms: a segment's postings per term, and a note's chunk matrix.

Every blob ends with a CRC-32 of what precedes it, checked on every read: SQLite guards its
pages, not the bytes inside a value, and a damaged index must never answer.

Postings of one term in one segment (little-endian, 4-byte unsigned)::

    n, nf | ids[n] | bodies[n] | columns[n] | field ids[nf] | field counts[5 * nf] | crc

``ids`` ascend; ``columns`` is the term's column in its note's chunk matrix (``NO_COLUMN`` when
the body lacks the term). A chunk matrix is ``chunks, width, typecode`` then the rows. A note's
terms (every term it has postings for) are its sorted terms, one a line, compressed.
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from typing import Final

from memquill.index._analysis import FieldCounts, NoteFigures
from memquill.index._db import IndexDamaged

__all__ = [
    "NO_COLUMN",
    "CorruptBlob",
    "Postings",
    "SegmentBuilder",
    "decode_matrix",
    "decode_postings",
    "decode_terms",
    "encode_matrix",
    "encode_postings",
    "encode_terms",
    "seal",
    "unseal",
]

NO_COLUMN: Final = 0xFFFFFFFF
_HEADER: Final = struct.Struct("<II")
_MATRIX: Final = struct.Struct("<IIc")
_CRC: Final = struct.Struct("<I")
_SWAP: Final = sys.byteorder != "little"
_EXTEND: Final = list[int].extend
_ARRAYS: Final[dict[bytes, Callable[[], array[int]]]] = {
    b"B": lambda: array("B"),
    b"H": lambda: array("H"),
    b"I": lambda: array("I"),
}


class CorruptBlob(IndexDamaged):
    """A stored blob failed its checksum or does not parse (the index is damaged)."""


@dataclass(slots=True)
class Postings:
    """One term's postings (one segment, or several merged).

    Attributes:
        ids: document ids, ascending.
        bodies: body counts, aligned with ``ids``.
        columns: chunk-matrix columns, aligned with ``ids``.
        fields: field counts of the documents whose metadata holds the term.
    """

    ids: array[int]
    bodies: array[int]
    columns: array[int]
    fields: dict[int, FieldCounts]


class SegmentBuilder:
    """Collects the postings of a batch of notes whose ids ascend, then encodes them."""

    def __init__(self) -> None:
        # Per term, its postings as flat (id, body count, column) triples.
        self._terms: defaultdict[str, list[int]] = defaultdict(list)
        self._fields: dict[str, list[tuple[int, FieldCounts]]] = {}
        self.documents = 0

    def add(self, doc_id: int, figures: NoteFigures) -> None:
        """Add one note (ids must ascend across calls)."""
        self.documents += 1
        terms = self._terms
        body = figures.body
        width = len(figures.terms)
        # One triple per body term, appended in C: a note holds hundreds of terms.
        deque(
            map(
                _EXTEND,
                map(terms.__getitem__, figures.terms),
                zip(repeat(doc_id, width), body.values(), range(width), strict=True),
            ),
            maxlen=0,
        )
        for term, counts in figures.fields.items():
            if term not in body:
                terms[term].extend((doc_id, 0, NO_COLUMN))
            self._fields.setdefault(term, []).append((doc_id, counts))

    def encode(self) -> list[tuple[str, bytes]]:
        """Every term's postings blob, sorted by term."""
        fields = self._fields
        out: list[tuple[str, bytes]] = []
        for term in sorted(self._terms):
            flat = array("I", self._terms[term])
            postings = Postings(flat[0::3], flat[1::3], flat[2::3], dict(fields.get(term, ())))
            out.append((term, encode_postings(postings)))
        return out


def encode_postings(postings: Postings) -> bytes:
    """The blob of one term's postings."""
    held = postings.fields
    field_ids = array("I", sorted(held))
    field_counts = array("I", (count for doc in field_ids for count in held[doc]))
    return seal(
        _HEADER.pack(len(postings.ids), len(held)),
        postings.ids,
        postings.bodies,
        postings.columns,
        field_ids,
        field_counts,
    )


def decode_postings(blob: bytes) -> Postings:
    """Parse a postings blob.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        n, nf = _HEADER.unpack_from(view, 0)
    except struct.error:
        raise CorruptBlob("short postings") from None
    offset = _HEADER.size
    ids, offset = _take(view, offset, n)
    bodies, offset = _take(view, offset, n)
    columns, offset = _take(view, offset, n)
    field_ids, offset = _take(view, offset, nf)
    field_counts, offset = _take(view, offset, 5 * nf)
    if offset != len(view):
        raise CorruptBlob("postings length")
    counts = (field_counts[index::5] for index in range(5))
    fields: dict[int, FieldCounts] = dict(zip(field_ids, zip(*counts, strict=True), strict=True))
    return Postings(ids, bodies, columns, fields)


def encode_matrix(cells: array[int], rows: int, width: int) -> bytes:
    """A note's chunk matrix: ``rows`` rows of ``width`` cells, row after row."""
    return seal(_MATRIX.pack(rows, width, cells.typecode.encode()), cells)


def decode_matrix(blob: bytes) -> tuple[int, array[int]]:
    """``(width, cells)`` of a chunk matrix: row ``r``, column ``c`` is ``cells[r * width + c]``.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        rows, width, code = _MATRIX.unpack_from(view, 0)
        cells = _ARRAYS[code]()
    except (struct.error, KeyError):
        raise CorruptBlob("matrix header") from None
    body = view[_MATRIX.size :]
    if cells.itemsize * rows * width != len(body):
        raise CorruptBlob("matrix length")
    cells.frombytes(body)
    if _SWAP:  # pragma: no cover - big-endian hosts
        cells.byteswap()
    return width, cells


def encode_terms(figures: NoteFigures) -> bytes:
    """The blob of the terms ``figures`` has postings for (body and metadata terms)."""
    terms = sorted(figures.body.keys() | figures.fields.keys())
    text = "\n".join(terms).encode("utf-8", "surrogatepass")
    return seal(b"", zlib.compress(text, 1))


def decode_terms(blob: bytes) -> list[str]:
    """The terms of a note's terms blob.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        text = zlib.decompress(view).decode("utf-8", "surrogatepass")
    except (zlib.error, UnicodeDecodeError):
        raise CorruptBlob("terms") from None
    return text.split("\n") if text else []


def seal(header: bytes, *parts: array[int] | bytes) -> bytes:
    """``header`` and ``parts`` (arrays little-endian) as one blob ending in its CRC-32."""
    chunks = [header]
    for part in parts:
        if isinstance(part, bytes):
            chunks.append(part)
            continue
        if _SWAP:  # pragma: no cover - big-endian hosts
            part = array(part.typecode, part)
            part.byteswap()
        chunks.append(part.tobytes())
    data = b"".join(chunks)
    return data + _CRC.pack(zlib.crc32(data))


def unseal(blob: bytes) -> memoryview:
    """What a blob holds before its CRC-32, once the CRC is checked.

    Raises:
        CorruptBlob: it fails its checksum.
    """
    if len(blob) < _CRC.size:
        raise CorruptBlob("short blob")
    view = memoryview(blob)
    data = view[: -_CRC.size]
    (expected,) = _CRC.unpack_from(view, len(data))
    if zlib.crc32(data) != expected:
        raise CorruptBlob("checksum")
    return data


def _take(view: memoryview, offset: int, count: int) -> tuple[array[int], int]:
    end = offset + 4 * count
    if end > len(view):
        raise CorruptBlob("postings length")
    values = array("I")
    values.frombytes(view[offset:end])
    if _SWAP:  # pragma: no cover - big-endian hosts
        values.byteswap()
    return values, end
