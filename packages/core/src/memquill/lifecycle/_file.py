"""The ledger on disk: ``.assistant/memory-jobs.json``, its two kernel locks, atomic rewrites.

- Reads take no lock (a rewrite replaces the file atomically) and create nothing: a workspace
  whose ledger does not exist reads as an empty ledger, and viewing it leaves no trace.
- Every change is a short read-modify-write under a kernel lock on ``memory-jobs.json.lock``
  (portalocker, freed by the kernel when its holder dies), written to an exclusive ``0600``
  temporary file, synced, renamed over the ledger, and the folder synced. A process killed at
  any moment leaves the old ledger or the new one. That lock is never held across a model call.
- A pass of the extraction runner holds a second lock, ``memory-jobs.json.runner``, claimed
  without waiting: one pass at a time per workspace across every process.
- ``.assistant`` must be a real folder and each file a regular file (never a symlink):
  anything else is ``job_unsafe_path``. The folder is private: no query ever reads it.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
import uuid
from collections import OrderedDict
from collections.abc import Generator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import portalocker

from memquill.errors import (
    JobBusyError,
    JobLimitError,
    JobUnsafePathError,
    MemquillError,
    Messages,
    SourceError,
    StorageError,
)
from memquill.lifecycle._codec import decode_ledger, encode_ledger
from memquill.lifecycle._model import MAX_LEDGER_BYTES, Ledger
from memquill.owner_only import private_folder
from memquill.paths import canonical_workspace, open_regular
from memquill.store._fileio import fsync_directory, write_synced
from memquill.store._waiting import wait_for_lock

__all__ = ["LEDGER_PATH", "LedgerFile"]

LEDGER_DIR: Final = ".assistant"
LEDGER_NAME: Final = "memory-jobs.json"
LEDGER_PATH: Final = f"{LEDGER_DIR}/{LEDGER_NAME}"
"""Where the ledger lives, relative to the workspace."""
_CACHED_LEDGERS: Final = 32

# The last bytes read or written per ledger path, and what they decode to: a read whose bytes
# are the same skips decoding and validation (bytes, not file metadata, decide: a same-size
# rewrite within the clock's granularity is still seen).
_CACHE: Final[OrderedDict[Path, tuple[bytes, Ledger]]] = OrderedDict()
_CACHE_LOCK: Final = threading.Lock()


@dataclass(frozen=True, slots=True)
class LedgerFile:
    """The ledger of one workspace.

    Attributes:
        root: the canonical workspace.
        lock_timeout: seconds a change waits for another process's change (then ``job_busy``).
    """

    root: Path
    lock_timeout: float = 5.0

    @classmethod
    def of(cls, workspace: str | os.PathLike[str], lock_timeout: float = 5.0) -> LedgerFile:
        """The ledger of ``workspace``.

        Raises:
            UnsafePathError: the workspace is relative or not a directory.
            StorageError: it does not exist.
        """
        return cls(canonical_workspace(workspace), lock_timeout)

    @property
    def directory(self) -> Path:
        """``<workspace>/.assistant``."""
        return self.root / LEDGER_DIR

    @property
    def path(self) -> Path:
        """``<workspace>/.assistant/memory-jobs.json``."""
        return self.directory / LEDGER_NAME

    def exists(self) -> bool:
        """Whether a ledger was ever written (an unsafe path counts as existing)."""
        try:
            os.lstat(self.path)
        except FileNotFoundError:
            return False
        except OSError:
            return True
        return True

    def read(self) -> Ledger:
        """The ledger as it is now (empty when missing). Creates nothing, takes no lock.

        Raises:
            JobCorruptError, JobLimitError, JobUnsafePathError, StorageError.
        """
        return self._read()[1]

    def _read(self) -> tuple[bytes, Ledger]:
        self._check_paths()
        try:
            fd = open_regular(self.path)  # never waits on a FIFO swapped in after the check
        except FileNotFoundError:
            return b"", Ledger()
        except SourceError:
            raise JobUnsafePathError(Messages.JOBS_UNSAFE_PATH) from None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise JobUnsafePathError(Messages.JOBS_UNSAFE_PATH) from None
            raise StorageError(Messages.JOBS_READ_FAILED) from error
        try:
            with os.fdopen(fd, "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode):
                    raise JobUnsafePathError(Messages.JOBS_UNSAFE_PATH)
                if info.st_size > MAX_LEDGER_BYTES:
                    raise JobLimitError(Messages.JOBS_LIMIT)
                data = handle.read(MAX_LEDGER_BYTES + 1)
        except OSError as error:
            raise StorageError(Messages.JOBS_READ_FAILED) from error
        if len(data) > MAX_LEDGER_BYTES:
            raise JobLimitError(Messages.JOBS_LIMIT)
        return data, _decoded(self.path, data)

    @contextmanager
    def change(self) -> Generator[Ledger]:
        """Read the ledger under the change lock; what the block leaves in it is written.

        Nothing is written when the block raises or leaves the ledger as it was.

        Raises:
            JobBusyError: another process kept the lock past ``lock_timeout``.
            JobCorruptError, JobLimitError (also when the result would exceed 4 MiB),
            JobUnsafePathError, StorageError.
        """
        self._check_paths()
        try:
            private_folder(self.directory, parents=False)
        except OSError as error:
            raise StorageError(Messages.JOBS_SAVE_FAILED) from error
        self._check_paths()
        lock = _lock(self.directory / f"{LEDGER_NAME}.lock", self.lock_timeout)
        if lock is None:
            raise JobBusyError(Messages.JOBS_BUSY)
        try:
            before, ledger = self._read()
            yield ledger
            after = encode_ledger(ledger)
            if after != before and (before or ledger != Ledger()):
                self._write(after)
                _remember(self.path, after, ledger)
        finally:
            _unlock(lock)

    @contextmanager
    def runner_claim(self) -> Generator[bool]:
        """Claim the runner lock without waiting; yields whether this caller holds it."""
        self._check_paths()
        lock = (
            _lock(self.directory / f"{LEDGER_NAME}.runner", 0.0)
            if self.directory.is_dir()
            else None
        )
        try:
            yield lock is not None
        finally:
            if lock is not None:
                _unlock(lock)

    def _write(self, data: bytes) -> None:
        if len(data) > MAX_LEDGER_BYTES:
            raise JobLimitError(Messages.JOBS_LIMIT)
        self._remove_stale_staging()
        staging = self.directory / f"{LEDGER_NAME}.{uuid.uuid4().hex}.tmp"
        try:
            write_synced(staging, data)
            os.replace(staging, self.path)
            fsync_directory(self.directory)
        except OSError as error:
            staging.unlink(missing_ok=True)
            raise StorageError(Messages.JOBS_SAVE_FAILED) from error

    def _remove_stale_staging(self) -> None:
        # Only ever called under the change lock: a staging file is then nobody's live write.
        try:
            with os.scandir(self.directory) as entries:
                stale = [
                    entry.path
                    for entry in entries
                    if entry.name.startswith(LEDGER_NAME + ".") and entry.name.endswith(".tmp")
                ]
        except OSError:
            return
        for path in stale:
            with suppress(OSError):  # a leftover costs disk space only; the next change retries
                os.unlink(path)

    def _check_paths(self) -> None:
        checks = (
            (self.directory, stat.S_ISDIR),
            (self.path, stat.S_ISREG),
            (self.directory / f"{LEDGER_NAME}.lock", stat.S_ISREG),
            (self.directory / f"{LEDGER_NAME}.runner", stat.S_ISREG),
        )
        for path, is_kind in checks:
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                if path == self.directory:
                    return  # nothing inside a missing folder
                continue
            except OSError as error:
                raise StorageError(Messages.JOBS_READ_FAILED) from error
            if not is_kind(mode):
                raise JobUnsafePathError(Messages.JOBS_UNSAFE_PATH)


def _decoded(path: Path, data: bytes) -> Ledger:
    with _CACHE_LOCK:
        cached = _CACHE.get(path)
    if cached is not None and cached[0] == data:
        return _copy(cached[1])
    ledger = decode_ledger(data)
    _remember(path, data, ledger)
    return _copy(ledger)


def _remember(path: Path, data: bytes, ledger: Ledger) -> None:
    with _CACHE_LOCK:
        _CACHE[path] = (data, _copy(ledger))
        _CACHE.move_to_end(path)
        while len(_CACHE) > _CACHED_LEDGERS:
            _CACHE.popitem(last=False)


def _copy(ledger: Ledger) -> Ledger:
    """A copy a caller may change (jobs and references are immutable; containers are not)."""
    return Ledger(
        list(ledger.turns),
        dict(ledger.counters),
        list(ledger.jobs),
        {session: list(refs) for session, refs in ledger.pending_sources.items()},
    )


def _lock(path: Path, timeout: float) -> int | None:
    """An exclusive kernel lock on ``path`` (created ``0600``), waited for up to ``timeout``
    seconds as the store's writers wait; ``None`` when it stays held or cannot be taken. The
    kernel frees it when the holder dies, so no stale lock is ever left behind."""
    try:
        fd = open_regular(path, os.O_RDWR | os.O_CREAT, 0o600)
    except (OSError, SourceError):
        return None
    try:
        wait_for_lock(fd, timeout)
    except MemquillError:
        os.close(fd)
        return None
    return fd


def _unlock(fd: int) -> None:
    try:
        portalocker.unlock(fd)
    except portalocker.LockException:
        pass  # closing the descriptor frees the lock anyway
    finally:
        os.close(fd)
