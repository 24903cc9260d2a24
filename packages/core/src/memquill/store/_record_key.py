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

Every record memquill writes with a keyed hash also carries ``keyId``: a fingerprint of the key
(16 hex digits of an HMAC under it, which tells nothing about the key), so ``doctor`` can say
when records were written under a key this machine does not hold. A workspace moved or synced
to a machine without the key still reads and writes, and its tombstones still block
re-extraction from the same message (source keys are not hashed), but a retried save of a
forgotten fact under the same idempotency key is no longer recognised there, and two machines
saving the same fact are not recognised as one write. ``memquill key export`` / ``key import``
carry the key (``docs/sync.md``). A machine may also hold other keys, in ``record-keys.v1/``
beside it: their hashes are recognised (duplicates, tombstones), new records use the current
one.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final, Literal, Protocol

from memquill.errors import InvalidInputError, Messages, StorageError
from memquill.foundation.keyfiles import (
    KEY_BYTES,
    UnsafeKeyFile,
    load_key_file,
    read_key_file,
    write_key_file,
)
from memquill.paths import user_data_dir
from memquill.store._record import JSONValue

KEY_FILE: Final = "record-key.v1"
KNOWN_FOLDER: Final = "record-keys.v1"
"""Beside the key: other keys whose hashes this machine recognises (one file per key id)."""
KEYED_PREFIX: Final = "hmac-v1:"
"""How a keyed ``operationHash`` starts (an unkeyed one is 64 hex digits)."""
KEY_ID_FIELD: Final = "keyId"
"""The metadata key naming the key a record's ``operationHash`` was made with."""
_DOMAIN: Final = b"memquill:operation-hash:v1\0"
_ID_DOMAIN: Final = b"memquill:key-id:v1"
_TEXT_PREFIX: Final = "memquill-record-key:v1:"
_KEY_ID: Final = re.compile(r"[0-9a-f]{16}")
_MAX_KNOWN: Final = 64

Installed = Literal["installed", "current", "known", "added", "switched"]
"""What importing a key did: the machine had none and now uses it (``installed``); it already
used it (``current``) or recognised it (``known``); it now recognises it too (``added``); it
now writes with it and still recognises its old key (``switched``)."""


class KeySource(Protocol):
    """Where a store's record key comes from: a file for the file store, the database for a
    shared one (so every host writes and recognises the same hashes)."""

    def load(self) -> bytes:
        """The 32-byte key (created on first use).

        Raises:
            StorageError: it cannot be created or read safely.
        """
        ...

    def known(self) -> tuple[bytes, ...]:
        """Every key whose hashes this store recognises, the current one first (if there is
        one yet); nothing is created.

        Raises:
            StorageError: a key file is unsafe or cannot be read.
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

    @property
    def folder(self) -> Path:
        """Where the other keys this machine recognises live."""
        return self.path.with_name(KNOWN_FOLDER)

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

    def current(self) -> bytes | None:
        """The key if this machine has one yet (nothing is created).

        Raises:
            StorageError: it is unsafe or cannot be read.
        """
        try:
            return read_key_file(self.path)
        except UnsafeKeyFile:
            raise StorageError(Messages.RECORD_KEY_UNAVAILABLE) from None

    def known(self) -> tuple[bytes, ...]:
        current = self.current()
        found = [current] if current is not None else []
        try:
            names = sorted(p.name for p in self.folder.iterdir() if _KEY_ID.fullmatch(p.name))
        except FileNotFoundError:
            names = []
        except OSError:
            raise StorageError(Messages.RECORD_KEY_UNAVAILABLE) from None
        for name in names[:_MAX_KNOWN]:
            try:
                key = read_key_file(self.folder / name)
            except UnsafeKeyFile:
                raise StorageError(Messages.RECORD_KEY_UNAVAILABLE) from None
            if key is not None and key not in found:
                found.append(key)
        return tuple(found)

    def install(self, key: bytes, *, use: bool = False) -> Installed:
        """Make this machine recognise ``key``; write with it when it has no key yet, or with
        ``use`` (its own key is then kept, and still recognised).

        Raises:
            StorageError: a key file cannot be read or written safely.
        """
        try:
            current = read_key_file(self.path)
            if current is None:
                write_key_file(self.path, key)
                if read_key_file(self.path) == key:
                    return "installed"
                current = self.current()  # another process made one meanwhile
            if current == key:
                return "current"
            if not use:
                if key in self.known():
                    return "known"
                write_key_file(self.folder / key_id(key), key)
                return "added"
            assert current is not None
            write_key_file(self.folder / key_id(current), current)
            write_key_file(self.path, key, replace=True)
            return "switched"
        except UnsafeKeyFile:
            raise StorageError(Messages.RECORD_KEY_UNAVAILABLE) from None


def operation_hashes(key: bytes, material: str) -> tuple[str, str]:
    """``(keyed, unkeyed)`` hashes of an idempotency or correction key.

    memquill writes the keyed one; a record carrying either is the same operation.
    """
    data = material.encode("utf-8")
    return _keyed_hash(key, data), hashlib.sha256(data).hexdigest()


def recognised_hashes(keys: Iterable[bytes], material: str) -> frozenset[str]:
    """Every hash a record of the operation ``material`` may carry: keyed under each of
    ``keys``, and the original system's unkeyed one."""
    return written_and_recognised(tuple(keys), material)[1]


