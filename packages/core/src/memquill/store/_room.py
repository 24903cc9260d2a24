"""Automatic compaction: a write that would pass the capacity first makes room, under the lock.

A write whose new file would exceed the store's capacity, under the writer lock and in the same
write, in this order and only as far as needed:

1. folds every forgotten fact (but those it forgets itself) into the ledger of compact tombstones
   (:mod:`memquill.store._tombstones`): a tombstone holds no text, and the ledger keeps all it
   blocks, so nothing is lost but its metadata. This runs at every such write, even when
   dropping only the blocks appended forgets left behind would fit: those writes are
   rewrites, and a file left nearly full of tombstones would be rewritten again and again
   (a store that puts and deletes in turn rewrote its 2 MiB eight times in 200 cycles);
2. empties the text of every ``superseded`` version (what ``memquill compact`` does), each
   keeping the keyed fingerprint of the text it held
   (:func:`~memquill.store._tombstones.with_fingerprint`), so a fact forgotten later still
   blocks all its words;
3. folds live facts' history beyond the retention depth, then all of it.

Only if the file is still too large is the write refused (``capacity``). What is folded or
emptied depends only on the records and the write, so two machines compact alike, and a
compacted copy merges with an uncompacted one to the compacted text (``docs/sync.md``).
"""

from __future__ import annotations

from typing import Final

from memquill.store._codec import encode_block
from memquill.store._record import Record
from memquill.store._results import Snapshot
from memquill.store._tombstones import RETENTION_DEPTH, fold, with_fingerprint
from memquill.store._transaction import Draft, Operation, Outcome

_HEADROOM: Final = 2
"""Measure the draft only once the file holds more than 1/_HEADROOM of the capacity."""


def with_room(operation: Operation, capacity: int, record_key: bytes) -> Operation:
    """``operation``, then, when its draft would not fit in ``capacity`` bytes, room made in
    the draft as the module says (dropped text fingerprinted with ``record_key``)."""

    def run(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        outcome = operation(snapshot, draft)
        if outcome.status != "saved" or snapshot.size_bytes * _HEADROOM < capacity:
            return outcome
        if _grown(snapshot, draft) <= capacity:
            return outcome
        # What this write forgets stays whole until a later write: its answer names it.
        spared = frozenset(r.root_id for r in draft if r.id in outcome.changed)
        fold_forgotten(draft, spared)
        if _size(draft) <= capacity:
            return outcome
        empty_superseded(draft, record_key)
        if _size(draft) > capacity:
            compact_draft(draft, record_key)
        if _size(draft) > capacity:  # live facts and retained history fill it: keep less
            compact_draft(draft, record_key, depth=0)
        return outcome

    return run


def fold_forgotten(draft: list[Record], spared: frozenset[str] = frozenset()) -> int:
    """Fold (in place) every forgotten family into the ledger but those whose root is in
    ``spared``, keeping all live history; how many versions were folded."""
    folded, count = fold(draft, depth=None, spared=spared)
    if count:
        draft[:] = folded
    return count


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
