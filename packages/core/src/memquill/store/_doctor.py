"""``doctor``: inspect a records store and report what a person should know.

It verifies the file (naming the first bad record and why, :mod:`~memquill.store._diagnose`),
lists staging files a crashed writer left behind, shows who holds the writer lock, how much of
the store's capacity is used and by what (live facts, retained history, compacted versions,
tombstones, and how deep the history goes: :func:`history_figures`, below), which stored
records a current secret detector flags, and which hold a control character (saved before
writes refused them: they stay readable). For a workspace kept on several machines
(``docs/sync.md``) it also names the conflict copies a file-sync tool left (their facts are
missing until merged, so the store is not healthy), the facts that diverged and the named keys
a merge renamed (both wait for a person's choice), and how many records were written under a
record key this machine does not hold. It changes nothing, except that ``fix=True`` removes
stale staging files while holding the writer lock (so none can belong to a live writer) and
repairs a hand edit when that is unambiguous, after a backup (:mod:`~memquill.store._hand_edits`).

**How a store's history fills it** (live facts, history depth, compacted versions, tombstones).
:func:`history_figures` computes every figure ``doctor`` and the management page show from the
records alone, so two readers of one file report the same numbers:

- **live facts**: ``active`` versions;
- **history depth**, per family of a fact that is not forgotten (every version sharing one
  ``rootId``): its number of versions; the report gives the deepest and the mean;
- **superseded versions**, of which **compacted** ones are those whose text was dropped (empty
  content that keeps a ``textHash``: automatic compaction or ``memquill compact``);
- **tombstones**: forgotten families (a family with a revoked version: forgetting revokes
  them all);
- **bytes**, as each record's block takes them in the file (marker line, text, blank line),
  split into live facts, retained history (superseded versions that still hold text),
  compacted versions and tombstones. With the header they add up to the file's size.

Every category is counted in one pass over the records (:func:`_category`), so a new kind of
record (a compact tombstone form, say) adds one branch there and its own count.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memquill.errors import ConflictError, CorruptError, MemoryRecordError, Messages, StorageError
from memquill.foundation.atomic import fsync_folder
from memquill.foundation.controls import first_control
from memquill.store._backend import conflict_copies
from memquill.store._codec import MAX_STORE_BYTES, encode_block, store_revision
from memquill.store._diagnose import Diagnosis, diagnose
from memquill.store._families import Divergence, KeyRename, divergences, renamed_keys
from memquill.store._hand_edits import RepairPlan, apply_repair, plan_repair
from memquill.store._lock import WriterLock, lock_holder, lock_is_held
from memquill.store._record import Record
from memquill.store._record_key import KEY_ID_FIELD, KeySource, RecordKey, key_id
from memquill.store._results import Snapshot
from memquill.store._secrets import SecretScanner
from memquill.store._tombstones import TEXT_HASH_FIELD
from memquill.store._transaction import (
    TEMP_PREFIX,
    TEMP_SUFFIX,
    Locations,
    locate,
    read_raw,
    read_snapshot,
)

Category = Literal["live", "history", "compacted", "tombstone"]


@dataclass(frozen=True, slots=True)
class HistoryFigures:
    """What the records hold, by kind (see the module docstring).

    Attributes:
        live: active versions (live facts).
        superseded: superseded versions, compacted or not.
        compacted: superseded versions whose text was dropped (empty, with a ``textHash``).
        families: families of facts that are not forgotten.
        versions: the versions of those families.
        deepest: versions in the deepest such family (0 when there is none).
        tombstones: forgotten families.
        live_bytes: bytes the live facts' blocks take.
        history_bytes: bytes the superseded versions that still hold text take.
        compacted_bytes: bytes the compacted versions still take (their metadata).
        tombstone_bytes: bytes the forgotten families' versions take.
    """

    live: int = 0
    superseded: int = 0
    compacted: int = 0
    families: int = 0
    versions: int = 0
    deepest: int = 0
    tombstones: int = 0
    live_bytes: int = 0
    history_bytes: int = 0
    compacted_bytes: int = 0
    tombstone_bytes: int = 0

    @property
    def mean_depth(self) -> float:
        """Versions per family that is not forgotten, to two decimals (0 when none)."""
        return round(self.versions / self.families, 2) if self.families else 0.0

    def figures(self) -> dict[str, int | float]:
        """Every figure by its attribute's name, ``mean_depth`` after ``deepest``: the one
        mapping ``doctor --json`` and the management page show (each in its key style)."""
        found: dict[str, int | float] = {}
        for item in fields(self):
            found[item.name] = getattr(self, item.name)
            if item.name == "deepest":
                found["mean_depth"] = self.mean_depth
        return found


def history_figures(records: Iterable[Record]) -> HistoryFigures:
    """The figures of ``records`` (any order; the result depends only on the set)."""
    records = tuple(records)
    forgotten = {record.root_id for record in records if record.status == "revoked"}
    depth: Counter[str] = Counter()
    count: Counter[Category] = Counter()
    size: defaultdict[Category, int] = defaultdict(int)
    superseded = 0
    for record in records:
        category = _category(record, forgotten)
        count[category] += 1
        size[category] += len(encode_block(record).encode())
        if category != "tombstone":
            depth[record.root_id] += 1
            superseded += record.status == "superseded"
    return HistoryFigures(
        live=count["live"],
        superseded=superseded,
        compacted=count["compacted"],
        families=len(depth),
        versions=sum(depth.values()),
        deepest=max(depth.values(), default=0),
        tombstones=len(forgotten),
        live_bytes=size["live"],
        history_bytes=size["history"],
        compacted_bytes=size["compacted"],
        tombstone_bytes=size["tombstone"],
    )


def _category(record: Record, forgotten: set[str]) -> Category:
    if record.root_id in forgotten:
        return "tombstone"
    if record.status == "active":
        return "live"
    if not record.content and TEXT_HASH_FIELD in record.meta:
        return "compacted"
    return "history"


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """A stored, non-revoked record that a secret detector flags."""

    record_id: str
    kinds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ControlFinding:
    """A stored record whose text holds a control character writes now refuse.

    Attributes:
        record_id: the record.
        character: the first such character, as ``U+XXXX``.
    """

    record_id: str
    character: str


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """What ``doctor`` found.

    Attributes:
        error: why the store cannot be read (``corrupt`` names ``record_index``), if it cannot.
        revision: the store revision, when readable.
        used_bytes: size of ``records.md`` (0 when absent or unreadable).
        max_bytes: the store's capacity (2 MiB unless set; ``None``: it has none, as a
            database workspace without a quota).
        counts: versions per status.
        temp_files: staging files present (workspace-relative), before any fix.
        removed: staging files ``fix`` removed.
        lock_held: whether a writer holds the lock right now.
        lock_holder: the diagnostics the last holder wrote into the lock file.
        secret_findings: stored records a current detector flags (they stay readable).
        control_findings: stored records holding a control character (saved before writes
            refused them; they stay readable, and the CLI shows them escaped).
        diagnosis: for a corrupt file, which record is at fault and why.
        repair: for a corrupt file, what ``fix`` changes (or did), or why it cannot.
        repaired: ``fix`` repaired the file (``error`` and the rest describe the result).
        backup: the copy of the file as it was before the repair (workspace-relative).
        conflict_copies: copies of ``records.md`` a file-sync tool left beside it, whose facts
            are not in memory until ``memquill sync resolve`` merges them.
        diverged: facts corrected differently on two machines, waiting for a choice.
        renamed_keys: named keys two families took on two machines; the younger one renamed.
        other_keys: records per record key id this machine does not hold (their duplicates
            and tombstones are recognised only where that key is: ``memquill key import``).
        history: live facts, history depth, compacted versions, tombstones and the bytes each
            takes (all zero when the store cannot be read).
    """

    error: MemoryRecordError | None
    revision: str | None
    used_bytes: int
    max_bytes: int | None = MAX_STORE_BYTES
    counts: Mapping[str, int] = field(default_factory=dict[str, int])
    temp_files: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    lock_held: bool = False
    lock_holder: Mapping[str, object] | None = None
    secret_findings: tuple[SecretFinding, ...] = ()
    control_findings: tuple[ControlFinding, ...] = ()
    diagnosis: Diagnosis | None = None
    repair: RepairPlan | None = None
    repaired: bool = False
    backup: str | None = None
    conflict_copies: tuple[str, ...] = ()
    diverged: tuple[Divergence, ...] = ()
    renamed_keys: tuple[KeyRename, ...] = ()
    other_keys: Mapping[str, int] = field(default_factory=dict[str, int])
    history: HistoryFigures = field(default_factory=HistoryFigures)

    @property
    def percent_used(self) -> float | None:
        """``used_bytes`` as a percentage of ``max_bytes``, to one decimal (``None``: no
        capacity, so no share of one)."""
        if self.max_bytes is None:
            return None
        return round(100 * self.used_bytes / self.max_bytes, 1) if self.max_bytes else 0.0

    @property
    def ok(self) -> bool:
        """No error, no finding, no staging file left behind and no conflict copy waiting
        (diverged facts, renamed keys and other keys are notices, not faults)."""
        leftover = set(self.temp_files) - set(self.removed)
        findings = self.secret_findings or self.control_findings
        return self.error is None and not findings and not leftover and not self.conflict_copies


def run_doctor(
    workspace: str,
    *,
    secrets: SecretScanner,
    fix: bool = False,
    lock_timeout: float = 5.0,
    now: Callable[[], datetime],
    record_key: KeySource | None = None,
    expected_revision: str | None = None,
    capacity: int = MAX_STORE_BYTES,
) -> DoctorReport:
    """Inspect the store of ``workspace``, read against its ``capacity`` (see the module
    docstring).

    With ``expected_revision``, ``fix`` repairs a hand edit only if the file is still the one
    whose repair plan carried that revision (the plan a person reviewed).

    Raises:
        UnsafePathError, StorageError: the workspace itself cannot be used.
        BusyError: ``fix`` could not take the writer lock in time.
        ConflictError: ``fix`` found the file changed since it was read or reviewed.
    """
    locations = locate(workspace)
    temp_files = _temp_files(locations)
    removed: tuple[str, ...] = ()
    if fix and temp_files:
        with WriterLock(locations.lock, lock_timeout):
            removed = _remove(locations, _temp_files(locations))
    diagnosis, plan, backup = None, None, None
    snapshot, error = _read(locations, capacity)
    if isinstance(error, CorruptError):
        raw = read_raw(locations, capacity)
        diagnosis = diagnose(raw)
        plan = replace(
            plan_repair(raw, now=now(), secrets=secrets, record_key=record_key),
            revision=store_revision(locations.identity, raw),
        )
        if fix and expected_revision is not None and plan.revision != expected_revision:
            raise ConflictError(Messages.STALE)
        if fix and plan.refused is None:
            backup = apply_repair(locations, raw, plan, now=now(), lock_timeout=lock_timeout)
            snapshot, error = _read(locations, capacity)
    held = lock_is_held(locations.lock)
    return DoctorReport(
        error=error,
        revision=snapshot.revision if snapshot else None,
        used_bytes=snapshot.size_bytes if snapshot else _size(locations.file),
        max_bytes=capacity,
        counts=_counts(snapshot) if snapshot else {},
        temp_files=temp_files,
        removed=removed,
        lock_held=held,
        lock_holder=lock_holder(locations.lock) if held else None,
        secret_findings=_secret_findings(snapshot, secrets) if snapshot else (),
        control_findings=_control_findings(snapshot) if snapshot else (),
        diagnosis=diagnosis,
        repair=plan,
        repaired=backup is not None,
        backup=backup,
        conflict_copies=conflict_copies(locations.directory),
        history=_history(snapshot),
        **_sync_findings(snapshot, record_key or RecordKey()),
    )


def _read(locations: Locations, capacity: int) -> tuple[Snapshot | None, MemoryRecordError | None]:
    try:
        return read_snapshot(locations, capacity), None
    except MemoryRecordError as failure:
        return None, failure


def report_for(
    snapshot: Snapshot | None,
    error: MemoryRecordError | None,
    *,
    secrets: SecretScanner,
    used_bytes: int,
    record_key: KeySource | None = None,
    capacity: int | None = MAX_STORE_BYTES,
) -> DoctorReport:
    """The report of a store that has no files, locks or staging files of its own (a
    database): the records' health, size against ``capacity`` (``None``: it has none),
    counts, history figures and secret findings."""
    return DoctorReport(
        error=error,
        revision=snapshot.revision if snapshot else None,
        used_bytes=used_bytes,
        max_bytes=capacity,
        counts=_counts(snapshot) if snapshot else {},
        history=_history(snapshot),
        secret_findings=_secret_findings(snapshot, secrets) if snapshot else (),
        control_findings=_control_findings(snapshot) if snapshot else (),
        **_sync_findings(snapshot, record_key),
    )


def _sync_findings(snapshot: Snapshot | None, record_key: KeySource | None) -> dict[str, Any]:
    """Diverged facts, renamed keys, and records under keys this machine does not hold."""
    if snapshot is None:
        return {}
    found: dict[str, Any] = {
        "diverged": divergences(snapshot.records),
        "renamed_keys": renamed_keys(snapshot.records),
    }
    if record_key is not None:
        try:
            held = {key_id(key) for key in record_key.known()}
        except StorageError:
            held = set[str]()  # an unusable key recognises nothing (writes say why)
        other = Counter(
            value
            for record in snapshot.records
            if isinstance(value := record.meta.get(KEY_ID_FIELD), str) and value not in held
        )
        found["other_keys"] = dict(sorted(other.items()))
    return found


def _history(snapshot: Snapshot | None) -> HistoryFigures:
    return history_figures(snapshot.records) if snapshot else HistoryFigures()


def _counts(snapshot: Snapshot) -> dict[str, int]:
    return dict(sorted(Counter(record.status for record in snapshot.records).items()))


def _temp_files(locations: Locations) -> tuple[str, ...]:
    try:
        names = [entry.name for entry in locations.directory.iterdir()]
    except OSError:
        return ()
    return tuple(
        f"memory/{name}"
        for name in sorted(names)
        if name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)
    )


def _remove(locations: Locations, relative: tuple[str, ...]) -> tuple[str, ...]:
    removed: list[str] = []
    for path in relative:
        try:
            (locations.root / path).unlink()
        except OSError:
            # Gone already, or not a staging file memquill wrote (a directory, say): a person
            # decides; the report still lists it as not removed.
            continue
        removed.append(path)
    if removed:
        # The report says they are gone; a staging file may hold forgotten text.
        fsync_folder(locations.directory)
    return tuple(removed)


def _size(file: Path) -> int:
    try:
        return file.lstat().st_size
    except OSError:
        return 0


def _secret_findings(snapshot: Snapshot, secrets: SecretScanner) -> tuple[SecretFinding, ...]:
    findings = (
        SecretFinding(record.id, secrets.findings(record.content))
        for record in snapshot.records
        if record.content
    )
    return tuple(finding for finding in findings if finding.kinds)


def _control_findings(snapshot: Snapshot) -> tuple[ControlFinding, ...]:
    found = ((record.id, first_control(record.content)) for record in snapshot.records)
    return tuple(ControlFinding(record_id, char) for record_id, char in found if char)
