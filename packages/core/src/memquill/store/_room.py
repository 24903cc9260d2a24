"""Automatic compaction: a write that would pass the capacity first drops old versions' text.

A save, correction or rename whose new file would exceed the store's capacity empties, under
the writer lock and in the same write, the text of every ``superseded`` version (what
``memquill compact`` does), each keeping the keyed fingerprint of the text it held
(:func:`~memquill.store._fingerprints.with_fingerprint`), so a fact forgotten later still blocks
all its words. Tombstones, operation hashes and source keys stay, so nothing a forget or a
correction blocks comes back. Only if the file is still too large is the write refused
(``capacity``). Which versions are emptied depends only on the records (every superseded
one), so two machines compact alike, and a compacted copy merges with an uncompacted one to
the compacted text (``docs/sync.md``).
"""

from __future__ import annotations

from typing import Final

from memquill.store._codec import encode_block
from memquill.store._fingerprints import with_fingerprint
from memquill.store._record import Record
from memquill.store._results import Snapshot
from memquill.store._tombstones import RETENTION_DEPTH, fold
from memquill.store._transaction import Draft, Operation, Outcome

_HEADROOM: Final = 2
"""Measure the draft only once the file holds more than 1/_HEADROOM of the capacity."""


def with_room(operation: Operation, capacity: int, record_key: bytes) -> Operation:
    """``operation``, then, when its draft would not fit in ``capacity`` bytes, the draft with
    every superseded version's text dropped (fingerprinted with ``record_key``)."""

    def run(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        outcome = operation(snapshot, draft)
        if outcome.status != "saved" or snapshot.size_bytes * _HEADROOM < capacity:
            return outcome
        if _grown(snapshot, draft) <= capacity:
            return outcome
        empty_superseded(draft, record_key)
        if _size(draft) > capacity:
            compact_draft(draft, record_key)
        if _size(draft) > capacity:  # live facts and retained history fill it: keep less
            compact_draft(draft, record_key, depth=0)
        return outcome

    return run


def empty_superseded(draft: list[Record], record_key: bytes) -> int:
    """Drop (in place) every superseded version's text, keeping its fingerprint; how many."""
    emptied = 0
    for index, record in enumerate(draft):
        if record.status == "superseded" and record.content:
            draft[index] = with_fingerprint(record, record_key).evolve("")
            emptied += 1
    return emptied


def compact_draft(draft: list[Record], record_key: bytes, depth: int = RETENTION_DEPTH) -> int:
    """Compact ``draft`` in place: superseded text dropped, then forgotten families and old
    history folded into compact tombstones (:mod:`memquill.store._tombstones`); how many
    versions changed."""
    emptied = empty_superseded(draft, record_key)
    folded, count = fold(draft, depth)
    draft[:] = folded
    return emptied + count


def _grown(snapshot: Snapshot, draft: list[Record]) -> int:
    """The size of the file ``draft`` would be written as, or more (never less): the file's
    size, plus the versions appended, plus what the versions replaced in place grew by. Only
    what changed is encoded, so a write near the capacity costs what one far from it does."""
    count = len(snapshot.records)
    replaced = draft.replaced if isinstance(draft, Draft) else None
    if not isinstance(draft, Draft) or draft.reshaped or len(draft) < count:
        return _size(draft)
    grown = snapshot.size_bytes + sum(len(_block(record)) for record in draft[count:])
    for position in replaced or ():
        if position < count:
            before, now = snapshot.records[position], draft[position]
            # A forget appends its tombstone to a v3 file and keeps the block it claims.
            kept = 0 if now.status == "revoked" != before.status else len(_block(before))
            grown += len(_block(now)) - kept
    return grown


def _block(record: Record) -> bytes:
    return encode_block(record).encode()


def _size(records: list[Record]) -> int:
    # The header is under 80 bytes; the blocks are what grows.
    return 80 + sum(len(encode_block(record).encode()) for record in records)
