"""What the page shows, as data (records, the doctor's findings, jobs), in plain words.

One :class:`Backend` is the page's whole world: the session of one workspace (chosen when the
server starts, never by a request), the extraction jobs source, and the clock. The state is the
``GET`` answer and also what the server-rendered page is built from, so both always agree.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final, Protocol, runtime_checkable

from memquill.errors import CorruptError, MemoryRecordError, MemquillError
from memquill.items import expiry_text
from memquill.lifecycle import Extraction, job_status, retry_jobs, retryable
from memquill.store import (
    Diagnosis,
    DoctorReport,
    HistoryFigures,
    JSONValue,
    Record,
    RepairPlan,
    Snapshot,
)
from memquill.tools import MemorySession

# ----------------------------------------------------------------------------------------------
# The words the page shows: provenance, age, statuses and reasons, in plain English.
#
# Codes stay in the JSON (and in a small ``code`` label on the page) so a person can look them up
# in ``docs/errors.md``, but every message a person reads is a sentence.


STATUS_WORDS: Final[Mapping[str, str]] = {
    "active": "current",
    "superseded": "replaced by a correction",
    "revoked": "forgotten",
}

JOB_STATUSES: Final[Mapping[str, str]] = {
    "pending": "waiting",
    "running": "running",
    "completed": "saved facts",
    "nothing": "found nothing to remember",
    "unavailable": "unavailable",
    "failed": "failed",
    "cooldown": "cooling down",
    "skipped": "skipped",
}

JOB_REASONS: Final[Mapping[str, str]] = {
    "binding_unavailable": "the conversation is no longer bound to this workspace",
    "policy_blocked": "the conversation is in a read-only mode",
    "source_unavailable": "the messages can no longer be found",
    "source_changed": "the messages were edited while the model was answering",
    "source_revoked": "a fact from these messages was corrected or forgotten",
    "retry_exhausted": "three paid attempts were used; it will not be retried",
    "identity_unavailable": "the model's identity could not be established",
    "storage_capacity": "the records store is full",
    "storage_corrupt": "records.md cannot be read",
    "storage_unavailable": "the records store is unavailable",
    "storage_busy": "another writer held the records store",
    "extraction_or_storage_failed": "the model's answer or the save failed",
    "credentials_missing": "the model needs credentials; waiting for a configuration change",
    "provider_missing": "the model provider is no longer configured",
    "persistence_unavailable": "the model's settings could not be read",
    "runtime_unsupported": "this runtime cannot reach a model",
    "request_failed": "the model request failed",
    "empty_response": "the model answered with nothing",
    "cancelled": "the request was cancelled",
    "in_flight": "another request was already running",
    "configuration_required": "the model needs configuration",
}


def _text(source: Mapping[str, JSONValue], key: str) -> str | None:
    value = source.get(key)
    return value if isinstance(value, str) and value else None


def provenance(source: Mapping[str, JSONValue]) -> str:
    """Where a record came from, as a phrase: ``added by hand``, ``saved by a tool in …``."""
    kind = source.get("kind")
    session = _text(source, "sessionId")
    message = _text(source, "messageId")
    if kind == "manual":
        return "added by hand"
    if kind == "tool":
        return f"saved by a tool in session {session}" if session else "saved by a tool"
    if kind == "conversation":
        role = _text(source, "role")
        said = f" ({role} message)" if role else ""
        where = f"session {session}, message {message}" if session and message else "a chat"
        return f"extracted from {where}{said}"
    return f"source {kind!s}"


def age(timestamp: str, now: datetime) -> str:
    """How long ago ``timestamp`` was, coarsely: ``just now``, ``5 minutes ago``, ``3 days ago``."""
    try:
        then = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
        seconds = int((now - then).total_seconds())
    except (ValueError, TypeError):
        return "at an unknown time"
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "just now"  # under a minute, or a clock that runs behind the file's


# ----------------------------------------------------------------------------------------------
# The extraction jobs panel's view of the lifecycle: a small interface and its JSON.
#
# The page never reads the job ledger itself. It asks a :class:`JobsSource` for the status
# (spec 9.8: the last jobs, whether the turn log is full, how many turns wait for a batch) and asks
# it to resume jobs when a person presses Retry. Whatever cannot be read is shown as
# ``{"error": "unavailable"}``: a corrupt or missing ledger never blocks managing records by hand.
# :class:`LedgerJobs` is the source ``memquill manage`` uses: the lifecycle's status API.


@dataclass(frozen=True, slots=True)
class JobView:
    """One extraction job as the panel shows it.

    Attributes:
        id: the job id (the batch-closing turn).
        status: ``pending``, ``running``, ``completed``, ``nothing``, ``unavailable``,
            ``failed``, ``cooldown`` or ``skipped``.
        reason: why it has that status (spec 9.7), if it says.
        updated_at: ISO timestamp of the last status change.
        retry_at: not before this moment (milliseconds since the epoch), if set.
        requires_configuration_change: waits for a changed model configuration.
    """

    id: str
    status: str
    reason: str | None = None
    updated_at: str | None = None
    retry_at: int | None = None
    requires_configuration_change: bool = False

    @property
    def can_retry(self) -> bool:
        """Whether pressing Retry can make progress: never after the attempt budget is spent."""
        return retryable(self.status, self.reason)


@dataclass(frozen=True, slots=True)
class JobsView:
    """The status the panel shows (spec 9.8)."""

    jobs: Sequence[JobView]
    capacity_reached: bool = False
    pending_turns: int = 0


@runtime_checkable
class JobsSource(Protocol):
    """What the page needs from the extraction lifecycle of its workspace."""

    def status(self) -> JobsView:
        """The current status.

        Raises:
            MemquillError or OSError: the ledger cannot be read (the page shows unavailable).
        """
        ...

    def resume(self) -> None:
        """Start a pass over the retryable jobs and return without waiting for it."""
        ...


class LedgerJobs:
    """The jobs source of a workspace's extraction ledger (what ``memquill manage`` shows).

    The status is read from the ledger (:func:`memquill.lifecycle.job_status`). Retry clears
    the waits of every job that can still move (never the attempt budget), so the host's next
    pass takes them at once; given the host's :class:`~memquill.lifecycle.Extraction`, Retry
    also starts that pass in the background.
    """

    def __init__(
        self, workspace: str | os.PathLike[str], extraction: Extraction | None = None
    ) -> None:
        self.workspace = workspace
        self.extraction = extraction

    def status(self) -> JobsView:
        """The ledger's status in the panel's terms (an unused workspace: no jobs)."""
        view = job_status(self.workspace)
        jobs = [
            JobView(
                job.id,
                job.status,
                job.reason,
                job.updated_at,
                job.retry_at,
                job.requires_configuration_change,
            )
            for job in view.jobs
        ]
        return JobsView(jobs, view.capacity_reached, view.pending_turns)

    def resume(self) -> None:
        """Make the retryable jobs eligible now, and run a pass when an extraction is known."""
        if self.extraction is not None:
            self.extraction.retry()
        else:
            retry_jobs(self.workspace)


def jobs_json(source: JobsSource | None) -> dict[str, object]:
    """The ``enhancement`` member of the state: the status, or ``{"error": "unavailable"}``.

    ``None`` means this installation has no extraction lifecycle for the workspace.
    """
    if source is None:
        return {"error": "unavailable"}
    try:
        view = source.status()
    except (MemquillError, OSError, ValueError):
        return {"error": "unavailable"}
    jobs = [
        {
            "id": job.id,
            "status": job.status,
            "reason": job.reason,
            "updatedAt": job.updated_at,
            "retryAt": job.retry_at,
            "requiresConfigurationChange": job.requires_configuration_change,
            "canRetry": job.can_retry,
        }
        for job in view.jobs
    ]
    return {
        "jobs": jobs,
        "capacityReached": view.capacity_reached,
        "pendingTurns": view.pending_turns,
        "canRetry": any(job.can_retry for job in view.jobs),
    }


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
        "expiresAt": expiry_text(record.extra),
    }


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
