"""Folders and files only their owner can use, whatever the process's umask.

Everything memquill derives from a person's memory outside ``records.md`` — the search index
and every file SQLite makes beside it, locks, the PostgreSQL mirror, keys, receipts, bindings,
backups, the job ledger — is created ``0700`` (folders) or ``0600`` (files). A mode given to
``mkdir``/``open`` only ever loses bits to the umask, so the one risk is a default mode (``open``
and ``mkdir`` without one, ``parents=True``, a library's own files); these helpers are how
memquill makes such paths instead. Folders and files memquill made before this rule, found
wider, are narrowed when memquill opens them (``tighten``), only if the current user owns them.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from memquill.errors import SourceError
from memquill.foundation.safe_read import open_regular

__all__ = ["FILE_MODE", "FOLDER_MODE", "private_file", "private_folder", "tighten_file"]

FOLDER_MODE: Final = 0o700
FILE_MODE: Final = 0o600


def private_folder(path: Path, *, parents: bool = True, tighten: bool = False) -> tuple[Path, ...]:
    """Make ``path`` a folder, creating it (and, with ``parents``, each missing parent) ``0700``;
    return the folders this call created, outermost first (a caller that promises durability
    syncs each one's parent: a new folder's name is durable only then).

    An existing folder is left as it is, unless ``tighten`` (a folder that is memquill's own):
    then group and other permissions are removed if the current user owns it.

    Raises:
        OSError: a part cannot be created, or is not a folder; without ``parents``, a missing
            parent (``FileNotFoundError``).
    """
    missing: list[Path] = []
    current = path
    while not current.is_dir():
        missing.append(current)
        if current.parent == current or not parents:
            break
        current = current.parent
    created: list[Path] = []
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue  # made meanwhile by another process: theirs to set
        created.append(folder)
        # A umask can only remove bits; one that removed the owner's would leave it unusable.
        if stat.S_IMODE(os.lstat(folder).st_mode) != FOLDER_MODE:
            os.chmod(folder, FOLDER_MODE)
    if tighten and not missing:
        _narrow(path, FOLDER_MODE)
    return tuple(created)


def private_file(path: Path) -> None:
    """Make sure the regular file ``path`` exists (empty when created) and is owner-only.

    Used for files another library creates with its own default mode (SQLite makes its
    database ``0644``, and its ``-wal`` and ``-shm`` files with the database's mode), and for
    lock files a library opens by name. Never follows a symlink, never blocks on a FIFO.

    Raises:
        OSError: it cannot be created or opened. SourceError: it is not a regular file.
    """
    try:
        # An existing file is only narrowed (a read-only disk too).
        fd = open_regular(path, os.O_RDONLY, FILE_MODE)
    except FileNotFoundError:
        fd = open_regular(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
        created = True
    else:
        created = False
    try:
        if created and os.name == "posix":
            os.fchmod(fd, FILE_MODE)  # a umask that took the owner's bits, too
        else:
            _narrow_fd(fd)
    finally:
        os.close(fd)


def tighten_file(path: Path) -> None:
    """Remove group and other permissions of the file at ``path`` if it exists and is ours."""
    try:
        fd = open_regular(path, os.O_RDONLY, FILE_MODE)
    except (OSError, SourceError):
        return  # missing, or not a regular file: nothing to narrow
    try:
        _narrow_fd(fd)
    finally:
        os.close(fd)


def _narrow_fd(fd: int) -> None:
    if os.name != "posix":
        return  # modes are not how Windows keeps a user's files private
    info = os.fstat(fd)
    if info.st_mode & 0o077 and _ours(info):
        os.fchmod(fd, stat.S_IMODE(info.st_mode) & 0o700)


def _narrow(path: Path, mode: int) -> None:
    if os.name != "posix":
        return
    try:
        info = os.stat(path)
    except OSError:
        return
    if info.st_mode & 0o077 and _ours(info):
        os.chmod(path, mode)


def _ours(info: os.stat_result) -> bool:
    return info.st_uid == os.getuid()
