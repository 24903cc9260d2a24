"""The one sync/async bridge of model calls: bounded waits from async and from sync callers.

Every ranker and model call that answers within a budget waits through here:

- :func:`within` awaits a coroutine for at most ``timeout`` seconds on the caller's loop; late,
  the coroutine is cancelled and the caller's ``late`` answer is returned; a cancelled caller
  cancels the coroutine too.
- :func:`run_blocking` runs a coroutine for a caller without an event loop (a LangChain
  ``tool.invoke``, LlamaIndex's ``call_tool``, an index refresh) on one long-lived event-loop
  thread per process (:func:`model_loop`, started on first use), so a model's async client
  always sees the same loop; :func:`blocking` is the same with ``late`` for a timeout.

The rule for budgets: a waiter waits :data:`WAIT_MARGIN` beyond what it waits on (a call's own
budget, or the bound of an inner wait), so the innermost budget decides and an outer wait only
guards against a stuck loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, Final, TypeVar

T = TypeVar("T")

WAIT_MARGIN: Final = 1.0
"""Seconds a waiter waits beyond the bound of what it waits on."""


class _Loop:
    """One daemon event-loop thread per process, started on first use."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def get(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="memquill-model-calls", daemon=True
                )
                thread.start()
                self._loop = loop
            return self._loop


_LOOP: Final = _Loop()


def model_loop() -> asyncio.AbstractEventLoop:
    """The process's model-call loop (a daemon thread, started on first use).

    Work that must outlive the caller's own event loop (extraction resumed in the background
    after a reply) runs here: ``asyncio.run_coroutine_threadsafe(work, model_loop())``.
    """
    return _LOOP.get()


def run_blocking(call: Coroutine[Any, Any, T], timeout: float) -> T:
    """Run ``call`` on the process's model-call loop and wait at most ``timeout`` seconds.

    Raises:
        TimeoutError: the call did not finish in time (it is cancelled).
    """
    future: Future[T] = asyncio.run_coroutine_threadsafe(call, _LOOP.get())
    try:
        return future.result(timeout)
    except TimeoutError:
        future.cancel()
        raise


def blocking(call: Coroutine[Any, Any, T], timeout: float, late: T) -> T:
    """:func:`run_blocking`, answering ``late`` when ``call`` did not finish in time."""
    try:
        return run_blocking(call, timeout)
    except TimeoutError:
        return late


async def within(call: Coroutine[Any, Any, T], timeout: float, late: T) -> T:
    """``call``'s answer, or ``late`` when it did not finish within ``timeout`` seconds (it is
    cancelled then, and when the caller is)."""
    work = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait({work}, timeout=timeout)
    except asyncio.CancelledError:
        work.cancel()
        raise
    if not done:
        work.cancel()
        return late
    return work.result()
