"""``ModelRanker``: a text model re-ranking ``memory_search`` candidates for a session.

The tools layer knows nothing about models: a session may hold a candidate ranker
(:class:`memquill.tools.CandidateRanker`), and ``memory_search`` asks it to reorder the keyword
candidates. This is the ranker model assistance provides: it sends the candidates through
:func:`~memquill.enhance.rerank` (the prompt contract, the runner, the 3 s race, strict
validation) and answers with the new order or the fallback line.

Synchronous callers (a LangChain ``tool.invoke``, LlamaIndex's ``call_tool``) get the same
answer through :meth:`ModelRanker.rank_blocking`, which runs the call on one long-lived event
loop thread per process (started on first use), so a model's async client always sees the same
loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Sequence
from concurrent.futures import Future
from typing import Any, Final, TypeVar

from memquill.enhance._model import TextModel
from memquill.enhance._rerank import RERANK_TIMEOUT, RerankCandidate, fallback_line, rerank
from memquill.enhance._runner import AuxiliaryRunner, default_runner
from memquill.query import SearchArgs, SearchHit
from memquill.tools import RankDecision

__all__ = ["ModelRanker", "model_loop", "run_blocking"]

T = TypeVar("T")
# Seconds beyond the rerank budget a synchronous caller waits at most: the budget holds on the
# model-call loop, and this only guards that loop itself (a loop-bound model that blocks it).
_WAIT_MARGIN: Final = 1.0


class ModelRanker:
    """Reorders search candidates with ``model``.

    Args:
        model: the host's text model.
        runner: the auxiliary runner (default: the process's, so cooldowns are shared).
        timeout: seconds the model has before keyword order is kept (3 by default).
    """

    def __init__(
        self,
        model: TextModel,
        *,
        runner: AuxiliaryRunner | None = None,
        timeout: float = RERANK_TIMEOUT,
    ) -> None:
        self.model = model
        self._runner = runner
        self.timeout = timeout

    @property
    def runner(self) -> AuxiliaryRunner:
        """The runner calls go through."""
        if self._runner is None:
            self._runner = default_runner()
        return self._runner

    async def rank(
        self,
        query: str,
        hits: Sequence[SearchHit],
        *,
        scope: str,
        search: SearchArgs | None = None,
    ) -> RankDecision:
        """The model's order of ``hits`` (indices, best first), or why keyword order stays."""
        candidates = [RerankCandidate(hit.heading, hit.snippet) for hit in hits]
        outcome = await rerank(
            self.runner,
            self.model,
            scope=scope,
            query=query,
            candidates=candidates,
            timeout=self.timeout,
        )
        return RankDecision(order=outcome.order, notice=outcome.notice)

    def rank_blocking(
        self,
        query: str,
        hits: Sequence[SearchHit],
        *,
        scope: str,
        search: SearchArgs | None = None,
    ) -> RankDecision:
        """:meth:`rank` for synchronous callers (on the process's model-call loop)."""
        try:
            return run_blocking(self.rank(query, hits, scope=scope), self.timeout + _WAIT_MARGIN)
        except TimeoutError:  # the race already bounds the call; this guards a stuck loop
            return RankDecision(notice=fallback_line("failed", "timeout"))

    def __repr__(self) -> str:
        return f"ModelRanker({self.model!r})"


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
