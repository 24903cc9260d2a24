"""A page of notes as one blob: what the walk compares and ranking reads, column by column.

Before it answers, a fresh process must know every indexed note (path, file identity, text
size, body length, tags, day). Read row by row from SQLite, that costs a Python object per
value; so the notes are kept :data:`PAGE` to a blob (note ``i`` on page ``i // PAGE``), as
columns that decode in C (little-endian, compressed, with a CRC-32 like every blob,
:mod:`._codec`)::

    n | zlib(ids, sizes, mtimes, inodes, ctimes, devices, seen, bytes, lengths, days (8 bytes
      each) | path lengths, tag lengths (4 bytes each, in characters) | paths, tags (UTF-8)) | crc

A change to a note rewrites its page (a few kilobytes), in the change's transaction.
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate, repeat
from typing import Final, Literal, NamedTuple, cast

from memquill.index._codec import CorruptBlob, seal, unseal
from memquill.query import Identity

PAGE: Final = 128
"""Notes per page."""
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


_NEW_ROW = cast(
    "Callable[[type[NoteRow], Iterable[object]], NoteRow]",
    tuple.__new__,  # pyright: ignore[reportUnknownMemberType]
)


def encode_page(rows: Sequence[NoteRow]) -> bytes:
    """The blob of a page's notes."""
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
    data = b"".join(column.tobytes() for column in columns) + text
    return seal(_COUNT.pack(len(rows)) + zlib.compress(data, 6))


def decode_page(blob: bytes) -> list[NoteRow]:
    """The notes of a page, from its blob.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    sealed = unseal(blob)
    try:
        (count,) = _COUNT.unpack_from(sealed, 0)
        view = memoryview(zlib.decompress(sealed[_COUNT.size :]))
    except (struct.error, zlib.error):
        raise CorruptBlob("short note page") from None
    offset = 0
    numbers: list[array[int]] = []
    for code, width in (*repeat(("q", 8), _NUMBERS), ("I", 4), ("I", 4)):
        end = offset + width * count
        if end > len(view):
            raise CorruptBlob("note page length")
        column: array[int] = array(code)
        column.frombytes(view[offset:end])
        if _SWAP:  # pragma: no cover - big-endian hosts
            column.byteswap()
        numbers.append(column)
        offset = end
    try:
        text = bytes(view[offset:]).decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise CorruptBlob("note page text") from None
    ids, sizes, mtimes, inos, ctimes, devs, seen, sizes_utf8, lengths, days = numbers[:_NUMBERS]
    path_lengths, tag_lengths = numbers[_NUMBERS:]
    ends = list(accumulate(path_lengths))
    paths_end = ends[-1] if ends else 0
    tag_ends = list(accumulate(tag_lengths, initial=paths_end))
    if (tag_ends[-1] if tag_ends else paths_end) != len(text):
        raise CorruptBlob("note page text length")
    paths = list(map(text.__getitem__, map(slice, [0, *ends[:-1]], ends)))
    tags = list(map(text.__getitem__, map(slice, tag_ends[:-1], tag_ends[1:])))
    columns = (ids, paths, sizes, mtimes, inos, ctimes, devs, seen, sizes_utf8, lengths, tags)
    # tuple.__new__ makes each row in C (NoteRow's own constructor is a Python function).
    return list(map(_NEW_ROW, repeat(NoteRow), zip(*columns, days, strict=True)))
