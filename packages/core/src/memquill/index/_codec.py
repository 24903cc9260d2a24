"""The index's binary forms: postings blocks, pages of notes and term lists, each sealed.

Every blob ends with a CRC-32 of what precedes it, checked on every read: SQLite guards its
pages, not the bytes inside a value, and a damaged index must never answer (:class:`CorruptBlob`).
Numbers are little-endian arrays of the narrowest width that holds them (``B``, ``H`` or
``I``), and the larger parts are deflated (:func:`pack`): ids and counts are small and
repetitive. Three forms are stored:

A postings *block* holds up to :data:`BLOCK` notes of one term, ids ascending::

    first, n, nf, codes(3), packed | (deflated if packed) id gaps[n - 1] | bodies[n]
                                   | field rows[nf] | counts[5 nf] | crc

``first`` is the block's first id (also its key; :func:`shift_block` renumbers a block built
with ids counted from 0); the gaps lead from it to the next ids.

A *page* holds :data:`PAGE` notes: what the walk compares and ranking reads, column by column.
Before it answers, a fresh process must know every indexed note (path, file identity, text
size, body length, tags, day). Read row by row from SQLite, that costs a Python object per
value; so the notes are kept :data:`PAGE` to a blob (note ``i`` on page ``i // PAGE``), as
columns that decode in C::

    n | zlib(ids, sizes, mtimes, inodes, ctimes, devices, seen, bytes, lengths, days (8 bytes
      each) | path lengths, tag lengths (4 bytes each, in characters) | paths, tags (UTF-8)) | crc

A change to a note rewrites its page (a few kilobytes), in the change's transaction.

A note's *term list*: which terms it holds, with their counts and its chunk matrix. One per
note. It holds every term the note has postings for, as term ids (the lexicon,
:mod:`._view`), in column order, with each term's body count and field counts, and the
chunk matrix (each term's count in each chunk: one row per chunk, one column per term)::

    n, nf, chunks, m, codes(5) | deflated(id steps[n]) (m bytes)
                               | deflated(bodies[n] | field rows[nf] | counts[5 nf]
                                          | matrix[chunks n]) | crc

(The ids are stored as steps from the one before, the first from 0, deflated on their own:
columns are in term order, and the lexicon numbers the terms of a build in term order, so the
steps are small. On their own, so that the ids are written last; a reader expands them
once per note, into the fixed-width bytes in which :meth:`ChunkMatrix.chunk_counts` finds a
term's column with one search in C.) It is what a removal needs (which blocks hold the note),
what an edit compares (which counts changed), and what re-scoring reads (a term's column).
Analysis, in a worker, numbers terms within its batch and packs the rest
(:func:`pack_term_counts`); the writer, which knows the index's ids, seals the list with them
(:func:`seal_term_list`).
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate, islice, repeat
from operator import sub
from typing import Final, Literal, NamedTuple, cast

from memquill.index._db import IndexDamaged
from memquill.query import Identity

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
_CODE: Final = {code.decode(): code for code in _WIDTH}
"""An array's type code as a head stores it."""


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
    ids = postings.ids.tolist()  # ints made once, not at each pass over the array
    held = postings.fields
    rows = sorted(bisect_left(ids, doc) for doc in held)
    counts = [count for row in rows for count in held[ids[row]]]
    return block_blob(ids, postings.bodies.tolist(), rows, counts)


def block_blob(ids: list[int], bodies: list[int], rows: list[int], counts: list[int]) -> bytes:
    """The blob of a block of the notes ``ids`` (ascending, at least one) with their body
    counts; ``rows`` are the places in ``ids`` (ascending) of the notes a field holds the term
    in, and ``counts`` their field counts, five a row."""
    gap_code, gaps = _little(list(map(sub, islice(ids, 1, None), ids)))
    body_code, body_bytes = _little(bodies)
    count_code, count_bytes = _little(counts)
    row_array = array("B" if len(ids) <= 256 else "H", rows)
    if _SWAP:  # pragma: no cover - big-endian hosts
        row_array.byteswap()
    parts = b"".join((gaps, body_bytes, row_array.tobytes(), count_bytes))
    packed = len(ids) >= _PACK_FROM
    head = _BLOCK_HEAD.pack(ids[0], len(ids), len(rows), gap_code, body_code, count_code, packed)
    return seal(head + (pack(parts) if packed else parts))


