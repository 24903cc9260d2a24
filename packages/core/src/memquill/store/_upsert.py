"""Saving or correcting many keyed facts in one write (a pure operation).

Each candidate names its fact by key, and what it becomes is decided under the writer lock,
on the records the transaction read: no active fact has the key → a new fact
(:func:`~memquill.store._append.append_candidates`: idempotency, tombstones); the active fact
has other text or other extra JSON (compared as JSON text: ``1`` and ``1.0`` differ) → its
correction (:func:`~memquill.store._edits.correction`: one new version, history kept);
the same text and extra JSON → nothing. New versions follow the candidates' order, all with
one time stamp: the file reads as if each had been written on its own, in that order.

One candidate a forgotten fact's words block (from a tool or a conversation) blocks the whole
write: nothing is written, every target is ``None``, and ``forgotten_at`` names when, for each
candidate that was blocked. A write of many facts is all or none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memquill.store._append import append_candidates
from memquill.store._edits import correction
from memquill.store._fact_keys import FactKey
from memquill.store._fingerprints import BLOCKING_KINDS, text_fingerprint
from memquill.store._record import Record
from memquill.store._results import Candidate, Snapshot
from memquill.store._targets import UNCHANGED
from memquill.store._transaction import Operation, Outcome


def upserting(
    batch: Sequence[Candidate],
    *,
    record_key: bytes,
    known_keys: Sequence[bytes],
    now: Callable[[], str],
    new_id: Callable[[], str],
) -> Operation:
    """The operation that saves or corrects every candidate of ``batch`` (validated already:
    each has a key, no two the same) in one write; see the module docstring."""

    def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        stamp = now()
        ids: list[str | None] = []
        forgotten: list[str | None] = []
        changed: set[str] = set()
        waiting: list[Candidate] = []  # new facts in a row: appended together

        def append_waiting() -> bool:
            if not waiting:
                return True
            outcome = append_candidates(
                waiting, snapshot, draft, record_key, stamp, new_id, known_keys
            )
            if outcome.status == "blocked" or None in outcome.ids:
                return False
            ids.extend(outcome.ids)
            forgotten.extend(outcome.forgotten_at or (None for _ in waiting))
            changed.update(outcome.changed)
            waiting.clear()
            return True

        blocked = False
        for candidate in batch:
            assert candidate.key is not None
            current = snapshot.by_key(candidate.key)
            if current is None:
                waiting.append(candidate)
                continue
            if not append_waiting():
                blocked = True
                break
            if current.holds(candidate.content, candidate.extra):
                ids.append(current.id)
                forgotten.append(None)
                continue
            corrected = correction(
                FactKey(candidate.key),
                candidate.content,
                snapshot.revision,
                candidate.source,
                key=UNCHANGED,
                extra=candidate.extra,
                record_key=record_key,
                now=lambda: stamp,
                new_id=new_id,
                known_keys=known_keys,
            )(snapshot, draft)
            if corrected.status == "blocked":
                blocked = True
                break
            ids.extend(corrected.ids)
            forgotten.extend(corrected.forgotten_at or (None,))
            changed.update(corrected.changed)
        if blocked or not append_waiting():
            return _blocked(batch, snapshot, record_key, known_keys)
        return Outcome(
            "saved" if changed else "duplicate",
            tuple(ids),
            frozenset(changed),
            forgotten_at=tuple(forgotten),
        )

    return operation


def _blocked(
    batch: Sequence[Candidate],
    snapshot: Snapshot,
    record_key: bytes,
    known_keys: Sequence[bytes],
) -> Outcome:
    """Nothing written: every target ``None``, each blocked one's ``forgotten_at`` set."""
    keys = (record_key, *known_keys)
    forgotten = tuple(
        snapshot.forgotten_at(text_fingerprint(k, candidate.content) for k in keys)
        if candidate.source.get("kind") in BLOCKING_KINDS
        else None
        for candidate in batch
    )
    return Outcome("blocked", tuple(None for _ in batch), forgotten_at=forgotten)
