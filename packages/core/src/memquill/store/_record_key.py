"""The record key: the secret behind the operation hashes memquill writes into ``records.md``.

A record's ``operationHash`` lets the store recognise a retried save (``duplicate``) and refuse
one whose fact was corrected or forgotten (``blocked``). The original system writes the plain
sha256 of the idempotency key, and the default keys are made from the content (and the session
id stored beside it), so anyone holding a copy of ``records.md`` could test guesses of a
forgotten fact: all 10,000 four-digit PINs take milliseconds. memquill writes
``hmac-v1:`` + HMAC-SHA256 under this key instead, and still recognises the unkeyed hashes the
original system wrote, for blocking and for idempotency alike.

The key is 32 random bytes in ``memquill/record-key.v1`` in the user's data folder, outside every
workspace. It is created when a write first needs it (an exclusive temporary file published with
a hard link, so two processes racing agree on one key) and read again at every write. It must be
a regular file, never a symlink, exactly 32 bytes, readable by its owner only; anything else
fails the write with ``storage`` rather than fall back to hashes that confirm guesses.

A store kept in PostgreSQL keeps its key in its own row instead (never in the exported bytes),
so every host sharing it writes and recognises the same hashes.

A workspace moved to a machine without this key still reads and writes, and its tombstones still
block re-extraction from the same message (source keys are not hashed), but a retried save of a
forgotten fact under the same idempotency key is no longer recognised. Copy the key file along
(``docs/security.md`` says how) to keep that guarantee.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path
from typing import Final, Protocol

from memquill.errors import Messages, SourceError, StorageError
from memquill.paths import open_regular, user_data_dir

__all__ = ["KEYED_PREFIX", "KEY_BYTES", "KEY_FILE", "KeySource", "RecordKey", "operation_hashes"]

KEY_FILE: Final = "record-key.v1"
KEY_BYTES: Final = 32
KEYED_PREFIX: Final = "hmac-v1:"
"""How a keyed ``operationHash`` starts (an unkeyed one is 64 hex digits)."""
_DOMAIN: Final = b"memquill:operation-hash:v1\0"
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class KeySource(Protocol):
    """Where a store's record key comes from: a file for the file store, the database for a
    shared one (so every host writes and recognises the same hashes)."""

    def load(self) -> bytes:
        """The 32-byte key (created on first use).

        Raises:
            StorageError: it cannot be created or read safely.
        """
        ...


class RecordKey:
    """The record key in ``directory`` (default: ``memquill`` in the user's data folder)."""

    def __init__(self, directory: Path | None = None) -> None:
        self._directory = directory

    @property
    def path(self) -> Path:
        """Where the key lives."""
        return (self._directory or user_data_dir() / "memquill") / KEY_FILE

    def load(self) -> bytes:
        """The key, created when missing.

        Raises:
            StorageError: it cannot be created, or it is a symlink, not a regular file, not
                exactly 32 bytes, or accessible to group or others.
        """
        try:
            try:
                return self._read()
            except FileNotFoundError:
                self._create()
                return self._read()
        except (OSError, SourceError) as error:
            raise StorageError(Messages.RECORD_KEY_UNAVAILABLE) from error

    def _read(self) -> bytes:
        descriptor = open_regular(self.path)  # no symlink, no FIFO, never blocks
        try:
            info = os.fstat(descriptor)
            unsafe = os.name == "posix" and info.st_mode & 0o077
            if info.st_size != KEY_BYTES or unsafe:
                raise StorageError(Messages.RECORD_KEY_UNAVAILABLE)
            data = os.read(descriptor, KEY_BYTES + 1)
        finally:
            os.close(descriptor)
        if len(data) != KEY_BYTES:
            raise StorageError(Messages.RECORD_KEY_UNAVAILABLE)
        return data

    def _create(self) -> None:
        folder = self.path.parent
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = folder / f".{KEY_FILE}.{secrets.token_hex(8)}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        try:
            os.write(descriptor, secrets.token_bytes(KEY_BYTES))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        try:
            # A hard link never replaces an existing key: a racing process that published
            # first wins, and both then read the same file.
            os.link(temporary, self.path)
        except FileExistsError:
            pass
        finally:
            temporary.unlink(missing_ok=True)


def operation_hashes(key: bytes, material: str) -> tuple[str, str]:
    """``(keyed, unkeyed)`` hashes of an idempotency or correction key.

    memquill writes the keyed one; a record carrying either is the same operation.
    """
    data = material.encode("utf-8")
    keyed = KEYED_PREFIX + hmac.new(key, _DOMAIN + data, hashlib.sha256).hexdigest()
    return keyed, hashlib.sha256(data).hexdigest()
