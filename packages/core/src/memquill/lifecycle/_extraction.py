"""``Extraction``: automatic extraction for one workspace, as a host wires it in.

A host builds one per workspace with its session, its history (a :class:`MessageSource`), its
model and its gate, then reports each finished turn with :meth:`Extraction.record`. Recording
is a short ledger change in the caller's thread; the extraction itself runs afterwards, in the
background, so the reply is never delayed: on memquill's model-call thread for synchronous
hosts (:meth:`record`, :meth:`resume`), or as a task on the host's own event loop for
asynchronous ones (:meth:`arecord`, :meth:`aresume`), where async message stores and model
clients live. A failure to record is logged (``memquill.lifecycle``) and never raised into the
host's turn.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cached_property
from typing import Final

from memquill.enhance import AuxiliaryRunner, TextModel, default_runner, model_loop
from memquill.errors import MemquillError
from memquill.lifecycle._host import MessageSource, SessionGate, always_ready
from memquill.lifecycle._job import (
    SCHEDULER,
    STATUS_JOBS,
    JobsView,
    PassConfig,
    PassReport,
    job_status,
    retry_jobs,
)
from memquill.lifecycle._ledger import LedgerFile, valid_reference
from memquill.lifecycle._turns import CommittedTurn, flush_session, record_turn
from memquill.store import iso_timestamp
from memquill.tools import MemorySession

_LOG: Final = logging.getLogger("memquill.lifecycle")


class Extraction:
    """Automatic, crash-safe extraction of facts from one workspace's conversations.

    Args:
        session: a session on the workspace, opened with :func:`memquill.open_session` so
            every plugin's secret detectors guard the saves (it needs ``read_write`` access;
            its ``authorize_write`` is asked at every save too).
        source: where the conversations' messages are read from.
        model: the model that extracts (``None``: turns are counted and batches wait with
            ``unavailable: provider_missing`` until a model is given).
        gate: the host's answer for a session: ``ready``, ``read_only`` (Plan mode) or
            ``unbound`` (``None``: every session is ready).
        runner: the auxiliary runner model calls go through (default: the process's).
        clock: seconds since the epoch (injectable for tests).
    """

    def __init__(
        self,
        session: MemorySession,
        source: MessageSource,
        *,
        model: TextModel | None = None,
        gate: SessionGate | None = None,
        runner: AuxiliaryRunner | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.session = session
        self.source = source
        self.model = model
        self.gate: SessionGate = gate or always_ready
        self.runner = runner or default_runner()
        self.clock = clock

    @cached_property
    def ledger(self) -> LedgerFile:
        """The workspace's job ledger.

        Raises:
            UnsafePathError, StorageError: the workspace is not an existing absolute folder.
        """
        return LedgerFile.of(self.session.workspace, self.session.lock_timeout)

    @cached_property
    def _config(self) -> PassConfig:
        return PassConfig(
            self.ledger, self.session, self.source, self.model, self.gate, self.runner, self.clock
        )

    # -- recording -------------------------------------------------------------------------

    def enqueue(self, turn: CommittedTurn) -> bool:
        """Count ``turn`` in the ledger; ``True`` when it closed a batch (a job was added).

        A turn that does not count (see :meth:`CommittedTurn.refusal`), or whose session the
        gate does not find ``ready``, changes nothing and answers ``False``.

        Raises:
            JobLimitError: 5,000 turns are recorded; extraction has stopped for the workspace.
            JobBusyError, JobCorruptError, JobUnsafePathError, UnsafePathError, StorageError.
        """
        refusal = turn.refusal()
        if refusal is not None:
            _LOG.debug("extraction: turn not counted (%s)", refusal)
            return False
        if self.gate(turn.session_id) != "ready":
            return False
        return record_turn(self.ledger, turn, provider_id=self._provider(), now=self._now())

    def record(self, turn: CommittedTurn) -> bool:
        """:meth:`enqueue`, then :meth:`resume` in the background; never raises.

        For synchronous hosts, right after the assistant's reply is stored. A failure to
        record is logged as ``MEMORY_JOB_ENQUEUE_FAILED`` with its code; the host's turn is
        never undone or delayed by it.
        """
        try:
            added = self.enqueue(turn)
        except MemquillError as error:
            _LOG.warning("MEMORY_JOB_ENQUEUE_FAILED: %s", error.code)
            return False
        self.resume()
        return added

    async def arecord(self, turn: CommittedTurn) -> bool:
        """:meth:`record` for asynchronous hosts: the passes run on the caller's event loop."""
        try:
            added = await asyncio.to_thread(self.enqueue, turn)
        except MemquillError as error:
            _LOG.warning("MEMORY_JOB_ENQUEUE_FAILED: %s", error.code)
            return False
        self._schedule_here()
        return added

    def flush(self, session_id: str) -> bool:
        """Close ``session_id``'s pending turns into a batch now (its conversation ended).

        Raises:
            JobBusyError, JobCorruptError, JobLimitError, JobUnsafePathError, StorageError.
        """
        return flush_session(self.ledger, session_id, provider_id=self._provider(), now=self._now())

    # -- running ---------------------------------------------------------------------------

    def resume(self) -> concurrent.futures.Future[PassReport]:
        """Run passes on memquill's model-call thread; returns at once.

        A run already going for this workspace there does one more pass instead (every caller
        gets its future). Called after each recorded turn and at start-up (restart recovery).
        """
        return SCHEDULER.schedule(self._config, model_loop())

    async def aresume(self) -> PassReport:
        """Run passes on the caller's event loop and wait for them."""
        return await asyncio.wrap_future(self._schedule_here())

    def retry(self) -> concurrent.futures.Future[PassReport]:
        """Make every job that can still move eligible now, then :meth:`resume`.

        Attempts are never given back: a job whose three attempts are spent stays
        ``unavailable: retry_exhausted``.
        """
        if self.ledger.exists():
            retry_jobs(self.ledger)
        return self.resume()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no pass runs for this workspace (from a thread that runs none).

        Returns ``False`` when ``timeout`` seconds passed first. For shutdown, scripts and
        tests: a process that exits while a pass runs loses nothing (the next pass recovers
        the job) but may spend the attempt again.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            futures = SCHEDULER.running(str(self.ledger.root))
            if not futures:
                return True
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            _, pending = concurrent.futures.wait(futures, remaining)
            if pending:
                return False

    # -- status ----------------------------------------------------------------------------

    def status(self, limit: int = STATUS_JOBS) -> JobsView:
        """The latest jobs, whether the ledger is full, and how many turns wait for a batch.

        Raises:
            JobCorruptError, JobLimitError, JobUnsafePathError, StorageError.
        """
        return job_status(self.ledger, limit=limit)

    # -- internals -------------------------------------------------------------------------

    def _schedule_here(self) -> concurrent.futures.Future[PassReport]:
        return SCHEDULER.schedule(self._config, asyncio.get_running_loop())

    def _provider(self) -> str:
        if self.model is None:
            return "none"
        try:
            label = self.model.identity.label
        except Exception:  # noqa: BLE001 - a label is only a hint for people
            return "model"
        return label if valid_reference(label, 300) else "model"

    def _now(self) -> str:
        return iso_timestamp(datetime.fromtimestamp(self.clock(), UTC))

    def __repr__(self) -> str:
        return f"Extraction({self.session!r}, source={self.source!r})"
