"""Decoding with a memory: records, encoded blocks and digest of bytes already seen are reused.

Decoding 1,000 records costs far more than reading the file and comparing bytes, and a writer
used to decode and re-encode the whole file at every save. A store therefore keeps the last
file it decoded or published (:class:`RecordsMemo`), and trusts it only for bytes it has just
read (a writer: under the lock):

- the same bytes: the decoded records are reused as they are;
- bytes that extend them (another writer appended): only the new blocks are decoded;
- anything else: the file is decoded from scratch, exactly as without a memo.

Encoding reuses each unchanged record's block (records are immutable, so the same object has
the same block), and the revision of an appended file continues the old file's digest. The
output is byte-for-byte what a full decode and encode would give.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from memquill.errors import CorruptError, Messages
from memquill.store._codec import (
    HEADER,
    LEGACY_HEADER,
    Record,
    decode_blocks,
    decode_store,
    encode_block,
)
from memquill.store._results import Snapshot

__all__ = ["Decoded", "Encoded", "RecordsMemo", "decode_snapshot", "header_of"]

_NO_BLOCKS: Final[Mapping[int, bytes]] = {}


class _Digest(Protocol):
    def copy(self) -> _Digest: ...
    def update(self, data: bytes, /) -> None: ...
    def hexdigest(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Decoded:
    """A records file's bytes with what they decode to.

    Attributes:
        raw: the bytes.
        snapshot: the store they are.
        blocks: encoded blocks known so far, by ``id()`` of a record in ``snapshot`` (the
            snapshot keeps those records alive, so an id is never reused meanwhile).
        digest: sha256 state after the identity, NUL and ``raw`` (the revision's hash).
    """

    raw: bytes
    snapshot: Snapshot
    blocks: Mapping[int, bytes]
    digest: _Digest

    def encode(self, header: str, records: Sequence[Record]) -> Encoded:
        """The file holding ``records``, encoding only records this file does not hold."""
        known = self.blocks
        blocks = {id(record): known.get(id(record)) or _block(record) for record in records}
        data = b"".join([header.encode(), *(blocks[id(record)] for record in records)])
        return Encoded(self, data, tuple(records), blocks)


@dataclass(frozen=True, slots=True)
class Encoded:
    """A new file built from ``base``: its bytes, records and blocks."""

    base: Decoded
    data: bytes
    records: tuple[Record, ...]
    blocks: Mapping[int, bytes]

    def decoded(self) -> Decoded:
        """The new file as :class:`Decoded` (its revision continues ``base``'s digest when the
        new file only appends to it)."""
        base = self.base
        identity = base.snapshot.identity
        if base.raw and self.data.startswith(base.raw):
            digest = base.digest.copy()
            digest.update(self.data[len(base.raw) :])
        else:
            digest = _digest(identity, self.data)
        snapshot = Snapshot(identity, digest.hexdigest(), self.records, len(self.data))
        return Decoded(self.data, snapshot, self.blocks, digest)


class RecordsMemo:
    """The last records file one store decoded or published (see the module docstring).

    Safe to share between threads: entries are immutable and replaced whole.
    """

    def __init__(self) -> None:
        self._last: Decoded | None = None

    def decode(self, identity: bytes, raw: bytes) -> Decoded:
        """``raw`` decoded, reusing the last file when ``raw`` is it or extends it.

        Raises:
            CorruptError: the bytes are not a valid managed records file.
        """
        last = self._last
        if last is not None and last.snapshot.identity == identity:
            if last.raw == raw:
                return last
            if last.raw and raw.startswith(last.raw):
                extended = _extend(last, raw)
                if extended is not None:
                    self._last = extended
                    return extended
        decoded = _decode(identity, raw)
        self._last = decoded
        return decoded

    @property
    def last(self) -> Decoded | None:
        """The file decoded or published last, if any."""
        return self._last

    def remember(self, decoded: Decoded) -> None:
        """Keep ``decoded`` (a file just published) for the next call."""
        self._last = decoded


def decode_snapshot(identity: bytes, raw: bytes) -> Snapshot:
    """Decode the bytes of a records file of the store ``identity`` seeds.

    Raises:
        CorruptError: the bytes are not a valid managed records file.
    """
    return _decode(identity, raw).snapshot


def header_of(raw: bytes) -> str | None:
    """The header ``raw`` starts with, if it is one memquill reads."""
    return next((h for h in (HEADER, LEGACY_HEADER) if raw.startswith(h.encode())), None)


def _decode(identity: bytes, raw: bytes) -> Decoded:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        if header_of(raw) is None:
            raise CorruptError(Messages.FOREIGN) from None
        raise CorruptError(Messages.EDITED, _bad_block(raw[: error.start])) from None
    image = decode_store(text)
    digest = _digest(identity, raw)
    snapshot = Snapshot(identity, digest.hexdigest(), image.records, len(raw))
    return Decoded(raw, snapshot, _NO_BLOCKS, digest)


def _extend(last: Decoded, raw: bytes) -> Decoded | None:
    """``raw``, which starts with ``last.raw``, decoded from where ``last`` ends.

    ``last.raw`` ends at a block boundary (it decoded), so its blocks are decoded exactly as
    before and decoding continues at the same place. Any problem in the new part returns
    ``None``: the caller decodes in full, which reports it as it always has.
    """
    tail = raw[len(last.raw) :]
    try:
        records = decode_blocks(tail.decode("utf-8"), 0, last.snapshot.records)
    except (UnicodeDecodeError, CorruptError):
        return None
    digest = last.digest.copy()
    digest.update(tail)
    snapshot = Snapshot(last.snapshot.identity, digest.hexdigest(), records, len(raw))
    return Decoded(raw, snapshot, last.blocks, digest)


def _bad_block(valid_prefix: bytes) -> int:
    """Index of the block holding the first invalid byte, so ``doctor`` can name it.

    The valid prefix ends inside (or right before) that block, so decoding the prefix stops
    there, unless an earlier block is already bad, which is then the first bad one.
    """
    try:
        return len(decode_store(valid_prefix.decode("utf-8")).records)
    except CorruptError as error:
        return error.record_index or 0


def _digest(identity: bytes, raw: bytes) -> _Digest:
    digest = hashlib.sha256(identity + b"\0")
    digest.update(raw)
    return digest


def _block(record: Record) -> bytes:
    return encode_block(record).encode()
