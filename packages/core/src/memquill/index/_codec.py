"""The index's binary forms: their checksums and numbers, and a block of one term's postings.

Every blob ends with a CRC-32 of what precedes it, checked on every read: SQLite guards its
pages, not the bytes inside a value, and a damaged index must never answer. Numbers are
little-endian arrays of the narrowest width that holds them (``B``, ``H`` or ``I``), and the
larger parts are deflated (:func:`pack`): ids and counts are small and repetitive.

A postings *block* holds up to :data:`BLOCK` notes of one term, ids ascending::

    first, n, nf, codes(3), packed | (deflated if packed) id gaps[n - 1] | bodies[n]
                                   | field rows[nf] | counts[5 nf] | crc

``first`` is the block's first id (also its key; :func:`shift_block` renumbers a block built
with ids counted from 0); the gaps lead from it to the next ids.
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, islice
from operator import sub
from typing import Final

from memquill.index._db import IndexDamaged

FieldCounts = tuple[int, int, int, int, int]
"""A term's counts in a note's title, tags, aliases, headings and path."""

BLOCK: Final = 512
"""Most notes in one postings block: few blocks to read for a common term, and little to
rewrite when a note changes."""
_PACK_FROM: Final = 24
"""Blocks of this many notes or more are deflated (below, it saves next to nothing)."""
_RAW: Final = -15
"""Raw deflate: no zlib header nor Adler-32 (6 bytes a blob), as every blob has its CRC-32."""
_BLOCK_HEAD: Final = struct.Struct("<IHHcccB")
_CRC: Final = struct.Struct("<I")
_SWAP: Final = sys.byteorder != "little"
_WIDTH: Final = {b"B": 1, b"H": 2, b"I": 4, b"b": 1, b"h": 2, b"i": 4, b"q": 8}


class CorruptBlob(IndexDamaged):
    """A stored blob failed its checksum or does not parse (the index is damaged)."""


def stored_blob(value: object, what: str) -> bytes:
    """``value``, a column the index read from SQLite, as the blob it must be.

    Raises:
        CorruptBlob: it is not a blob (another type in the column: the index is damaged).
    """
    if not isinstance(value, bytes):
        raise CorruptBlob(f"{what}: not a blob")
    return value


@dataclass(slots=True)
class Postings:
    """One term's postings (one block, or several joined).

    Attributes:
        ids: note ids, ascending.
        bodies: body counts, aligned with ``ids``.
        fields: field counts of the notes whose metadata holds the term.
    """

    ids: array[int]
    bodies: array[int]
    fields: dict[int, FieldCounts]


def narrow(values: Sequence[int]) -> array[int]:
    """``values`` as an array of the narrowest unsigned type that holds them."""
    top = max(values, default=0)
    return array("B" if top < 1 << 8 else "H" if top < 1 << 16 else "I", values)


def narrow_signed(values: Sequence[int]) -> array[int]:
    """``values`` as an array of the narrowest signed type that holds them."""
    top = max(max(values, default=0), -min(values, default=0))
    code = "b" if top < 1 << 7 else "h" if top < 1 << 15 else "i" if top < 1 << 31 else "q"
    return array(code, values)


def encode_block(postings: Postings) -> bytes:
    """The blob of a block (``postings`` holds at least one note)."""
    ids = postings.ids
    held = postings.fields
    gaps = narrow(list(map(sub, islice(ids, 1, None), ids)))
    bodies = narrow(postings.bodies)
    rows = sorted(bisect_left(ids, doc) for doc in held)
    counts = narrow([count for row in rows for count in held[ids[row]]])
    parts = zip_numbers(gaps, bodies, array("B" if len(ids) <= 256 else "H", rows), counts)
    packed = len(ids) >= _PACK_FROM
    head = _BLOCK_HEAD.pack(
        ids[0],
        len(ids),
        len(held),
        gaps.typecode.encode(),
        bodies.typecode.encode(),
        counts.typecode.encode(),
        packed,
    )
    return seal(head + (pack(parts) if packed else parts))


def decode_block(blob: bytes) -> Postings:
    """Parse a block.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        first, n, nf, gap_code, body_code, count_code, packed = _BLOCK_HEAD.unpack_from(view)
        data = view[_BLOCK_HEAD.size :]
        if packed:
            data = memoryview(unpack(data))
        gaps, at = take(data, 0, gap_code, n - 1)
        bodies, at = take(data, at, body_code, n)
        rows, at = take(data, at, b"B" if n <= 256 else b"H", nf)
        counts, at = take(data, at, count_code, 5 * nf)
    except (struct.error, zlib.error, KeyError, ValueError):
        raise CorruptBlob("postings block") from None
    if at != len(data) or not n:
        raise CorruptBlob("postings block length")
    ids = array("I", accumulate(gaps, initial=first))
    fields: dict[int, FieldCounts] = {}
    if nf:
        try:
            keys = list(map(ids.__getitem__, rows))
        except IndexError:
            raise CorruptBlob("postings block rows") from None
        fields = dict(zip(keys, fives(counts), strict=True))
    return Postings(ids, array("I", bodies), fields)


