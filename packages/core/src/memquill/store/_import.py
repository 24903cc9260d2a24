"""Bringing a hand-edited ``records.md`` back: one validated compare-and-swap write.

``memquill export`` gives a person the exact bytes; ``memquill import --revision R FILE`` puts
an edited copy back. The copy may only do what a person fixing text should:

- edit the text of a current (active) fact: the edit becomes a new version with source
  ``manual`` and the old version is superseded, keeping its text as a correction does
  (``compact`` drops it). An edit that changed the text's length needs no fixing by hand: the
  copy is read the way ``doctor --fix`` reads a hand-edited file (the text runs to the next
  marker line), and what cannot be read without guessing is refused as ``corrupt``, naming the
  record and the reason;
- add new records.

Every record of the store keeps its metadata, so a forgotten fact stays forgotten (its tombstone
and empty text), a superseded version stays superseded, a key stays where it is, and no
idempotency key or source message is unblocked. Changed and new text passes the content rules
(no control characters, see :mod:`memquill.foundation.controls`) and the secret scanner like any
write; unchanged text is kept as it is, so a record saved before a rule existed does not block an
import. A write that changes anything first backs up the records it replaces.
:func:`plan_import` works out the same change without writing (``import --dry-run``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memquill.errors import ConflictError, CorruptError, InvalidInputError, Messages
from memquill.store._codec import (
    StoreImage,
    decode_store,
    encode_store,
    iso_timestamp,
    validate_content,
)
from memquill.store._diagnose import diagnose
from memquill.store._memo import decode_snapshot
from memquill.store._record import Record
from memquill.store._repair import RepairRefused, edit_sentence, hand_edit, read_edited
from memquill.store._results import Snapshot
from memquill.store._secrets import SecretScanner
from memquill.store._tombstones import ledger_of
from memquill.store._transaction import Operation, Outcome


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """What an import of a copy would do now (nothing is written to make it).

    Attributes:
        changes: one sentence per change, in file order (empty: the copy changes nothing).
        revision: the store revision the plan was made at (give it to the import).
        records: the records the import would write.
    """

    changes: tuple[str, ...]
    revision: str
    records: tuple[Record, ...]


def read_copy(data: bytes) -> tuple[Record, ...]:
    """The records of a copy to import, each with its text as the person left it.

    Raises:
        CorruptError: (``imported`` set) the copy cannot be read without guessing; the message
            names the record and why.
    """
    try:
        return tuple(decode_snapshot(b"", data).records)
    except CorruptError:
        pass
    try:
        edited = read_edited(data)
    except RepairRefused as refusal:
        raise _unreadable(str(refusal)) from None
    records = tuple(record for record, _ in edited.blocks)
    text = encode_store(StoreImage(edited.header, records))
    try:
        decode_store(text)  # every other rule of the format still holds
    except CorruptError:
        found = diagnose(text.encode())
        reason = f"{found.where()}: {found.reason}" if found else "it is not a records file"
        raise _unreadable(reason) from None
    return records


def _unreadable(reason: str) -> CorruptError:
    return CorruptError(Messages.IMPORT_UNREADABLE.format(reason=reason), None, True)


def import_operation(
    data: bytes,
    expected_revision: str,
    secrets: SecretScanner,
    *,
    now: Callable[[], datetime],
    record_key: bytes,
) -> Operation:
    """The operation that puts the copy ``data`` in place of the store's records.

    Raises (when built):
        CorruptError: the copy cannot be read without guessing (see :func:`read_copy`).
    Raises (when run):
        ConflictError: ``expected_revision`` is not the store revision.
        InvalidInputError: the copy drops a record, changes a record's metadata or the text
            of a version that is not current, a new record reuses a key or a tombstoned
            source message, or changed or new text breaks the content rules (a control
            character, only invisible characters).
        SecretError: changed or new text holds credential material.
    """
    copy = read_copy(data)

    def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        if expected_revision != snapshot.revision:
            raise ConflictError(Messages.STALE)
        moment = now()
        records, changes = _merged(snapshot, copy, secrets, iso_timestamp(moment), record_key)
        if records == draft:
            return Outcome("duplicate")
        draft[:] = records
        return Outcome("saved", backup=moment if changes else None)

    return operation


def plan_import(
    data: bytes,
    snapshot: Snapshot,
    expected_revision: str | None,
    secrets: SecretScanner,
    *,
    now: Callable[[], datetime],
    record_key: bytes,
) -> ImportPlan:
    """What importing ``data`` into the store at ``snapshot`` would change.

    Raises:
        the errors :func:`import_operation` raises (``ConflictError`` only when
        ``expected_revision`` is given and is not ``snapshot``'s).
    """
    copy = read_copy(data)
    if expected_revision is not None and expected_revision != snapshot.revision:
        raise ConflictError(Messages.STALE)
    records, changes = _merged(snapshot, copy, secrets, iso_timestamp(now()), record_key)
    if records == list(snapshot.records):
        changes = []
    return ImportPlan(tuple(changes), snapshot.revision, tuple(records))


def _merged(
    snapshot: Snapshot,
    copy: Sequence[Record],
    secrets: SecretScanner,
    stamp: str,
    record_key: bytes,
) -> tuple[list[Record], list[str]]:
    """The records the import writes, and one sentence per change."""
    current = {record.id: record for record in snapshot.records}
    copied = {record.id for record in copy}
    if any(record_id not in copied for record_id in current):
        raise InvalidInputError(Messages.IMPORT_CHANGES_HISTORY)
    hashes = {record.operation_hash for record in snapshot.records}
    tombstones = {r.source_key for r in snapshot.records if r.status != "active"} - {None}
    folded = ledger_of(snapshot.records)  # compact tombstones block as the full ones do
    kept: list[Record] = []
    added: list[Record] = []
    changes: list[str] = []
    for index, record in enumerate(copy):
        stored = current.get(record.id)
        if stored is None:  # a record the person added
            if (
                record.operation_hash in hashes
                or record.source_key in tombstones
                or folded.blocks_operation((record.operation_hash,))
                or folded.blocks_source(record.source_key)
            ):
                raise InvalidInputError(Messages.IMPORT_CHANGES_HISTORY)
            if record.content:
                secrets.check(validate_content(record.content))
            kept.append(record)
            changes.append(f"record {index + 1} (id {record.id[:8]}…): added as it is")
            continue
        if dict(record.meta) != dict(stored.meta):
            raise InvalidInputError(Messages.IMPORT_CHANGES_HISTORY)
        if record.content == stored.content:
            kept.append(stored)
            continue
        if stored.status != "active":
            raise InvalidInputError(Messages.IMPORT_CHANGES_HISTORY)
        secrets.check(validate_content(record.content))
        kept.append(stored.evolve(status="superseded", updatedAt=stamp))
        added.append(hand_edit(stored, record.content, stamp, record_key))
        changes.append(edit_sentence(index, stored.id))
    return kept + added, changes
