"""The private install key and the keyed fingerprints made with it.

A fingerprint names a model configuration without revealing it: ``hmac-v1:`` + HMAC-SHA256 of
the model's identity (family, name and secret material) under a 32-byte install key kept in the
user's data folder. Without the key, a fingerprint cannot be checked against a guessed API key,
and the key never leaves the machine.

The key file must be a regular file (never a symlink), exactly 32 bytes, readable by its owner
only; it is created when missing (random bytes, written to an exclusive temporary file,
published with a hard link so two processes racing agree on one key). It is read again at every
use, so a ``chmod 644`` takes effect at once: anything wrong makes model assistance
``unavailable: identity_unavailable``, and the message never holds a path or an OS text.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path
from typing import Final

from memquill.enhance._model import ModelIdentity
from memquill.errors import SourceError
from memquill.paths import open_regular

__all__ = [
    "KEY_BYTES",
    "KEY_FILE",
    "IdentityUnavailable",
    "InstallKey",
    "fingerprint",
    "label_digest",
]

KEY_FILE: Final = "install-key.v1"
KEY_BYTES: Final = 32
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_ROUTE: Final = b"memquill:model-route:v1\0"
_BLOCK: Final = b"memquill:model-block:v1\0"


class IdentityUnavailable(Exception):
    """The install key is missing and cannot be made, or is unsafe (no details, on purpose)."""

    def __init__(self) -> None:
        super().__init__("AUXILIARY_IDENTITY_KEY_UNAVAILABLE")


class InstallKey:
    """The install key in ``directory`` (created with the folder, owner-only, when missing)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def path(self) -> Path:
        """Where the key lives."""
        return self.directory / KEY_FILE

    def load(self) -> bytes:
        """The key, created if missing.

        Raises:
            IdentityUnavailable: it cannot be created, or it is a symlink, not a regular file,
                not exactly 32 bytes, or readable by group or others.
        """
        try:
            return self._read()
        except FileNotFoundError:
            pass
        except OSError:
            raise IdentityUnavailable() from None
        try:
            self._create()
            return self._read()
        except OSError:
            raise IdentityUnavailable() from None

    def _read(self) -> bytes:
        path = self.path
        if path.is_symlink():
            raise IdentityUnavailable()
        try:
            descriptor = open_regular(path)  # never waits on a FIFO planted there
        except SourceError:
            raise IdentityUnavailable() from None
        try:
            info = os.fstat(descriptor)
            if not stat.S_ISREG(info.st_mode) or info.st_size != KEY_BYTES:
                raise IdentityUnavailable()
            if os.name == "posix" and info.st_mode & 0o077:
                raise IdentityUnavailable()
            data = os.read(descriptor, KEY_BYTES + 1)
        finally:
            os.close(descriptor)
        if len(data) != KEY_BYTES:
            raise IdentityUnavailable()
        return data

    def _create(self) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.directory / f".{KEY_FILE}.{secrets.token_hex(8)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
        descriptor = os.open(temporary, flags, 0o600)
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


def fingerprint(key: bytes, identity: ModelIdentity) -> str:
    """``hmac-v1:<64 hex>``: the keyed fingerprint of a model configuration."""
    message = _ROUTE + _framed(identity.family) + _framed(identity.name) + identity.material
    return "hmac-v1:" + hmac.new(key, message, hashlib.sha256).hexdigest()


def label_digest(key: bytes, label: str) -> str:
    """A keyed digest of a model label, used to name its credential block receipt."""
    return hmac.new(key, _BLOCK + label.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def _framed(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(4, "big") + data