def _little(values: list[int]) -> tuple[bytes, bytes]:
    """``values`` (not negative) as the narrowest unsigned type that holds them: its type code
    and their little-endian bytes (as :func:`narrow` and :func:`zip_numbers` give them)."""
    top = max(values, default=0)
    if top < 1 << 8:  # nearly always: bytes are made fastest
        return b"B", bytes(values)
    numbers = array("H" if top < 1 << 16 else "I", values)
    if _SWAP:  # pragma: no cover - big-endian hosts
        numbers.byteswap()
    return _CODE[numbers.typecode], numbers.tobytes()


def decode_block(blob: bytes) -> Postings:
    """Parse a block.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    first, gaps, bodies, rows, counts = _parse_block(blob)
    ids = array("I", accumulate(gaps, initial=first))
    fields: dict[int, FieldCounts] = {}
    if rows:
        fields = dict(zip(map(ids.__getitem__, rows), fives(counts), strict=True))
    return Postings(ids, array("I", bodies), fields)


def join_blocks(first: bytes, second: bytes) -> bytes:
    """The blob of one block holding the notes of block ``first``, then those of ``second``
    (all above them), as :func:`encode_block` would write them.

    Raises:
        CorruptBlob: a block fails its checksum or does not parse.
    """
    start, gaps, bodies, rows, counts = _parse_block(first)
    ids = list(accumulate(gaps, initial=start))
    more_start, more_gaps, more_bodies, more_rows, more_counts = _parse_block(second)
    offset = len(ids)  # the second block's rows follow the first's notes
    ids.extend(accumulate(more_gaps, initial=more_start))
    return block_blob(
        ids,
        [*bodies, *more_bodies],
        [*rows, *(row + offset for row in more_rows)],
        [*counts, *more_counts],
    )


def _parse_block(blob: bytes) -> tuple[int, array[int], array[int], array[int], array[int]]:
    """A block's first id, id gaps, body counts, field rows (each a place among its notes)
    and field counts (five a row).

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
    if nf and max(rows) >= n:
        raise CorruptBlob("postings block rows")
    return first, gaps, bodies, rows, counts


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


# ----------------------------------------------------------------------------------------------
# A page of notes (see the module doc).


PAGE: Final = 128
"""Notes per page."""
_COUNT: Final = struct.Struct("<I")
_NUMBERS: Final = 10
"""Number columns: id, size, mtime, inode, ctime, device, seen, bytes, length, day."""
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


class NotePage(NamedTuple):
    """A page's notes as its columns, as stored (a row is made only when asked for)."""

    ids: array[int]
    paths: list[str]
    tags: list[str]
    numbers: list[array[int]]
    """size, mtime, inode, ctime, device, seen, bytes, length and day: an array each."""

    def rows(self) -> list[NoteRow]:
        """The notes, as rows."""
        size, mtime, ino, ctime, dev, seen, byte_size, length, day = self.numbers
        columns = (self.ids, self.paths, size, mtime, ino, ctime, dev, seen, byte_size, length)
        # tuple.__new__ makes each row in C (NoteRow's own constructor is a Python function).
        return list(map(_NEW_ROW, repeat(NoteRow), zip(*columns, self.tags, day, strict=True)))


