"""A snapshot's records: an immutable sequence that shares what a write leaves alone.

Rules:

- A :class:`RecordList` is a tuple of chunk tuples of :data:`CHUNK` records each (the last
  may be shorter, never empty) and reads exactly like the tuple of its records: ``len``,
  indexing (negative too), iteration, ``in``, ``index``, ``count``, ``==`` with any tuple or
  ``RecordList`` of the same records; unhashable, as the tuple of records is.
- Slicing returns a plain tuple (a copy of the references in the slice).
- It never changes. :meth:`extended` (append) copies only the last chunk and the spine;
  :meth:`replaced` (replace places) copies only the chunks holding those places and the
  spine. Every other chunk is the same object in the old and the new list, so a write into a
  large store neither copies nor, when the old snapshot is dropped, frees a reference per
  record.
- :meth:`changes` tells the places where two lists hold different objects by comparing only
  the chunks they do not share: a list made from another by a write costs what the write
  touched (records are immutable, so the same object at the same place is the same record).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final, SupportsIndex, cast, overload

from memquill.store._record import Record

CHUNK: Final = 1024
"""Records per chunk: a write copies at most two chunks' references plus the spine."""


class RecordList(Sequence[Record]):
    """An immutable sequence of records held in shared chunks (module docstring: the rules)."""

    __slots__ = ("_chunks", "_length")

    def __init__(self, records: Iterable[Record] = ()) -> None:
        items = records if isinstance(records, tuple) else tuple(records)
        self._chunks: tuple[tuple[Record, ...], ...] = tuple(
            items[start : start + CHUNK] for start in range(0, len(items), CHUNK)
        )
        self._length = len(items)

    @classmethod
    def _of(cls, chunks: tuple[tuple[Record, ...], ...], length: int) -> RecordList:
        made = cls.__new__(cls)
        made._chunks, made._length = chunks, length
        return made

    @property
    def chunks(self) -> tuple[tuple[Record, ...], ...]:
        """The chunks (shared with the lists this one was made from or makes)."""
        return self._chunks

    def extended(self, records: Iterable[Record]) -> RecordList:
        """This list with ``records`` appended: only the last chunk and the spine are new."""
        added = tuple(records)
        if not added:
            return self
        length = self._length + len(added)
        chunks = list(self._chunks)
        if chunks and len(chunks[-1]) < CHUNK:
            added = chunks.pop() + added
        chunks.extend(added[start : start + CHUNK] for start in range(0, len(added), CHUNK))
        return RecordList._of(tuple(chunks), length)

    def replaced(self, places: Mapping[int, Record]) -> RecordList:
        """This list with the record at each place (``0 <= place < len``) replaced: only the
        chunks holding those places and the spine are new."""
        if not places:
            return self
        chunks = list(self._chunks)
        by_chunk: dict[int, list[Record]] = {}
        for place, record in places.items():
            if not 0 <= place < self._length:
                raise IndexError("record list index out of range")
            number, offset = divmod(place, CHUNK)
            chunk = by_chunk.get(number)
            if chunk is None:
                chunk = by_chunk[number] = list(chunks[number])
            chunk[offset] = record
        for number, chunk in by_chunk.items():
            chunks[number] = tuple(chunk)
        return RecordList._of(tuple(chunks), self._length)

    def changes(self, before: RecordList) -> list[int]:
        """The places below both lengths where this list and ``before`` hold different objects,
        in order. Only the chunks the two lists do not share are compared, object by object
        (a list decoded apart from ``before`` shares none: every record is compared)."""
        places: list[int] = []
        for number, (mine, theirs) in enumerate(zip(self._chunks, before._chunks, strict=False)):
            if mine is not theirs:
                start = number * CHUNK
                moved = map(operator.is_not, mine, theirs)  # stops at the shorter chunk
                places.extend(itertools.compress(range(start, start + CHUNK), moved))
        return places

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: SupportsIndex) -> Record: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Record, ...]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Record | tuple[Record, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._length)
            if step != 1:
                return tuple(self)[index]
            # Only the chunks the slice covers: a write reads what it appended in O(1) chunks.
            first, offset = divmod(start, CHUNK)
            covered = itertools.chain.from_iterable(self._chunks[first:])
            return tuple(itertools.islice(covered, offset, offset + max(stop - start, 0)))
        position = operator.index(index)
        if position < 0:
            position += self._length
        if not 0 <= position < self._length:
            raise IndexError("record list index out of range")
        number, offset = divmod(position, CHUNK)
        return self._chunks[number][offset]

    def __iter__(self) -> Iterator[Record]:
        return itertools.chain.from_iterable(self._chunks)

    def __reversed__(self) -> Iterator[Record]:
        return itertools.chain.from_iterable(map(reversed, reversed(self._chunks)))

    def __contains__(self, value: object) -> bool:
        return any(value in chunk for chunk in self._chunks)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RecordList):
            if self._chunks is other._chunks:
                return True
            return self._length == other._length and all(
                a is b or a == b for a, b in zip(self._chunks, other._chunks, strict=True)
            )
        if isinstance(other, tuple):
            same = cast("tuple[object, ...]", other)
            return self._length == len(same) and tuple(self) == same
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    # Records are unhashable, as their tuple is. None is the data model's mark of that (as
    # typeshed's list has it); the stubs type object.__hash__ as a method, hence the ignore.
    __hash__ = None  # pyright: ignore[reportAssignmentType]

    def __add__(self, other: Iterable[Record]) -> tuple[Record, ...]:
        return (*self, *other)

    def __radd__(self, other: tuple[Record, ...]) -> tuple[Record, ...]:
        return (*other, *self)

    def __repr__(self) -> str:
        return f"RecordList({tuple(self)!r})"
