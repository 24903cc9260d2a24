"""Durable file primitives: a bounded no-follow read, a synced exclusive write, directory fsync,
and the private backup of a records file about to be replaced."""

from __future__ import annotations

import errno
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from memquill.errors import CapacityError, Messages, SourceError, UnsafePathError
from memquill.paths import open_regular
from memquill.store._codec import MAX_STORE_BYTES

__all__ = ["BACKUP_PREFIX", "fsync_directory", "read_bounded", "write_backup", "write_synced"]

BACKUP_PREFIX: Final = ".records-backup-"
"""Backups are ``memory/.records-backup-<UTC time>.md``: private, like every ``.records-`` file."""

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
# Filesystems (and Windows) that cannot fsync a directory say so with these; nothing to do then.
_IGNORED_DIR_FSYNC: Final = frozenset(
    {errno.EINVAL, errno.EPERM, errno.EISDIR, errno.EBADF, errno.ENOTSUP}
)


def read_bounded(file: Path) -> bytes:
    """The records file's bytes (empty when missing), refusing more than 2 MiB.

    Never blocks: a FIFO (or any other non-regular file) is refused as an unsafe path.
    """
    try:
        fd = open_regular(file)
    except FileNotFoundError:
        return b""
    except SourceError as error:
        raise UnsafePathError(Messages.MEMORY_PATH) from error
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnsafePathError(Messages.MEMORY_PATH) from error
        raise
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > MAX_STORE_BYTES:
            raise CapacityError(Messages.FULL)
        data = handle.read(MAX_STORE_BYTES + 1)
    if len(data) > MAX_STORE_BYTES:
        raise CapacityError(Messages.FULL)
    return data


def write_synced(path: Path, data: bytes) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
    fd = os.open(path, flags, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as error:
        if error.errno in _IGNORED_DIR_FSYNC:
            return
        raise
    try:
        os.fsync(fd)
    except OSError as error:
        if error.errno not in _IGNORED_DIR_FSYNC:
            raise
    finally:
        os.close(fd)


def write_backup(directory: Path, raw: bytes, now: datetime) -> Path:
    """Write ``raw`` (a records file about to be replaced) to a new backup file in
    ``directory``, fsynced; its path."""
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    for attempt in range(100):
        suffix = f"-{attempt}" if attempt else ""
        path = directory / f"{BACKUP_PREFIX}{stamp}{suffix}.md"
        if not os.path.lexists(path):
            break
    else:
        path = directory / f"{BACKUP_PREFIX}{stamp}-{uuid.uuid4()}.md"
    write_synced(path, raw)
    return path