def decode_page(blob: bytes) -> list[NoteRow]:
    """The notes of a page, from its blob.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    return read_page(blob).rows()


def read_page(blob: bytes) -> NotePage:
    """The columns of a page, from its blob.

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
    path_lengths, tag_lengths = numbers[_NUMBERS:]
    ends = list(accumulate(path_lengths))
    paths_end = ends[-1] if ends else 0
    tag_ends = list(accumulate(tag_lengths, initial=paths_end))
    if (tag_ends[-1] if tag_ends else paths_end) != len(text):
        raise CorruptBlob("note page text length")
    paths = list(map(text.__getitem__, map(slice, [0, *ends[:-1]], ends)))
    tags = list(map(text.__getitem__, map(slice, tag_ends[:-1], tag_ends[1:])))
    return NotePage(numbers[0], paths, tags, numbers[1:_NUMBERS])


# ----------------------------------------------------------------------------------------------
# A note's term list (see the module doc).


_HEAD: Final = struct.Struct("<IIIIccccc")


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


class TermCounts(NamedTuple):
    """A note's term list but for its term ids, which come last (:func:`seal_term_list`):
    analysis numbers terms within its batch, and only the writer knows the index's ids.

    Attributes:
        fields: how many terms a field holds.
        chunks: how many chunks the note has.
        codes: the type codes of the bodies, field rows, field counts and matrix.
        rest: those four, deflated.
    """

    fields: int
    chunks: int
    codes: tuple[bytes, ...]
    rest: bytes


def encode_term_list(
    ids: Sequence[int],
    bodies: Sequence[int],
    fields: dict[int, FieldCounts],
    chunks: int,
    matrix: array[int],
) -> bytes:
    """The blob of a note's term list (see :class:`TermList`)."""
    return seal_term_list(ids, pack_term_counts(list(bodies), fields, chunks, matrix))


def pack_term_counts(
    bodies: list[int], fields: dict[int, FieldCounts], chunks: int, matrix: array[int]
) -> TermCounts:
    """A term list's parts but for its ids: the body counts of its columns, the field counts
    of the columns a field holds, and the chunk matrix."""
    rows = sorted(fields)
    body_code, body_bytes = _little(bodies)
    row_code, row_bytes = _little(rows)
    count_code, count_bytes = _little([count for row in rows for count in fields[row]])
    rest = pack(b"".join((body_bytes, row_bytes, count_bytes, zip_numbers(matrix))))
    codes = (body_code, row_code, count_code, _CODE[matrix.typecode])
    return TermCounts(len(rows), chunks, codes, rest)


def seal_term_list(ids: Sequence[int], counts: TermCounts) -> bytes:
    """A term list's blob: the term ids of its columns, in column order, and its other parts."""
    steps = narrow_signed([*ids[:1], *map(sub, islice(ids, 1, None), ids)])
    packed = pack(zip_numbers(steps))
    head = _HEAD.pack(
        len(ids), counts.fields, counts.chunks, len(packed), _CODE[steps.typecode], *counts.codes
    )
    return seal(b"".join((head, packed, counts.rest)))


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
    if end != _WIDTH[step_code] * n:
        raise ValueError("ids")
    # Not checked for a negative id here: each reader's own conversion refuses one.
    return (n, nf, chunks, tuple(codes)), list(accumulate(steps)), at


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
        stored = array("I", ids)  # refuses a negative id
    except (struct.error, zlib.error, KeyError, ValueError, OverflowError):
        raise CorruptBlob("term list") from None
    if at != len(numbers) or any(row >= n for row in rows):
        raise CorruptBlob("term list length")
    fields = dict(zip(rows, fives(counts), strict=True))
    return TermList(stored, bodies, fields, chunks, matrix)


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
        wide = _id_array(ids)
    except (struct.error, zlib.error, KeyError, ValueError, OverflowError):
        raise CorruptBlob("term list") from None
    if at != len(numbers):
        raise CorruptBlob("term list length")
    return ChunkMatrix(zip_numbers(wide), wide.itemsize, chunks, matrix)


def _id_array(ids: list[int]) -> array[int]:
    """``ids`` as two-byte numbers if they fit, else four-byte ones: one pass in C that also
    refuses a negative id (``OverflowError``), where finding the narrowest type took two more.
    """
    try:
        return array("H", ids)
    except OverflowError:
        return array("I", ids)