def take(view: memoryview, at: int, code: bytes, count: int) -> tuple[array[int], int]:
    """``count`` numbers of type ``code`` at ``view[at:]``, and the offset after them.

    Raises:
        ValueError: ``view`` is too short (or ``count`` negative).
        KeyError: ``code`` is not a number type of the index.
    """
    end = at + _WIDTH[code] * count
    if count < 0 or end > len(view):
        raise ValueError("short")
    values: array[int] = array(code.decode())
    values.frombytes(view[at:end])
    if _SWAP:  # pragma: no cover - big-endian hosts
        values.byteswap()
    return values, end


def pack(data: bytes) -> bytes:
    """``data`` deflated, raw (see :data:`_RAW`), by Huffman coding alone: small numbers with
    few long repeats (counts, gaps, id steps) come out as small as full deflate's (level 6)
    or smaller, in a fifth of the time; any inflater reads it."""
    packer = zlib.compressobj(6, zlib.DEFLATED, _RAW, 8, zlib.Z_HUFFMAN_ONLY)
    return packer.compress(data) + packer.flush()


def unpack(data: bytes | memoryview) -> bytes:
    """What :func:`pack` deflated.

    Raises:
        zlib.error: ``data`` is not raw deflate data.
    """
    return zlib.decompress(data, _RAW)


def seal(data: bytes) -> bytes:
    """``data`` followed by its CRC-32."""
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


def shift_block(blob: bytes, by: int) -> tuple[int, bytes]:
    """The first id and blob of ``blob`` with every id ``by`` higher (a block built from 0).

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        head = list(_BLOCK_HEAD.unpack_from(view))
    except struct.error:
        raise CorruptBlob("postings block") from None
    head[0] += by
    return head[0], seal(_BLOCK_HEAD.pack(*head) + bytes(view[_BLOCK_HEAD.size :]))


def block_size(blob: bytes) -> int:
    """How many notes a block holds (its checksum unchecked: the block is decoded later)."""
    return int(_BLOCK_HEAD.unpack_from(blob)[1])


def zip_numbers(*parts: array[int]) -> bytes:
    """The arrays' bytes, little-endian, one after the other."""
    if _SWAP:  # pragma: no cover - big-endian hosts
        swapped: list[array[int]] = []
        for part in parts:
            copy = array(part.typecode, part)
            copy.byteswap()
            swapped.append(copy)
        parts = tuple(swapped)
    return b"".join(part.tobytes() for part in parts)


def fives(counts: array[int]) -> list[FieldCounts]:
    """Consecutive runs of five counts, as tuples."""
    it = iter(counts)
    return list(zip(it, it, it, it, it, strict=True))
