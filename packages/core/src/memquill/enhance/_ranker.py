"""``ModelRanker``: a text model re-ranking ``memory_search`` candidates for a session.

The tools layer knows nothing about models: a session may hold a candidate ranker
(:class:`memquill.tools.CandidateRanker`), and ``memory_search`` asks it to reorder the keyword
candidates. This is the ranker model assistance provides: it sends the candidates through
:func:`~memquill.enhance._rerank.rerank` (the prompt contract, the runner, the 3 s race, strict
validation) and answers with the new order or the fallback line.

Synchronous callers (a LangChain ``tool.invoke``, LlamaIndex's ``call_tool``) get the same
answer through :meth:`ModelRanker.rank_blocking`, on the process's model-call loop
(:mod:`memquill.enhance._bridge`).
"""

from __future__ import annotations

from collections.abc import Sequence

from memquill.enhance._bridge import WAIT_MARGIN, blocking
from memquill.enhance._model import TextModel
from memquill.enhance._rerank import RERANK_TIMEOUT, RerankCandidate, fallback_line, rerank
from memquill.enhance._runner import AuxiliaryRunner, default_runner
from memquill.query import SearchArgs, SearchHit
from memquill.tools import RankDecision


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
        # The rerank race already bounds the call; the margin guards a stuck loop.
        late = RankDecision(notice=fallback_line("failed", "timeout"))
        return blocking(self.rank(query, hits, scope=scope), self.timeout + WAIT_MARGIN, late)

    def __repr__(self) -> str:
        return f"ModelRanker({self.model!r})"
