"""The extraction jobs panel's view of the lifecycle: a small interface and its JSON.

The page never reads the job ledger itself. It asks a :class:`JobsSource` for the status
(spec 9.8: the last jobs, whether the turn log is full, how many turns wait for a batch) and asks
it to resume jobs when a person presses Retry. Whatever cannot be read is shown as
``{"error": "unavailable"}``: a corrupt or missing ledger never blocks managing records by hand.
:class:`LedgerJobs` is the source ``memquill manage`` uses: the lifecycle's status API.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from memquill.errors import MemquillError
from memquill.lifecycle import Extraction, job_status, retry_jobs

RETRYABLE: Final = frozenset({"pending", "running", "unavailable", "failed", "cooldown"})
"""Statuses the runner picks up again (spec 9.4 step 3)."""

_EXHAUSTED: Final = "retry_exhausted"


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
        return self.status in RETRYABLE and self.reason != _EXHAUSTED


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
