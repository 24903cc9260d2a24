"""The seam where optional model assistance may reorder ``memory_search`` candidates.

The tools know nothing about models. A session may hold a :class:`CandidateRanker`; when it
does, ``memory_search`` takes the (at most 20) keyword candidates found after filters and
decay, asks the ranker for an order, and shows the first ``limit`` of them in that order. The
ranker answers with a :class:`RankDecision`: an order, or a one-line notice of why keyword order
stays (it becomes the first line of the output, before the keyword results, which are always
shown). Without a ranker, or with fewer than two candidates, the search is exactly the plain one.

A ranker may also bring candidates keyword search did not find (``extra``: semantic recall's
purely similar hits when the keyword set is thin or keyword search is not confident); they are
ordered like the others, and a ``note`` line says how the hits were ordered.

:class:`memquill.enhance.ModelRanker` is the ranker model assistance provides;
:class:`memquill.semantic.SemanticRanker` the one semantic recall provides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from memquill.query import SearchArgs, SearchHit, SearchResult


CANDIDATE_LIMIT: Final = 20
"""Keyword candidates a ranker sees (the most ``memory_search`` ever shows)."""


@dataclass(frozen=True, slots=True)
class RankDecision:
    """A ranker's answer.

    Attributes:
        order: candidate indices, best first (a permutation of all of them, the keyword hits
            then ``extra``), or ``None``.
        notice: why keyword order stays, as one line (``None`` when ranked or not attempted).
        extra: candidates the ranker adds (shown only in a valid ``order``).
        note: how a valid order was made, as the output's first line (``None``: no line).
    """

    order: tuple[int, ...] | None = None
    notice: str | None = None
    extra: tuple[SearchHit, ...] = ()
    note: str | None = None


class CandidateRanker(Protocol):
    """Reorders the keyword candidates of a search (async, and blocking for sync callers)."""

    async def rank(
        self,
        query: str,
        hits: Sequence[SearchHit],
        *,
        scope: str,
        search: SearchArgs | None = None,
    ) -> RankDecision:
        """The order of ``hits`` for ``query``; ``scope`` is whose search it is, ``search``
        the search's arguments (its filters), when known."""
        ...

    def rank_blocking(
        self,
        query: str,
        hits: Sequence[SearchHit],
        *,
        scope: str,
        search: SearchArgs | None = None,
    ) -> RankDecision:
        """:meth:`rank` for a caller without an event loop."""
        ...


def first(result: SearchResult, limit: int) -> SearchResult:
    """The first ``limit`` hits of ``result``: exactly the plain search with that limit."""
    return result.model_copy(update={"hits": result.hits[:limit]})


def arrange(result: SearchResult, decision: RankDecision, limit: int) -> SearchResult:
    """``result``'s candidates as the decision says, cut to ``limit`` hits.

    A valid order (a permutation of every candidate) reorders them and renumbers their ranks;
    anything else keeps keyword order, with the decision's notice.
    """
    hits = (*result.hits, *decision.extra)
    order = decision.order
    if order is None or sorted(order) != list(range(len(hits))):
        return first(result, limit).model_copy(update={"ranking_notice": decision.notice})
    shown = tuple(
        hits[index].model_copy(update={"rank": position})
        for position, index in enumerate(order[:limit], 1)
    )
    update = {"hits": shown, "reranked": True, "ranking_notice": decision.note}
    return result.model_copy(update=update)
