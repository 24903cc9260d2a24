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
import itertools
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Protocol

from memquill.errors import CorruptError, Messages
from memquill.foundation.collection import collection_paused
from memquill.store._codec import (
    HEADER_V3,
    HEADERS,
    block_spans,
    decode_after,
    decode_store,
    encode_block,
    erase_block,
    implies,
)
from memquill.store._fileio import Signature
from memquill.store._record import Record
from memquill.store._record_list import RecordList
from memquill.store._results import Snapshot

_NO_BLOCKS: Final[Mapping[int, tuple[Record, bytes]]] = {}


class _Digest(Protocol):
    def copy(self) -> _Digest: ...
    def update(self, data: bytes | bytearray | memoryview, /) -> None: ...
    def hexdigest(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Decoded:
    """A records file's bytes with what they decode to.

    Attributes:
        buffer: holds the bytes in its first ``snapshot.size_bytes`` bytes. A file that grew
            by appends shares one ``bytearray`` with the files before it, which is only ever
            appended to, so each keeps reading its own prefix.
        snapshot: the store they are.
        blocks: encoded blocks known so far, by ``id()`` of a record, each with the record
            itself (an entry counts only for that very object, so an id reused after a record
            is gone never matches).
        digest: sha256 state after the identity, NUL and the bytes (the revision's hash).
        signature: the file's :data:`Signature` when these bytes were read or written
            (``None``: not known, the file is read again before it is trusted).
        unerased: places whose block a ``v3`` tombstone claims but whose text is still
            there (a forget killed before its erasure): the next append erases them.
        mark: the digest's state after the identity, NUL and the bytes up to an offset (the
            end of the last rewrite), so an erasure after it hashes only what follows.
    """

    buffer: bytes | bytearray
    snapshot: Snapshot
    blocks: Mapping[int, tuple[Record, bytes]]
    digest: _Digest
    signature: Signature | None = None
    unerased: tuple[int, ...] = ()
    mark: tuple[int, _Digest] | None = None
    # Each place's block (start and end offsets), walked on first use (a list: frozen).
    walked: list[list[tuple[int, int]]] = field(
        default_factory=list[list[tuple[int, int]]], compare=False, repr=False
    )

    @property
    def raw(self) -> bytes:
        """The bytes."""
        buffer, size = self.buffer, self.snapshot.size_bytes
        if isinstance(buffer, bytes) and len(buffer) == size:
            return buffer
        return bytes(buffer[:size])

    @property
    def header(self) -> str | None:
        """The header the file starts with, if it is one memquill reads."""
        return header_of(bytes(self.buffer[: min(self.snapshot.size_bytes, 128)]))

    def signed(self, signature: Signature | None) -> Decoded:
        """This file, known to be the one with ``signature``."""
        return replace(self, signature=signature, walked=self.walked)

    def spans(self) -> list[tuple[int, int]]:
        """Where each place's block is (start and end byte offsets; a claimed place: the
        block claimed, not its tombstone), walked once (:func:`block_spans`)."""
        if not self.walked:
            size = self.snapshot.size_bytes
            start = len((self.header or "").encode())
            places: set[str] = set()
            spans: list[tuple[int, int]] = []
            for record_id, first, end in block_spans(self.buffer, start, size):
                if record_id not in places:  # else a claim: it takes no place of its own
                    places.add(record_id)
                    spans.append((first, end))
            self.walked.append(spans)
        return self.walked[0]

    def encode(
        self,
        header: str,
        records: RecordList,
        *,
        appends: bool = False,
        claims: Sequence[int] = (),
    ) -> Encoded:
        """The file holding ``records``, encoding only records this file does not hold.

        ``appends``: ``records`` are this file's records (the very objects, in order, but for
        the versions new ones supersede, as a ``v2`` file implies them:
        :func:`~memquill.store._codec.implied_supersede`, and the places in ``claims``, each
        now the tombstone of the version there, appended to claim it in a ``v3`` file) plus
        new ones, under the same header, so the new file is these bytes plus the new blocks.
        """
        known = self.blocks
        size = len(self.snapshot.records)
        if appends and self.snapshot.size_bytes and header == self.header:
            appended = [
                (record, _block(record))
                for record in itertools.chain((records[p] for p in claims), records[size:])
            ]
            tail = b"".join(block for _, block in appended)
            added = {id(entry[0]): entry for entry in appended}
            return Encoded(self, records, known, tail=tail, claims=tuple(claims), added=added)
        blocks: dict[int, tuple[Record, bytes]] = {}
        for record in records:
            entry = known.get(id(record))
            if entry is None or entry[0] is not record:
                entry = (record, _block(record))
            blocks[id(record)] = entry
        data = b"".join([header.encode(), *(blocks[id(record)][1] for record in records)])
        return Encoded(self, records, blocks, full=data)


@dataclass(frozen=True, slots=True)
class Encoded:
    """A new file built from ``base``: its records, blocks, and either its whole bytes
    (``full``) or the bytes it adds at the end of ``base`` (``tail``)."""

    base: Decoded
    records: RecordList
    blocks: Mapping[int, tuple[Record, bytes]]
    full: bytes | None = None
    tail: bytes | None = None
    claims: tuple[int, ...] = ()
    """Places whose tombstones open ``tail`` (a ``v3`` forget), in order."""
    added: Mapping[int, tuple[Record, bytes]] = field(
        default_factory=dict[int, tuple[Record, bytes]]
    )
    """The blocks ``tail`` holds, as :attr:`blocks` keeps them (a write's result hashes its
    record's block for the record revision: encoding it again cost as much as the append)."""

    def block(self, record: Record) -> bytes | None:
        """``record``'s block in this file, when this file encoded it (``None``: not known)."""
        entry = self.added.get(id(record)) or self.blocks.get(id(record))
        return entry[1] if entry is not None and entry[0] is record else None

    @property
    def size(self) -> int:
        """The new file's size in bytes."""
        if self.full is not None:
            return len(self.full)
        return self.base.snapshot.size_bytes + len(self.tail or b"")

    @property
    def data(self) -> bytes:
        """The new file's bytes."""
        if self.full is not None:
            return self.full
        return self.base.raw + (self.tail or b"")

    def erasures(self) -> list[tuple[int, bytes]]:
        """What publishing this file overwrites in place (offset, bytes): the blocks its
        tombstones claim, and those ``base`` has claimed but not erased, erased
        (:func:`~memquill.store._codec.erase_block`)."""
        base = self.base
        places = sorted({*self.claims, *base.unerased}) if self.tail is not None else ()
        if not places:
            return []
        spans, buffer = base.spans(), base.buffer
        return [(spans[p][0], erase_block(bytes(buffer[slice(*spans[p])]))) for p in places]

    def decoded(
        self,
        signature: Signature | None = None,
        erased: Sequence[tuple[int, bytes]] = (),
        *,
        in_place: bool = False,
    ) -> Decoded:
        """The new file as :class:`Decoded` (its revision continues ``base``'s digest when the
        new file only appends to it); ``signature``: the file's once written; ``erased``:
        its :meth:`erasures`, once written. ``in_place``: the erasures may change ``base``'s
        own buffer (:meth:`RecordsMemo.publish` decides), instead of a copy of it."""
        base = self.base
        identity = base.snapshot.identity
        if self.tail is not None:
            size = base.snapshot.size_bytes
            buffer = base.buffer
            if erased:
                if not (in_place and isinstance(buffer, bytearray) and len(buffer) == size):
                    buffer = bytearray(buffer[:size])
                for offset, data in erased:
                    buffer[offset : offset + len(data)] = data
            elif not (isinstance(buffer, bytearray) and len(buffer) == size):
                buffer = bytearray(buffer[:size])  # once; later appends extend it in place
            buffer += self.tail
            mark = base.mark or (size, base.digest.copy())
            digest = base.digest.copy()
            if erased:
                # The bytes before the first erased one are unchanged: hash on from the mark
                # to there, mark it (the next forget erases further on), then to the end.
                first = min(offset for offset, _ in erased)
                start, state = mark if mark[0] <= first else (0, _digest(identity, b""))
                state = state.copy()
                state.update(memoryview(buffer)[start:first])
                mark = (first, state.copy())
                digest = state
                digest.update(memoryview(buffer)[first:])
            else:
                digest.update(self.tail)
            snapshot = Snapshot(identity, digest.hexdigest(), self.records, len(buffer))
            snapshot.follows(base.snapshot, self.claims)
            written = Decoded(buffer, snapshot, base.blocks, digest, signature, mark=mark)
            if base.walked:  # the new places' blocks follow the tombstones in the tail
                added = list(block_spans(buffer, size, len(buffer)))[len(self.claims) :]
                written.walked.append([*base.walked[0], *((f, e) for _, f, e in added)])
            return written
        data = self.data
        if base.raw and data.startswith(base.raw):
            digest = base.digest.copy()
            digest.update(data[base.snapshot.size_bytes :])
        else:
            digest = _digest(identity, data)
        snapshot = Snapshot(identity, digest.hexdigest(), self.records, len(data))
        return Decoded(
            data, snapshot, self.blocks, digest, signature, mark=(len(data), digest.copy())
        )


class RecordsMemo:
    """The last records file one store decoded or published (see the module docstring).

    Safe to share between threads. Entries are replaced whole, and their buffers only ever
    extended, but for one thing: a forget's erasures overwrite the last file's buffer in place
    (copying up to 2 MiB at every forget would make a forget cost what the file weighs). So
    comparing bytes with the last file and replacing it happen under one lock, and an entry
    the memo no longer holds is used for its records only, never for its bytes.
    """

    def __init__(self) -> None:
        self._last: Decoded | None = None
        self._lock = threading.Lock()

    def decode(self, identity: bytes, raw: bytes) -> Decoded:
        """``raw`` decoded, reusing the last file when ``raw`` is it or extends it.

        Raises:
            CorruptError: the bytes are not a valid managed records file.
        """
        with self._lock:
            last = self._last
            if last is not None and last.snapshot.identity == identity:
                size = last.snapshot.size_bytes
                # Compared without copying either file; only ``raw`` (this call's own bytes)
                # is viewed, since a view of the memo's buffer would stop it being extended.
                with memoryview(raw) as view:
                    prefix = size <= len(raw) and last.buffer.startswith(view[:size])
                if prefix and size == len(raw):
                    return last
                if prefix and size:
                    extended = _extend(last, raw)
                    if extended is not None:
                        self._last = extended
                        return extended
        decoded = _decode(identity, raw)
        self.remember(decoded)
        return decoded

    def publish(
        self, encoded: Encoded, signature: Signature, erased: Sequence[tuple[int, bytes]]
    ) -> Decoded:
        """Keep the file ``encoded`` just written (appended, ``erased`` overwritten in place)
        as the last, and return it. The erasures change the last file's buffer in place when
        ``encoded`` grew from it: no other entry is compared with it any more."""
        with self._lock:
            in_place = self._last is encoded.base
            written = encoded.decoded(signature, erased, in_place=in_place)
            self._last = written
            return written

    @property
    def last(self) -> Decoded | None:
        """The file decoded or published last, if any."""
        return self._last

    def remember(self, decoded: Decoded) -> None:
        """Keep ``decoded`` (a file just published) for the next call."""
        with self._lock:
            self._last = decoded


def decode_snapshot(identity: bytes, raw: bytes) -> Snapshot:
    """Decode the bytes of a records file of the store ``identity`` seeds.

    Raises:
        CorruptError: the bytes are not a valid managed records file.
    """
    return _decode(identity, raw).snapshot


def header_of(raw: bytes) -> str | None:
    """The header ``raw`` starts with, if it is one memquill reads."""
    return next((h for h in HEADERS if raw.startswith(h.encode())), None)


def _decode(identity: bytes, raw: bytes) -> Decoded:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        if header_of(raw) is None:
            raise CorruptError(Messages.FOREIGN) from None
        raise CorruptError(Messages.EDITED, _bad_block(raw[: error.start])) from None
    intact: list[int] = []
    with collection_paused():  # a whole file's records: many objects, no cycles
        image = decode_store(text, intact)
    digest = _digest(identity, raw)
    snapshot = Snapshot(identity, digest.hexdigest(), RecordList(image.records), len(raw))
    return Decoded(raw, snapshot, _NO_BLOCKS, digest, unerased=tuple(intact))


def _extend(last: Decoded, raw: bytes) -> Decoded | None:
    """``raw``, which starts with ``last.raw``, decoded from where ``last`` ends.

    ``last.raw`` ends at a block boundary (it decoded), so its blocks are decoded exactly as
    before and decoding continues at the same place. Any problem in the new part returns
    ``None``: the caller decodes in full, which reports it as it always has.
    """
    return _appended(last, raw[last.snapshot.size_bytes :], raw)


def extended(last: Decoded, tail: bytes) -> Decoded | None:
    """``last`` followed by ``tail`` (whole blocks), decoded from where ``last`` ends, without
    reading or copying ``last``'s bytes: a database backend that fetched only the rows added
    since knows the new file is ``last`` plus their blocks. ``None``: the tail does not decode
    (the caller decodes the whole file, which reports the problem)."""
    return _appended(last, tail, None)


def _appended(last: Decoded, tail: bytes, raw: bytes | None) -> Decoded | None:
    intact = list(last.unerased)
    try:
        claims = last.header == HEADER_V3
        changed, added = decode_after(
            tail.decode("utf-8"),
            0,
            last.snapshot.records,
            implied=implies(last.header),
            claims=claims,
            known=last.snapshot,
            intact=intact,
        )
    except (UnicodeDecodeError, CorruptError):
        return None
    digest = last.digest.copy()
    digest.update(tail)
    buffer: bytes | bytearray
    if raw is not None:
        buffer = raw
    else:
        size = last.snapshot.size_bytes
        buffer = last.buffer
        if not (isinstance(buffer, bytearray) and len(buffer) == size):
            buffer = bytearray(buffer[:size])  # once; later appends extend it in place
        buffer += tail
    # The new list shares every chunk the new blocks left alone (``RecordList.changes``
    # then compares only the others); building it whole copied every record at each append.
    records = last.snapshot.records.replaced(changed).extended(added)
    snapshot = Snapshot(last.snapshot.identity, digest.hexdigest(), records, len(buffer))
    if not claims:
        # A claim replaces an earlier place, which an index shared by appending cannot see:
        # a v3 file's snapshot builds its own.
        snapshot.follows(last.snapshot)
    return Decoded(buffer, snapshot, last.blocks, digest, unerased=tuple(intact), mark=last.mark)


def _bad_block(valid_prefix: bytes) -> int:
    """Index of the block holding the first invalid byte, so ``doctor`` can name it.

    The valid prefix ends inside (or right before) that block, so decoding the prefix stops
    there, unless an earlier block is already bad, which is then the first bad one.
    """
    try:
        return len(decode_store(valid_prefix.decode("utf-8")).records)
    except CorruptError as error:
        return error.record_index or 0


def _digest(identity: bytes, raw: bytes | memoryview) -> _Digest:
    digest = hashlib.sha256(identity + b"\0")
    digest.update(raw)
    return digest


def _block(record: Record) -> bytes:
    return encode_block(record).encode()
