"""The records file's bounded no-follow read, and the private backup of a records file about
to be replaced (written whole, as every file is: :mod:`memquill.atomic`)."""

from __future__ import annotations

import errno
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from memquill.atomic import atomic_write
from memquill.errors import Messages, SourceError, UnsafePathError
from memquill.paths import open_regular
from memquill.store._capacity import full_error
from memquill.store._codec import MAX_STORE_BYTES

__all__ = ["BACKUP_PREFIX", "read_bounded", "write_backup"]

BACKUP_PREFIX: Final = ".records-backup-"
"""Backups are ``memory/.records-backup-<UTC time>.md``: private, like every ``.records-`` file."""


def read_bounded(file: Path, limit: int = MAX_STORE_BYTES) -> bytes:
    """The records file's bytes (empty when missing), refusing more than ``limit`` bytes (the
    store's capacity, default 2 MiB).

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
        if os.fstat(handle.fileno()).st_size > limit:
            raise full_error(limit)
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise full_error(limit)
    return data


def write_backup(directory: Path, raw: bytes, now: datetime) -> Path:
    """Write ``raw`` (a records file about to be replaced) to a new backup file in
    ``directory``, durably (the file and its name); its path.

    Raises:
        OSError: it could not be written (``FileExistsError``: a racing backup took the name).
    """
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    for attempt in range(100):
        suffix = f"-{attempt}" if attempt else ""
        path = directory / f"{BACKUP_PREFIX}{stamp}{suffix}.md"
        if not os.path.lexists(path):
            break
    else:
        path = directory / f"{BACKUP_PREFIX}{stamp}-{uuid.uuid4()}.md"
    atomic_write(path, raw, exclusive=True)
    return path
