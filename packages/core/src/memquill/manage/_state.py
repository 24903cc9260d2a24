"""What the page shows, as data: every record with its provenance, the doctor's findings, jobs.

One :class:`Backend` is the page's whole world: the session of one workspace (chosen when the
server starts, never by a request), the extraction jobs source, and the clock. The state is the
``GET`` answer and also what the server-rendered page is built from, so both always agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from memquill.errors import CorruptError, MemoryRecordError
from memquill.items import expires_at
from memquill.manage._jobs import JobsSource, jobs_json
from memquill.manage._words import STATUS_WORDS, age, provenance
from memquill.store import (
    Diagnosis,
    DoctorReport,
    HistoryFigures,
    Record,
    RepairPlan,
    Snapshot,
)
from memquill.tools import MemorySession


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Backend:
    """The one workspace a page serves, and how it reaches the rest of memquill.

    Attributes:
        session: the workspace's session; every read and write of the page goes through it.
        jobs: the extraction lifecycle's status source, or ``None`` when there is none.
        now: the clock ages are measured from.
    """

    session: MemorySession
    jobs: JobsSource | None = None
    now: Callable[[], datetime] = field(default=_utc_now)

    @staticmethod
    def open(session: MemorySession, *, jobs: JobsSource | None = None) -> Backend:
        """The backend of ``session``'s workspace, checked: it must be a usable folder.

        Open the session with :func:`memquill.open_session`, so every plugin's secret
        detectors guard the page's writes as they guard the tools'.

        Raises:
            UnsafePathError, StorageError: the workspace cannot be used.
        """
        session.store.locations()
        return Backend(session, jobs)


def error_json(error: MemoryRecordError) -> dict[str, object]:
    """A store error as the page reports it (``recordIndex`` names a corrupt record)."""
    index = error.record_index if isinstance(error, CorruptError) else None
    return {"code": error.code, "message": error.message, "recordIndex": index}


def record_json(snapshot: Snapshot, record: Record, now: datetime) -> dict[str, object]:
    """One version of a fact, with its provenance in words and its revision."""
    return {
        "id": record.id,
        "rootId": record.root_id,
        "status": record.status,
        "statusText": STATUS_WORDS.get(record.status, record.status),
        "content": record.content,
        "source": dict(record.source),
        "provenance": provenance(record.source),
        "createdAt": record.created_at,
        "updatedAt": record.updated_at,
        "age": age(record.updated_at, now),
        "supersedes": record.supersedes,
        "recordRevision": snapshot.record_revision(record),
        "expiresAt": _expiry(record),
    }


def _expiry(record: Record) -> str | None:
    """When an item put with a time to live expires (UTC, ISO 8601), else ``None``."""
    when = expires_at(record.extra)
    return None if when is None else when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def latest_version(snapshot: Snapshot, record_id: str) -> Record | None:
    """The current version of the fact ``record_id`` belongs to (its forgotten one, if gone)."""
    known = snapshot.find(record_id)
    if known is None:
        return None
    family = [record for record in snapshot.records if record.root_id == known.root_id]
    active = [record for record in family if record.status == "active"]
    return (active or family)[-1]


def doctor_json(report: DoctorReport, snapshot: Snapshot | None = None) -> dict[str, object]:
    """The doctor panel's data: errors, capacity and what fills it (``history``), lock, staging
    files, secret findings, for
    an unreadable file which record is at fault and the repair ``doctor --fix`` offers, and what
    a workspace kept on several machines waits for (conflict copies, diverged facts with each
    version's text and record revision from ``snapshot``, renamed keys, other record keys)."""
    return {
        "ok": report.ok,
        "error": error_json(report.error) if report.error is not None else None,
        "usedBytes": report.used_bytes,
        "maxBytes": report.max_bytes,
        "percentUsed": report.percent_used,
        "history": _history_json(report.history),
        "counts": dict(report.counts),
        "tempFiles": list(report.temp_files),
        "lockHeld": report.lock_held,
        "lockHolder": dict(report.lock_holder) if report.lock_holder is not None else None,
        "secretFindings": [
            {"recordId": finding.record_id, "kinds": list(finding.kinds)}
            for finding in report.secret_findings
        ],
        "diagnosis": _diagnosis_json(report.diagnosis),
        "repair": _repair_json(report.repair),
        "conflictCopies": list(report.conflict_copies),
        "diverged": [
            {
                "rootId": found.root_id,
                "activeId": found.active_id,
                "versions": _versions_json(snapshot, (found.active_id, *found.other_ids)),
            }
            for found in report.diverged
        ],
        "renamedKeys": [
            {"key": item.key, "rootId": item.root_id, "renamed": item.renamed}
            for item in report.renamed_keys
        ],
        "otherKeys": dict(report.other_keys),
    }


def _history_json(history: HistoryFigures) -> dict[str, object]:
    """:meth:`~memquill.store.HistoryFigures.figures`, keys in the page's camelCase."""
    return {_camel(name): value for name, value in history.figures().items()}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _versions_json(snapshot: Snapshot | None, ids: tuple[str, ...]) -> list[dict[str, object]]:
    """Each version of a diverged fact: id, text and record revision (what a choice names)."""
    found: list[dict[str, object]] = []
    for record_id in ids:
        record = snapshot.find(record_id) if snapshot is not None else None
        if snapshot is not None and record is not None:
            found.append(
                {
                    "id": record.id,
                    "content": record.content,
                    "createdAt": record.created_at,
                    "recordRevision": snapshot.record_revision(record),
                }
            )
    return found


def _diagnosis_json(diagnosis: Diagnosis | None) -> dict[str, object] | None:
    if diagnosis is None:
        return None
    return {
        "recordIndex": diagnosis.record_index,
        "recordId": diagnosis.record_id,
        "where": diagnosis.where(),
        "reason": diagnosis.reason,
    }


def _repair_json(plan: RepairPlan | None) -> dict[str, object] | None:
    """What ``doctor --fix`` would change in an unreadable file (``revision`` is what a repair
    request must name), or why it cannot."""
    if plan is None:
        return None
    return {"changes": list(plan.changes), "refused": plan.refused, "revision": plan.revision}


@dataclass(frozen=True, slots=True)
class State:
    """Everything the page shows, read at one moment.

    Attributes:
        snapshot: the store, or ``None`` when it cannot be read (``error`` says why).
        error: why the store cannot be read.
        doctor: the doctor's report.
        enhancement: the extraction status, or ``{"error": "unavailable"}``.
        now: when it was read.
    """

    snapshot: Snapshot | None
    error: MemoryRecordError | None
    doctor: DoctorReport
    enhancement: dict[str, object]
    now: datetime

    @staticmethod
    def read(backend: Backend) -> State:
        """Read the store, the doctor's report and the jobs status (blocking file I/O)."""
        store = backend.session.store
        snapshot: Snapshot | None = None
        error: MemoryRecordError | None = None
        try:
            snapshot = store.snapshot()
        except MemoryRecordError as failure:
            error = failure
        return State(snapshot, error, store.doctor(), jobs_json(backend.jobs), backend.now())

    @property
    def revision(self) -> str | None:
        """The store revision every change is checked against."""
        return self.snapshot.revision if self.snapshot is not None else None

    def to_json(self) -> dict[str, object]:
        """The ``GET /api/memory`` answer."""
        snapshot = self.snapshot
        records = (
            [record_json(snapshot, record, self.now) for record in snapshot.records]
            if snapshot is not None
            else []
        )
        return {
            "revision": self.revision,
            "records": records,
            "error": error_json(self.error) if self.error is not None else None,
            "doctor": doctor_json(self.doctor, snapshot),
            "enhancement": self.enhancement,
        }
