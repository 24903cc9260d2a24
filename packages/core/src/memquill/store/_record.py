"""``Record``: one version of one remembered fact, as the store holds it, and its fact key.

A record id names one version and changes at every correction; a fact key is the stable,
path-like name a fact family may carry (``prefs/coffee``). It is kept by corrections, unique
among the workspace's active facts, and freed (erased from every version) when the fact is
forgotten. The key's rules (``docs/record-format.md``):

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

import json
import re
import urllib.parse
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, cast

from memquill.errors import InvalidInputError, Messages

JSONValue: TypeAlias = "str | int | float | bool | list[JSONValue] | dict[str, JSONValue] | None"
RecordStatus: TypeAlias = Literal["active", "superseded", "revoked"]

KEY_FIELD: Final = "key"
"""The metadata field holding a fact's key."""
EXTRA_FIELD: Final = "extra"
"""The metadata field holding the extra JSON a host attached to a fact."""


@dataclass(frozen=True, slots=True)
class Record:
    """One version of one remembered fact.

    Attributes:
        meta: the metadata exactly as stored, in key order, without ``contentLength``; unknown
            keys are kept so they survive a rewrite.
        content: the remembered text, verbatim (empty for a revoked record).
    """

    meta: Mapping[str, JSONValue]
    content: str

    @property
    def id(self) -> str:
        """This version's id (a lowercase UUID)."""
        return cast(str, self.meta["id"])

    @property
    def root_id(self) -> str:
        """The id of the fact's first version; every correction inherits it."""
        return cast(str, self.meta["rootId"])

    @property
    def status(self) -> RecordStatus:
        """``active`` (visible), ``superseded`` (corrected) or ``revoked`` (forgotten)."""
        return cast(RecordStatus, self.meta["status"])

    @property
    def source(self) -> Mapping[str, JSONValue]:
        """Provenance: ``kind`` plus optional ``sessionId``, ``messageId``, ``role``..."""
        return cast("Mapping[str, JSONValue]", self.meta["source"])

    @property
    def created_at(self) -> str:
        """When this version was written (ISO-8601 UTC, milliseconds)."""
        return cast(str, self.meta["createdAt"])

    @property
    def updated_at(self) -> str:
        """When this version last changed status."""
        return cast(str, self.meta["updatedAt"])

    @property
    def operation_hash(self) -> str:
        """sha256 of the idempotency (or correction) key that wrote this version."""
        return cast(str, self.meta["operationHash"])

    @property
    def supersedes(self) -> str | None:
        """For a correction, the id of the version it replaced."""
        value = self.meta.get("supersedes")
        return value if isinstance(value, str) else None

    @property
    def key(self) -> str | None:
        """The fact's key (``prefs/coffee``), kept by corrections; ``None`` when it has none."""
        return key_of(self.meta)

    @property
    def extra(self) -> Mapping[str, JSONValue] | None:
        """Extra JSON a host attached to the fact beside its text (``None``: none)."""
        value = self.meta.get(EXTRA_FIELD)
        return cast("Mapping[str, JSONValue]", value) if isinstance(value, dict) else None

    def holds(self, content: str, extra: Mapping[str, JSONValue] | None) -> bool:
        """Whether this version holds exactly ``content`` and ``extra`` (extra compared as
        JSON text: ``1`` and ``1.0`` are equal in Python, not in what a read gives back), so
        writing them again would change nothing."""
        if self.content != content:
            return False
        held = self.extra
        if held is None or extra is None:
            return held is extra
        return json.dumps(held, ensure_ascii=False) == json.dumps(extra, ensure_ascii=False)

    @property
    def source_key(self) -> str | None:
        """``sessionId NUL messageId`` when the source names both, else ``None``."""
        return source_key(self.source)

    @property
    def projection_path(self) -> str:
        """The virtual workspace path queries show for this record."""
        return f"memory/records/{self.id}.md"

    def evolve(self, content: str | None = None, **meta: JSONValue) -> Record:
        """A copy with some metadata (JSON key names) and/or the content replaced."""
        merged = dict(self.meta)
        merged.update(meta)
        return Record(merged, self.content if content is None else content)

    def successor(
        self,
        content: str,
        *,
        new_id: str,
        source: Mapping[str, JSONValue],
        stamp: str,
        hashed: Mapping[str, JSONValue],
    ) -> Record:
        """The active version that supersedes this one (a correction, a kept hand edit, a
        diverged version kept): ``content`` from ``source``, made at ``stamp``, carrying the
        operation-hash fields ``hashed``; its fact's other metadata (key, extra) as this one's.
        """
        return self.evolve(
            content,
            id=new_id,
            source=dict(source),
            status="active",
            createdAt=stamp,
            updatedAt=stamp,
            **hashed,
            supersedes=self.meta.get("id"),
        )

    def with_fact_fields(self, key: str | None, extra: Mapping[str, JSONValue] | None) -> Record:
        """A copy with the key and the extra metadata set (``None``: removed).

        ``key`` goes right after ``rootId`` and ``extra`` after ``operationHash``, so a record
        reads the same whether its key was given at once or later (the order is deterministic).
        """
        meta: dict[str, JSONValue] = {}
        for name, value in self.meta.items():
            if name in (KEY_FIELD, EXTRA_FIELD):
                continue
            meta[name] = value
            if name == "rootId" and key is not None:
                meta[KEY_FIELD] = key
            if name == "operationHash" and extra is not None:
                meta[EXTRA_FIELD] = dict(extra)
        if key is not None:
            meta.setdefault(KEY_FIELD, key)
        if extra is not None:
            meta.setdefault(EXTRA_FIELD, dict(extra))
        return Record(meta, self.content)


def source_key(source: Mapping[str, JSONValue]) -> str | None:
    """``sessionId NUL messageId`` when ``source`` names both, else ``None``.

    A corrected or forgotten version's source key is a tombstone: nothing more is saved from
    that message.
    """
    session, message = source.get("sessionId"), source.get("messageId")
    if isinstance(session, str) and isinstance(message, str):
        return f"{session}\0{message}"
    return None


def by_family(records: Iterable[Record]) -> dict[str, list[Record]]:
    """``records`` grouped by fact (:attr:`Record.root_id`), each family's versions in the
    order ``records`` gives them."""
    families: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        families[record.root_id].append(record)
    return families


MAX_KEY_CHARS: Final = 200
"""The longest key, in characters (keys are ASCII)."""
KEY_PATTERN: Final = r"^[A-Za-z0-9._~%-]+(?:/[A-Za-z0-9._~%-]+)*$"
"""The characters and slashes of a key (the other rules are checked by :func:`validate_key`)."""
ID_SHAPE: Final = r"^[a-f0-9-]{8,36}$"
"""What a record id or id prefix looks like; no key has this shape."""

_SEGMENT: Final = r"(?!\.\.?(?:/|$))(?:[A-Za-z0-9._~-]|%[0-9A-F]{2})+"  # never . or ..
_KEY: Final = re.compile(_SEGMENT + r"(?:/" + _SEGMENT + r")*")
_ID: Final = re.compile(ID_SHAPE)
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-~")


def is_key(text: object) -> bool:
    """Whether ``text`` is a valid key."""
    if not isinstance(text, str) or not 1 <= len(text) <= MAX_KEY_CHARS or not text.isascii():
        return False
    if _ID.fullmatch(text):
        return False
    return _KEY.fullmatch(text) is not None  # one match: every stored record's key is checked


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
