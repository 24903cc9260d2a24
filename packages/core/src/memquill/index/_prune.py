"""Which documents can still reach the re-scored set: exact candidate pruning.

Ranking re-scores only the ``depth`` best documents by (decayed) BM25F score, so a document
that provably scores below ``depth`` others never matters. Terms are taken rarest first, as in
MaxScore: once the terms left could not lift an unseen document above the ``depth``-th best
lower bound, the common terms are only looked up for the documents already in play, and those
that can no longer reach the bound are dropped. Every bound holds with a relative margin
(:data:`MARGIN`) far above floating-point error, so the set kept always contains the set the
full ranking would re-score; :func:`memquill.query._rank.rank` then scores the kept documents
exactly. A term's gain never exceeds ``idf * (k1 + 1)`` (term frequencies saturate), and a
month mention adds a fixed gain.

The lower bound is raised early by *completing* the leading documents: the ``depth`` best so
far are looked up in every term not yet taken, and ``depth`` documents with known complete
scores mean the ``depth``-th best is at least their lowest. Common terms then rarely need a
pass over every document holding them.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import add, ge
from typing import Final

MARGIN: Final = 1e-9
_REPRUNE: Final = 2
"""Drop hopeless documents again once more than this many times ``depth`` are in play."""
_SAMPLE: Final = 4
"""A threshold is first taken among this many times ``depth`` documents."""
Scale = Callable[[dict[int, float]], list[float]]
"""Each document's score in play times its decay factor (same order as the dict)."""


@dataclass(slots=True)
class Term:
    """One scoring term for pruning.

    Attributes:
        bound: no document gains more than this from the term.
        accumulate: adds the term's gain to ``acc[slot]`` of every allowed document holding
            it (inserting missing slots).
        size: how many documents hold it (the cost of ``accumulate``).
        accumulate_known: like ``accumulate``, for the slots already in ``acc`` only.
        lookup: the gains of some slots (0.0 for one that does not hold the term).
    """

    bound: float
    accumulate: Callable[[dict[int, float]], None]
    size: int
    accumulate_known: Callable[[dict[int, float]], None]
    lookup: Callable[[list[int]], list[float]]


def select(
    terms: Sequence[Term],
    depth: int,
    scale: Scale | None,
    factor: Callable[[int], float],
    ceiling: float,
) -> set[int] | None:
    """The slots that may rank among the best ``depth``; ``None`` when nothing is pruned.

    Args:
        terms: the query's terms (and month mentions).
        depth: how many documents are re-scored.
        scale: decayed scores of the documents in play, in bulk (``None``: no decay).
        factor: the decay factor of one slot.
        ceiling: no slot's decay factor exceeds this.
    """
    if depth <= 0 or ceiling <= 0.0 or sum(term.size for term in terms) <= depth:
        return None
    order = sorted(terms, key=lambda term: -term.bound)
    remaining = sum(term.bound for term in order)
    acc: dict[int, float] = {}
    complete: dict[int, float] = {}
    theta = 0.0
    closed = False
    for position, term in enumerate(order):
        if not closed and len(acc) >= depth:
            values = list(acc.values()) if scale is None else scale(acc)
            best = _depth_best(values, depth)
            leading = list(compress(acc.keys(), map(ge, values, repeat(best))))
            theta = max(theta, best)
            closed = remaining * ceiling * (1.0 + MARGIN) < theta * (1.0 - MARGIN)
            if not closed:
                decay = None if scale is None else factor
                completed = _completed(acc, leading, order[position:], depth, decay, complete)
                theta = max(theta, completed)
                closed = remaining * ceiling * (1.0 + MARGIN) < theta * (1.0 - MARGIN)
            if closed:
                acc = _reachable(acc, remaining, theta, factor, ceiling, scale is None)
        if closed:
            if len(acc) > _REPRUNE * depth:
                theta = max(theta, _threshold(acc, depth, scale))
                acc = _reachable(acc, remaining, theta, factor, ceiling, scale is None)
            term.accumulate_known(acc)
        else:
            term.accumulate(acc)
        remaining -= term.bound
    if len(acc) <= depth:
        return set(acc)
    theta = max(theta, _threshold(acc, depth, scale))
    return set(_reachable(acc, 0.0, theta, factor, ceiling, scale is None))


def _completed(
    acc: dict[int, float],
    leading: list[int],
    rest: Sequence[Term],
    depth: int,
    factor: Callable[[int], float] | None,
    complete: dict[int, float],
) -> float:
    """A lower bound of the ``depth``-th best decayed score: the ``depth``-th best complete
    score of the (at least ``depth``) documents ``leading`` so far. ``complete`` keeps their
    scores between calls: a score counted in full does not change as its terms are taken."""
    new = [slot for slot in leading if slot not in complete]
    if new:
        scores = [acc[slot] for slot in new]
        for term in rest:
            scores = list(map(add, scores, term.lookup(new)))
        complete.update(zip(new, scores, strict=True))
    if factor is None:
        decayed = [complete[slot] for slot in leading]
    else:
        decayed = [complete[slot] * factor(slot) for slot in leading]
    return heapq.nlargest(depth, decayed)[-1] * (1.0 - MARGIN)


def _reachable(
    acc: dict[int, float],
    remaining: float,
    theta: float,
    factor: Callable[[int], float],
    ceiling: float,
    flat: bool,
) -> dict[int, float]:
    """The documents whose decayed score can still reach ``theta``."""
    floor = theta * (1.0 - MARGIN)
    # First the bound every document shares, then (with decay) each document's own factor.
    cut = floor / (ceiling * (1.0 + MARGIN)) - remaining
    kept = dict(compress(acc.items(), map(ge, acc.values(), repeat(cut))))
    if flat:
        return kept
    top = 1.0 + MARGIN
    return {
        slot: score
        for slot, score in kept.items()
        if (score + remaining) * factor(slot) * top >= floor
    }


def _threshold(acc: dict[int, float], depth: int, scale: Scale | None) -> float:
    """The ``depth``-th best decayed lower bound among the documents in play."""
    return _depth_best(list(acc.values()) if scale is None else scale(acc), depth)


def _depth_best(values: list[float], depth: int) -> float:
    """The ``depth``-th largest of ``values`` (at least ``depth`` of them)."""
    if len(values) > _SAMPLE * depth:
        # The depth-th best of a part is no better than the whole's: only values at least
        # that good can be among the best (kept in C, a few of many).
        floor = heapq.nlargest(depth, values[: _SAMPLE * depth])[-1]
        values = list(compress(values, map(ge, values, repeat(floor))))
    return heapq.nlargest(depth, values)[-1]
