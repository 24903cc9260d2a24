"""The values the records store takes and returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from memquill.errors import ConflictError, Messages
from memquill.store._codec import JSONValue, Record, record_revision

__all__ = [
    "Candidate",
    "CandidateResult",
    "Preflight",
    "ProjectedRecord",
    "Projection",
    "Snapshot",
    "WriteResult",
    "WriteStatus",
    "check_revision",
]

WriteStatus = Literal["saved", "duplicate", "blocked"]
"""``saved`` (written), ``duplicate`` (already so, nothing written), ``blocked`` (tombstoned)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fact to save.

    Attributes:
        content: the text to remember (1–16000 UTF-16 units, no NUL, no credentials).
        source: provenance (``{"kind": "tool", "sessionId": ...}`` and so on).
        idempotency_key: a retry with the same key and data is a no-op (``duplicate``).
        key: the fact's key (``prefs/coffee``), unique among active facts (``None``: none).
        extra: extra JSON to keep beside the text (a host's own fields; ``None``: none).
    """

    content: str
    source: Mapping[str, JSONValue]
    idempotency_key: str
    key: str | None = None
    extra: Mapping[str, JSONValue] | None = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The store at one revision (every version, in file order).

    Attributes:
        identity: what seeds the store's revisions (a file store: its workspace's real path).
        revision: the store revision.
        records: every version, in file order.
        size_bytes: the size of the records file.
    """

    identity: bytes
    revision: str
    records: tuple[Record, ...]
    size_bytes: int
    # The key index of the active versions, built on first use (a list: the dataclass is frozen).
    _key_index_cache: list[dict[str, Record]] = field(
        default_factory=list[dict[str, Record]], init=False, compare=False, repr=False
    )

    def find(self, record_id: str, *, active_only: bool = False) -> Record | None:
        """The version with ``record_id`` (only if active, when asked)."""
        for record in self.records:
            if record.id == record_id and (record.status == "active" or not active_only):
                return record
        return None

    def record_revision(self, record: Record) -> str:
        """The record revision of ``record`` in this workspace."""
        return record_revision(self.identity, record)

    def by_key(self, key: str) -> Record | None:
        """The active version whose fact has ``key`` (indexed once per snapshot)."""
        return self._key_index().get(key) if key else None

    def keyed(self, prefix: str = "") -> tuple[Record, ...]:
        """The active versions whose key is ``prefix`` or lies under it, in file order.

        ``notes`` matches ``notes`` and ``notes/…``; ``notes/`` only ``notes/…``; ``""`` every
        keyed active version.
        """
        under = prefix if not prefix or prefix.endswith("/") else prefix + "/"
        return tuple(
            record
            for key, record in self._key_index().items()
            if key == prefix or key.startswith(under)
        )

    def family(self, record: Record) -> tuple[Record, ...]:
        """Every version of ``record``'s fact, in file order. The first version is the one
        whose id is the root id (its ``created_at`` is when the fact was first saved)."""
        root = record.root_id
        return tuple(r for r in self.records if r.root_id == root)

    def current(self, record: Record) -> Record | None:
        """The active version of ``record``'s fact (itself when active; ``None``: forgotten)."""
        if record.status == "active":
            return record
        root = record.root_id
        return next((r for r in self.records if r.root_id == root and r.status == "active"), None)

    def _key_index(self) -> dict[str, Record]:
        cache = self._key_index_cache
        if not cache:
            cache.append(
                {
                    key: record
                    for record in self.records
                    if record.status == "active" and (key := record.key) is not None
                }
            )
        return cache[0]


@dataclass(frozen=True, slots=True)
class ProjectedRecord:
    """An active record as queries see it: the virtual file ``memory/records/<id>.md``."""

    id: str
    path: str
    content: str
    source: Mapping[str, JSONValue]
    created_at: str
    updated_at: str
    revision: str
    record_revision: str
    key: str | None = None

    @classmethod
    def of(cls, snapshot: Snapshot, record: Record) -> ProjectedRecord:
        """``record`` (a version of ``snapshot``) as queries see it, at ``snapshot``'s revision."""
        return cls(
            id=record.id,
            path=record.projection_path,
            content=record.content,
            source=record.source,
            created_at=record.created_at,
            updated_at=record.updated_at,
            revision=snapshot.revision,
            record_revision=snapshot.record_revision(record),
            key=record.key,
        )

    @property
    def provenance(self) -> str:
        """``memory-record:<id>[; key:…]; source-kind:<kind>[; session:…][; message:…];
        revision:…``."""
        parts = [f"memory-record:{self.id}"]
        if self.key is not None:
            parts.append(f"key:{self.key}")
        parts.append(f"source-kind:{self.source.get('kind')}")
        for key, label in (("sessionId", "session"), ("messageId", "message")):
            value = self.source.get(key)
            if isinstance(value, str):
                parts.append(f"{label}:{value}")
        parts.append(f"revision:{self.record_revision}")
        return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class Projection:
    """Every active record, in file order, at one store revision."""

    revision: str
    records: tuple[ProjectedRecord, ...]

    def by_path(self, path: str) -> ProjectedRecord | None:
        """The record whose projection path is ``path``."""
        return next((record for record in self.records if record.path == path), None)


@dataclass(frozen=True, slots=True)
class CandidateResult:
    """What a write did for one candidate (or for the one record it targeted).

    Attributes:
        record_id: the active record that carries it, or ``None`` when blocked.
        status: ``saved`` (written by this call), ``duplicate`` (already so) or ``blocked``
            (a tombstone refused it).
        forgotten_at: when a forgotten fact with the same words was forgotten (its tombstone
            blocked a tool's or a conversation's write; a person's was saved anyway).
    """

    record_id: str | None
    status: WriteStatus
    forgotten_at: str | None = None


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a write did.

    Attributes:
        status: ``saved`` (written), ``duplicate`` (already so) or ``blocked`` (tombstoned).
        revision: the store revision after the call.
        records: every version after the call.
        targets: per candidate (``save``) or for the one target, its record and what
            happened to it.
        record_revision: the record revision of the first target after the call.
        backup: the workspace-relative path of the backup written first, if the write made
            one (``import``).
    """

    status: WriteStatus
    revision: str
    records: tuple[Record, ...]
    targets: tuple[CandidateResult, ...]
    record_revision: str | None
    backup: str | None = None

    @property
    def record_ids(self) -> tuple[str | None, ...]:
        """Each target's record id (``None``: blocked)."""
        return tuple(target.record_id for target in self.targets)

    @property
    def record_id(self) -> str | None:
        """The first target's id."""
        return self.targets[0].record_id if self.targets else None


@dataclass(frozen=True, slots=True)
class Preflight:
    """The result of :meth:`RecordStore.preflight`."""

    revision: str
    used_bytes: int
    max_bytes: int


def check_revision(snapshot: Snapshot, target: Record | None, expected: str) -> None:
    """Accept ``expected`` when it is the store revision or ``target``'s record revision.

    Raises:
        ConflictError: it is neither (a stale view).
    """
    if expected == snapshot.revision:
        return
    if target is not None and expected == snapshot.record_revision(target):
        return
    raise ConflictError(Messages.STALE)
