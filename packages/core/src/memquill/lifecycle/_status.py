"""The status API (what ``memquill jobs`` and the management page's jobs panel show), and retry.

:func:`job_status` reads the ledger and never writes: for a workspace that has no ledger yet it
answers an empty status and creates nothing. :func:`retry_jobs` makes every job that can still
move eligible at once (its retry time, credential wait and storage wait are cleared); it never
gives back a paid attempt, so a job whose three attempts are spent stays ``retry_exhausted``.
The next pass (``Extraction.resume``, or the host's next turn) takes them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from memquill.lifecycle._ledger import ELIGIBLE, MAX_TURNS, Job, JobStatus, LedgerFile

STATUS_JOBS: Final = 20
"""How many of the latest jobs the status shows by default."""
_EXHAUSTED: Final = "retry_exhausted"


def retryable(status: str, reason: str | None) -> bool:
    """Whether a retry can move a job: its ``status`` is not final (:data:`ELIGIBLE`), and its
    ``reason`` is not ``retry_exhausted`` (its attempts are spent, and never given back)."""
    return status in ELIGIBLE and reason != _EXHAUSTED


@dataclass(frozen=True, slots=True)
class JobView:
    """One extraction job, as a status shows it.

    Attributes:
        id: the job id (the batch-closing turn's id).
        session_id: the conversation the batch came from.
        status: ``pending``, ``running``, ``completed``, ``nothing``, ``unavailable``,
            ``failed``, ``cooldown`` or ``skipped``.
        reason: why it has that status (``docs/extraction.md``), if it says.
        updated_at: ISO-8601 UTC time of the last status change.
        retry_at: not before this moment (milliseconds since the epoch), if set.
        requires_configuration_change: waits for another model configuration (refused key).
        attempts: paid model calls spent (0–3).
    """

    id: str
    session_id: str
    status: JobStatus
    reason: str | None
    updated_at: str
    retry_at: int | None
    requires_configuration_change: bool
    attempts: int

    @property
    def can_retry(self) -> bool:
        """Whether a retry can move it: it is not final, and its attempts are not spent."""
        return retryable(self.status, self.reason)

    @classmethod
    def of(cls, job: Job) -> JobView:
        """The view of a ledger job."""
        return cls(
            job.id,
            job.session_id,
            job.status,
            job.reason,
            job.updated_at,
            job.retry_at,
            job.requires_configuration_change,
            job.attempts,
        )


@dataclass(frozen=True, slots=True)
class JobsView:
    """A workspace's extraction status (spec 9.8).

    Attributes:
        jobs: the latest jobs, newest first.
        capacity_reached: the ledger holds 5,000 turns: extraction has stopped here.
        pending_turns: source turns waiting for their batch to close.
    """

    jobs: Sequence[JobView]
    capacity_reached: bool = False
    pending_turns: int = 0

    @property
    def can_retry(self) -> bool:
        """Whether any shown job can be retried."""
        return any(job.can_retry for job in self.jobs)


def job_status(
    workspace: str | os.PathLike[str] | LedgerFile, *, limit: int = STATUS_JOBS
) -> JobsView:
    """The extraction status of ``workspace`` (read only; nothing is created).

    Raises:
        JobCorruptError, JobLimitError, JobUnsafePathError: the ledger cannot be used.
        UnsafePathError, StorageError: the workspace itself cannot be used.
    """
    ledger = workspace if isinstance(workspace, LedgerFile) else LedgerFile.of(workspace)
    document = ledger.read()
    latest = document.jobs[-limit:] if limit > 0 else []
    return JobsView(
        tuple(JobView.of(job) for job in reversed(latest)),
        len(document.turns) >= MAX_TURNS,
        document.pending_turns,
    )


def retry_jobs(
    workspace: str | os.PathLike[str] | LedgerFile, job_ids: Sequence[str] | None = None
) -> int:
    """Make the jobs that can still move (all, or ``job_ids``) eligible for the next pass.

    Returns how many jobs changed. Attempts are never given back.

    Raises:
        JobBusyError, JobCorruptError, JobLimitError, JobUnsafePathError, StorageError.
    """
    ledger = workspace if isinstance(workspace, LedgerFile) else LedgerFile.of(workspace)
    if not ledger.exists():
        return 0
    wanted = None if job_ids is None else frozenset(job_ids)
    changed = 0
    with ledger.change() as document:
        for job in list(document.jobs):
            if not JobView.of(job).can_retry or (wanted is not None and job.id not in wanted):
                continue
            if job.retry_at is None and not (
                job.requires_configuration_change or job.storage_blocked_revision
            ):
                continue
            document.replace_job(
                job.evolve(
                    retry_at=None,
                    requires_configuration_change=False,
                    storage_blocked_revision=None,
                )
            )
            changed += 1
    return changed
