"""The job ledger as data: committed turns, pending sources, jobs, and their limits.

The ledger holds references only: turn ids (hashes), session and message ids, statuses, times,
counters and a keyed model fingerprint. Never a word of the conversation, never a key. Its
shape (``docs/extraction.md``)::

    {"version": 1,
     "turns": ["<sha256 of session:assistant message id>", ...],          # <= 5000, never pruned
     "counters": {"<session id>": <committed turns of that session>},
     "pendingSources": {"<session id>": [{"userMessageId", "assistantMessageId"}, ...]},
     "jobs": [{"id", "sessionId", "userMessageId", "assistantMessageId", "providerId",
               "status", "reason"?, "updatedAt", "routeFingerprint"?, "retryAt"?, "sources"?,
               "requiresConfigurationChange"?, "storageBlockedRevision"?, "attempts"?}, ...]}
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Final, Literal

from memquill.store import sha256_hex

MAX_TURNS: Final = 5000
"""Committed turns a workspace's ledger records; past it, extraction stops (``job_limit``)."""
MAX_JOBS: Final = 5000
"""Jobs a ledger holds (a job closes at most every third turn, so turns run out first)."""
MAX_LEDGER_BYTES: Final = 4 * 1024 * 1024
"""The largest ledger file read (4 MiB)."""
MAX_SOURCES: Final = 3
"""Source turns in one batch, and pending sources per session."""
BATCH_TURNS: Final = 3
"""Every third committed turn of a session closes a batch."""
MAX_ATTEMPTS: Final = 3
"""Paid model calls a job may spend, over its whole life."""

JobStatus = Literal[
    "pending", "running", "completed", "nothing", "unavailable", "failed", "cooldown", "skipped"
]
JOB_STATUSES: Final[frozenset[str]] = frozenset(
    {"pending", "running", "completed", "nothing", "unavailable", "failed", "cooldown", "skipped"}
)
ELIGIBLE: Final[frozenset[str]] = frozenset(
    {"pending", "running", "unavailable", "failed", "cooldown"}
)
"""Statuses a pass picks up again; ``completed``, ``nothing`` and ``skipped`` are final."""


def turn_id(session_id: str, assistant_message_id: str) -> str:
    """The id of the turn the assistant message ``assistant_message_id`` closed: the sha256 of
    ``session id + ":" + assistant message id`` (also the id of the job that turn closed)."""
    return sha256_hex(f"{session_id}:{assistant_message_id}")


@dataclass(frozen=True, slots=True)
class SourceRef:
    """One source turn of a batch: the user message and the assistant reply that answered it."""

    user_message_id: str
    assistant_message_id: str


@dataclass(frozen=True, slots=True)
class Job:
    """One batch of up to three committed turns, and how its extraction stands.

    Attributes:
        id: the batch-closing turn's id; also the base of the records' idempotency keys.
        session_id, user_message_id, assistant_message_id: the batch-closing turn.
        provider_id: the model's readable label at the last attempt (``none`` without a model).
        status: see :data:`JobStatus`.
        reason: why it has that status (``docs/extraction.md`` lists every reason).
        updated_at: ISO-8601 UTC; set on every status change, and the scheduling order.
        route_fingerprint: the keyed fingerprint of the model configuration last tried.
        retry_at: not before this time (milliseconds since the epoch), while the fingerprint
            still matches.
        sources: the batch's source turns (1–3).
        requires_configuration_change: credentials were refused: wait for another
            configuration.
        storage_blocked_revision: the storage signature when storage failed; the job waits
            until it changes.
        attempts: paid model calls spent (0–3), counted before each call.
    """

    id: str
    session_id: str
    user_message_id: str
    assistant_message_id: str
    provider_id: str
    status: JobStatus
    updated_at: str
    reason: str | None = None
    route_fingerprint: str | None = None
    retry_at: int | None = None
    sources: tuple[SourceRef, ...] = ()
    requires_configuration_change: bool = False
    storage_blocked_revision: str | None = None
    attempts: int = 0

    @property
    def refs(self) -> tuple[SourceRef, ...]:
        """The batch's sources (a job without ``sources`` stands for its own turn)."""
        return self.sources or (SourceRef(self.user_message_id, self.assistant_message_id),)

    def evolve(self, **changes: object) -> Job:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)  # pyright: ignore[reportArgumentType]


@dataclass(slots=True)
class Ledger:
    """The whole ledger, as read (mutable inside a ledger transaction only)."""

    turns: list[str] = field(default_factory=list[str])
    counters: dict[str, int] = field(default_factory=dict[str, int])
    jobs: list[Job] = field(default_factory=list[Job])
    pending_sources: dict[str, list[SourceRef]] = field(default_factory=dict[str, list[SourceRef]])

    def job(self, job_id: str) -> Job | None:
        """The job with ``job_id``, if any."""
        return next((job for job in self.jobs if job.id == job_id), None)

    def replace_job(self, job: Job) -> None:
        """Put ``job`` in place of the job with its id."""
        for index, existing in enumerate(self.jobs):
            if existing.id == job.id:
                self.jobs[index] = job
                return
        raise KeyError(job.id)

    @property
    def pending_turns(self) -> int:
        """Source turns waiting for their batch to close, over all sessions."""
        return sum(len(refs) for refs in self.pending_sources.values())
