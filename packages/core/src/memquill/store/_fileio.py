"""The records file's bounded no-follow read (with the file's signature), the durable append
of new blocks to it (with the in-place erasure of the blocks a ``v3`` forget claims), and the
private backup of a records file about to be replaced (written
whole: :mod:`memquill.foundation.atomic`)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, TypeAlias

from memquill.errors import ConflictError, Messages, SourceError, UnsafePathError
from memquill.foundation.atomic import atomic_write
from memquill.paths import open_regular
from memquill.store._capacity import full_error
from memquill.store._codec import MAX_STORE_BYTES

BACKUP_PREFIX: Final = ".records-backup-"
"""Backups are ``memory/.records-backup-<UTC time>.md``: private, like every ``.records-`` file."""


Signature: TypeAlias = tuple[int, int, int, int, int]
"""What identifies one state of a file without reading it: device, inode, size, and the
modification and change times in nanoseconds (:func:`signature_of`)."""


def signature_of(status: os.stat_result) -> Signature:
    """The :data:`Signature` of a file from its ``stat``."""
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def read_bounded(file: Path, limit: int = MAX_STORE_BYTES) -> bytes:
    """The records file's bytes (empty when missing), refusing more than ``limit`` bytes (the
    store's capacity, default 2 MiB).

    Never blocks: a FIFO (or any other non-regular file) is refused as an unsafe path.
    """
    return read_signed(file, limit)[0]


def read_signed(file: Path, limit: int = MAX_STORE_BYTES) -> tuple[bytes, Signature | None]:
    """:func:`read_bounded`, with the file's :data:`Signature` when it did not change while
    it was read (``None``: it changed, or it is missing)."""
    try:
        fd = open_regular(file)
    except FileNotFoundError:
        return b"", None
    except SourceError as error:
        raise UnsafePathError(Messages.MEMORY_PATH) from error
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnsafePathError(Messages.MEMORY_PATH) from error
        raise
    with os.fdopen(fd, "rb") as handle:
        before = signature_of(os.fstat(handle.fileno()))
        if before[2] > limit:
            raise full_error(limit)
        data = handle.read(limit + 1)
        after = signature_of(os.fstat(handle.fileno()))
    if len(data) > limit:
        raise full_error(limit)
    return data, after if after == before and after[2] == len(data) else None


def file_signature(file: Path) -> Signature | None:
    """The records file's :data:`Signature` now (``None``: missing, or not a regular file)."""
    try:
        status = os.stat(file, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return signature_of(status) if stat.S_ISREG(status.st_mode) else None


def append_durably(
    file: Path, tail: bytes, expected: Signature, overwrite: Sequence[tuple[int, bytes]] = ()
) -> Signature:
    """Append ``tail`` to ``file`` if it is still the file with the signature ``expected``,
    then fsync it (data and size: the file's name is durable already); then write each
    ``overwrite`` (offset, bytes) in place and fsync again; its new signature.

    A failure part-way (a full disk) cuts the file back to its old size, so it leaves no torn
    tail behind (a power cut still may: ``doctor`` names it, ``docs/security.md``). The
    overwrites come only once the tail is durable: they erase what the tail's tombstones
    claim, so the file reads the same before, during and after them (a failure leaves blocks
    the next writer erases).

    Raises:
        ConflictError: the file is not the one expected (someone else changed it).
        OSError: it could not be written or synced.
    """
    fd = open_regular(file, os.O_WRONLY | os.O_APPEND)
    try:
        if signature_of(os.fstat(fd)) != expected:
            raise ConflictError(Messages.CHANGED_WHILE_SAVING)
        try:
            view = memoryview(tail)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, expected[2])
                os.fsync(fd)
            raise
        appended = signature_of(os.fstat(fd))
        if overwrite:
            # pwrite on an O_APPEND descriptor appends on Linux: write through a second one.
            in_place = open_regular(file, os.O_WRONLY)
            try:
                if signature_of(os.fstat(in_place))[:2] != expected[:2]:
                    raise ConflictError(Messages.CHANGED_WHILE_SAVING)  # renamed meanwhile
                for offset, data in overwrite:
                    view = memoryview(data)
                    while view:
                        written = os.pwrite(in_place, view, offset)
                        view, offset = view[written:], offset + written
                os.fsync(in_place)
                status = os.fstat(in_place)
                if signature_of(status) == appended:
                    # Same size, and the clock may not have ticked since the append: a reader
                    # that saw the file between the two must not take it for this one.
                    os.utime(in_place, ns=(status.st_atime_ns, status.st_mtime_ns + 1))
            finally:
                os.close(in_place)
        return signature_of(os.fstat(fd))
    finally:
        os.close(fd)


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
