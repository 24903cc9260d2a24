"""Where model calls run, so that a budget holds even against a model that blocks its thread.

A host's model may block the thread it runs on: an ``async def generate`` that calls
``time.sleep``, or a synchronous client inside one. On the caller's event loop such a call
holds everything on that loop, the search waiting for it and the very timer that should cut it.
So a model call runs on a **call loop**, an event loop on a daemon thread of its own, while the
caller waits on its own loop for at most the call's budget. When the budget is spent the caller
stops waiting at once (:class:`CallOverdue`), the call is cancelled on its loop, and its
answer, if it ever comes, is dropped.

- One call loop serves every call, so a model's async client keeps seeing the same loop, until
  it is **stuck**: while it has calls it beats every :data:`BEAT` seconds, and it has not beaten
  for :data:`GRACE` seconds (a model blocks it). New calls then go to a new call loop, and the
  stuck one's thread ends as soon as its last call does. A call that ignores cancellation but
  awaits leaves its loop free, and is simply kept until it ends.
- At most :data:`MAX_STUCK` stuck loops are kept waiting for their calls; past that, new calls
  go to the newest loop even when it is stuck (their callers still stop waiting at their
  budgets). A model that never returns therefore costs at most ``MAX_STUCK + 1`` threads.
- A model whose calls belong to the caller's loop says so with a class attribute
  ``loop_bound = True`` (an MCP client's sampling requests travel on the server's session; a
  framework's async client belongs to the application's loop). It runs on the caller's loop,
  where its budget holds as far as it awaits.

Every call runs in a copy of the caller's context (``contextvars``), as a task would.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import os
import threading
import time
from collections.abc import Callable, Coroutine
from contextlib import suppress
from typing import Any, Final, TypeVar

BEAT: Final = 0.1
"""Seconds between a busy call loop's beats."""
GRACE: Final = 1.0
"""Seconds a busy call loop may go without beating before it counts as stuck."""
MAX_STUCK: Final = 4
"""Stuck call loops kept waiting for their calls to end (each holds one thread)."""

T = TypeVar("T")
Work = Callable[[], Coroutine[Any, Any, Any]]


class CallOverdue(Exception):
    """The call's budget was spent: the caller stopped waiting, the call was cancelled."""


def is_loop_bound(model: object) -> bool:
    """Whether ``model`` must run on its caller's event loop (``loop_bound = True``)."""
    return getattr(model, "loop_bound", False) is True


async def run_call(
    work: Callable[[], Coroutine[Any, Any, T]],
    timeout: float | None,
    *,
    here: bool,
    ended: Callable[[], None],
) -> T:
    """The answer of ``work()`` (a text, an embedder's vectors), awaited for at most
    ``timeout`` seconds (``None``: no limit).

    Args:
        work: makes the model call's coroutine.
        timeout: the budget.
        here: run on the caller's loop (a loop-bound model) instead of a call loop.
        ended: called once the call has really ended (before its answer is handed over, or
            long after an overdue or cancelled caller stopped waiting).

    Raises:
        CallOverdue: the budget was spent.
        asyncio.CancelledError: the caller was cancelled (the call is cancelled too).
        whatever the model raised.
    """
    if here:
        return await _run_here(work, timeout, ended)
    call = _POOL.start(work, contextvars.copy_context(), ended)
    waiting = asyncio.wrap_future(call.answer)
    try:
        done, _ = await asyncio.wait({waiting}, timeout=timeout)
    except asyncio.CancelledError:
        _POOL.abandon(call)
        raise
    if not done:
        _POOL.abandon(call)
        raise CallOverdue
    return waiting.result()


_KEPT: Final[set[asyncio.Task[Any]]] = set()


async def _run_here(
    work: Callable[[], Coroutine[Any, Any, T]], timeout: float | None, ended: Callable[[], None]
) -> T:
    task = asyncio.ensure_future(work())
    task.add_done_callback(lambda _: ended())
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        _abandon_here(task)
        raise
    if not done:
        _abandon_here(task)
        raise CallOverdue
    return task.result()


