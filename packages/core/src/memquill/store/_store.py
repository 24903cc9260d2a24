"""``RecordStore``: the only code that writes ``memory/records.md``.

Every mutation runs one transaction: check the paths, take the writer lock, read and decode the
file, check the caller's revision, apply the change to a copy, encode it, write a temp file and
fsync it, check that nobody changed the file meanwhile, rename it over the old one and fsync the
directory. A process killed at any point leaves either the old file or the new one.

Each write imports its own modules when it first runs, so a process that only reads (a
``memquill search``) never loads the write side: reading creates, locks and writes nothing.

Sync (``docs/sync.md``): :meth:`RecordStore.merge` merges another machine's copy record by
record (:mod:`memquill.store._merge`) in one locked write of whatever the file holds then;
:meth:`RecordStore.keep_version` is a person's choice among a diverged fact's versions;
:meth:`RecordStore.resolve_conflict_copies` merges every conflict copy a file-sync tool left
beside ``records.md``, then removes it. The first merge that changes the file writes a backup of
it first (``memory/.records-backup-<time>.md``, as ``doctor --fix`` does), under the writer
lock; a copy is removed only once the merged file is durable, so a crash in between merges it
again next time (merging is idempotent); a copy that is not a records file is left where it is,
with the reason.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from memquill.errors import (
    CapacityError,
    ConflictError,
    InvalidInputError,
    MemoryRecordError,
    Messages,
    StorageError,
)
from memquill.foundation.atomic import fsync_folder
from memquill.foundation.text import LONE_SURROGATE, utf16_len
from memquill.store._backend import RecordsBackend, open_backend, read_together
from memquill.store._capacity import check_capacity, workspace_capacity
from memquill.store._codec import iso_timestamp, unclaimed, validate_content, validate_source
from memquill.store._fileio import read_bounded
from memquill.store._record import JSONValue, Record, validate_key
from memquill.store._record_key import KeySource, keyed_fields, recognised_hashes
from memquill.store._results import (
    UNCHANGED,
    Candidate,
    Preflight,
    ProjectedRecord,
    Projection,
    Snapshot,
    Target,
    Unchanged,
    WriteResult,
)
from memquill.store._transaction import Locations, Operation, Outcome, locate

if TYPE_CHECKING:
    from memquill.store._doctor import DoctorReport
    from memquill.store._hand_edits import ImportPlan
    from memquill.store._merge import MergeReport, MergeResult
    from memquill.store._secrets import SecretScanner

DEFAULT_LOCK_TIMEOUT: Final = 5.0

_MANUAL: Final[Mapping[str, JSONValue]] = {"kind": "manual"}


@dataclass(frozen=True, slots=True)
class ResolvedCopy:
    """One conflict copy and what ``resolve`` did with it.

    Attributes:
        path: workspace-relative.
        report: what merging it decided (``None``: it was left, ``problem`` says why).
        problem: why it was not merged (not a records file, unreadable...).
    """

    path: str
    report: MergeReport | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class ResolveReport:
    """What ``resolve`` did: each copy, the backup written first (if any), the revision after."""

    copies: tuple[ResolvedCopy, ...]
    backup: str | None
    revision: str


CLEAN_HELD: Final = 1 << 23
"""Characters of the texts :meth:`RecordStore.check` found clean held at most for the writes
that follow (a ``put_many`` checks all its puts before it writes any): 8 Mi, the texts of
10,000 puts of 800 characters; a text past it is scanned again by its write."""
MAX_BATCH: Final = 40
MAX_KEY_UNITS: Final = 1000


class RecordStore:
    """The records store of one workspace: its reads, every write, and the merges of sync
    (``docs/sync.md``).

    Args:
        workspace: absolute path of the workspace folder.
        lock_timeout: seconds a writer waits for the lock before failing ``busy``.
        now: the clock (UTC); injectable for tests.
        secrets: the credential scanner every write uses (default: the built-in detectors,
            built on first use: a store that only reads never loads them).
        location: where the records live: ``None`` or ``"file"`` for the workspace's
            ``memory/records.md``, or a ``postgresql://`` URL (``docs/multi-host.md``). Read
            as given: the ``MEMQUILL_STORE`` variable is the sessions' business.
        record_key: where operation hashes are keyed (default: the backend's).
        capacity: the largest records file in bytes, a whole number of MiB from 1 to 64
            (default: ``store.capacityMiB`` of the workspace's ``.assistant/config.json``,
            else 2 MiB; :mod:`memquill.store._capacity`).
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        now: Callable[[], datetime] | None = None,
        secrets: SecretScanner | None = None,
        location: str | None = None,
        record_key: KeySource | None = None,
        capacity: int | None = None,
    ) -> None:
        self._workspace = os.fspath(workspace)
        chosen = (
            workspace_capacity(self._workspace) if capacity is None else check_capacity(capacity)
        )
        self._lock_timeout = lock_timeout
        self._now = now or (lambda: datetime.now(UTC))
        self._secrets = secrets
        # Texts :meth:`check` found clean, each taken by the write's own check once (a
        # scanner's verdict depends on the text alone: scanning it again finds the same).
        self._clean: set[str] = set()
        self._clean_size = 0  # their characters, bounded by CLEAN_HELD
        self._clean_lock = threading.Lock()
        self._projection: Projection | None = None
        self._backend = open_backend(self._workspace, location, chosen)
        self._record_key = record_key or self._backend.record_key()

    def __repr__(self) -> str:
        return f"RecordStore({self._workspace!r}, backend={self._backend.kind!r})"

    @property
    def workspace(self) -> str:
        """The workspace path as given."""
        return self._workspace

    @property
    def capacity(self) -> int:
        """The largest records file this store writes or reads, in bytes (default 2 MiB; a
        setting: :mod:`memquill.store._capacity`)."""
        return self._backend.capacity

    @property
    def record_key(self) -> KeySource:
        """Where this store's operation hashes are keyed (the user's key file, or the row of a
        database store)."""
        return self._record_key

    @property
    def secrets(self) -> SecretScanner:
        """The credential scanner writes use (``doctor`` reports with it too)."""
        if self._secrets is None:
            # Built on first use: the detectors cost a cold start that a read never needs.
            from memquill.store._secrets import SecretScanner

            self._secrets = SecretScanner()
        return self._secrets

    def close(self) -> None:
        """Let go of the backend's connection, if it keeps one (the store stays usable)."""
        self._backend.close()

    @property
    def backend(self) -> RecordsBackend:
        """Where the records live (``backend.kind``: ``file`` or ``postgres``)."""
        return self._backend

    # -- reads -----------------------------------------------------------------------------

    def snapshot(self, *, recent: bool = False) -> Snapshot:
        """Read the store. Read only: nothing is created, locked or written.

        ``recent``: the store as this object last read or wrote it, without reading, when it
        has (else read). It may be stale: only for a caller whose write checks the revisions
        it took from it under the lock, and who reads again before trusting an absence.

        Raises:
            UnsafePathError, CapacityError, CorruptError, StorageError.
        """
        if recent and (known := self._backend.recent()) is not None:
            return known
        return self._backend.snapshot()

    def export(self) -> bytes:
        """The bytes of ``records.md`` (from the database, for a database store), each
        tombstone a ``v3`` forget appended in the place of the version it claims: what a
        rewrite writes, and what a database store holds for the same history.

        Raises:
            UnsafePathError, CapacityError, CorruptError, StorageError.
        """
        return unclaimed(self._backend.read())

    def locations(self) -> Locations:
        """The canonical workspace and the store's paths, checked for safety.

        Raises:
            UnsafePathError, StorageError.
        """
        return locate(self._workspace)

    def projection(self) -> Projection:
        """The active records as virtual files, cached per store revision.

        Reading the file and comparing bytes is cheap; decoding it is not, so an unchanged
        store is never decoded twice.
        """
        snapshot = self.snapshot()
        cached = self._projection
        if cached is not None and cached.revision == snapshot.revision:
            return cached
        projected = tuple(
            ProjectedRecord.of(snapshot, record)
            for record in snapshot.records
            if record.status == "active"
        )
        self._projection = Projection(snapshot.revision, projected)
        return self._projection

    def preflight(self, reserve_bytes: int = 1024) -> Preflight:
        """Check, without writing, that a write of ``reserve_bytes`` more could succeed now.

        Raises:
            InvalidInputError: ``reserve_bytes`` is not a non-negative integer.
            CapacityError: the store is (or would be) over its capacity.
            BusyError: another writer holds the lock.
            CorruptError, UnsafePathError, StorageError.
        """
        snapshot = self.snapshot()
        if type(reserve_bytes) is not int or reserve_bytes < 0:
            raise InvalidInputError(Messages.RESERVATION)
        if snapshot.size_bytes + reserve_bytes > self.capacity:
            raise CapacityError(Messages.INSUFFICIENT)
        self._backend.check_writable()
        return Preflight(snapshot.revision, snapshot.size_bytes, self._backend.quota)

    def find_operation(self, idempotency_key: str) -> Record | None:
        """The version (any status) that a save with ``idempotency_key`` wrote, if any.

        Matches memquill's keyed hash and the original system's unkeyed one (extraction uses
        it to recover a committed batch after a crash).

        Raises:
            UnsafePathError, CapacityError, CorruptError, StorageError (also when the record
            key cannot be used).
        """
        keys = (self._record_key.load(), *self._record_key.known())
        hashes = recognised_hashes(keys, idempotency_key)
        return next((r for r in self.snapshot().records if r.operation_hash in hashes), None)

    def find_key(self, key: str) -> Record | None:
        """The current (active) version of the fact named ``key``, read now; ``None`` if no
        active fact has it. Its record revision is ``snapshot().record_revision(record)``, or
        in one read: ``snapshot().by_key(key)``.

        Raises:
            InvalidInputError: ``key`` is not a valid key.
            UnsafePathError, CapacityError, CorruptError, StorageError.
        """
        return self.snapshot().by_key(validate_key(key))

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
        make something first (a namespace's folder) checks here before it does. The texts
        found free of credentials are held for the write that follows: its own check takes
        each such text once instead of scanning it again (the scan of a put's text and extra
        runs once, not twice).

        Raises:
            InvalidInputError, SecretError: what :meth:`save` and :meth:`correct` would raise
                for the same fact, with the same message.
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._edits import check_extra

        self._check_content(content, ahead=True)
        if key is not None:
            validate_key(key)
        check_extra(extra, self._scan_ahead)

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

        batch = list(candidates)
        if not 1 <= len(batch) <= MAX_BATCH:
            raise InvalidInputError(Messages.BATCH_SIZE)
        batch = self._checked(batch, keyed=False)
        key = self._record_key.load()
        known = self._record_key.known()

        def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
            if expected_revision is not None and expected_revision != snapshot.revision:
                raise ConflictError(Messages.STALE)
            stamp = iso_timestamp(self._now())
            outcome = append_candidates(
                batch,
                snapshot,
                draft,
                key,
                stamp,
                lambda: str(uuid.uuid4()),
                known,
                skip_known=skip_known,
            )
            # Checked against the store revision: it read everything.
            return outcome if expected_revision is None else replace(outcome, reads=None)

        appends = expected_revision is None and not skip_known
        return self._backend.transact(self._roomy(operation), self._lock_timeout, appends=appends)

    def correct(
        self,
        target: Target,
        content: str,
        expected_revision: str,
        source: Mapping[str, JSONValue] = _MANUAL,
        *,
        key: str | Unchanged | None = UNCHANGED,
        extra: Mapping[str, JSONValue] | Unchanged | None = UNCHANGED,
        prefixes: bool = False,
    ) -> WriteResult:
        """Replace a fact's current version with a new one; the old one is superseded.

        ``target`` is a record id or a :class:`FactKey`, resolved under the lock: an id of a
        corrected version stands for the current version when ``expected_revision`` is current
        (``_edits``). ``expected_revision`` may be the store revision or the record's own
        revision. The new version keeps the fact's key and extra metadata unless ``key``
        (a new key renames the fact; ``None`` removes it) or ``extra`` say otherwise. With
        ``prefixes`` the id and the revision may be the short forms read tools show, expanded
        under the lock too (a unique id prefix; a prefix of a current revision).

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
            extra = check_extra(extra, self._scan)
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
            prefixes=prefixes,
        )
        # A fact's own revision leaves the rest of the store to other writers; the store's
        # does not (the last one known decides; a wrong guess is only retried alone).
        recent = self._backend.recent()
        appends = recent is None or not recent.revision.startswith(expected_revision)
        return self._backend.transact(self._roomy(operation), self._lock_timeout, appends=appends)

    def upsert(self, candidates: Sequence[Candidate]) -> WriteResult:
        """Save or correct several keyed facts in one write, all or none (a key-value store's
        puts in bulk).

        Each candidate names its fact by key, decided under the lock (``_append``): no active
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
        from memquill.store._append import upserting

        batch = list(candidates)
        if not batch:
            raise InvalidInputError(Messages.NO_FACTS)
        batch = self._checked(batch, keyed=True)
        operation = upserting(
            batch,
            record_key=self._record_key.load(),
            known_keys=self._record_key.known(),
            now=self._stamp,
            new_id=lambda: str(uuid.uuid4()),
        )
        return self._backend.transact(self._roomy(operation), self._lock_timeout, appends=True)

    def rename_many(
        self,
        moves: Sequence[tuple[Target, str, str]],
        source: Mapping[str, JSONValue] = _MANUAL,
        *,
        prefixes: bool = False,
    ) -> WriteResult:
        """Give several facts new keys in one write, all or none (a folder of keys moved).

        Each move is ``(target, new key, expected revision)``; the target is resolved and the
        revision checked under the lock as for :meth:`correct`, and the fact gets a new version
        with the same text under the new key (``source`` says who renamed it). A new key may be
        one that another fact of the batch gives up, but no other active fact's. ``targets`` in
        the result follow the order given. ``prefixes``: as for :meth:`correct`.

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
            prefixes=prefixes,
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

    def revoke_many(
        self, targets: Sequence[tuple[Target, str]], *, prefixes: bool = False
    ) -> WriteResult:
        """Forget several facts in one write, all or none (a folder of keys, say).

        Each target comes with the revision it was read at (the store revision, or that
        record's revision), checked under the lock; one stale or unknown target refuses the
        whole write. ``targets`` in the result follow the order given. ``prefixes``: as for
        :meth:`correct`.

        Raises:
            InvalidInputError: no targets. Otherwise as :meth:`revoke`.
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._edits import revocation

        chosen = list(targets)
        if not chosen:
            raise InvalidInputError(Messages.NO_TARGETS)
        operation = revocation(chosen, self._stamp, self._record_key.load(), prefixes=prefixes)
        return self._backend.transact(self._roomy(operation), self._lock_timeout)

    def compact(self, expected_revision: str, *, prefixes: bool = False) -> WriteResult:
        """Drop the content of superseded versions, then fold forgotten facts and history
        beyond the retention depth into compact tombstones (:mod:`memquill.store._tombstones`).

        It frees space while forgotten and corrected facts still block their idempotency keys,
        source messages and words; each emptied version keeps the fingerprint of the text it
        held (``textHash``), so forgetting its fact later still blocks those words. With
        ``prefixes``, ``expected_revision`` may be a prefix of the store revision.

        Raises:
            ConflictError: ``expected_revision`` is not the store revision.
            BusyError, CorruptError, UnsafePathError, StorageError.
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._edits import expand_revision
        from memquill.store._room import compact_draft

        record_key = self._record_key.load()

        def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
            given = expected_revision
            if prefixes:
                given = expand_revision(snapshot, None, given)
            if given != snapshot.revision:
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
        from memquill.store._hand_edits import import_operation

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
        from memquill.store._hand_edits import plan_import

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

    def _check_content(self, content: str, *, ahead: bool = False) -> None:
        text = validate_content(content)
        if ahead:
            self._scan_ahead(text)
        else:
            self._scan(text)

    def _scan(self, text: str) -> None:
        """A write's own credential check of ``text``: scanned, unless :meth:`check` found
        that very text clean just before (its write then takes the result, once, instead of
        scanning again: a put checked ahead scanned its text and extra twice)."""
        with self._clean_lock:
            clean = text in self._clean
            if clean:
                self._clean.discard(text)
                self._clean_size -= len(text)
        if not clean:
            self.secrets.check(text)

    def _scan_ahead(self, text: str) -> None:
        """:meth:`check`'s credential check: ``text`` scanned, and kept as clean for the write
        that follows (at most :data:`CLEAN_HELD` characters wait; past that, the ones waiting
        are dropped and their writes scan them again)."""
        self.secrets.check(text)
        with self._clean_lock:
            if text in self._clean:
                return
            if self._clean_size + len(text) > CLEAN_HELD:
                self._clean.clear()
                self._clean_size = 0
            self._clean.add(text)
            self._clean_size += len(text)

    def _checked(self, candidates: list[Candidate], *, keyed: bool) -> list[Candidate]:
        """``candidates`` checked in order, each whole before the next (what :meth:`save` and
        :meth:`upsert` write): content and credentials, source, idempotency key, fact key
        (required when ``keyed``; never twice in one batch), and extra JSON, which comes back
        as a plain copy.

        Raises:
            InvalidInputError, SecretError: the first candidate that breaks a rule.
        """
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._edits import check_extra

        batch = list(candidates)
        keys: set[str] = set()
        for index, candidate in enumerate(batch):
            self._check_content(candidate.content)
            validate_source(candidate.source)
            key = candidate.idempotency_key
            if not key or utf16_len(key) > MAX_KEY_UNITS or LONE_SURROGATE.search(key):
                raise InvalidInputError(Messages.KEY_REQUIRED)
            if candidate.key is None and keyed:
                raise InvalidInputError(Messages.KEY_NEEDED)
            if candidate.key is not None:
                validate_key(candidate.key)
                if candidate.key in keys:
                    raise InvalidInputError(Messages.BATCH_KEYS)
                keys.add(candidate.key)
            if candidate.extra is not None:
                batch[index] = replace(candidate, extra=check_extra(candidate.extra, self._scan))
        return batch

    def _roomy(self, operation: Operation) -> Operation:
        """``operation`` making room (:func:`~memquill.store._room.with_room`) when its write
        needs it."""
        # Write side: loaded by the first write, never by a read (cold start).
        from memquill.store._room import with_room

        return with_room(operation, self.capacity, self._record_key.load())

    def _stamp(self) -> str:
        return iso_timestamp(self._now())

    # -- sync (``docs/sync.md``) --------------------------------------------------------------

    def merge(
        self, theirs: bytes, base: bytes = b"", *, expected_revision: str | None = None
    ) -> MergeResult:
        """Merge another copy of ``records.md`` (and their common ancestor ``base``; empty
        when unknown) into the store, in one locked write.

        Raises:
            CorruptError: ``theirs`` or ``base`` is not a valid records file (or the store's).
            ConflictError: ``expected_revision`` is given and stale.
            CapacityError, BusyError, UnsafePathError, StorageError.
        """
        # Merges: loaded by the first merge, never by a read (cold start).
        from memquill.store._merge import MergeReport, MergeResult, merge_operation

        reports: list[MergeReport] = []
        operation = merge_operation(
            theirs, base, expected_revision, reports, record_key=self._record_key.load()
        )
        write = self._backend.transact(operation, self._lock_timeout)
        return MergeResult(write, reports[-1] if reports else MergeReport())

    def keep_version(
        self,
        record_id: str,
        expected_revision: str,
        source: Mapping[str, JSONValue] = _MANUAL,
        *,
        prefixes: bool = False,
    ) -> WriteResult:
        """Settle a diverged fact on version ``record_id``: another machine's version becomes a
        correction of the active one (``source``); every waiting version is marked
        ``resolvedBy`` the version that stands. ``expected_revision``: the store's or the
        record's. ``prefixes``: as for :meth:`correct`.

        Raises:
            ConflictError, NotFoundError, InvalidInputError (not diverged), and the store's
            errors.
        """
        # Merges: loaded by the first merge, never by a read (cold start).
        from memquill.store._families import keep_operation

        validate_source(source)
        key = self._record_key.load()
        operation = keep_operation(
            record_id,
            expected_revision,
            source=dict(source),
            now=iso_timestamp(self._now()),
            new_id=lambda: str(uuid.uuid4()),
            hashed=lambda material: keyed_fields(key, material),
            prefixes=prefixes,
        )
        return self._backend.transact(operation, self._lock_timeout)

    def conflict_copies(self) -> tuple[str, ...]:
        """Copies of ``records.md`` a file-sync tool left beside it, workspace-relative (none
        for a database store)."""
        return self._backend.conflict_copies()

    def resolve_conflict_copies(self) -> ResolveReport:
        """Merge every conflict copy into ``records.md`` and remove it (module docstring).

        Raises:
            CorruptError: ``records.md`` itself is not valid (``doctor`` first).
            BusyError, UnsafePathError, StorageError.
        """
        # Merges: loaded by the first merge, never by a read (cold start).
        from memquill.store._merge import MergeReport, merge_operation

        locations = locate(self._workspace)
        backup: str | None = None
        done: list[ResolvedCopy] = []
        for path in self.conflict_copies() if self._backend.kind == "file" else ():
            copy = locations.root / path
            reports: list[MergeReport] = []
            first = self._now() if backup is None else None  # one backup, before any change
            try:
                operation = merge_operation(
                    read_bounded(copy), b"", None, reports, first, self._record_key.load()
                )
            except MemoryRecordError as error:
                done.append(ResolvedCopy(path, problem=error.message))
                continue
            except OSError:
                done.append(ResolvedCopy(path, problem=Messages.READ_FAILED))
                continue
            written = self._backend.transact(operation, self._lock_timeout)
            backup = backup or written.backup
            _remove(copy)
            done.append(ResolvedCopy(path, reports[-1] if reports else MergeReport()))
        revision = self._backend.snapshot().revision
        return ResolveReport(tuple(done), backup, revision)


def _remove(copy: Path) -> None:
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(copy)
        fsync_folder(copy.parent)
    except OSError as error:
        raise StorageError(Messages.SAVE_FAILED) from error


def snapshots(stores: Sequence[RecordStore]) -> list[Snapshot]:
    """Each store's :meth:`RecordStore.snapshot`, in order, read together where their backend
    can: the workspaces of one database in one statement (one snapshot of the database), each
    sending its workspace row and only the rows changed since its store last read or wrote it.

    Raises:
        As :meth:`RecordStore.snapshot`.
    """
    return read_together([store.backend for store in stores])
