"""A segment's notes as one blob: what the walk compares and ranking reads, column by column.

Before it answers, a fresh process must know every indexed note (path, file identity, text
size, body length, tags, day). Read row by row from SQLite, that costs a Python object per
value; so a segment's notes are written once, with the segment, as one blob of columns that
decodes in C (little-endian, with a CRC-32 like every blob, :mod:`._codec`)::

    n | ids, sizes, mtimes, inodes, ctimes, devices, seen, bytes, lengths, days (8 bytes each)
      | path lengths, tag lengths (4 bytes each, in characters) | paths, tags (UTF-8) | crc

A note removed later is listed in ``gone`` (as for postings); the blob is not rewritten until
its segment is merged.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Sequence
from itertools import accumulate, repeat
from typing import Final, Literal, NamedTuple

from memquill.index._codec import CorruptBlob, seal, unseal
from memquill.query._scan import Identity

__all__ = ["NoteRow", "decode_notes", "encode_notes"]

_COUNT: Final = struct.Struct("<I")
_NUMBERS: Final = 10
"""Number columns: id, size, mtime, inode, ctime, device, seen, bytes, length, day."""
_SWAP: Final = sys.byteorder != "little"
_NO_TAGS: Final[frozenset[str]] = frozenset()


class NoteRow(NamedTuple):
    """One indexed note, as stored (what ranking and the walk compare need; never its text)."""

    id: int
    path: str
    size: int
    mtime: int
    ino: int
    ctime: int
    dev: int
    seen: int
    byte_size: int
    length: int
    tags: str
    day: int
    seg: int

    @property
    def identity(self) -> Identity:
        """The file identity the note was read at."""
        return (self.size, self.mtime, self.ino, self.ctime, self.dev)

    @property
    def tag_keys(self) -> frozenset[str]:
        """The lowercased tags."""
        return frozenset(self.tags.split("\n")) if self.tags else _NO_TAGS

    @property
    def kind(self) -> Literal["note"]:
        """Always ``note`` (records are served from the store)."""
        return "note"


def encode_notes(rows: Sequence[NoteRow]) -> bytes:
    """The blob of a segment's notes (``seg`` is the segment's, not stored)."""
    columns: list[array[int]] = [
        array("q", [row.id for row in rows]),
        array("q", [row.size for row in rows]),
        array("q", [row.mtime for row in rows]),
        array("q", [row.ino for row in rows]),
        array("q", [row.ctime for row in rows]),
        array("q", [row.dev for row in rows]),
        array("q", [row.seen for row in rows]),
        array("q", [row.byte_size for row in rows]),
        array("q", [row.length for row in rows]),
        array("q", [row.day for row in rows]),
    ]
    paths = [row.path for row in rows]
    tags = [row.tags for row in rows]
    columns.append(array("I", map(len, paths)))
    columns.append(array("I", map(len, tags)))
    text = ("".join(paths) + "".join(tags)).encode("utf-8", "surrogatepass")
    if _SWAP:  # pragma: no cover - big-endian hosts
        for column in columns:
            column.byteswap()
    return seal(_COUNT.pack(len(rows)), *(column.tobytes() for column in columns), text)


def decode_notes(blob: bytes, seg: int) -> list[NoteRow]:
    """The notes of segment ``seg`` from its blob.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        (count,) = _COUNT.unpack_from(view, 0)
    except struct.error:
        raise CorruptBlob("short note table") from None
    offset = _COUNT.size
    numbers: list[array[int]] = []
    for code, width in (*repeat(("q", 8), _NUMBERS), ("I", 4), ("I", 4)):
        end = offset + width * count
        if end > len(view):
            raise CorruptBlob("note table length")
        column: array[int] = array(code)
        column.frombytes(view[offset:end])
        if _SWAP:  # pragma: no cover - big-endian hosts
            column.byteswap()
        numbers.append(column)
        offset = end
    try:
        text = bytes(view[offset:]).decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise CorruptBlob("note table text") from None
    ids, sizes, mtimes, inos, ctimes, devs, seen, sizes_utf8, lengths, days = numbers[:_NUMBERS]
    path_lengths, tag_lengths = numbers[_NUMBERS:]
    ends = list(accumulate(path_lengths))
    paths_end = ends[-1] if ends else 0
    tag_ends = list(accumulate(tag_lengths, initial=paths_end))
    if (tag_ends[-1] if tag_ends else paths_end) != len(text):
        raise CorruptBlob("note table text length")
    paths = list(map(text.__getitem__, map(slice, [0, *ends[:-1]], ends)))
    tags = list(map(text.__getitem__, map(slice, tag_ends[:-1], tag_ends[1:])))
    columns = (ids, paths, sizes, mtimes, inos, ctimes, devs, seen, sizes_utf8, lengths, tags)
    return list(map(NoteRow._make, zip(*columns, days, repeat(seg, count), strict=True)))