def written_and_recognised(keys: Sequence[bytes], material: str) -> tuple[str, frozenset[str]]:
    """The hash a record of the operation ``material`` written under ``keys[0]`` carries
    (``""``: no keys), and :func:`recognised_hashes` of it: each hash computed once (a save
    computed its keyed hash twice, and the unkeyed one once more per key)."""
    data = material.encode("utf-8")
    keyed = [_keyed_hash(key, data) for key in keys]
    unkeyed = hashlib.sha256(data).hexdigest()
    return (keyed[0] if keyed else ""), frozenset((*keyed, unkeyed))


def _keyed_hash(key: bytes, data: bytes) -> str:
    return KEYED_PREFIX + hmac.new(key, _DOMAIN + data, hashlib.sha256).hexdigest()


def distinct_keys(key: bytes, others: Iterable[bytes]) -> tuple[bytes, ...]:
    """``key``, then each of ``others`` not already there: the keys a write computes hashes
    and fingerprints under (a key source's known keys begin with its current one, so each was
    computed twice)."""
    return tuple(dict.fromkeys((key, *others)))


@functools.lru_cache(maxsize=16)  # a store writes with one key: an HMAC per record saved
def key_id(key: bytes) -> str:
    """The key's fingerprint: 16 hex digits of an HMAC under it (it tells nothing about it)."""
    return hmac.new(key, _ID_DOMAIN, hashlib.sha256).hexdigest()[:16]


def keyed_fields(key: bytes, material: str) -> dict[str, JSONValue]:
    """The metadata a record written by the operation ``material`` carries for its hash."""
    return hash_fields(key, operation_hashes(key, material)[0])


def hash_fields(key: bytes, operation_hash: str) -> dict[str, JSONValue]:
    """The metadata a record carries for ``operation_hash``, its operation's hash keyed under
    ``key`` (:func:`keyed_fields`, the hash computed already)."""
    return {"operationHash": operation_hash, KEY_ID_FIELD: key_id(key)}


def key_text(key: bytes) -> str:
    """The key as one line of text to carry to another machine (``memquill key export``)."""
    encoded = base64.urlsafe_b64encode(key).decode().rstrip("=")
    return f"{_TEXT_PREFIX}{encoded}:{key_id(key)}\n"


def key_from_text(text: str) -> bytes:
    """The key a line written by :func:`key_text` carries.

    Raises:
        InvalidInputError: the text is not such a line, or it was damaged (its fingerprint
            does not match).
    """
    line = text.strip()
    if not line.startswith(_TEXT_PREFIX) or line.count(":") != 3:
        raise InvalidInputError(Messages.KEY_TEXT)
    encoded, fingerprint = line[len(_TEXT_PREFIX) :].split(":")
    try:
        key = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except (binascii.Error, ValueError):
        raise InvalidInputError(Messages.KEY_TEXT) from None
    if len(key) != KEY_BYTES or key_id(key) != fingerprint:
        raise InvalidInputError(Messages.KEY_TEXT)
    return key
