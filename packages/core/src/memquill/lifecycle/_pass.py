"""A pass of the extraction runner over one workspace's jobs, and the per-process scheduling.

A pass does nothing when the workspace has no ledger (viewing an unused workspace creates
nothing) or when another pass holds the runner lock (in this process or another). Otherwise it
takes the jobs that can still move (``pending``, ``running``, ``unavailable``, ``failed``,
``cooldown``) oldest ``updatedAt`` first (settling a job moves it to the back, so a job that
keeps failing cannot starve newer ones) and makes at most three model calls.

One runner per workspace per event loop: :meth:`Scheduler.schedule` starts passes on a loop, and a
request that arrives while a pass runs sets a rerun flag instead (the running driver does one
more pass for it, with the requester's model and source). Every caller of the same run gets
the same future.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Final

from memquill.lifecycle._job import MAX_CALLS_PER_PASS, PassConfig, PassState, process_job
from memquill.lifecycle._model import ELIGIBLE, JobStatus

_LOG: Final = logging.getLogger("memquill.lifecycle")


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
