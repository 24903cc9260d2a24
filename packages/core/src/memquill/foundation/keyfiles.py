"""Owner-only secret key files in the user's data folder: created once, checked at every read.

memquill keeps two such keys (the record key that keys tombstone hashes, and the install key
that keys model fingerprints). Both follow one rule: 32 random bytes in a regular file, never a
symlink, readable by its owner only. A missing key is written whole and published with a hard
link (:func:`memquill.foundation.atomic.atomic_write`, ``exclusive``), so two processes racing agree
on one key (a link never replaces a file). Anything else about the file makes the read fail, so a
caller never falls back to something weaker.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Final

from memquill.errors import SourceError
from memquill.foundation.atomic import atomic_write, fsync_folder
from memquill.owner_only import private_folder
from memquill.paths import open_regular

__all__ = ["KEY_BYTES", "UnsafeKeyFile", "load_key_file", "read_key_file", "write_key_file"]

KEY_BYTES: Final = 32
"""The size of every key memquill keeps."""


class UnsafeKeyFile(Exception):
    """The key cannot be created, or its file is not what a key file must be.

    Carries no path or OS text: callers turn it into their own error.
    """


def load_key_file(path: Path) -> bytes:
    """The key at ``path``, created (with an owner-only folder) when missing.

    Raises:
        UnsafeKeyFile: it cannot be created or read, or it is a symlink, not a regular file,
            not exactly :data:`KEY_BYTES` long, or accessible to group or others.
    """
    try:
        try:
            return _read(path)
        except FileNotFoundError:
            _create(path)
            return _read(path)
    except (OSError, SourceError):
        raise UnsafeKeyFile() from None


def read_key_file(path: Path) -> bytes | None:
    """The key at ``path`` if there is one (``None`` when missing); nothing is created.

    Raises:
        UnsafeKeyFile: it exists but cannot be read, or is not what a key file must be.
    """
    try:
        return _read(path)
    except FileNotFoundError:
        return None
    except (OSError, SourceError):
        raise UnsafeKeyFile() from None


def write_key_file(path: Path, key: bytes, *, replace: bool = False) -> None:
    """Store ``key`` at ``path`` (owner-only, fsynced, in an owner-only folder).

    Without ``replace`` an existing file is left as it is (a racing writer of another key
    wins, as :func:`load_key_file`'s creation does); with it, the new key replaces the file
    in one rename.

    Raises:
        UnsafeKeyFile: ``key`` is not :data:`KEY_BYTES` long, or it cannot be written.
    """
    if len(key) != KEY_BYTES:
        raise UnsafeKeyFile()
    try:
        _publish(path, key, replace=replace)
    except OSError:
        raise UnsafeKeyFile() from None


def _read(path: Path) -> bytes:
    descriptor = open_regular(path)  # no symlink, no FIFO, never blocks
    try:
        info = os.fstat(descriptor)
        unsafe = os.name == "posix" and info.st_mode & 0o077
        if info.st_size != KEY_BYTES or unsafe:
            raise UnsafeKeyFile()
        data = os.read(descriptor, KEY_BYTES + 1)
    finally:
        os.close(descriptor)
    if len(data) != KEY_BYTES:
        raise UnsafeKeyFile()
    return data


def _create(path: Path) -> None:
    _publish(path, secrets.token_bytes(KEY_BYTES), replace=False)


def _publish(path: Path, key: bytes, *, replace: bool) -> None:
    # A key lost to a power cut would be replaced by a new one, and every hash the old one keyed
    # (operation hashes, forgotten-text fingerprints) would stop matching: the folders made for
    # it are synced into their parents, as the key file is into its own by ``atomic_write``.
    for folder in private_folder(path.parent):
        fsync_folder(folder.parent)
    # Without ``replace`` a racing process that published first wins, and both then read it.
    with contextlib.suppress(FileExistsError):
        atomic_write(path, key, exclusive=not replace)
