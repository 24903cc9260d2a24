"""The values the records store takes and returns.

Among what it takes: what a correction or forget names (:data:`Target`: a record id or a
:class:`~memquill.store.FactKey`), and the marker that keeps a field as it is
(:data:`UNCHANGED`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from enum import Enum
from typing import Final, Literal, TypeAlias, cast

from memquill.errors import ConflictError, Messages
from memquill.store._codec import record_revision
from memquill.store._record import FactKey, JSONValue, Record
from memquill.store._record_list import RecordList
from memquill.store._tombstones import TEXT_HASH_FIELD, Ledger, is_ledger, ledger_of

Target: TypeAlias = "str | FactKey"
"""What a write names: a record id (36 characters) or a fact key."""


class Unchanged(Enum):
    """The type of :data:`UNCHANGED`."""

    UNCHANGED = "unchanged"


UNCHANGED: Final = Unchanged.UNCHANGED
"""For ``correct``'s ``key`` and ``extra``: keep what the current version has."""


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


class _Index:
    """Positions of a snapshot's records by id, operation hash, active key, source key of a
    tombstone and root id, the latest time each forgotten text (by fingerprint) was forgotten,
    and where the ledgers of compact tombstones are.

    A snapshot that only appends to another (a save, an appended correction) shares its index
    and extends it with its new records; the records before stay where they were, so each
    snapshot sharing it reads only positions below its own length (``limit``). An appended
    correction also turns the version it supersedes from active to superseded, which moves that
    version's key and source in the index: the index is then ``patched``, and an older snapshot
    builds its own instead of reading it.
    """

    __slots__ = (
        "count",
        "forgotten",
        "hashes",
        "ids",
        "keys",
        "ledger",
        "ledgers",
        "patched",
        "retired",
        "roots",
        "tip",
        "tombstoned",
    )

    def __init__(self) -> None:
        self.count = 0
        self.tip: Sequence[Record] = ()
        self.ids: dict[str, int] = {}
        self.hashes: dict[str, int] = {}
        self.keys: dict[str, int] = {}
        self.tombstoned: dict[str, int] = {}
        # A fact's positions: one int while it has one version (most facts; a list per
        # record made indexing 10,000 records take twice as long), then a list.
        self.roots: dict[str, int | list[int]] = {}
        self.forgotten: dict[str, str] = {}
        self.ledgers: list[int] = []
        self.ledger: Ledger | None = None
        self.patched = False
        self.retired = False

    def extend(self, records: Sequence[Record]) -> None:
        """Index ``records[self.count:]`` (``records`` starts with what is indexed already).

        Reads each record's metadata directly, as :class:`Record`'s properties do (a writer's
        first write indexes every record: 10,000 through the properties took 22 ms)."""
        count = self.count
        ids, hashes, roots, keys = self.ids, self.hashes, self.roots, self.keys
        for position, record in enumerate(records[count:], count):
            meta = record.meta
            supersedes = meta.get("supersedes")
            if isinstance(supersedes, str):
                replaced = ids.get(supersedes)
                if replaced is not None and replaced < count:
                    self._supersede(replaced, records[replaced])
            ids.setdefault(cast(str, meta["id"]), position)
            operation = meta.get("operationHash")
            if isinstance(operation, str):
                hashes.setdefault(operation, position)
            root = cast(str, meta["rootId"])
            family = roots.get(root)
            if family is None:
                roots[root] = position
            elif isinstance(family, int):
                roots[root] = [family, position]
            else:
                family.append(position)
            if meta["status"] == "active":
                key = meta.get("key")
                if isinstance(key, str):
                    keys.setdefault(key, position)
            else:
                source = record.source_key
                if source is not None:
                    self.tombstoned.setdefault(source, position)
                if record.status == "revoked" and (TEXT_HASH_FIELD in meta or is_ledger(record)):
                    self._forgotten(position, record)
        self.count = len(records)
        self.tip = records

    def claimed(self, places: Sequence[int], records: Sequence[Record]) -> _Index:
        """A copy of this index (the snapshots sharing it keep it as it is) for ``records``,
        whose ``places`` hold tombstones now (each of the version indexed there): their keys
        are free, their sources and texts blocked. Records after the indexed ones are
        indexed when first asked for, as after any append."""
        index = _Index()
        for name in ("ids", "hashes", "keys", "tombstoned", "roots", "forgotten"):
            setattr(index, name, getattr(self, name).copy())
        # The copy's families share their position lists, which it extends as records are
        # appended: this index indexes no more (the positions it reads stay below its count).
        self.retired = True
        index.ledgers, index.ledger = self.ledgers.copy(), self.ledger
        index.count, index.tip = self.count, self.tip
        for position in places:
            key = self.tip[position].key
            if key is not None and index.keys.get(key) == position:
                del index.keys[key]
            now = records[position]
            if (source := now.source_key) is not None:
                index.tombstoned.setdefault(source, position)
            index._forgotten(position, now)
        index.patched = False  # its own: no older snapshot shares it
        return index

    def _forgotten(self, position: int, record: Record) -> None:
        """Index a tombstone's text fingerprint (the latest time it was forgotten) or a ledger.
        Only a rewrite writes tombstones (its snapshot gets a new index); one appended to a
        shared index would be unseen by older snapshots' positions, so they build their own."""
        if self.count:
            self.patched = True
        if is_ledger(record):
            self.ledgers.append(position)
            self.ledger = None
            return
        fingerprint = record.meta.get(TEXT_HASH_FIELD)
        if isinstance(fingerprint, str) and self.forgotten.get(fingerprint, "") < (
            stamp := record.updated_at
        ):
            self.forgotten[fingerprint] = stamp

    def _supersede(self, position: int, now: Record) -> None:
        """Re-index the indexed version at ``position``, which is now ``now`` (superseded by
        an appended correction, when it was active)."""
        if now.status == "active" or self.tip[position].status != "active":
            return
        self.patched = True
        key = now.key
        if key is not None and self.keys.get(key) == position:
            del self.keys[key]
        source = now.source_key
        if source is not None:
            self.tombstoned.setdefault(source, position)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The store at one revision (every version, in file order).

    Lookups by id, key, operation hash, tombstoned source key and fact are indexed once per
    snapshot (a snapshot that appends to another extends its index instead: :meth:`follows`).

    Attributes:
        identity: what seeds the store's revisions (a file store: its workspace's real path).
        revision: the store revision.
        records: every version, in file order.
        size_bytes: the size of the records file.
    """

    identity: bytes
    revision: str
    records: RecordList
    size_bytes: int
    # The index, built on first use (a list: the dataclass is frozen).
    _index_cache: list[_Index] = field(
        default_factory=list[_Index], init=False, compare=False, repr=False
    )

    def follows(self, before: Snapshot, claims: Sequence[int] = ()) -> None:
        """Share ``before``'s index: this snapshot's records are ``before``'s plus new ones at
        the end (the caller knows; nothing is compared), but for the places in ``claims``,
        each now the tombstone of the version there (a ``v3`` forget). Only the newest
        snapshot of a chain extends an index, so ``before`` must be the last one that did."""
        cache = before._index_cache
        shared = cache[0] if cache else None
        if shared and shared.tip is before.records and not shared.retired and not self._index_cache:
            index = shared
            if claims:
                index = index.claimed(claims, self.records)
            self._index_cache.append(index)

    def indexed(self) -> None:
        """Index the records now rather than at the first lookup (a writer does so before its
        transaction: indexing 100,000 records inside one, beside other writers doing the
        same on a busy machine, outlasted the server's idle timeout)."""
        self._index()

    def find(self, record_id: str, *, active_only: bool = False) -> Record | None:
        """The version with ``record_id`` (only if active, when asked)."""
        position = self.position(record_id)
        if position is None:
            return None
        record = self.records[position]
        return record if record.status == "active" or not active_only else None

    def position(self, record_id: str) -> int | None:
        """Where the version with ``record_id`` is in :attr:`records` (``None``: nowhere)."""
        return self._at(self._index().ids.get(record_id))

    def by_operation(self, operation_hash: str) -> Record | None:
        """The first version written by the operation with this hash."""
        position = self._at(self._index().hashes.get(operation_hash))
        return None if position is None else self.records[position]

    def tombstoned(self, source_key: str | None) -> bool:
        """Whether a corrected or forgotten version came from this source message."""
        if source_key is None:
            return False
        return self._at(self._index().tombstoned.get(source_key)) is not None

    def forgotten_at(self, fingerprints: Iterable[str]) -> str | None:
        """When a forgotten fact whose text has one of ``fingerprints`` was forgotten: the
        latest tombstone's ``updatedAt`` or the time the compact tombstones keep (``None``:
        none was). Indexed: the cost does not grow with what was forgotten."""
        index = self._index()
        wanted = tuple(fingerprints)
        stamps = [index.forgotten[f] for f in wanted if f in index.forgotten]
        folded = self.ledger().forgotten_at(wanted) if index.ledgers else None
        if folded is not None:
            stamps.append(folded)
        return max(stamps) if stamps else None

    def ledger(self) -> Ledger:
        """The compact tombstones (:mod:`memquill.store._tombstones`), parsed once per index
        (empty when there are none)."""
        index = self._index()
        if index.ledger is None:
            index.ledger = ledger_of(self.records[p] for p in index.ledgers)
        return index.ledger

    def record_revision(self, record: Record) -> str:
        """The record revision of ``record`` in this workspace."""
        return record_revision(self.identity, record)

    def by_key(self, key: str) -> Record | None:
        """The active version whose fact has ``key``."""
        position = self._at(self._index().keys.get(key)) if key else None
        return None if position is None else self.records[position]

    def check_key_free(self, key: str | None, moving: Set[str] = frozenset()) -> None:
        """Refuse ``key`` when an active fact has it, unless that fact is one of ``moving``
        (root ids: the facts a write gives new keys at once).

        Raises:
            ConflictError: naming the fact that has it, its current id and record revision.
        """
        holder = self.by_key(key) if key is not None else None
        if holder is not None and holder.root_id not in moving:
            revision = self.record_revision(holder)[:16]
            message = Messages.KEY_IN_USE.format(key=key, id=holder.id, revision=revision)
            raise ConflictError(message)

    def keyed(self, prefix: str = "") -> tuple[Record, ...]:
        """The active versions whose key is ``prefix`` or lies under it, in file order.

        ``notes`` matches ``notes`` and ``notes/…``; ``notes/`` only ``notes/…``; ``""`` every
        keyed active version.
        """
        under = prefix if not prefix or prefix.endswith("/") else prefix + "/"
        limit = len(self.records)
        found = sorted(
            position
            for key, position in self._index().keys.items()
            if position < limit and (key == prefix or key.startswith(under))
        )
        return tuple(self.records[p] for p in found)

    def family(self, record: Record) -> tuple[Record, ...]:
        """Every version of ``record``'s fact, in file order. The first version is the one
        whose id is the root id (its ``created_at`` is when the fact was first saved)."""
        return self.family_of(record.root_id)

    def family_of(self, root_id: str) -> tuple[Record, ...]:
        """Every version of the fact with ``root_id``, in file order."""
        limit = len(self.records)
        positions = self._index().roots.get(root_id, ())
        if isinstance(positions, int):
            positions = (positions,)
        return tuple(self.records[p] for p in positions if p < limit)

    def current(self, record: Record) -> Record | None:
        """The active version of ``record``'s fact (itself when active; ``None``: forgotten)."""
        if record.status == "active":
            return record
        return next((r for r in self.family(record) if r.status == "active"), None)

    def _at(self, position: int | None) -> int | None:
        return position if position is not None and position < len(self.records) else None

    def _index(self) -> _Index:
        cache = self._index_cache
        if not cache:
            cache.append(_Index())
        index = cache[0]
        if index.tip is not self.records:
            if index.count > len(self.records):
                if not index.patched:
                    # An older snapshot of a shared index: positions below its length hold.
                    return index
                # A correction appended since moved an older version: this one's own index.
                index = _Index()
                cache[0] = index
            elif index.retired and index.count < len(self.records):
                index = _Index()  # its lists are another index's now: never extended again
                cache[0] = index
            index.extend(self.records)
        return index


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
        """The provenance line a hit of it shows (:func:`provenance_line`)."""
        return provenance_line(self.id, self.key, self.source, self.record_revision)


def provenance_line(
    record_id: str, key: str | None, source: Mapping[str, JSONValue], record_revision: str
) -> str:
    """``memory-record:<id>[; key:…]; source-kind:<kind>[; session:…][; message:…];
    revision:…``: where an active record came from, as its hits show it."""
    parts = [f"memory-record:{record_id}"]
    if key is not None:
        parts.append(f"key:{key}")
    parts.append(f"source-kind:{source.get('kind')}")
    for name, label in (("sessionId", "session"), ("messageId", "message")):
        value = source.get(name)
        if isinstance(value, str):
            parts.append(f"{label}:{value}")
    parts.append(f"revision:{record_revision}")
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
    records: RecordList
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
    """The result of :meth:`RecordStore.preflight`: the revision, the bytes in use and the
    capacity (``max_bytes``; ``None``: none, as a database workspace without a quota)."""

    revision: str
    used_bytes: int
    max_bytes: int | None


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
