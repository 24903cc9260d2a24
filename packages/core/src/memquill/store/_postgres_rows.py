"""A records file as rows: one per record version, and the difference between two files.

Each row keeps the exact text of its block's metadata (the JSON of the marker line,
``contentLength`` included) and its content, so ``header + blocks`` gives back the file's bytes
byte for byte, and a store revision computed from rows is the file store's for the same
records. The record's fields are repeated as columns only so the database can index them.
:func:`split` cuts a file that decoded into rows; :func:`difference` says which rows a write
inserts, updates or deletes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from memquill.errors import CorruptError, Messages, StorageError
from memquill.store._codec import decode_store
from memquill.store._record import Record

_PREFIX: Final = "<!-- memory-record "
_META_END: Final = " -->\n"
_SEPARATOR: Final = "\n\n"


@dataclass(frozen=True, slots=True)
class Row:
    """One record version as stored: its id, exact metadata text and content."""

    id: str
    meta: str
    content: str
    block: bytes = field(repr=False, compare=False)

    @classmethod
    def of(cls, record_id: str, meta: str, content: str) -> Row:
        block = f"{_PREFIX}{meta}{_META_END}{content}{_SEPARATOR}".encode()
        return cls(record_id, meta, content, block)


def split(text: str, cursor: int, records: Sequence[Record]) -> list[tuple[Row, Record]]:
    """The rows of ``records``, whose blocks ``text`` holds from ``cursor`` to its end (the
    text decoded to exactly these records, so each block is where the walk expects it).

    Raises:
        StorageError: the text does not hold these records (never for a file that decoded).
    """
    found: list[tuple[Row, Record]] = []
    for record in records:
        start = cursor + len(_PREFIX)
        end = text.find(_META_END, start)
        body = end + len(_META_END)
        stop = body + len(record.content)
        if end < 0 or text[body:stop] != record.content:
            raise StorageError(Messages.DATABASE_SAVE_FAILED)
        found.append((Row.of(record.id, text[start:end], record.content), record))
        cursor = stop + len(_SEPARATOR)
    if cursor != len(text):
        raise StorageError(Messages.DATABASE_SAVE_FAILED)
    return found


def assemble(header: str, rows: Sequence[Row]) -> bytes:
    """The file the rows are: the header, then every block in order."""
    return b"".join([header.encode(), *(row.block for row in rows)])


@dataclass(frozen=True, slots=True)
class Difference:
    """What a write changes: rows to insert and to update (with their new position) and the
    ids of rows to delete."""

    inserts: list[tuple[int, Row, Record]]
    updates: list[tuple[int, Row, Record]]
    deletes: list[str]


def difference(old: Sequence[Row], new: Sequence[tuple[Row, Record]]) -> Difference:
    """The rows to write so that ``old`` (in file order) becomes ``new``.

    A row is updated when its block or its position changed (a row whose position moved is
    rewritten so readers that fetch changed rows see the new order); rows absent from ``new``
    are deleted.
    """
    where = {row.id: (position, row) for position, row in enumerate(old)}
    inserts: list[tuple[int, Row, Record]] = []
    updates: list[tuple[int, Row, Record]] = []
    for position, (row, record) in enumerate(new):
        known = where.pop(row.id, None)
        if known is None:
            inserts.append((position, row, record))
        elif known[0] != position or known[1].meta != row.meta or known[1].content != row.content:
            updates.append((position, row, record))
    return Difference(inserts, updates, list(where))


def rows_of(raw: bytes) -> tuple[str, list[tuple[Row, Record]]] | None:
    """The header and rows of a records file (``None``: it does not decode)."""
    try:
        text = raw.decode("utf-8")
        image = decode_store(text)
    except (UnicodeDecodeError, CorruptError):
        return None
    if not text:
        return "", []
    return image.header, split(text, len(image.header), image.records)


def columns(row: Row, record: Record) -> tuple[object, ...]:
    """The indexed fields of a version, then its metadata text and content (a row's columns
    after its id and position)."""
    source_key = record.source_key  # sessionId NUL messageId: bytes, as text holds no NUL
    return (
        record.root_id,
        record.status,
        record.key,
        None if source_key is None else source_key.encode(),
        record.meta.get("operationHash"),
        record.created_at,
        record.updated_at,
        row.meta,
        row.content,
    )
