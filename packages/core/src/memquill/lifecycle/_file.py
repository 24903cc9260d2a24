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
import uuid
from collections.abc import Generator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memquill.errors import (
    BusyError,
    JobBusyError,
    JobLimitError,
    JobUnsafePathError,
    Messages,
    StorageError,
)
from memquill.lifecycle._codec import decode_ledger, encode_ledger
from memquill.lifecycle._model import MAX_LEDGER_BYTES, Ledger
from memquill.paths import canonical_workspace
from memquill.store._fileio import fsync_directory, write_synced
from memquill.store._lock import WriterLock

__all__ = ["LEDGER_PATH", "LedgerFile"]

LEDGER_DIR: Final = ".assistant"
LEDGER_NAME: Final = "memory-jobs.json"
LEDGER_PATH: Final = f"{LEDGER_DIR}/{LEDGER_NAME}"
"""Where the ledger lives, relative to the workspace."""
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


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
        self._check_paths()
        try:
            fd = os.open(self.path, os.O_RDONLY | _NOFOLLOW)
        except FileNotFoundError:
            return Ledger()
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
        return decode_ledger(data)

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
            self.directory.mkdir(mode=0o700, exist_ok=True)
        except OSError as error:
            raise StorageError(Messages.JOBS_SAVE_FAILED) from error
        self._check_paths()
        lock = WriterLock(self.directory / f"{LEDGER_NAME}.lock", self.lock_timeout)
        try:
            lock.__enter__()
        except BusyError:
            raise JobBusyError(Messages.JOBS_BUSY) from None
        try:
            ledger = self.read()
            before = encode_ledger(ledger)
            yield ledger
            after = encode_ledger(ledger)
            if after != before:
                self._write(after)
        finally:
            lock.__exit__(None, None, None)

    @contextmanager
    def runner_claim(self) -> Generator[bool]:
        """Claim the runner lock without waiting; yields whether this caller holds it."""
        self._check_paths()
        if not self.directory.is_dir():
            yield False
            return
        try:
            lock = WriterLock(self.directory / f"{LEDGER_NAME}.runner", 0.0)
            lock.__enter__()
        except BusyError:
            yield False
            return
        try:
            yield True
        finally:
            lock.__exit__(None, None, None)

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
