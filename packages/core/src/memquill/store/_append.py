"""Saving candidates into a draft: idempotency, tombstones and key reuse (a pure operation).

A candidate whose idempotency key already wrote the same fact is a ``duplicate``; a key, or a
source message, whose fact was corrected or forgotten blocks the whole batch (``blocked``): a
forgotten fact never comes back. An idempotency key reused for other content, provenance or
fact key is a conflict, and so is a fact key that already names an active fact (the error names
that fact's current id and record revision, so the caller can correct it instead).
When asked (``skip_known``: extraction asks), a candidate whose content equals an active
record's, case and whitespace aside (:func:`same_words`), is a ``duplicate`` of that record
too: nothing is written for it, so the same fact learnt again from a later batch is kept once.
Both hashes of an idempotency key count as the same operation: the keyed one memquill writes
and the unkeyed one the original system wrote. A candidate from a tool or a conversation whose
text matches a forgotten fact's fingerprint (:mod:`memquill.store._fingerprints`) is
``blocked`` on its own (the others of its batch are saved), naming when that fact was
forgotten; a person's (``manual``) is saved, and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from memquill.errors import ConflictError, Messages
from memquill.store._fingerprints import BLOCKING_KINDS, same_words, text_fingerprint
from memquill.store._record import JSONValue, Record, source_key
from memquill.store._record_key import keyed_fields, recognised_hashes
from memquill.store._results import Candidate, Snapshot
from memquill.store._transaction import Outcome


def append_candidates(
    batch: Iterable[Candidate],
    snapshot: Snapshot,
    draft: list[Record],
    key: bytes,
    now: str,
    new_id: Callable[[], str],
    other_keys: Iterable[bytes] = (),
    *,
    skip_known: bool = False,
) -> Outcome:
    """Append ``batch`` to ``draft`` (in place) and say what happened to each candidate.

    Args:
        batch: the candidates, already validated.
        snapshot: the store the draft was copied from (whose active facts hold their keys).
        draft: a copy of the store's records; new versions are appended to it.
        key: the store's record key (new records are hashed with it).
        now: the timestamp new records carry.
        new_id: draws a new record id.
        other_keys: other keys whose hashes count as the same operation (``_record_key``).
        skip_known: a candidate whose content has the same words as an active record's (or an
            earlier candidate's) is a duplicate of it.

    Raises:
        ConflictError: an idempotency key was reused for other data, or a fact key is taken.
    """
    # The draft is the snapshot's records (plus what wrappers appended, none of them
    # tombstones): the snapshot's indexes answer for it, so a save costs the same at any size.
    folded = snapshot.ledger()  # compact tombstones block as the full ones do
    keys = (key, *other_keys)
    prepared = [
        (candidate, recognised_hashes(keys, candidate.idempotency_key)) for candidate in batch
    ]
    if any(
        snapshot.tombstoned(source_key(candidate.source))
        or folded.blocks_source(source_key(candidate.source))
        for candidate, _ in prepared
    ):
        return Outcome("blocked", tuple(None for _ in prepared))
    forgotten = [
        snapshot.forgotten_at(text_fingerprint(k, candidate.content) for k in keys)
        for candidate, _ in prepared
    ]
    ids: list[str | None] = []
    created: set[str] = set()
    known = (
        {same_words(r.content): r.id for r in draft if r.status == "active"} if skip_known else {}
    )
    for (candidate, hashes), when in zip(prepared, forgotten, strict=True):
        existing = _written_by(hashes, snapshot, draft)
        if existing is None and folded.blocks_operation(hashes):
            return Outcome("blocked", tuple(None for _ in prepared))  # a folded operation
        if existing is None and when is not None and candidate.source.get("kind") in BLOCKING_KINDS:
            ids.append(None)  # forgotten words from a model or a conversation: not again
            continue
        if existing is None:
            words = same_words(candidate.content) if skip_known else ""
            if words in known:
                ids.append(known[words])
                continue
            snapshot.check_key_free(candidate.key)
            record_id = new_id()
            fields = keyed_fields(key, candidate.idempotency_key)
            draft.append(_new_record(record_id, candidate, now, fields))
            ids.append(record_id)
            created.add(record_id)
            if skip_known:
                known[words] = record_id
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
    if not created and ids and all(record_id is None for record_id in ids):
        return Outcome("blocked", tuple(ids), forgotten_at=tuple(forgotten))
    status = "saved" if created else "duplicate"
    return Outcome(status, tuple(ids), frozenset(created), forgotten_at=tuple(forgotten))


def _written_by(hashes: Iterable[str], snapshot: Snapshot, draft: list[Record]) -> Record | None:
    """The first version, in file order, written by an operation with one of ``hashes``:
    from the snapshot's index, else among the versions this batch appended to ``draft``."""
    hashes = tuple(hashes)
    found = [r for h in hashes if (r := snapshot.by_operation(h)) is not None]
    if found:
        return min(found, key=lambda r: snapshot.position(r.id) or 0)
    added = draft[len(snapshot.records) :]
    return next((r for r in added if r.operation_hash in hashes), None)


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
