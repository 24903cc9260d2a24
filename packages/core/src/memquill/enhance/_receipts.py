"""The private install key, its keyed fingerprints, and persistent credential block receipts.

One small JSON file per model label (``block-<keyed digest>.json`` beside the install key)::

    {"format":"memquill-model-block","version":1,"label":"langchain:ChatOpenAI/gpt-4o-mini",
     "fingerprint":"hmac-v1:…","reason":"credentials_missing","rootCause":"credentials"}

It holds no key, prompt, token or path: the label is the model's readable name and the
fingerprint is keyed (see :mod:`memquill.enhance._receipts`). A receipt blocks only while its
fingerprint equals the current configuration's, so changing the key (or any setting) lifts the
block by itself; the stale file is removed after the next successful call.

Reading is strict and fails closed: a symlink, a non-regular file, more than 1,024 bytes,
group/other permission bits, or anything but exactly this shape is
:class:`PersistenceUnavailable`, which the runner reports as ``persistence_unavailable``
instead of calling the model. Reading and writing are
:class:`memquill.foundation.json_file.JsonFile`'s: the whole receipt is written at once
(:func:`memquill.foundation.atomic.atomic_write`: ``0600``, synced, renamed, the folder synced).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from memquill.enhance._model import ModelIdentity
from memquill.foundation.json_file import Faults, JsonFile
from memquill.foundation.keyfiles import UnsafeKeyFile, load_key_file
from memquill.jsondoc import parse_json

# ----------------------------------------------------------------------------------------------
# The private install key and the keyed fingerprints made with it.
#
# A fingerprint names a model configuration without revealing it: ``hmac-v1:`` + HMAC-SHA256 of
# the model's identity (family, name and secret material) under a 32-byte install key kept in the
# user's data folder. Without the key, a fingerprint cannot be checked against a guessed API key,
# and the key never leaves the machine.
#
# The key file must be a regular file (never a symlink), exactly 32 bytes, readable by its owner
# only; it is created when missing (random bytes, written to an exclusive temporary file,
# published with a hard link so two processes racing agree on one key). It is read again at every
# use, so a ``chmod 644`` takes effect at once: anything wrong makes model assistance
# ``unavailable: identity_unavailable``, and the message never holds a path or an OS text.


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


MAX_RECEIPT_BYTES: Final = 1024
_FORMAT: Final = "memquill-model-block"
_KEYS: Final = ("format", "version", "label", "fingerprint", "reason", "rootCause")


class PersistenceUnavailable(Exception):
    """A receipt could not be read or written safely (no details, on purpose)."""

    def __init__(self) -> None:
        super().__init__("AUXILIARY_CONFIGURATION_STATE_UNAVAILABLE")


_FAULTS: Final = Faults(
    unsafe=PersistenceUnavailable,
    too_large=PersistenceUnavailable,
    unreadable=PersistenceUnavailable,
    unsaved=PersistenceUnavailable,
    busy=PersistenceUnavailable,
)


@dataclass(frozen=True, slots=True)
class BlockReceipt:
    """A stored credential block: which model, and for which configuration."""

    label: str
    fingerprint: str


class BlockReceipts:
    """The receipts in ``directory`` (the install key's folder)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path_for(self, digest: str) -> Path:
        """The receipt file of a label digest (:func:`~memquill.enhance._receipts.label_digest`)."""
        return self.directory / f"block-{digest}.json"

    def read(self, digest: str) -> BlockReceipt | None:
        """The receipt for ``digest``, or ``None`` when there is none.

        Raises:
            PersistenceUnavailable: the file exists but is unsafe or malformed.
        """
        return self._file(digest).read()

    def write(self, digest: str, receipt: BlockReceipt) -> None:
        """Store ``receipt`` atomically (each writer writes the whole receipt: no lock).

        Raises:
            PersistenceUnavailable: it could not be written.
        """
        self._file(digest).write(receipt)

    def _file(self, digest: str) -> JsonFile[BlockReceipt | None]:
        return JsonFile(
            self.path_for(digest),
            decode=_parse,
            encode=_encode,
            empty=lambda: None,
            faults=_FAULTS,
            limit=MAX_RECEIPT_BYTES,
            owner_only=True,
        )

    def remove(self, digest: str) -> None:
        """Delete the receipt for ``digest`` if it is there (a stale one, after a key change)."""
        # A stale receipt blocks nothing; removing it is housekeeping only.
        with contextlib.suppress(OSError):
            self.path_for(digest).unlink(missing_ok=True)

    def all(self) -> list[BlockReceipt | None]:
        """Every receipt in the folder (``None`` for one that cannot be read safely)."""
        try:
            names = sorted(os.listdir(self.directory))
        except OSError:
            return []
        found: list[BlockReceipt | None] = []
        for name in names:
            if name.startswith("block-") and name.endswith(".json"):
                try:
                    found.append(self.read(name[len("block-") : -len(".json")]))
                except PersistenceUnavailable:
                    found.append(None)
        return found


def _encode(receipt: BlockReceipt | None) -> bytes:
    if receipt is None:
        raise PersistenceUnavailable()  # never asked: an absent receipt is removed, not written
    document = {
        "format": _FORMAT,
        "version": 1,
        "label": receipt.label,
        "fingerprint": receipt.fingerprint,
        "reason": "credentials_missing",
        "rootCause": "credentials",
    }
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _parse(raw: bytes) -> BlockReceipt:
    try:
        document: Any = parse_json(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise PersistenceUnavailable() from None
    if (
        not isinstance(document, dict)
        or tuple(sorted(document)) != tuple(sorted(_KEYS))  # pyright: ignore[reportUnknownArgumentType]
        or document["format"] != _FORMAT
        or document["version"] != 1
        or document["reason"] != "credentials_missing"
        or document["rootCause"] != "credentials"
        or not isinstance(document["label"], str)
        or not isinstance(document["fingerprint"], str)
        or not document["fingerprint"].startswith("hmac-v1:")
    ):
        raise PersistenceUnavailable()
    return BlockReceipt(document["label"], document["fingerprint"])
