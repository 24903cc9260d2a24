"""The writer lock: one kernel lock on ``memory/.records-lock`` per write transaction.

The operating system frees the lock the moment its holder dies, so a crashed writer never
leaves a stale lock behind and no lease, timeout or heartbeat is needed. The file's content
(machine, pid, nonce, since) is diagnostics for ``doctor`` only. The file is never deleted: a
deleted-and-recreated lock file would let two writers hold "the" lock at once.

A writer that finds the lock taken waits inside the kernel (:mod:`memquill.foundation.kernel_lock`),
which hands the lock over the moment it is released.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Generator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Final, Self

from memquill.errors import BusyError, MemquillError, Messages, SourceError, StorageError
from memquill.foundation.kernel_lock import probe, release_lock, wait_for_lock
from memquill.jsondoc import parse_json
from memquill.paths import open_regular

LOCK_NAME: Final = ".records-lock"
_OPEN_FLAGS: Final = (
    os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
_MAX_HOLDER_BYTES: Final = 4096
_NOT_WRITABLE: Final = frozenset(
    {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
)
_HOLDER_BYTES: Final = 256


def machine_id() -> str:
    """A stable, non-identifying id of this machine and user (for lock diagnostics)."""
    # Loaded here: a reader never takes the lock, and these cost a one-shot search's start.
    import hashlib
    import platform
    import socket

    seed = os.environ.get("MEMQUILL_MACHINE_ID") or "\0".join(
        (socket.gethostname(), platform.system(), platform.machine(), str(os.getuid()))
        if hasattr(os, "getuid")
        else (socket.gethostname(), platform.system(), platform.machine())
    )
    return "sha256:" + hashlib.sha256(seed.encode()).hexdigest()


class WriterLock:
    """An exclusive, cross-process lock, waited for up to ``timeout`` seconds.

    Use it as a context manager. Raises :class:`~memquill.errors.BusyError` when the lock is
    still held after ``timeout`` or the lock path cannot be used (a directory, a symlink), and
    :class:`~memquill.errors.StorageError` when the lock file cannot be opened for writing
    (permissions, a read-only or full disk).
    """

    def __init__(self, path: Path, timeout: float) -> None:
        self._path = path
        self._timeout = timeout
        self._fd: int | None = None

    def __enter__(self) -> Self:
        try:
            # Non-blocking, regular files only: a FIFO planted as the lock never hangs a writer.
            fd = open_regular(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        except SourceError as error:
            raise BusyError(Messages.LOCK_HELD) from error
        except OSError as error:
            if error.errno in _NOT_WRITABLE:
                # Nobody holds the lock: the disk refuses writes. Waiting cannot help, so this
                # is ``storage``; ``busy`` would make a caller that retries on busy retry forever.
                raise StorageError(Messages.UNAVAILABLE) from error
            raise BusyError(Messages.LOCK_HELD) from error
        try:
            self._wait_for(fd)
            self._write_holder(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        import portalocker  # loaded by the wait that took the lock; a reader never loads it

        try:
            portalocker.unlock(fd)
        except portalocker.LockException as release_error:
            # Closing the descriptor below frees the lock anyway; never mask the real error.
            if kind is None:
                os.close(fd)
                raise BusyError(Messages.LOCK_RELEASE) from release_error
        os.close(fd)

    def _wait_for(self, fd: int) -> None:
        wait_for_lock(fd, self._timeout)

    @staticmethod
    def _write_holder(fd: int) -> None:
        import uuid  # only a writer names itself (``uuid`` loads ``platform`` too)

        holder = {
            "machineId": machine_id(),
            "pid": os.getpid(),
            "nonce": str(uuid.uuid4()),
            "since": datetime.now(UTC).isoformat(timespec="milliseconds"),
        }
        # Padded with spaces (still valid JSON) to a fixed size, so the next holder overwrites
        # it in place: truncating on every acquisition costs a journal commit on some disks.
        data = json.dumps(holder, separators=(",", ":")).encode().ljust(_HOLDER_BYTES)
        try:
            os.pwrite(fd, data, 0)
            if os.fstat(fd).st_size > len(data):
                os.ftruncate(fd, len(data))
        except OSError:
            pass  # diagnostics only: a full disk must not stop the writer from holding the lock


@contextmanager
def between_writes(path: Path, timeout: float) -> Generator[None]:
    """Hold the lock ``path`` shared for the body: no writer is inside a write meanwhile.

    Writers hold it exclusively from their read to their last fsync, so a file read here is
    one a writer finished (or a killed writer left). Holds nothing when there is no lock file
    (no writer ever came) or it cannot be opened for reading; it never creates one.

    Raises:
        BusyError: a writer still held the lock after ``timeout`` seconds.
    """
    try:
        fd = open_regular(path)
    except (OSError, SourceError):
        yield
        return
    try:
        wait_for_lock(fd, timeout, shared=True)
    except BaseException:
        os.close(fd)
        raise
    try:
        yield
    finally:
        release_lock(fd)


def lock_is_held(path: Path) -> bool:
    """Whether another process holds the lock now (never creates the lock file).

    An unusable lock path (a directory, a symlink, unreadable) counts as held: it cannot be
    verified free.
    """
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return False
    except (OSError, SourceError):
        return True
    try:
        return probe(fd)
    except MemquillError:
        return True
    finally:
        os.close(fd)


def lock_holder(path: Path) -> dict[str, object] | None:
    """The diagnostics the current (or last) holder wrote, if readable."""
    try:
        fd = open_regular(path)
        try:
            data = os.read(fd, _MAX_HOLDER_BYTES)
        finally:
            os.close(fd)
        parsed: object = parse_json(data)
    except (OSError, ValueError, SourceError):
        return None
    return dict(parsed) if isinstance(parsed, dict) else None  # pyright: ignore[reportUnknownArgumentType]
