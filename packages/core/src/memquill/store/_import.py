"""Bringing a hand-edited ``records.md`` back: one validated compare-and-swap write.

``memquill export`` gives a person the exact bytes; ``memquill import --revision R FILE`` puts
an edited copy back. The copy must decode strictly, and it may only do what a person fixing
text should: edit the text of remembered facts and add new records. Every record of the store
keeps its metadata, so a forgotten fact stays forgotten (its tombstone and empty text), a
superseded version stays superseded, and no idempotency key or source message is unblocked.
Changed and new text passes the content rules (no control characters, see
:mod:`memquill.controls`) and the secret scanner like any write; unchanged text is kept as it
is, so a record saved before a rule existed does not block an import.
"""

from __future__ import annotations

from collections.abc import Sequence

from memquill.errors import ConflictError, InvalidInputError, Messages
from memquill.store._codec import Record, validate_content
from memquill.store._memo import decode_snapshot
from memquill.store._results import Snapshot
from memquill.store._secrets import SecretScanner
from memquill.store._transaction import Operation, Outcome

__all__ = ["import_operation"]


def import_operation(data: bytes, expected_revision: str, secrets: SecretScanner) -> Operation:
    """The operation that replaces the store's records with those of ``data``.

    Raises (when built):
        CorruptError: ``data`` is not a valid managed records file.
    Raises (when run):
        ConflictError: ``expected_revision`` is not the store revision.
        InvalidInputError: the copy drops a record or changes a record's metadata, a new
            record reuses a key or a tombstoned source message, or changed or new text breaks
            the content rules (a control character, only invisible characters).
        SecretError: changed or new text holds credential material.
    """
    imported = decode_snapshot(b"", data).records

    def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        if expected_revision != snapshot.revision:
            raise ConflictError(Messages.STALE)
        _check_history(snapshot.records, imported, secrets)
        if list(imported) == draft:
            return Outcome("duplicate")
        draft[:] = imported
        return Outcome("saved")

    return operation


def _check_history(
    current: Sequence[Record], imported: Sequence[Record], secrets: SecretScanner
) -> None:
    by_id = {record.id: record for record in imported}
    for record in current:
        edited = by_id.pop(record.id, None)
        if edited is None or dict(edited.meta) != dict(record.meta):
            raise InvalidInputError(Messages.IMPORT_CHANGES_HISTORY)
        if edited.content and edited.content != record.content:
            secrets.check(validate_content(edited.content))
    keys = {record.operation_hash for record in current}
    tombstones = {record.source_key for record in current if record.status != "active"}
    for record in by_id.values():  # new records
        if record.operation_hash in keys or (
            record.source_key is not None and record.source_key in tombstones
        ):
            raise InvalidInputError(Messages.IMPORT_CHANGES_HISTORY)
        if record.content:
            secrets.check(validate_content(record.content))
