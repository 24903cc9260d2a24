"""Hand edits of ``records.md``: ``doctor --fix`` repairs one in place, ``memquill import``
brings an edited copy back; both read the edited text the same way.

**Repair** (``doctor --fix``: repair a hand-edited records file when the repair is unambiguous).
People correct memory in an editor. An edit that changes a fact's length (``port 5434`` → ``port
15434``) leaves ``contentLength`` wrong, and an editor may turn every line ending into CRLF;
both make the whole store unreadable. :func:`plan_repair` works out, without writing, what a
repair would change:

- line endings: CRLF turned back into LF when the file's own header has them;
- an edited active fact: its text is kept as a new version with source ``manual`` (its length
  recomputed), and the version it replaces becomes superseded. The text it had before the edit
  is gone from the file already, so the superseded version keeps none.

Anything else is refused, with the reason: a marker line that is not JSON, an edit to a
forgotten or superseded version, an edited text that looks like it holds another record, a
text that is blank, too long or holds a credential, CRLF plus a length that still disagrees
(which characters were the user's?). :func:`apply_repair` then writes a backup of the file as
it was and publishes the repair atomically, under the writer lock, only if the file is still
the one that was planned.

A torn tail (:func:`~memquill.store._diagnose.torn_tail`: the start of an append cut off by a
crash or a power cut, never acknowledged) is repaired first and alone: the file is cut back to
its last complete block, after the same backup.

**Import** (bringing a hand-edited ``records.md`` back: one validated compare-and-swap write).
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

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from memquill.errors import ConflictError, CorruptError, InvalidInputError, MemquillError, Messages
from memquill.foundation.atomic import atomic_write
from memquill.foundation.text import utf16_len, utf16_take
from memquill.jsondoc import parse_json
from memquill.store._codec import (
    HEADERS,
    MAX_STORE_BYTES,
    StoreImage,
    decode_store,
    encode_store,
    iso_timestamp,
    validate_content,
)
from memquill.store._diagnose import (
    MARKER,
    MARKER_END,
    SEPARATOR,
    diagnose,
    next_marker,
    torn_tail,
)
from memquill.store._fileio import read_bounded, write_backup
from memquill.store._lock import WriterLock
from memquill.store._memo import decode_snapshot
from memquill.store._record import JSONValue, Record
from memquill.store._record_key import KeySource, RecordKey, keyed_fields
from memquill.store._results import Snapshot
from memquill.store._secrets import SecretScanner
from memquill.store._tombstones import ledger_of
from memquill.store._transaction import Locations, Operation, Outcome


@dataclass(frozen=True, slots=True)
class RepairPlan:
    """What ``doctor --fix`` would change, or why it will not.

    Attributes:
        changes: one sentence per change, in the order they apply.
        refused: why the file cannot be repaired unambiguously (``None``: it can).
        data: the repaired file (``None`` when refused).
        revision: the store revision of the file it was planned on, so a person who reviewed
            the plan repairs only that file (empty until the store sets it).
    """

    changes: tuple[str, ...] = ()
    refused: str | None = None
    data: bytes | None = None
    revision: str = ""


class RepairRefused(Exception):
    """A repair that would have to guess; ``str()`` says why, naming the record."""


@dataclass(frozen=True, slots=True)
class EditedFile:
    """A hand-edited records file, read as a person meant it.

    Attributes:
        header: its header (LF line endings).
        blocks: each record with its text as found, and whether that text's length disagrees
            with its ``contentLength`` (an edit).
        crlf: its line endings were CRLF and were turned back into LF.
    """

    header: str
    blocks: tuple[tuple[Record, bool], ...]
    crlf: bool


def read_edited(raw: bytes) -> EditedFile:
    """Read ``raw`` the way a person edited it: an edited record's text runs to the next
    marker line (or the end of the file), whatever its ``contentLength`` says.

    Raises:
        RepairRefused: the file cannot be read without guessing (not UTF-8, no header, a marker
            line that is not JSON, edited text holding a marker line, CRLF line endings *and* a
            length that still disagrees…).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RepairRefused("the file holds bytes that are not UTF-8 text") from None
    crlf = any(text.startswith(h.replace("\n", "\r\n")) for h in HEADERS)
    if crlf:
        text = text.replace("\r\n", "\n")
    header = next((h for h in HEADERS if text.startswith(h)), None)
    if header is None:
        raise RepairRefused("it does not start with memquill's records header")
    blocks: list[tuple[Record, bool]] = []
    cursor, index = len(header), 0
    while cursor < len(text):
        record, cursor, edited = _block(text, cursor, index)
        if edited and crlf:
            raise RepairRefused(
                f"record {index + 1}: line endings were changed and its length still "
                "disagrees; which characters were typed by hand cannot be told"
            )
        blocks.append((record, edited))
        index += 1
    return EditedFile(header, tuple(blocks), crlf)


