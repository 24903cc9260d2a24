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
from pathlib import Path
from typing import Final

from memquill.enhance._model import ModelIdentity
from memquill.foundation.keyfiles import UnsafeKeyFile, load_key_file

KEY_FILE: Final = "install-key.v1"
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
            return load_key_file(self.path)
        except UnsafeKeyFile:
            raise IdentityUnavailable() from None


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
