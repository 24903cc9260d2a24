"""``RecordStore``: the only code that writes ``memory/records.md``.

Every mutation runs one transaction: check the paths, take the writer lock, read and decode the
file, check the caller's revision, apply the change to a copy, encode it, write a temp file and
fsync it, check that nobody changed the file meanwhile, rename it over the old one and fsync the
directory. A process killed at any point leaves either the old file or the new one.

Each write imports its own modules when it first runs, so a process that only reads (a
``memquill search``) never loads the write side.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from memquill.errors import ConflictError, InvalidInputError, Messages
from memquill.foundation.text import LONE_SURROGATE, utf16_len
from memquill.store._codec import iso_timestamp, validate_content, validate_source
from memquill.store._fact_keys import validate_key
from memquill.store._record import JSONValue, Record
from memquill.store._results import Candidate, Snapshot, WriteResult
from memquill.store._store_reads import StoreReader
from memquill.store._store_sync import SyncOperations
from memquill.store._targets import UNCHANGED, Target, Unchanged
from memquill.store._transaction import Operation, Outcome

if TYPE_CHECKING:
    from memquill.store._doctor import DoctorReport
    from memquill.store._import import ImportPlan

MAX_BATCH: Final = 40
MAX_KEY_UNITS: Final = 1000
_MANUAL: Final[Mapping[str, JSONValue]] = {"kind": "manual"}


class RecordStore(StoreReader, SyncOperations):
    """The records store of one workspace: :class:`StoreReader`'s reads, every write, and
    :class:`SyncOperations`' merges (``docs/sync.md``).

    Args:
        workspace: absolute path of the workspace folder.
        lock_timeout: seconds a writer waits for the lock before failing ``busy``.
        now: the clock (UTC); injectable for tests.
        secrets: the credential scanner every write uses.
        location: where the records live: ``None`` or ``"file"`` for the workspace's
            ``memory/records.md``, or a ``postgresql://`` URL (``docs/multi-host.md``). Read
            as given: the ``MEMQUILL_STORE`` variable is the sessions' business.
        record_key: where operation hashes are keyed (default: the backend's).
        capacity: the largest records file in bytes, a whole number of MiB from 1 to 64
            (default: ``store.capacityMiB`` of the workspace's ``.assistant/config.json``,
            else 2 MiB; :mod:`memquill.store._capacity`).
    """

    # -- writes ----------------------------------------------------------------------------

    def check(
        self,
        content: str,
        *,
        key: str | None = None,
        extra: Mapping[str, JSONValue] | None = None,
    ) -> None:
        """Check what a write would check of one fact, touching nothing (no file, folder or
        lock): ``content`` (1–16000 UTF-16 units, no control characters, no credentials),
        ``key`` and ``extra`` (JSON, at most 16000 units, no credentials). A caller that must
        make something first (a namespace's folder) checks here before it does.

        Raises:
            InvalidInputError, SecretError: what :meth:`save` and :meth:`correct` would raise
                for the same fact, with the same message.
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._edits import check_extra

        self._check_content(content)
        if key is not None:
            validate_key(key)
        check_extra(extra, self.secrets)

    def save(
        self,
        candidates: Sequence[Candidate],
        expected_revision: str | None = None,
        *,
        skip_known: bool = False,
    ) -> WriteResult:
        """Append 1–40 new facts, idempotently.

        A candidate whose idempotency key already wrote the same fact is skipped, and with
        ``skip_known`` so is one whose content equals an active record's (case and whitespace
        aside); when every candidate is skipped the result is ``duplicate``. A key or a source
        message that was corrected or forgotten blocks the whole batch (``blocked``): forgotten
        facts never come back.

        Raises:
            InvalidInputError, SecretError: before anything is touched.
            ConflictError: ``expected_revision`` is stale, an idempotency key was reused for
                other data, or a fact key is taken (the message names that fact's id and
                record revision).
            CapacityError, BusyError, CorruptError, UnsafePathError.
            StorageError: also when the record key cannot be used (see ``_record_key``).
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._append import append_candidates
        from memquill.store._edits import check_extra

        batch = list(candidates)
        if not 1 <= len(batch) <= MAX_BATCH:
            raise InvalidInputError(Messages.BATCH_SIZE)
        for index, candidate in enumerate(batch):
            self._check_content(candidate.content)
            validate_source(candidate.source)
            key = candidate.idempotency_key
            if not key or utf16_len(key) > MAX_KEY_UNITS or LONE_SURROGATE.search(key):
                raise InvalidInputError(Messages.KEY_REQUIRED)
            if candidate.key is not None:
                validate_key(candidate.key)
                if any(other.key == candidate.key for other in batch[:index]):
                    raise InvalidInputError(Messages.BATCH_KEYS)
            if candidate.extra is not None:
                batch[index] = replace(candidate, extra=check_extra(candidate.extra, self.secrets))

        key = self._record_key.load()
        known = self._record_key.known()

        def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
            if expected_revision is not None and expected_revision != snapshot.revision:
                raise ConflictError(Messages.STALE)
            stamp = iso_timestamp(self._now())
            return append_candidates(
                batch,
                snapshot,
                draft,
                key,
                stamp,
                lambda: str(uuid.uuid4()),
                known,
                skip_known=skip_known,
            )

        return self._backend.transact(self._roomy(operation), self._lock_timeout)

    def correct(
        self,
        target: Target,
        content: str,
        expected_revision: str,
        source: Mapping[str, JSONValue] = _MANUAL,
        *,
        key: str | Unchanged | None = UNCHANGED,
        extra: Mapping[str, JSONValue] | Unchanged | None = UNCHANGED,
    ) -> WriteResult:
        """Replace a fact's current version with a new one; the old one is superseded.

        ``target`` is a record id or a :class:`FactKey`, resolved under the lock: an id of a
        corrected version stands for the current version when ``expected_revision`` is current
        (``_edits``). ``expected_revision`` may be the store revision or the record's own
        revision. The new version keeps the fact's key and extra metadata unless ``key``
        (a new key renames the fact; ``None`` removes it) or ``extra`` say otherwise.

        Raises:
            ConflictError: the revision is stale, or the new key names another active fact.
            NotFoundError: no active fact is named (``current_id``/``current_revision`` are set
                when the id names a corrected version).
            InvalidInputError, SecretError, CapacityError, BusyError, CorruptError,
            UnsafePathError, StorageError.
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._edits import check_extra, correction

        self._check_content(content)
        validate_source(source)
        if key is not UNCHANGED and key is not None:
            validate_key(key)
        if extra is not UNCHANGED:
            extra = check_extra(extra, self.secrets)
        operation = correction(
            target,
            content,
            expected_revision,
            source,
            key=key,
            extra=extra,
            record_key=self._record_key.load(),
            now=self._stamp,
            new_id=lambda: str(uuid.uuid4()),
            known_keys=self._record_key.known(),
        )
        return self._backend.transact(self._roomy(operation), self._lock_timeout)

    def upsert(self, candidates: Sequence[Candidate]) -> WriteResult:
        """Save or correct several keyed facts in one write, all or none (a key-value store's
        puts in bulk).

        Each candidate names its fact by key, decided under the lock (``_upsert``): no active
        fact has the key → saved as a new fact (as :meth:`save`); another text or other extra
        JSON → that fact corrected (as :meth:`correct`: one new version, history kept, the
        key unchanged, the extra replaced); the same text and extra JSON → nothing
        (``duplicate``). No revision is given: the write applies to the store as the lock
        finds it. New versions follow the order given; ``targets`` in the result too. When a
        forgotten fact's words block any candidate (from a tool or a conversation), nothing
        is written: ``blocked``, every target ``None``, ``forgotten_at`` on the blocked ones.

        Raises:
            InvalidInputError: no candidates, one without a key, two with the same key, or
                one :meth:`save` would refuse; SecretError; both before anything is touched.
            ConflictError: an idempotency key was reused for other data.
            CapacityError, BusyError, CorruptError, UnsafePathError, StorageError.
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._edits import check_extra
        from memquill.store._upsert import upserting

        batch = list(candidates)
        if not batch:
            raise InvalidInputError(Messages.NO_FACTS)
        keys: set[str] = set()
        for index, candidate in enumerate(batch):
            self._check_content(candidate.content)
            validate_source(candidate.source)
            key = candidate.idempotency_key
            if not key or utf16_len(key) > MAX_KEY_UNITS or LONE_SURROGATE.search(key):
                raise InvalidInputError(Messages.KEY_REQUIRED)
            if candidate.key is None:
                raise InvalidInputError(Messages.KEY_NEEDED)
            validate_key(candidate.key)
            if candidate.key in keys:
                raise InvalidInputError(Messages.BATCH_KEYS)
            keys.add(candidate.key)
            if candidate.extra is not None:
                batch[index] = replace(candidate, extra=check_extra(candidate.extra, self.secrets))
        operation = upserting(
            batch,
            record_key=self._record_key.load(),
            known_keys=self._record_key.known(),
            now=self._stamp,
            new_id=lambda: str(uuid.uuid4()),
        )
        return self._backend.transact(self._roomy(operation), self._lock_timeout)

    def rename_many(
        self,
        moves: Sequence[tuple[Target, str, str]],
        source: Mapping[str, JSONValue] = _MANUAL,
    ) -> WriteResult:
        """Give several facts new keys in one write, all or none (a folder of keys moved).

        Each move is ``(target, new key, expected revision)``; the target is resolved and the
        revision checked under the lock as for :meth:`correct`, and the fact gets a new version
        with the same text under the new key (``source`` says who renamed it). A new key may be
        one that another fact of the batch gives up, but no other active fact's. ``targets`` in
        the result follow the order given.

        Raises:
            InvalidInputError: no moves, a key that breaks the rules, the same fact or the same
                new key twice.
            ConflictError: a stale revision, or a new key that names another active fact.
            NotFoundError, CapacityError, BusyError, CorruptError, UnsafePathError,
            StorageError: as :meth:`correct`.
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._edits import renaming

        chosen = list(moves)
        if not chosen:
            raise InvalidInputError(Messages.NO_MOVES)
        validate_source(source)
        for _, new_key, _ in chosen:
            validate_key(new_key)
        operation = renaming(
            chosen,
            source,
            record_key=self._record_key.load(),
            now=self._stamp,
            new_id=lambda: str(uuid.uuid4()),
        )
        return self._backend.transact(self._roomy(operation), self._lock_timeout)

    def revoke(self, target: Target, expected_revision: str) -> WriteResult:
        """Forget a fact and every earlier version of it; its metadata stays as a tombstone
        (without its text, key or extra metadata).

        ``target`` and ``expected_revision`` are resolved as for :meth:`correct`. Forgetting a
        fact that is forgotten already is ``duplicate``, whatever the revision.

        Raises:
            ConflictError: the revision is stale. NotFoundError: nothing has that id or key.
            CapacityError, BusyError, CorruptError, UnsafePathError, StorageError.
        """
        return self.revoke_many([(target, expected_revision)])

    def revoke_many(self, targets: Sequence[tuple[Target, str]]) -> WriteResult:
        """Forget several facts in one write, all or none (a folder of keys, say).

        Each target comes with the revision it was read at (the store revision, or that
        record's revision), checked under the lock; one stale or unknown target refuses the
        whole write. ``targets`` in the result follow the order given.

        Raises:
            InvalidInputError: no targets. Otherwise as :meth:`revoke`.
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._edits import revocation

        chosen = list(targets)
        if not chosen:
            raise InvalidInputError(Messages.NO_TARGETS)
        operation = revocation(chosen, self._stamp, self._record_key.load())
        return self._backend.transact(operation, self._lock_timeout)

    def compact(self, expected_revision: str) -> WriteResult:
        """Drop the content of superseded versions, then fold forgotten facts and history
        beyond the retention depth into compact tombstones (:mod:`memquill.store._tombstones`).

        It frees space while forgotten and corrected facts still block their idempotency keys,
        source messages and words; each emptied version keeps the fingerprint of the text it
        held (``textHash``), so forgetting its fact later still blocks those words.

        Raises:
            ConflictError: ``expected_revision`` is not the store revision.
            BusyError, CorruptError, UnsafePathError, StorageError.
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._room import compact_draft

        record_key = self._record_key.load()

        def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
            if expected_revision != snapshot.revision:
                raise ConflictError(Messages.STALE)
            changed = compact_draft(draft, record_key)
            return Outcome("saved" if changed else "duplicate")

        return self._backend.transact(operation, self._lock_timeout)

    def replace(self, data: bytes, expected_revision: str) -> WriteResult:
        """Put an edited copy of ``records.md`` back (``memquill import``): one validated
        compare-and-swap write, after a backup of the records it replaces.

        The copy may edit the text of current facts (each edit becomes a new version with
        source ``manual``, as ``doctor --fix`` keeps a hand edit; a ``contentLength`` the
        edit made wrong is no obstacle) and add records; every existing record keeps its
        metadata (tombstones, versions, keys). ``duplicate`` when it changes nothing.

        Raises:
            CorruptError: ``data`` cannot be read without guessing (``imported`` is set).
            ConflictError: ``expected_revision`` is not the store revision.
            InvalidInputError: the copy drops a record or changes its metadata.
            SecretError, CapacityError, BusyError, UnsafePathError, StorageError.
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._import import import_operation

        operation = import_operation(
            data,
            expected_revision,
            self.secrets,
            now=self._now,
            record_key=self._record_key.load(),
        )
        return self._backend.transact(operation, self._lock_timeout)

    def plan_import(self, data: bytes, expected_revision: str | None = None) -> ImportPlan:
        """What :meth:`replace` would do with ``data`` now, without writing (``import
        --dry-run``): the same checks, and one sentence per change.

        Raises:
            as :meth:`replace` (``ConflictError`` only when ``expected_revision`` is given).
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._import import plan_import

        return plan_import(
            data,
            self.snapshot(),
            expected_revision,
            self.secrets,
            now=self._now,
            record_key=self._record_key.load(),
        )

    def doctor(self, fix: bool = False, *, expected_revision: str | None = None) -> DoctorReport:
        """Inspect the store; with ``fix``, remove staging files a crashed writer left and
        repair an unambiguous hand edit (after a backup).

        Args:
            fix: remove staging files and repair a hand edit.
            expected_revision: repair only the file whose repair plan
                (:attr:`DoctorReport.repair`) carried this revision.

        Raises:
            UnsafePathError, StorageError: the workspace itself cannot be used.
            BusyError: ``fix`` could not take the writer lock in time.
            ConflictError: the file changed since it was read, or since the plan was shown.
        """
        return self._backend.doctor(
            secrets=self.secrets,
            fix=fix,
            lock_timeout=self._lock_timeout,
            now=self._now,
            record_key=self._record_key,
            expected_revision=expected_revision,
        )

    # -- internals -------------------------------------------------------------------------

    def _check_content(self, content: str) -> None:
        self.secrets.check(validate_content(content))

    def _roomy(self, operation: Operation) -> Operation:
        """``operation`` compacting old versions' text when its write needs the room."""
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._room import with_room

        return with_room(operation, self.capacity, self._record_key.load())

    def _stamp(self) -> str:
        return iso_timestamp(self._now())
