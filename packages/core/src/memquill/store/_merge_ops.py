"""The store's sync operations: merge another copy in, and choose a diverged fact's version.

Both are pure operations the locked transaction runs on the current file (any backend), so a
merge into ``records.md`` takes the writer lock, merges whatever the file holds at that moment,
and publishes atomically; a person's choice among diverged versions is checked against the
revision they looked at, like every other write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from memquill.errors import ConflictError, InvalidInputError, Messages, NotFoundError
from memquill.store._codec import HEADER, StoreImage, decode_store, encode_store
from memquill.store._edits import expand_id, expand_revision
from memquill.store._families import RESOLVED_FIELD, Divergence, divergences
from memquill.store._merge import MergeReport, decode_side, merge_records
from memquill.store._record import JSONValue, Record
from memquill.store._results import Snapshot, WriteResult, check_revision
from memquill.store._transaction import Operation, Outcome


@dataclass(frozen=True, slots=True)
class MergeResult:
    """What merging another copy into the store did.

    Attributes:
        write: the store's answer (``saved``: the file changed; ``duplicate``: it already held
            everything the other copy had).
        report: what the merge decided (added, folded, diverged, renamed keys).
    """

    write: WriteResult
    report: MergeReport


def merge_operation(
    theirs: bytes,
    base: bytes,
    expected_revision: str | None,
    reports: list[MergeReport],
    backup: datetime | None = None,
    record_key: bytes | None = None,
) -> Operation:
    """The operation that merges ``theirs`` (with common ancestor ``base``) into the store.

    ``reports`` receives the merge's report when it runs; with ``backup``, the file is backed
    up first when the merge changes it (``memory/.records-backup-<backup>.md``). Text a forget
    erases keeps its fingerprint, keyed with ``record_key``.

    Raises (when built):
        CorruptError: ``theirs`` or ``base`` is not a valid managed records file.
    Raises (when run):
        ConflictError: ``expected_revision`` is given and is not the store revision.
    """
    their_image = decode_side(theirs, Messages.MERGE_THEIRS_CORRUPT)
    base_image = decode_side(base, Messages.MERGE_BASE_CORRUPT)
    # Theirs counts only as a file (an empty side decodes with memquill's header); the
    # transaction ranks it against ours (``merged_header``), as the merge driver does.
    header = their_image.header if theirs else None

    def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        if expected_revision is not None and expected_revision != snapshot.revision:
            raise ConflictError(Messages.STALE)
        merged = merge_records(
            base_image.records, snapshot.records, their_image.records, record_key
        )
        reports.append(merged.report)
        # No records either side and no file to take from the other: do not create one (any
        # other unchanged result is caught by the transaction, which compares the bytes).
        if not merged.records and not snapshot.records and not theirs:
            return Outcome("duplicate")
        decode_store(encode_store(StoreImage(HEADER, merged.records)))  # a guard, never hit
        draft[:] = merged.records
        return Outcome("saved", header=header, backup=backup)

    return operation


def keep_operation(
    record_id: str,
    expected_revision: str,
    *,
    source: dict[str, JSONValue],
    now: str,
    new_id: Callable[[], str],
    hashed: Callable[[str], dict[str, JSONValue]],
    prefixes: bool = False,
) -> Operation:
    """The operation that settles a diverged fact on the version ``record_id`` (with
    ``prefixes``, the id and the revision may be short forms: :mod:`memquill.store._edits`).

    Keeping the active version marks every waiting version ``resolvedBy`` it. Keeping one of
    the other machines' versions writes its text as a new version correcting the active one
    (``source``, at ``now``), and marks every waiting version ``resolvedBy`` the new one.
    ``hashed`` gives the operation-hash fields of a key.

    Raises (when run):
        ConflictError: ``expected_revision`` is neither the store's nor the record's revision.
        NotFoundError: no record has that id. InvalidInputError: it is not part of a diverged
            fact.
    """

    def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        named, expected = record_id, expected_revision
        if prefixes:  # any version may be kept: an unknown prefix is ``not_found``, as a forget's
            named = expand_id(snapshot, named, forgetting=True)
            expected = expand_revision(snapshot, named, expected)
        target = snapshot.find(named)
        check_revision(snapshot, target, expected)
        if target is None:
            raise NotFoundError(Messages.NOT_FOUND)
        found = _divergence_of(snapshot, target.id)
        if found is None:
            raise InvalidInputError(Messages.NOT_DIVERGED)
        active = snapshot.find(found.active_id)
        assert active is not None  # divergences name an active version
        kept = active.id
        if target.id != active.id:
            kept = new_id()
            draft[draft.index(active)] = active.evolve(status="superseded", updatedAt=now)
            material = f"keep:{target.id}:{active.id}:{expected}"
            successor = active.successor(
                target.content, new_id=kept, source=source, stamp=now, hashed=hashed(material)
            )
            draft.append(successor)
        waiting = set(found.other_ids)
        draft[:] = [
            Record({**record.meta, RESOLVED_FIELD: kept}, record.content)
            if record.id in waiting
            else record
            for record in draft
        ]
        return Outcome("saved", (kept,), frozenset({kept}))

    return operation


def _divergence_of(snapshot: Snapshot, record_id: str) -> Divergence | None:
    for found in divergences(snapshot.records):
        if record_id == found.active_id or record_id in found.other_ids:
            return found
    return None
