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
from pathlib import Path
from typing import Final, Protocol

from memquill.errors import Messages, StorageError
from memquill.keyfiles import KEY_BYTES, UnsafeKeyFile, load_key_file
from memquill.paths import user_data_dir

__all__ = ["KEYED_PREFIX", "KEY_BYTES", "KEY_FILE", "KeySource", "RecordKey", "operation_hashes"]

KEY_FILE: Final = "record-key.v1"
KEYED_PREFIX: Final = "hmac-v1:"
"""How a keyed ``operationHash`` starts (an unkeyed one is 64 hex digits)."""
_DOMAIN: Final = b"memquill:operation-hash:v1\0"


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
            return load_key_file(self.path)
        except UnsafeKeyFile:
            raise StorageError(Messages.RECORD_KEY_UNAVAILABLE) from None


def operation_hashes(key: bytes, material: str) -> tuple[str, str]:
    """``(keyed, unkeyed)`` hashes of an idempotency or correction key.

    memquill writes the keyed one; a record carrying either is the same operation.
    """
    data = material.encode("utf-8")
    keyed = KEYED_PREFIX + hmac.new(key, _DOMAIN + data, hashlib.sha256).hexdigest()
    return keyed, hashlib.sha256(data).hexdigest()
