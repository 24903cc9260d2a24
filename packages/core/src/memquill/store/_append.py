"""Saving candidates into a draft: idempotency, tombstones and key reuse (a pure operation).

A candidate whose idempotency key already wrote the same fact is a ``duplicate``; a key, or a
source message, whose fact was corrected or forgotten blocks the whole batch (``blocked``): a
forgotten fact never comes back. An idempotency key reused for other content, provenance or
fact key is a conflict, and so is a fact key that already names an active fact (the error names
that fact's current id and record revision, so the caller can correct it instead). Both hashes
of an idempotency key count as the same operation: the keyed one memquill writes and the
unkeyed one the original system wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from memquill.errors import ConflictError, Messages
from memquill.store._codec import JSONValue, Record, source_key
from memquill.store._record_key import keyed_fields, recognised_hashes
from memquill.store._results import Candidate, Snapshot
from memquill.store._transaction import Outcome

__all__ = ["append_candidates"]


def append_candidates(
    batch: Iterable[Candidate],
    snapshot: Snapshot,
    draft: list[Record],
    key: bytes,
    now: str,
    new_id: Callable[[], str],
    known: Iterable[bytes] = (),
) -> Outcome:
    """Append ``batch`` to ``draft`` (in place) and say what happened to each candidate.

    Args:
        batch: the candidates, already validated.
        snapshot: the store the draft was copied from (whose active facts hold their keys).
        draft: a copy of the store's records; new versions are appended to it.
        key: the store's record key (new records are hashed with it).
        now: the timestamp new records carry.
        new_id: draws a new record id.
        known: other keys whose hashes count as the same operation (``_record_key``).

    Raises:
        ConflictError: an idempotency key was reused for other data, or a fact key is taken.
    """
    tombstoned = {record.source_key for record in draft if record.status != "active"} - {None}
    keys = (key, *known)
    prepared = [
        (candidate, recognised_hashes(keys, candidate.idempotency_key)) for candidate in batch
    ]
    if any(source_key(candidate.source) in tombstoned for candidate, _ in prepared):
        return Outcome("blocked", tuple(None for _ in prepared))
    ids: list[str | None] = []
    created: set[str] = set()
    for candidate, hashes in prepared:
        existing = next((r for r in draft if r.operation_hash in hashes), None)
        if existing is None:
            _check_key_free(candidate.key, snapshot)
            record_id = new_id()
            fields = keyed_fields(key, candidate.idempotency_key)
            draft.append(_new_record(record_id, candidate, now, fields))
            ids.append(record_id)
            created.add(record_id)
        elif existing.status != "active":
            return Outcome("blocked", tuple(None for _ in prepared))
        elif (
            existing.content != candidate.content
            or existing.key != candidate.key
            or not _same_provenance(existing.source, candidate.source)
        ):
            raise ConflictError(Messages.KEY_REUSED)
        else:
            ids.append(existing.id)
    return Outcome("saved" if created else "duplicate", tuple(ids), frozenset(created))


def _check_key_free(key: str | None, snapshot: Snapshot) -> None:
    """Refuse a fact key that an active fact already has (a batch never repeats a key).

    Raises:
        ConflictError: naming the fact that has it, its current id and record revision.
    """
    holder = snapshot.by_key(key) if key is not None else None
    if holder is not None:
        revision = snapshot.record_revision(holder)[:16]
        raise ConflictError(Messages.KEY_IN_USE.format(key=key, id=holder.id, revision=revision))


def _same_provenance(a: Mapping[str, JSONValue], b: Mapping[str, JSONValue]) -> bool:
    return all(a.get(key) == b.get(key) for key in ("kind", "sessionId", "messageId", "role"))


def _new_record(
    record_id: str, candidate: Candidate, now: str, hashed: Mapping[str, JSONValue]
) -> Record:
    meta: dict[str, JSONValue] = {
        "id": record_id,
        "rootId": record_id,
        "source": dict(candidate.source),
        "status": "active",
        "createdAt": now,
        "updatedAt": now,
        **hashed,
    }
    record = Record(meta, candidate.content)
    if candidate.key is None and candidate.extra is None:
        return record
    return record.with_fact_fields(candidate.key, candidate.extra)