def plan_repair(
    raw: bytes, *, now: datetime, secrets: SecretScanner, record_key: KeySource | None = None
) -> RepairPlan:
    """Plan the repair of ``raw``, the bytes of a records file that does not decode.

    A kept edit's ``operationHash`` is keyed with ``record_key`` (the user's by default), like
    every hash memquill writes.
    """
    torn = torn_tail(raw)
    if torn is not None:
        # Nothing after the last complete block was ever acknowledged: cut it off (the backup
        # apply_repair writes first keeps it).
        sentence = f"{torn.sentence()}: removed, keeping the {torn.records} complete records"
        return RepairPlan((sentence,), None, raw[: torn.keep])
    changes: list[str] = []
    try:
        edited = read_edited(raw)
        if edited.crlf:
            changes.append("line endings: CRLF (\\r\\n) back to LF (\\n), as memquill writes them")
        key = record_key or RecordKey()
        kept: list[Record] = []
        added: list[Record] = []
        for index, (record, was_edited) in enumerate(edited.blocks):
            if not was_edited:
                kept.append(record)
                continue
            old, new = _keep_edit(record, index, now=now, secrets=secrets, key=key)
            kept.append(old)
            added.append(new)
            changes.append(edit_sentence(index, record.id))
        data = encode_store(StoreImage(edited.header, tuple(kept + added))).encode()
        decode_store(data.decode())  # the repair must give a file memquill reads
    except RepairRefused as refusal:
        return RepairPlan(refused=str(refusal))
    except CorruptError:
        found = diagnose(raw)
        reason = f"{found.where()}: {found.reason}" if found else "the file is not readable"
        return RepairPlan(refused=reason)
    if len(data) > MAX_STORE_BYTES:
        return RepairPlan(refused="the repaired file would exceed 2 MiB")
    if not changes:
        return RepairPlan(refused="nothing here is a hand edit memquill can undo")
    return RepairPlan(tuple(changes), None, data)


def edit_sentence(index: int, record_id: str) -> str:
    """What keeping the hand edit of record ``index`` (0-based) does, in one sentence."""
    return (
        f"record {index + 1} (id {record_id[:8]}…): its edited text becomes a new version with "
        "source manual, and the old version is marked superseded"
    )


def _block(text: str, cursor: int, index: int) -> tuple[Record, int, bool]:
    """The record at ``cursor``, where the next one starts, and whether its text was edited."""
    where = f"record {index + 1}"
    if not text.startswith(MARKER, cursor):
        raise RepairRefused(f"{where}: its marker line is missing or changed")
    start = cursor + len(MARKER)
    end = text.find(MARKER_END, start)
    try:
        parsed: object = parse_json(text[start:end]) if end >= 0 else None
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise RepairRefused(f"{where}: its marker line is not a JSON object memquill can read")
    meta = cast(dict[str, JSONValue], parsed)
    length = meta.pop("contentLength", None)
    body = end + len(MARKER_END)
    points = utf16_take(text, body, length) if type(length) is int and length >= 0 else None
    if points is not None and text[body + points : body + points + 2] == SEPARATOR:
        return Record(meta, text[body : body + points]), body + points + 2, False
    following = next_marker(text, body)
    if following >= 0:
        content, after = text[body : following - len(SEPARATOR)], following
    else:  # the last record; an editor may have dropped the final blank line
        tail = text[body:]
        content, after = tail.removesuffix("\n").removesuffix("\n"), len(text)
    if "\n" + MARKER in content or content.startswith(MARKER):
        raise RepairRefused(f"{where}: its edited text holds a record marker line")
    if type(length) is int and utf16_len(content) == length:
        raise RepairRefused(f"{where}: it is not followed by a blank line")
    return Record(meta, content), after, True


def _keep_edit(
    record: Record, index: int, *, now: datetime, secrets: SecretScanner, key: KeySource
) -> tuple[Record, Record]:
    """The superseded old version and the new manual version holding the edited text."""
    where = f"record {index + 1}"
    if record.meta.get("status") != "active":
        raise RepairRefused(
            f"{where}: only a remembered fact's current version can be kept; this one is "
            f"{record.meta.get('status')!r}"
        )
    try:
        secrets.check(validate_content(record.content))
    except MemquillError as error:
        raise RepairRefused(f"{where}: its edited text cannot be kept: {error.message}") from None
    stamp = iso_timestamp(now)
    version = hand_edit(record, record.content, stamp, key.load())
    return record.evolve("", status="superseded", updatedAt=stamp), version


def hand_edit(record: Record, content: str, stamp: str, record_key: bytes) -> Record:
    """The new version that keeps a person's edit of ``record`` (``content``), for ``doctor
    --fix`` and ``import`` alike: a ``manual`` correction made at ``stamp``, whose operation
    hash is keyed from the edited version's id and the new text."""
    return record.successor(
        content,
        new_id=str(uuid.uuid4()),
        source={"kind": "manual", "capturedAt": stamp},
        stamp=stamp,
        hashed=keyed_fields(record_key, f"hand-edit:{record.meta.get('id')}:{content}"),
    )


def apply_repair(
    locations: Locations, raw: bytes, plan: RepairPlan, *, now: datetime, lock_timeout: float
) -> str:
    """Back up ``raw`` and publish ``plan.data``; the backup's workspace-relative path.

    Raises:
        ConflictError: the file changed since it was planned. BusyError: the lock was held.
        OSError: the backup or the new file could not be written (nothing was replaced).
    """
    assert plan.data is not None, "apply_repair needs a plan that was not refused"
    with WriterLock(locations.lock, lock_timeout):
        if read_bounded(locations.file, max(len(raw), MAX_STORE_BYTES)) != raw:
            raise ConflictError(Messages.CHANGED_WHILE_SAVING)
        backup = write_backup(locations.directory, raw, now)
        atomic_write(locations.file, plan.data)
    return backup.relative_to(locations.root).as_posix()


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