def _abandon_here(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and hold it until it ends (a model may ignore cancellation)."""
    task.cancel()
    _KEPT.add(task)
    task.add_done_callback(_collect)


def _collect(task: asyncio.Task[Any]) -> None:
    _KEPT.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: nobody waits for an abandoned call's outcome


class _Call:
    """One model call on a call loop."""

    def __init__(self, worker: _Worker, ended: Callable[[], None]) -> None:
        self.worker = worker
        self.answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.ended = ended
        self.task: asyncio.Task[Any] | None = None


class _Worker:
    """A call loop: an event loop running on a daemon thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.pid = os.getpid()
        self.calls: set[_Call] = set()
        self.retired = False
        self.beating = False
        self.beaten_at = time.monotonic()
        self.thread = threading.Thread(target=self._run, name="memquill-model-call", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def stuck(self, now: float) -> bool:
        return bool(self.calls) and now - self.beaten_at > GRACE


class _Pool:
    """The process's call loops (see the module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: _Worker | None = None
        self._stuck: set[_Worker] = set()

    def start(self, work: Work, context: contextvars.Context, ended: Callable[[], None]) -> _Call:
        with self._lock:
            worker = self._worker()
            call = _Call(worker, ended)
            worker.calls.add(call)
            beat = not worker.beating
            if beat:
                worker.beating, worker.beaten_at = True, time.monotonic()
        worker.loop.call_soon_threadsafe(self._begin, call, work, context)
        if beat:
            worker.loop.call_soon_threadsafe(self._beat, worker)
        return call

    def abandon(self, call: _Call) -> None:
        """The caller stopped waiting: cancel the call and drop whatever it answers."""
        call.answer.cancel()
        with suppress(RuntimeError):  # a closed loop: the call has ended already
            call.worker.loop.call_soon_threadsafe(self._cancel, call)

    def stuck_loops(self) -> int:
        """Stuck call loops still waiting for a call to end."""
        with self._lock:
            return len(self._stuck)

    def _worker(self) -> _Worker:
        current = self._current
        if current is not None and current.pid != os.getpid():
            current = None  # a forked child: the parent's threads are not here
        elif (
            current is not None and len(self._stuck) < MAX_STUCK and current.stuck(time.monotonic())
        ):
            current.retired = True
            self._stuck.add(current)
            current = None
        if current is None:
            current = self._current = _Worker()
        return current

    # -- on the call loop ------------------------------------------------------------------

    def _begin(self, call: _Call, work: Work, context: contextvars.Context) -> None:
        if call.answer.cancelled():  # abandoned before it began: never started
            self._end(call)
            return
        try:
            coroutine = context.run(work)
        except Exception as error:  # noqa: BLE001 - handed to the caller like any failure
            self._end(call)
            with suppress(concurrent.futures.InvalidStateError):
                call.answer.set_exception(error)
            return
        task = call.worker.loop.create_task(coroutine, context=context)
        call.task = task
        task.add_done_callback(lambda finished: self._finish(call, finished))

    def _beat(self, worker: _Worker) -> None:
        with self._lock:
            worker.beaten_at = time.monotonic()
            worker.beating = bool(worker.calls)  # an idle loop rests; the next call wakes it
        if worker.beating:
            worker.loop.call_later(BEAT, self._beat, worker)

    def _cancel(self, call: _Call) -> None:
        if call.task is not None:
            call.task.cancel()

    def _finish(self, call: _Call, task: asyncio.Task[Any]) -> None:
        self._end(call)
        answer = call.answer
        if answer.done():
            if not task.cancelled():
                task.exception()  # retrieved: an abandoned call's outcome is dropped
            return
        try:
            if task.cancelled():
                answer.cancel()
            elif (error := task.exception()) is not None:
                answer.set_exception(error)
            else:
                answer.set_result(task.result())
        except concurrent.futures.InvalidStateError:
            pass  # abandoned meanwhile: dropped

    def _end(self, call: _Call) -> None:
        try:
            call.ended()
        finally:
            with self._lock:
                worker = call.worker
                worker.calls.discard(call)
                if worker.retired and not worker.calls:
                    self._stuck.discard(worker)
                    worker.loop.stop()


_POOL: Final = _Pool()


def stuck_loops() -> int:
    """How many stuck call loops are waiting for their calls to end (for tests and status)."""
    return _POOL.stuck_loops()
