"""Saving candidates into a draft (pure operations): new facts, and keyed facts saved or
corrected many at a time.

**Saving** (:func:`append_candidates`): idempotency, tombstones and key reuse. A candidate whose
idempotency key already wrote the same fact is a ``duplicate``; a key, or a source message,
whose fact was corrected or forgotten blocks the whole batch (``blocked``): a forgotten fact
never comes back. An idempotency key reused for other content, provenance or fact key is a
conflict, and so is a fact key that already names an active fact (the error names that fact's
current id and record revision, so the caller can correct it instead). When asked
(``skip_known``: extraction asks), a candidate whose content equals an active record's, case and
whitespace aside (:func:`same_words`), is a ``duplicate`` of that record too: nothing is written
for it, so the same fact learnt again from a later batch is kept once. Both hashes of an
idempotency key count as the same operation: the keyed one memquill writes and the unkeyed one
the original system wrote. A candidate from a tool or a conversation whose text matches a
forgotten fact's fingerprint (:mod:`memquill.store._tombstones`) is ``blocked`` on its own
(the others of its batch are saved), naming when that fact was forgotten; a person's
(``manual``) is saved, and says so.

**Saving or correcting many keyed facts in one write** (:func:`upserting`). Each candidate names
its fact by key, and what it becomes is decided under the writer lock, on the records the
transaction read: no active fact has the key → a new fact
(:func:`append_candidates`, above); the active fact
has other text or other extra JSON (compared as JSON text: ``1`` and ``1.0`` differ) → its
correction (:func:`~memquill.store._edits.correction`: one new version, history kept); the same
text and extra JSON → nothing. New versions follow the candidates' order, all with one time
stamp: the file reads as if each had been written on its own, in that order.

One candidate a forgotten fact's words block (from a tool or a conversation) blocks the whole
write: nothing is written, every target is ``None``, and ``forgotten_at`` names when, for each
candidate that was blocked. A write of many facts is all or none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from memquill.errors import ConflictError, Messages
from memquill.store._edits import correction
from memquill.store._record import FactKey, JSONValue, Record, source_key
from memquill.store._record_key import distinct_keys, hash_fields, written_and_recognised
from memquill.store._results import UNCHANGED, Candidate, Snapshot
from memquill.store._tombstones import BLOCKING_KINDS, same_words, text_fingerprint
from memquill.store._transaction import Operation, Outcome, Reads


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
    added: Appended | None = None,
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
        added: the index of the versions appended to ``draft`` since ``snapshot``, when the
            caller keeps one across several calls on the same draft (default: a new one).

    Raises:
        ConflictError: an idempotency key was reused for other data, or a fact key is taken.
    """
    # The draft is the snapshot's records (plus what wrappers appended, none of them
    # tombstones): the snapshot's indexes answer for it, so a save costs the same at any size.
    folded = snapshot.ledger()  # compact tombstones block as the full ones do
    keys = distinct_keys(key, other_keys)  # ``key`` first: ``signed`` is its hash
    signed: list[str] = []  # the hash each candidate's record carries, if it is written
    prepared: list[tuple[Candidate, frozenset[str]]] = []
    for candidate in batch:
        own, hashes = written_and_recognised(keys, candidate.idempotency_key)
        signed.append(own)
        prepared.append((candidate, hashes))
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
    appended = added if added is not None else Appended(snapshot, draft)
    known = (
        {same_words(r.content): r.id for r in draft if r.status == "active"} if skip_known else {}
    )
    for (candidate, hashes), own, when in zip(prepared, signed, forgotten, strict=True):
        existing = _written_by(hashes, snapshot, appended)
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
            draft.append(_new_record(record_id, candidate, now, hash_fields(key, own)))
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
    return Outcome(
        status,
        tuple(ids),
        frozenset(created),
        forgotten_at=tuple(forgotten),
        reads=None if skip_known else _reads(prepared),  # same words: every active fact
    )


def _reads(prepared: Sequence[tuple[Candidate, frozenset[str]]]) -> Reads:
    """What saving ``prepared`` looked at: its source messages, operations and keys."""
    return Reads(
        keys=frozenset(c.key for c, _ in prepared if c.key is not None),
        hashes=frozenset(h for _, hashes in prepared for h in hashes),
        sources=frozenset(s for c, _ in prepared if (s := source_key(c.source)) is not None),
    )


def _written_by(hashes: Iterable[str], snapshot: Snapshot, appended: Appended) -> Record | None:
    """The first version, in file order, written by an operation with one of ``hashes``:
    from the snapshot's index, else among the versions this batch appended to the draft."""
    hashes = tuple(hashes)
    found = [r for h in hashes if (r := snapshot.by_operation(h)) is not None]
    if found:
        return min(found, key=lambda r: snapshot.position(r.id) or 0)
    return appended.first(hashes)


class Appended:
    """The versions appended to a draft after its snapshot's records, by operation hash.

    A batch looks up each candidate's operation among the versions it appended before it:
    scanning them for each candidate made a batch of n new facts cost n²/2 hash reads (25 s
    for 10,000, with the write's transaction open all along). The index reads each appended
    version once, catching up with the draft at each lookup (whatever appended it), and keeps
    positions, not records, so a version whose status changes in place is read as it now is.

    Args:
        snapshot: the records the draft was copied from.
        draft: the draft, appended to after them.
    """

    def __init__(self, snapshot: Snapshot, draft: list[Record]) -> None:
        self._draft = draft
        self._seen = len(snapshot.records)
        self._positions: dict[str, int] = {}

    def first(self, hashes: Iterable[str]) -> Record | None:
        """The first appended version, in file order, written by one of ``hashes``."""
        draft = self._draft
        for position in range(self._seen, len(draft)):
            self._positions.setdefault(draft[position].operation_hash, position)
        self._seen = len(draft)
        found = [p for h in hashes if (p := self._positions.get(h)) is not None]
        return draft[min(found)] if found else None


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
        added = Appended(snapshot, draft)  # one index of this write's versions for all
        # Its own corrections are checked against the revision it read: no caller's revision
        # to be stale, so only the facts, keys, operations and sources it looked at count.
        reads = Reads(keys=frozenset(c.key for c in batch if c.key is not None))

        def append_waiting() -> bool:
            if not waiting:
                return True
            outcome = append_candidates(
                waiting, snapshot, draft, record_key, stamp, new_id, known_keys, added=added
            )
            if outcome.status == "blocked" or None in outcome.ids:
                return False
            nonlocal reads
            reads = reads | (outcome.reads or Reads())
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
            reads = reads | Reads(roots=frozenset({current.root_id}))
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
            reads=reads,
        )

    return operation


def _blocked(
    batch: Sequence[Candidate],
    snapshot: Snapshot,
    record_key: bytes,
    known_keys: Sequence[bytes],
) -> Outcome:
    """Nothing written: every target ``None``, each blocked one's ``forgotten_at`` set."""
    keys = distinct_keys(record_key, known_keys)
    forgotten = tuple(
        snapshot.forgotten_at(text_fingerprint(k, candidate.content) for k in keys)
        if candidate.source.get("kind") in BLOCKING_KINDS
        else None
        for candidate in batch
    )
    return Outcome("blocked", tuple(None for _ in batch), forgotten_at=forgotten)
