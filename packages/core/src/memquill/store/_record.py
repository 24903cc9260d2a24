"""``Record``: one version of one remembered fact, as the store holds it."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, cast

from memquill.store._fact_keys import key_of

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
