"""The records file's locations, its read path, and the locked write transaction.

A write: check the paths, create ``memory/`` (and sync the workspace folder, so the new folder
survives a power cut), check again (a symlink may have been swapped in), take the writer lock,
take the file as it is (the memo's last file while the file's signature is unchanged, else read
and decoded), let the operation change a copy, then publish:

- only new versions (a save): their blocks are appended to the file and it is fsynced;
- anything else: the whole new file goes to a temp file that is fsynced, the file is checked
  unchanged, the temp file is renamed over it and the directory fsynced, under the lock (the
  next writer may append to the renamed file).

Only then is the write acknowledged (``docs/security.md``, "Durability"). A process killed at
any point leaves the old file, the new one, or the old one with a torn tail that nothing
acknowledged (``doctor`` names it, ``--fix`` cuts it). The staging file a killed rewrite may
leave behind holds the whole file as it was then, forgotten facts included, so the next writer
removes it while it holds the lock (staging files are made only under the lock: one that
exists then is stale), before anything else; ``doctor --fix`` removes them too.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import os
import stat
import sys
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Final, SupportsIndex, TypeVar, cast, overload

from memquill.errors import (
    ConflictError,
    CorruptError,
    MemoryRecordError,
    Messages,
    StorageError,
    UnsafePathError,
)
from memquill.foundation.atomic import atomic_write, fsync_folder, remove_staging, staging_affixes
from memquill.owner_only import private_folder
from memquill.paths import canonical_workspace
from memquill.store._capacity import full_error
from memquill.store._codec import (
    HEADER,
    HEADER_V2,
    HEADER_V3,
    MAX_STORE_BYTES,
    block_revision,
    identity_bytes,
    implied_supersede,
    implies,
    merged_header,
)
from memquill.store._fileio import (
    append_durably,
    file_signature,
    read_bounded,
    read_signed,
    write_backup,
)
from memquill.store._lock import LOCK_NAME, WriterLock, between_writes
from memquill.store._memo import Decoded, Encoded, RecordsMemo, decode_snapshot
from memquill.store._record import Record
from memquill.store._record_list import RecordList
from memquill.store._results import CandidateResult, Snapshot, WriteResult, WriteStatus

_Decoded = TypeVar("_Decoded")
_Other = TypeVar("_Other")

SETTLE_PATIENCE: Final = 5.0
"""Seconds a read that met a write in progress waits for its writer (the store's default
lock timeout)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an operation did to the draft.

    Attributes:
        status: ``saved`` publishes the draft; anything else writes nothing.
        ids: the records it targeted: per candidate for a save (``None``: blocked), else one.
        changed: which of ``ids`` this operation wrote (the rest were already so).
        backup: when set, the records being replaced are first written to a private backup
            file named by this time (``memory/.records-backup-<time>.md``).
        header: a merge's other file's header, ranked against the file's own
            (:func:`~memquill.store._codec.merged_header`); ``None``: the one the file has,
            else memquill's.
        forgotten_at: per target, when a forgotten fact with the same text was forgotten
            (``None``: none was); empty when no target was checked.
        reads: what the outcome depended on in the snapshot, beyond the facts' tombstones
            and compaction (``None``: anything, the store revision included). A backend that
            lets writers of different facts run together commits an append computed on an
            older snapshot only if no version written since touches what it read.
    """

    status: WriteStatus
    ids: tuple[str | None, ...] = ()
    changed: frozenset[str] = frozenset()
    backup: datetime | None = None
    header: str | None = None
    forgotten_at: tuple[str | None, ...] = ()
    reads: Reads | None = None


@dataclass(frozen=True, slots=True)
class Reads:
    """The parts of a snapshot an operation looked at: facts (by root id), fact keys,
    operation hashes and source keys (``sessionId NUL messageId``).

    Writes that only append versions never add tombstones or drop anything, so a version
    appended by another writer since the snapshot can change an operation's outcome only
    through one of these: a fact it corrected or read, a key it looked up, an operation it
    looked for (idempotency) or a source message it checked (a correction tombstones the
    source of the version it supersedes).
    """

    roots: frozenset[str] = frozenset()
    keys: frozenset[str] = frozenset()
    hashes: frozenset[str] = frozenset()
    sources: frozenset[str] = frozenset()

    def __or__(self, other: Reads) -> Reads:
        return Reads(
            self.roots | other.roots,
            self.keys | other.keys,
            self.hashes | other.hashes,
            self.sources | other.sources,
        )


Operation = Callable[[Snapshot, list[Record]], Outcome]
"""Checks a snapshot and edits the draft (a copy of its records) in place."""

RECORDS_NAME: Final = "records.md"
TEMP_PREFIX, TEMP_SUFFIX = staging_affixes(Path(RECORDS_NAME))
"""Staging files are ``memory/.records-<hex>.tmp`` (:mod:`memquill.foundation.atomic`)."""


@dataclass(frozen=True, slots=True)
class Locations:
    """The canonical workspace and the paths of its records store."""

    root: Path
    directory: Path
    file: Path

    @property
    def lock(self) -> Path:
        """The writer lock file."""
        return self.directory / LOCK_NAME

    @property
    def identity(self) -> bytes:
        """What seeds this store's revisions: the workspace's real path."""
        return identity_bytes(self.root)


def locate(workspace: str) -> Locations:
    """Canonical workspace plus ``memory/`` and ``memory/records.md``, checked for safety.

    Raises:
        UnsafePathError: relative workspace, not a directory, or a symlinked or odd ``memory/``
            or ``records.md``.
        StorageError: the workspace is missing or cannot be inspected.
    """
    root = canonical_workspace(workspace)
    directory = root / "memory"
    file = directory / RECORDS_NAME
    for path, want_directory in ((directory, True), (file, False)):
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as error:
            raise StorageError(Messages.UNAVAILABLE) from error
        right_type = stat.S_ISDIR(mode) if want_directory else stat.S_ISREG(mode)
        if stat.S_ISLNK(mode) or not right_type:
            raise UnsafePathError(Messages.MEMORY_PATH)
    return Locations(root, directory, file)


def read_raw(locations: Locations, capacity: int = MAX_STORE_BYTES) -> bytes:
    """The records file's bytes (empty when missing). Nothing is created, locked or written.

    Raises:
        CapacityError, UnsafePathError, StorageError.
    """
    try:
        return read_bounded(locations.file, capacity)
    except MemoryRecordError:
        raise
    except OSError as error:
        raise StorageError(Messages.READ_FAILED) from error


def read_settled(
    locations: Locations, decode: Callable[[bytes], _Decoded], capacity: int = MAX_STORE_BYTES
) -> _Decoded:
    """``decode`` of the records file's bytes, never of a write still in progress. Nothing is
    created or written.

    A read takes no lock, and an append is not atomic to readers: a read that races one can
    end inside the new blocks, which do not decode. Only then is the file read again, holding
    the writer lock shared (:func:`~memquill.store._lock.between_writes`), which waits for the
    writer to finish; bytes that still do not decode are a torn tail a killed writer left.

    Raises:
        CapacityError, CorruptError, UnsafePathError, StorageError.
        BusyError: a writer held the lock for :data:`SETTLE_PATIENCE` seconds.
    """
    raw = read_raw(locations, capacity)
    try:
        return decode(raw)
    except CorruptError:
        with between_writes(locations.lock, SETTLE_PATIENCE):
            settled = read_raw(locations, capacity)
        if settled == raw:
            raise
    return decode(settled)


def read_snapshot(locations: Locations, capacity: int = MAX_STORE_BYTES) -> Snapshot:
    """Read and decode the store (up to ``capacity`` bytes; :func:`read_settled`). Nothing is
    created, locked or written.

    Raises:
        CapacityError, CorruptError, UnsafePathError, StorageError, BusyError.
    """
    return read_settled(locations, partial(decode_snapshot, locations.identity), capacity)


def write_locked(
    workspace: str,
    lock_timeout: float,
    operation: Operation,
    memo: RecordsMemo | None = None,
    capacity: int = MAX_STORE_BYTES,
) -> WriteResult:
    """Run ``operation`` inside the locked transaction and publish its draft atomically.

    Nothing is written unless the operation reports ``saved``. ``memo`` (the store's) saves
    decoding bytes it has seen: what it holds is reused only for bytes read under the lock
    that begin with it. Holding nothing of this file (a process's first write), the file is
    decoded before the lock is taken, as a read decodes it, so that under the lock only what
    was appended since is: a first write that decoded 100,000 records under the lock held
    every other writer past its timeout.

    Raises:
        whatever ``operation`` raises; BusyError, CapacityError, ConflictError, CorruptError,
        UnsafePathError, StorageError.
    """
    memo = memo or RecordsMemo()
    found = locate(workspace)
    if not found.lock.exists():
        # Taking the lock would create memory/ and the lock file. When the operation would be
        # refused or change nothing anyway, answer from an unlocked read, so a refused write
        # leaves the disk untouched (the answer is the one the store gave at that read).
        current = memo.decode(found.identity, read_raw(found, capacity))
        answer = apply_operation(current, operation, capacity)
        if isinstance(answer, WriteResult):
            return answer
    elif memo.last is None or memo.last.snapshot.identity != found.identity:
        with contextlib.suppress(MemoryRecordError):  # the write, under the lock, reports it
            memo.decode(found.identity, read_raw(found, capacity))
    try:
        created = not os.path.lexists(found.directory)
        private_folder(found.directory, parents=False)
        if created:
            # A new memory/ is an entry of the workspace folder: unsynced, a power cut could
            # take the folder, and every write acknowledged in it, away.
            fsync_folder(found.root)
        locations = locate(workspace)
    except MemoryRecordError:
        raise
    except OSError as error:
        raise StorageError(Messages.UNAVAILABLE) from error
    with WriterLock(locations.lock, lock_timeout), _save_errors():
        return _transact(locations, operation, memo, capacity)


@contextlib.contextmanager
def _save_errors() -> Generator[None]:
    """Operating-system failures while saving become ``storage`` errors."""
    try:
        yield
    except MemoryRecordError:
        raise
    except OSError as error:
        raise StorageError(Messages.SAVE_FAILED) from error


@dataclass(frozen=True, slots=True)
class Change:
    """A new file to publish (its bytes and records) and what the operation reported.

    ``replaced``: the places of the current file's records the operation replaced one by one
    (when the new file only appends, the versions its corrections supersede), so a backend
    that stores records apart updates exactly those, without comparing every record.
    """

    encoded: Encoded
    outcome: Outcome
    replaced: frozenset[int] = frozenset()

    @property
    def data(self) -> bytes:
        """The new file's bytes."""
        return self.encoded.data

    def result(self, written: Snapshot) -> WriteResult:
        """What the write did, once ``written`` (the new file) is published."""
        return _result(written, self.outcome, self.encoded)


def apply_operation(
    current: Decoded,
    operation: Operation,
    capacity: int = MAX_STORE_BYTES,
    *,
    claims: bool = False,
) -> Change | WriteResult:
    """Run ``operation`` on a copy of ``current``: the change to publish, or the answer when
    nothing is to be written (every backend's transaction runs this under its lock).

    A write that only forgets (and appends) makes a memquill file ``v3``, in a rewrite the
    first time; then, where the backend erases in place (``claims``: the file store), its
    tombstones are appended to claim the versions they forget. An append that would pass the
    capacity is written as a rewrite, which drops the blocks claims left behind.

    Raises:
        whatever ``operation`` raises; CapacityError when the new file would exceed
        ``capacity`` bytes (default 2 MiB).
    """
    snapshot = current.snapshot
    draft = Draft(snapshot.records)
    outcome = operation(snapshot, draft)
    if outcome.status != "saved":
        return _result(snapshot, outcome)
    header = current.header or HEADER
    if outcome.header is not None:  # a merge: the other file's header, ranked against ours
        header = merged_header(outcome.header, current.header)
    appends = not draft.rewritten
    forgets: tuple[int, ...] = ()
    if not appends and outcome.header is None and draft.corrects(snapshot.records):
        # Corrections alone: a v2 file takes them appended (the versions they replace read
        # as superseded); a memquill v1 file becomes v2 in this rewrite, once; the original
        # system's header keeps its corrections rewritten, so that system still reads it.
        appends = implies(header)
        header = HEADER_V2 if header == HEADER else header
    elif not appends and outcome.header is None and header in _OURS:
        forgets = draft.forgets(snapshot.records)
        if forgets:  # the same for every backend, so their files read and export alike
            appends = claims and header == HEADER_V3
            header = HEADER_V3
    records = draft.frozen()
    encoded = current.encode(header, records, appends=appends, claims=forgets if appends else ())
    if encoded.tail is not None and encoded.size > capacity:
        encoded = current.encode(header, records)  # a rewrite drops what claims left behind
    unchanged = encoded.tail == b"" if encoded.full is None else encoded.full == current.raw
    if unchanged:  # a merge that brought nothing new: nothing to publish
        return _result(snapshot, Outcome("duplicate", outcome.ids))
    if encoded.size > capacity:
        raise full_error(capacity)
    count = len(snapshot.records)
    replaced = frozenset(place for place in draft.replaced or () if place < count)
    return Change(encoded, outcome, replaced)


_OURS: Final = (HEADER, HEADER_V2, HEADER_V3)
"""The headers memquill writes (the original system's keeps every write a rewrite)."""


class Draft(list[Record]):
    """The copy of a snapshot's records an operation edits: a list that notes whether anything
    but appending changed it (``rewritten``), so a write that only adds versions is published
    as an append without comparing the records, and which places were replaced one by one,
    so a write that only corrects facts can be told (:meth:`corrects`).

    The snapshot's records are not copied until something but appending touches the list:
    until then it holds only what was appended, after the snapshot's tuple (``_base``), so a
    save into a large store copies no reference to the records it leaves alone.
    """

    rewritten: bool = False
    reshaped: bool = False
    replaced: set[int] | None = None

    def __init__(self, base: Sequence[Record] = ()) -> None:
        super().__init__()
        self._base = base
        self._swapped: dict[int, Record] = {}  # places of ``_base`` replaced one by one

    def _whole(self) -> None:
        """Hold every record in the list itself (before anything but appending or replacing
        one place is done)."""
        base = self._base
        if base:
            tail = super().copy()
            super().clear()
            super().extend(base)
            super().extend(tail)
            for position, record in self._swapped.items():
                super().__setitem__(position, record)
            self._base, self._swapped = (), {}

    def frozen(self) -> RecordList:
        """The records as a :class:`RecordList`. Built on the snapshot's, it shares every
        chunk neither an appended nor a replaced record touches (no per-record copy)."""
        base = self._base
        if not base:
            return RecordList(tuple(super().copy()))  # a plain list: copied at once
        if not isinstance(base, RecordList):
            base = RecordList(base)
        return base.replaced(self._swapped).extended(super().copy())

    def __len__(self) -> int:
        return len(self._base) + super().__len__()

    @overload
    def __getitem__(self, index: SupportsIndex) -> Record: ...
    @overload
    def __getitem__(self, index: slice) -> list[Record]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Record | list[Record]:
        base = self._base
        if base and isinstance(index, slice) and index == slice(len(base), None):
            return super().copy()  # what was appended: the common read of a draft
        if base and not isinstance(index, slice):
            position = operator.index(index)
            if position < 0:
                position += len(self)
            if 0 <= position < len(base):
                return self._swapped.get(position, base[position])
            if position < 0:
                raise IndexError("list index out of range")
            return super().__getitem__(position - len(base))
        self._whole()
        return super().__getitem__(index)

    def __iter__(self) -> Iterator[Record]:
        if self._swapped:
            self._whole()
        if self._base:
            return itertools.chain(self._base, super().__iter__())
        return super().__iter__()

    def __contains__(self, value: object) -> bool:
        if self._swapped:
            self._whole()
        return value in self._base or super().__contains__(value)

    def __eq__(self, other: object) -> bool:
        self._whole()
        return super().__eq__(other)

    def __ne__(self, other: object) -> bool:
        self._whole()
        return super().__ne__(other)

    __hash__ = None  # a list: unhashable

    def __reversed__(self) -> Iterator[Record]:
        self._whole()
        return super().__reversed__()

    def __add__(self, other: list[_Other]) -> list[_Other | Record]:
        self._whole()
        return super().__add__(other)

    def copy(self) -> list[Record]:
        self._whole()
        return super().copy()

    def index(
        self, value: Record, start: SupportsIndex = 0, stop: SupportsIndex = sys.maxsize
    ) -> int:
        self._whole()
        return super().index(value, start, stop)

    def count(self, value: Record) -> int:
        self._whole()
        return super().count(value)

    def __setitem__(self, index: Any, value: Any) -> None:
        self.rewritten = True
        if isinstance(index, int) and not self.reshaped:
            position = index % len(self) if index < 0 else index
            replaced = self.replaced if self.replaced is not None else set[int]()
            replaced.add(position)
            self.replaced = replaced
            if self._base and position < len(self._base):
                self._swapped[position] = value  # a correction: no copy of the rest
                return
        else:
            self.reshaped = True
        self._whole()
        super().__setitem__(index, value)

    def corrects(self, records: Sequence[Record]) -> bool:
        """Whether this draft is ``records`` plus appended versions, where each version it
        replaced became what a ``v2`` file implies of it once the appended version that
        corrects it follows (:func:`~memquill.store._codec.implied_supersede`)."""
        count = len(records)
        if self.reshaped or not self.replaced or len(self) <= count:
            return False
        successors = {record.supersedes: record for record in self[count:]}
        for position in self.replaced:
            if position >= count:
                continue
            earlier, now = records[position], self[position]
            successor = successors.get(earlier.id)
            implied = None if successor is None else implied_supersede(earlier, successor)
            if (
                implied is None
                or implied is earlier
                or list(implied.meta.items()) != list(now.meta.items())
                or implied.content != now.content
            ):
                return False
        # Every other place still holds its record: only ``__setitem__`` replaces one, and it
        # noted it (anything that moves records marks the draft reshaped).
        return True

    def forgets(self, records: Sequence[Record]) -> tuple[int, ...]:
        """The places of ``records`` this draft replaced, in order, when each now holds the
        tombstone of the version there (same id, ``revoked``; that version was not) and
        nothing else moved (versions may be appended); else ``()``."""
        count = len(records)
        if self.reshaped or not self.replaced or len(self) < count:
            return ()
        places = sorted(self.replaced)
        for position in places:
            if position >= count:
                return ()
            earlier, now = records[position], self[position]
            if earlier.status == "revoked" or now.status != "revoked" or now.id != earlier.id:
                return ()
        return tuple(places)

    def __delitem__(self, index: Any) -> None:
        self._whole()
        self.rewritten = self.reshaped = True
        super().__delitem__(index)

    def __imul__(self, count: SupportsIndex) -> Draft:
        self._whole()
        self.rewritten = self.reshaped = True
        return cast(Draft, super().__imul__(count))

    def insert(self, index: SupportsIndex, value: Record) -> None:
        self._whole()
        self.rewritten = self.reshaped = True
        super().insert(index, value)

    def pop(self, index: SupportsIndex = -1) -> Record:
        self._whole()
        self.rewritten = self.reshaped = True
        return super().pop(index)

    def remove(self, value: Record) -> None:
        self._whole()
        self.rewritten = self.reshaped = True
        super().remove(value)

    def clear(self) -> None:
        self._whole()
        self.rewritten = self.reshaped = True
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._whole()
        self.rewritten = self.reshaped = True
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self._whole()
        self.rewritten = self.reshaped = True
        super().reverse()


def remove_stale_staging(directory: Path) -> tuple[str, ...]:
    """Remove the staging files in ``directory`` (call only while holding the writer lock).

    Returns the names removed; the directory is fsynced after, so the removal is durable.
    Anything else named like one (a folder) is left for a person to look at.
    """
    return remove_staging(directory / RECORDS_NAME)


def _transact(
    locations: Locations,
    operation: Operation,
    memo: RecordsMemo,
    capacity: int,
) -> WriteResult:
    """The locked part of a write: its result, once published (appended and fsynced, or
    renamed into place with the folder fsynced, under the lock)."""
    # A writer killed between its staging write and its rename left the staging file, with
    # every fact the file then held: remove it now, so a fact forgotten later is gone from disk.
    remove_stale_staging(locations.directory)
    current = _current(locations, memo, capacity)
    change = apply_operation(current, operation, capacity, claims=True)
    if isinstance(change, WriteResult):
        return change
    encoded = change.encoded
    if encoded.tail is not None and current.signature is not None:
        # Only new blocks: appended in place and fsynced, nothing else is rewritten but the
        # blocks their tombstones claim, erased in place once the tombstones are durable.
        erased = encoded.erasures()
        signature = append_durably(locations.file, encoded.tail, current.signature, erased)
        written = memo.publish(encoded, signature, erased)
        return _result(written.snapshot, change.outcome, encoded)
    raw = current.raw
    backup = backup_of(locations, raw, change.outcome)

    def unchanged() -> None:
        # Writers are serialised by the lock; this catches an editor or sync tool.
        moved = current.signature is None or file_signature(locations.file) != current.signature
        if moved and read_bounded(locations.file, capacity) != raw:
            raise ConflictError(Messages.CHANGED_WHILE_SAVING)

    atomic_write(locations.file, change.data, check=unchanged, sync_folder=False)
    # The rename is made durable before the lock is let go: the next writer may only append
    # to this file, and its fsync covers the file's bytes, not the name this rename gave it.
    fsync_folder(locations.directory)
    written = change.encoded.decoded(file_signature(locations.file))
    memo.remember(written)
    return replace(_result(written.snapshot, change.outcome, change.encoded), backup=backup)


def _current(locations: Locations, memo: RecordsMemo, capacity: int) -> Decoded:
    """The records file as it is now (read under the lock): the memo's last file when the
    file's signature (device, inode, size, modification and change times) is still the one it
    had when that was read or written, else read and decoded (reusing what the memo holds)."""
    last = memo.last
    if (
        last is not None
        and last.signature is not None
        and last.snapshot.identity == locations.identity
        and file_signature(locations.file) == last.signature
    ):
        return last
    raw, signature = read_signed(locations.file, capacity)
    decoded = memo.decode(locations.identity, raw).signed(signature)
    memo.remember(decoded)
    return decoded


def backup_of(locations: Locations, raw: bytes, outcome: Outcome) -> str | None:
    """Write the backup ``outcome`` asks for of ``raw`` (the records about to be replaced);
    its workspace-relative path (``None``: none asked for, or nothing to back up)."""
    if outcome.backup is None or not raw:
        return None
    path = write_backup(locations.directory, raw, outcome.backup)
    return path.relative_to(locations.root).as_posix()


def _result(snapshot: Snapshot, outcome: Outcome, encoded: Encoded | None = None) -> WriteResult:
    """What a write did (``encoded``: the file it published, whose blocks are hashed for the
    record revision rather than encoded again)."""
    ids = outcome.ids
    forgotten = outcome.forgotten_at or tuple(None for _ in ids)
    first = snapshot.find(ids[0]) if ids and ids[0] is not None else None
    block = None if first is None or encoded is None else encoded.block(first)
    if first is None:
        revision = None
    elif block is None:
        revision = snapshot.record_revision(first)
    else:
        revision = block_revision(snapshot.identity, block)
    return WriteResult(
        status=outcome.status,
        revision=snapshot.revision,
        records=snapshot.records,
        targets=tuple(
            CandidateResult(
                record_id,
                "blocked"
                if record_id is None
                else "saved"
                if record_id in outcome.changed
                else "duplicate",
                when,
            )
            for record_id, when in zip(ids, forgotten, strict=True)
        ),
        record_revision=revision,
    )
