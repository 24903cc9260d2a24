"""Files replaced whole: a process killed at any moment leaves the old file or the new one.

Every file memquill writes in place of another goes through :func:`atomic_write` — the records
file, the job ledger, the session bindings, block receipts, key files, the PostgreSQL mirror,
backups, the git attributes ``memquill sync setup`` adds — by one rule:

1. the new bytes go to a staging file beside the target (the same folder, so the rename never
   crosses file systems), named ``.<stem>-<random hex>.tmp`` (:func:`staging_affixes`),
   created exclusively and never through a symlink, its mode set exactly whatever the umask:
   ``0600`` unless the caller says otherwise (:data:`memquill.owner_only.FILE_MODE`);
2. every byte is written and the staging file is fsynced;
3. the caller's ``check`` runs, if any (a compare-and-swap on the bytes it read): raising there
   leaves the old file;
4. the staging file is renamed over the target — or, ``exclusive``, linked to it, so an
   existing file is never replaced;
5. the folder is fsynced, so the rename itself survives a power cut.

Any failure removes the staging file. A process killed between 1 and 4 leaves one behind, with
whatever it was writing: whoever next holds the file's lock removes it
(:func:`remove_staging`), before writing.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

from memquill.owner_only import FILE_MODE

__all__ = [
    "atomic_write",
    "fsync_folder",
    "remove_staging",
    "staging_affixes",
    "write_new",
]

_NEW: Final = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_STAGING_SUFFIX: Final = ".tmp"
# File systems that cannot fsync a folder say so with these; nothing to do then.
_NO_FOLDER_FSYNC: Final = frozenset(
    {errno.EINVAL, errno.EPERM, errno.EISDIR, errno.EBADF, errno.ENOTSUP}
)


def atomic_write(
    path: Path,
    data: bytes,
    *,
    mode: int | None = FILE_MODE,
    exclusive: bool = False,
    check: Callable[[], None] | None = None,
    sync_folder: bool = True,
) -> None:
    """Put ``data`` at ``path`` in one step (see the module doc).

    Args:
        path: the file to create or replace.
        data: its whole new content.
        mode: the file's exact permissions (``None``: as ``open`` makes a file, the umask's).
        exclusive: publish only if nothing is at ``path`` yet (``FileExistsError`` otherwise).
        check: called once the staging file is complete, before it replaces the old file.
        sync_folder: fsync the folder after the rename; a caller that must let go of a lock
            first passes ``False`` and calls :func:`fsync_folder` itself.

    Raises:
        OSError: it could not be written (nothing at ``path`` changed); whatever ``check``
            raises.
    """
    prefix, suffix = staging_affixes(path)
    # 128 random bits, as ``uuid4().hex`` would give, without loading ``uuid``.
    staging = path.with_name(f"{prefix}{os.urandom(16).hex()}{suffix}")
    try:
        write_new(staging, data, mode=mode)
        if check is not None:
            check()
        if exclusive:
            os.link(staging, path)  # a link never replaces a file: a racing writer wins
        else:
            os.replace(staging, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise
    if exclusive:
        with contextlib.suppress(OSError):  # published already; a leftover is only disk space
            os.unlink(staging)
    if sync_folder:
        fsync_folder(path.parent)


def write_new(path: Path, data: bytes, *, mode: int | None = FILE_MODE) -> None:
    """Create ``path`` exclusively (no symlink followed), write all of ``data`` and fsync it.

    ``mode`` is set exactly, whatever the umask (``None``: the umask decides, as for ``open``).
    A failure after creation removes the file again.

    Raises:
        OSError: ``FileExistsError`` when something is at ``path``; any write failure.
    """
    fd = os.open(path, _NEW, 0o666 if mode is None else mode)
    try:
        try:
            if mode is not None and os.name == "posix":
                os.fchmod(fd, mode)  # a umask that took bits from the owner, too
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def fsync_folder(folder: Path) -> None:
    """Make the folder's entries durable (renames, links, removals); a no-op where folders
    cannot be synced.

    Raises:
        OSError: the folder cannot be opened or synced for another reason.
    """
    if os.name == "nt":
        return  # Windows cannot open a folder to sync it
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as error:
        if error.errno in _NO_FOLDER_FSYNC:
            return
        raise
    try:
        os.fsync(fd)
    except OSError as error:
        if error.errno not in _NO_FOLDER_FSYNC:
            raise
    finally:
        os.close(fd)


def staging_affixes(path: Path) -> tuple[str, str]:
    """How the staging files of ``path`` are named: ``(".<stem>-", ".tmp")``, where the stem is
    the name without leading dots and its last extension (``records.md``: ``.records-``)."""
    name = path.name.lstrip(".")
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return f".{stem}-", _STAGING_SUFFIX


def remove_staging(path: Path) -> tuple[str, ...]:
    """Remove the staging files of ``path`` a killed writer left (call only while holding the
    file's lock: a staging file is then nobody's live write). The names removed; the folder
    is fsynced after, so the removal is durable. A folder named like one is left alone.

    Raises:
        OSError: the folder cannot be listed or synced.
    """
    prefix, suffix = staging_affixes(path)
    removed: list[str] = []
    with os.scandir(path.parent) as entries:
        for entry in entries:
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(suffix)):
                continue
            if entry.is_dir(follow_symlinks=False):
                continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
                removed.append(name)
    if removed:
        fsync_folder(path.parent)
    return tuple(removed)
