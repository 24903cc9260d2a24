"""One job through one pass (every check, at most one paid call), the passes that run jobs,
and the status they leave (what a jobs panel shows, and retry).

In order (``docs/extraction.md`` has the table of statuses and reasons):

1. the host's gate: ``unbound`` → ``skipped: binding_unavailable``; ``read_only`` →
   ``unavailable: policy_blocked``. A session the message source does not know is left alone;
2. the sources that still stand; none → ``skipped: source_unavailable``;
3. storage that failed before and has not changed since → left alone (no timer);
4. **crash recovery**: a record whose operation hash is one of the job's keys (``<job id>:<i>``)
   means the batch was saved before a crash: ``completed`` (or ``skipped: source_revoked`` if
   it was forgotten since) without calling the model again;
5. three paid attempts spent → ``unavailable: retry_exhausted``;
6. storage preflight (32 KiB); no model → ``unavailable: provider_missing``; a model whose
   identity cannot be fingerprinted → ``unavailable: identity_unavailable``;
7. a retry time in the future, or refused credentials, for the *same* model configuration →
   left alone (a changed configuration goes at once);
8. the attempt is counted in the ledger **before** the call; the call goes through the
   auxiliary runner. A call that never reached a model (unavailable, cooldown, cancelled) is
   refunded; the answer is validated strictly; the gate and every source are checked again
   (an edit → ``skipped: source_changed``, nothing saved); the facts are saved in one batch
   through the one write path with keys ``<job id>:<i>`` (a tombstone → ``skipped:
   source_revoked``), except those whose content an active record already has (case and
   whitespace aside), which are not saved again. Storage failures wait for the storage to
   change; anything else is ``failed`` for 60 s, or ``retry_exhausted`` once the third paid
   attempt is gone.

The status API (what ``memquill jobs`` and the management page's jobs panel show):
:func:`job_status` reads the ledger and never writes (a workspace with no ledger yet gets an
empty status, and nothing is created). :func:`retry_jobs` makes every job that can still move
eligible at once (its retry time, credential wait and storage wait are cleared); it never gives
back a paid attempt, so a job whose three attempts are spent stays ``retry_exhausted``. The next
pass (``Extraction.resume``, or the host's next turn) takes them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from memquill.enhance import AuxiliaryRequest, AuxiliaryResult, AuxiliaryRunner, TextModel
from memquill.errors import BusyError, JobLedgerError, MemoryRecordError
from memquill.lifecycle._host import (
    MessageSource,
    SessionGate,
    UsableTurn,
    changed,
    storage_signature,
    usable_turns,
)
from memquill.lifecycle._ledger import (
    ELIGIBLE,
    MAX_ATTEMPTS,
    MAX_TURNS,
    Job,
    JobStatus,
    LedgerFile,
    valid_reference,
)
from memquill.lifecycle._prompt import (
    EXTRACTION_MAX_TOKENS,
    MAX_FACTS,
    Fact,
    cut_turns,
    extraction_prompt,
    parse_facts,
)
from memquill.store import Candidate, iso_timestamp
from memquill.tools import MemorySession, WriteSource, save_candidates

MAX_CALLS_PER_PASS: Final = 3
EXTRACTION_TIMEOUT: Final = 120.0
RESERVE_BYTES: Final = 32 * 1024
RETRY_DELAY_MS: Final = 60_000
_STORAGE_REASONS: Final = {
    "capacity": "storage_capacity",
    "corrupt": "storage_corrupt",
    "storage": "storage_unavailable",
    "unsafe_path": "storage_unavailable",
}
_LOG: Final = logging.getLogger("memquill.lifecycle")


@dataclass(frozen=True, slots=True)
class PassConfig:
    """Everything a pass needs: where, with what model, reading which history."""

    ledger: LedgerFile
    session: MemorySession
    source: MessageSource
    model: TextModel | None
    gate: SessionGate
    runner: AuxiliaryRunner
    clock: Callable[[], float]


@dataclass(slots=True)
class PassState:
    """What one pass did so far."""

    calls: int = 0
    untouched: int = 0
    settled: list[tuple[str, JobStatus, str | None]] = field(
        default_factory=list[tuple[str, JobStatus, str | None]]
    )


async def process_job(config: PassConfig, state: PassState, job: Job) -> None:
    """Take ``job`` one step as far as it can go in this pass (see the module doc)."""
    run = _JobRun(config, state, job)
    await run.process()


class _JobRun:
    def __init__(self, config: PassConfig, state: PassState, job: Job) -> None:
        self.config = config
        self.state = state
        self.job = job
        self.reserved = False

    # -- steps -----------------------------------------------------------------------------

    async def process(self) -> None:
        config, job = self.config, self.job
        if self._gate_settled():
            return
        try:
            messages = await config.source.messages(job.session_id)
        except Exception as error:  # noqa: BLE001 - one broken history must not stop the pass
            _LOG.warning("extraction: the message source failed (%s)", type(error).__name__)
            self.state.untouched += 1
            return
        if messages is None:
            self.state.untouched += 1
            return
        used = usable_turns(job, messages)
        if not used:
            self._settle("skipped", "source_unavailable")
            return
        signature = storage_signature(config.ledger.root)
        try:
            await self._attempt(used, signature)
        except asyncio.CancelledError:
            if self.reserved:  # a call cut short never reached an answer: refunded
                self._settle("failed", "cancelled", attempts=self.job.attempts - 1)
            raise
        except JobLedgerError:
            raise
        except Exception as error:  # noqa: BLE001 - any failure is a status, never a crash
            self._failed(error, signature)

    async def _attempt(self, used: list[UsableTurn], signature: str) -> None:
        config, job = self.config, self.job
        if job.storage_blocked_revision == signature:
            return None  # unchanged: the job waits for a later pass
        store = config.session.store
        # A committed batch holds at least one of its keys (a fact already in memory is skipped,
        # so not always ``<job id>:0``); a batch of known facts only left none, and is asked
        # again, to be skipped again.
        recovered = next(
            (
                record
                for index in range(MAX_FACTS)
                if (record := store.find_operation(f"{job.id}:{index}")) is not None
            ),
            None,
        )
        if recovered is not None:
            if recovered.status == "active":
                return self._settle("completed", None)
            return self._settle("skipped", "source_revoked")
        if job.attempts >= MAX_ATTEMPTS:
            return self._settle("unavailable", "retry_exhausted", retry_at=None)
        store.preflight(RESERVE_BYTES)
        model = config.model
        if model is None:
            return self._settle("unavailable", "provider_missing")
        fingerprint = config.runner.fingerprint(model)
        if fingerprint is None:
            return self._settle("unavailable", "identity_unavailable")
        if fingerprint == job.route_fingerprint and (
            (job.requires_configuration_change and job.reason == "credentials_missing")
            or (job.retry_at is not None and job.retry_at > self._now_ms())
        ):
            return None  # unchanged: the job waits for a later pass
        if self.state.calls >= MAX_CALLS_PER_PASS:
            return None
        self.state.calls += 1
        self._reserve(fingerprint, model.identity.label)
        turns = cut_turns(
            [(t.ref.user_message_id, t.user.text, t.assistant.text) for t in used], len(job.refs)
        )
        result = await config.runner.run(
            AuxiliaryRequest(
                scene="memory_extract",
                scope=str(config.ledger.root),
                model=model,
                prompt=extraction_prompt(turns),
                max_tokens=EXTRACTION_MAX_TOKENS,
                timeout=EXTRACTION_TIMEOUT,
            )
        )
        if not result.completed:
            return self._not_answered(result)
        facts = parse_facts(result.text or "", turns)
        if self._gate_settled():
            return None
        after = await config.source.messages(job.session_id)
        if after is None or changed(used, job, after):
            return self._settle("skipped", "source_changed")
        if not facts:
            return self._settle("nothing", None)
        return self._save(facts, used)

    def _save(self, facts: list[Fact], used: list[UsableTurn]) -> None:
        job = self.job
        created = {turn.user.id: turn.user.created_at for turn in used}
        candidates: list[Candidate] = []
        for index, fact in enumerate(facts):
            captured = created.get(fact.message_id)
            source = WriteSource(
                "conversation",
                session_id=job.session_id,
                message_id=fact.message_id,
                role="user",
                captured_at=captured if valid_reference(captured) else None,
            )
            candidates.append(Candidate(fact.content, source.metadata(), f"{job.id}:{index}"))
        result = save_candidates(self._job_session(), candidates, skip_known=True)
        if result.status == "blocked":
            self._settle("skipped", "source_revoked")
        else:
            self._settle("completed", None)

    # -- outcomes --------------------------------------------------------------------------

    def _gate_settled(self) -> bool:
        verdict = self.config.gate(self.job.session_id)
        if verdict == "unbound":
            self._settle("skipped", "binding_unavailable")
        elif verdict == "read_only":
            self._settle("unavailable", "policy_blocked")
        return verdict != "ready"

    def _not_answered(self, result: AuxiliaryResult) -> None:
        retry_at = None if result.retry_at is None else int(result.retry_at * 1000)
        flag = result.requires_configuration_change
        free = result.status in ("unavailable", "cooldown") or result.reason == "cancelled"
        if free:
            self._settle(
                result.status,
                result.reason,
                attempts=self.job.attempts - 1,
                retry_at=retry_at,
                requires_configuration_change=flag,
            )
        elif self.job.attempts >= MAX_ATTEMPTS:
            self._settle("unavailable", "retry_exhausted", retry_at=None)
        else:
            self._settle(
                result.status, result.reason, retry_at=retry_at, requires_configuration_change=flag
            )

    def _failed(self, error: Exception, signature: str) -> None:
        code = getattr(error, "code", None)
        if isinstance(error, MemoryRecordError) and code in _STORAGE_REASONS:
            self._settle(
                "unavailable",
                _STORAGE_REASONS[code],
                storage_blocked_revision=signature,
                retry_at=None,
            )
            return
        if not isinstance(error, MemoryRecordError | JobLedgerError):
            _LOG.warning("extraction: job failed (%s)", type(error).__name__)
        if self.reserved and self.job.attempts >= MAX_ATTEMPTS:
            self._settle("unavailable", "retry_exhausted", retry_at=None)
            return
        reason = "storage_busy" if isinstance(error, BusyError) else "extraction_or_storage_failed"
        self._settle("failed", reason, retry_at=self._now_ms() + RETRY_DELAY_MS)

    # -- ledger ----------------------------------------------------------------------------

    def _reserve(self, fingerprint: str, label: str) -> None:
        self._update(
            "running",
            None,
            attempts=self.job.attempts + 1,
            provider_id=label if valid_reference(label, 300) else "model",
            route_fingerprint=fingerprint,
            retry_at=None,
            requires_configuration_change=False,
            storage_blocked_revision=None,
        )
        self.reserved = True

    def _settle(self, status: JobStatus, reason: str | None, **changes: object) -> None:
        self._update(status, reason, **changes)
        self.state.settled.append((self.job.id, status, reason))

    def _update(self, status: JobStatus, reason: str | None, **changes: object) -> None:
        # A step that changes nothing of a job the ledger holds (a job with no model, each
        # pass) leaves the ledger as it is, updatedAt too: the file is not rewritten.
        now = iso_timestamp(datetime.fromtimestamp(self.config.clock(), UTC))
        with self.config.ledger.change() as ledger:
            held = ledger.job(self.job.id)
            current = held or self.job
            evolved = current.evolve(status=status, reason=reason, **changes)
            if held is not None and evolved == held:
                self.job = held
                return
            self.job = evolved.evolve(updated_at=now)
            ledger.replace_job(self.job)

    def _now_ms(self) -> int:
        return int(self.config.clock() * 1000)

    def _job_session(self) -> MemorySession:
        base, gate, session_id = self.config.session, self.config.gate, self.job.session_id
        return MemorySession(
            base.workspace,
            session_id,
            "read_write",
            lambda: base.write_allowed() and gate(session_id) == "ready",
            lock_timeout=base.lock_timeout,
            now=base.now,
            secrets=base.secrets,
            store=base.store_location,
        )


# ----------------------------------------------------------------------------------------------
# A pass of the extraction runner over one workspace's jobs, and the per-process scheduling.
#
# A pass does nothing when the workspace has no ledger (viewing an unused workspace creates
# nothing) or when another pass holds the runner lock (in this process or another). Otherwise it
# takes the jobs that can still move (``pending``, ``running``, ``unavailable``, ``failed``,
# ``cooldown``) oldest ``updatedAt`` first (settling a job moves it to the back, so a job that
# keeps failing cannot starve newer ones) and makes at most three model calls.
#
# One runner per workspace per event loop: :meth:`Scheduler.schedule` starts passes on a loop, and a
# request that arrives while a pass runs sets a rerun flag instead (the running driver does one
# more pass for it, with the requester's model and source). Every caller of the same run gets
# the same future.


@dataclass(frozen=True, slots=True)
class PassReport:
    """What passes did.

    Attributes:
        ran: whether a pass ran (``False``: no ledger yet, or another pass held the lock).
        calls: model calls made (at most 3 per pass).
        settled: ``(job id, status, reason)`` for every job whose status this pass set.
        untouched: jobs left alone because their session is unknown to the message source.
        error: why the last pass stopped early (a ledger that cannot be read or written), if
            it did.
    """

    ran: bool = False
    calls: int = 0
    settled: tuple[tuple[str, JobStatus, str | None], ...] = ()
    untouched: int = 0
    error: Exception | None = field(default=None, compare=False)

    def merged(self, other: PassReport) -> PassReport:
        """Both reports as one (the later error wins)."""
        return PassReport(
            self.ran or other.ran,
            self.calls + other.calls,
            self.settled + other.settled,
            self.untouched + other.untouched,
            other.error or self.error,
        )


async def run_pass(config: PassConfig) -> PassReport:
    """One pass over ``config``'s workspace (see the module doc).

    Raises:
        JobLedgerError, StorageError: the ledger cannot be read or written (the pass stops;
            every job keeps the status it had, and a later pass goes on).
    """
    ledger = config.ledger
    if not ledger.exists():
        return PassReport()
    with ledger.runner_claim() as claimed:
        if not claimed:
            return PassReport()
        jobs = [job for job in ledger.read().jobs if job.status in ELIGIBLE]
        jobs.sort(key=lambda job: job.updated_at)  # stable: ties keep ledger order
        state = PassState()
        for queued in jobs:
            if state.calls >= MAX_CALLS_PER_PASS:
                break  # the rest wait for the next pass: each pass costs three calls at most
            job = ledger.read().job(queued.id)  # another process may have changed it
            if job is None or job.status not in ELIGIBLE:
                continue
            await process_job(config, state, job)
        return PassReport(True, state.calls, tuple(state.settled), state.untouched)


@dataclass(slots=True)
class _Driver:
    pending: dict[int, PassConfig] = field(default_factory=dict[int, PassConfig])
    future: Future[PassReport] | None = None


_Key = tuple[str, asyncio.AbstractEventLoop]


class Scheduler:
    """The runs going on in this process: one driver per (workspace, event loop), dropped
    when its run ends. The process has one (:data:`SCHEDULER`), so every extraction of a
    workspace joins the same run on a loop."""

    def __init__(self) -> None:
        self._drivers: dict[_Key, _Driver] = {}
        self._lock = threading.Lock()

    def schedule(self, config: PassConfig, loop: asyncio.AbstractEventLoop) -> Future[PassReport]:
        """Run passes for ``config`` on ``loop`` (or join the run already going there).

        Returns the run's future: it completes when no pass is left to do on that loop for
        that workspace, with every pass's report merged. A pass that raised is logged and its
        error is in :attr:`PassReport.error`; the future itself fails only when the loop
        cancels the run.
        """
        key = (str(config.ledger.root), loop)
        with self._lock:
            driver = self._drivers.setdefault(key, _Driver())
            driver.pending[id(config)] = config
            if driver.future is not None:
                return driver.future
            future: Future[PassReport] = Future()
            driver.future = future
        try:
            asyncio.run_coroutine_threadsafe(self._drive(key, driver, future), loop)
        except RuntimeError as error:  # the loop is closed
            self._drop(key, driver)
            future.set_exception(error)
        return future

    def running(self, workspace: str) -> list[Future[PassReport]]:
        """The futures of runs going on for ``workspace`` (its canonical path), on any loop."""
        with self._lock:
            return [
                driver.future
                for (root, _), driver in self._drivers.items()
                if root == workspace and driver.future is not None
            ]

    def _drop(self, key: _Key, driver: _Driver) -> None:
        with self._lock:
            driver.future = None
            driver.pending.clear()
            self._drivers.pop(key, None)

    async def _drive(self, key: _Key, driver: _Driver, future: Future[PassReport]) -> None:
        report = PassReport()
        try:
            while True:
                with self._lock:
                    if not driver.pending:
                        driver.future = None
                        self._drivers.pop(key, None)
                        break
                    config = driver.pending.pop(next(iter(driver.pending)))
                try:
                    report = report.merged(await run_pass(config))
                except Exception as error:  # noqa: BLE001 - reported, and the run goes on
                    _LOG.warning(
                        "extraction pass stopped: %s", getattr(error, "code", type(error).__name__)
                    )
                    report = report.merged(PassReport(error=error))
        except BaseException as error:  # the loop cancelled the run (it is shutting down)
            self._drop(key, driver)
            if isinstance(error, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(error)
            raise
        future.set_result(report)


SCHEDULER: Final = Scheduler()
"""The process's scheduler (it starts nothing until asked)."""


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
