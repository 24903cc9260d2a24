"""Fact keys: the stable, path-like name a fact family may carry (``prefs/coffee``).

A record id names one version and changes at every correction; a key names the fact. It is
kept by corrections, unique among the workspace's active facts, and freed (erased from every
version) when the fact is forgotten. The rules (``docs/record-format.md``):

- ASCII, 1–200 characters, case-sensitive;
- one or more names joined by single ``/`` (no leading or trailing ``/``, no ``//``);
- a name is made of ``A–Z a–z 0–9 . _ - ~`` and ``%XX`` escapes (two upper-case hex digits),
  and is neither ``.`` nor ``..``;
- a key never looks like a record id or id prefix (8–36 of ``0–9 a–f -``), so one argument can
  take either: whatever has that shape is an id, anything else is a key.

:func:`quote_key` maps any text (a framework's own key) to a valid key reversibly, and
:func:`unquote_key` maps it back.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from memquill.errors import InvalidInputError, Messages

MAX_KEY_CHARS: Final = 200
"""The longest key, in characters (keys are ASCII)."""
KEY_PATTERN: Final = r"^[A-Za-z0-9._~%-]+(?:/[A-Za-z0-9._~%-]+)*$"
"""The characters and slashes of a key (the other rules are checked by :func:`validate_key`)."""
ID_SHAPE: Final = r"^[a-f0-9-]{8,36}$"
"""What a record id or id prefix looks like; no key has this shape."""

_NAME: Final = re.compile(r"(?:[A-Za-z0-9._~-]|%[0-9A-F]{2})+")
_ID: Final = re.compile(ID_SHAPE)
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-~")


def is_key(text: object) -> bool:
    """Whether ``text`` is a valid key."""
    if not isinstance(text, str) or not 1 <= len(text) <= MAX_KEY_CHARS or not text.isascii():
        return False
    if _ID.fullmatch(text):
        return False
    return all(_NAME.fullmatch(name) and name not in (".", "..") for name in text.split("/"))


def validate_key(text: object) -> str:
    """Return ``text`` if it is a valid key.

    Raises:
        InvalidInputError: otherwise (the message states the rules).
    """
    if not is_key(text):
        raise InvalidInputError(Messages.KEY_FORMAT)
    assert isinstance(text, str)
    return text


def looks_like_id(text: str) -> bool:
    """Whether ``text`` has the shape of a record id or id prefix (and so is never a key)."""
    return _ID.fullmatch(text) is not None


def key_of(meta: Mapping[str, object]) -> str | None:
    """The key stored in a record's metadata, if any."""
    value = meta.get("key")
    return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class FactKey:
    """A fact named by its key, where a write also takes a record id.

    ``FactKey("prefs/coffee")`` raises :class:`~memquill.errors.InvalidInputError` for a key
    that breaks the rules, so a held ``FactKey`` is always valid.
    """

    value: str

    def __post_init__(self) -> None:
        validate_key(self.value)

    def __str__(self) -> str:
        return self.value


def quote_key(text: str, *, keep_slashes: bool = False) -> str:
    """A valid key that :func:`unquote_key` turns back into ``text``.

    Every character outside ``A–Z a–z 0–9 . _ - ~`` becomes ``%XX`` escapes of its UTF-8 bytes
    (``%`` itself included). With ``keep_slashes`` each ``/``-separated part is quoted on its
    own and the slashes stay (for path-like names whose folders should stay key prefixes);
    otherwise ``/`` is escaped too. A name ``.`` or ``..`` becomes ``%2E`` / ``%2E%2E``, and a
    result that would look like a record id has its first character escaped.

    Raises:
        InvalidInputError: ``text`` is empty, has an empty part (with ``keep_slashes``), holds a
            lone surrogate, or is too long once quoted (200 characters).
    """
    parts = text.split("/") if keep_slashes else [text]
    if any(part == "" for part in parts):
        raise InvalidInputError(Messages.KEY_FORMAT)
    try:
        quoted = "/".join(_quote_name(part) for part in parts)
    except UnicodeEncodeError:
        raise InvalidInputError(Messages.KEY_FORMAT) from None
    if looks_like_id(quoted):
        quoted = f"%{ord(quoted[0]):02X}{quoted[1:]}"
    return validate_key(quoted)


def _quote_name(name: str) -> str:
    if name in (".", ".."):
        return "%2E" * len(name)
    return "".join(
        char if char in _UNRESERVED else "".join(f"%{b:02X}" for b in char.encode("utf-8"))
        for char in name
    )


def unquote_key(key: str) -> str:
    """The text :func:`quote_key` made ``key`` from.

    Raises:
        InvalidInputError: ``key`` is not a valid key, or its escapes are not UTF-8.
    """
    validate_key(key)
    try:
        return urllib.parse.unquote(key, errors="strict")
    except UnicodeDecodeError:
        raise InvalidInputError(Messages.KEY_FORMAT) from None
