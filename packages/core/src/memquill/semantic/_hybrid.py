"""Hybrid order as pure arithmetic: similarity re-orders keyword candidates within a bound.

Keyword ranking stays the base. For the (at most 20) keyword candidates, each hit's keyword
score is divided by the best one's, each hit's similarity (cosine, the best of its chunks) is
scaled between the candidates' lowest and highest, and the two are mixed::

    hybrid = (1 - w) * score / best_score + w * (similarity - lowest) / (highest - lowest)

with ``w`` = :data:`WEIGHT`. So similarity moves a hit past another only when their keyword
scores are within ``w / (1 - w)`` of the best score of each other (a quarter, at 0.2): a
clearly better keyword match is never buried. Ties keep keyword order.

When the keyword set is thin (fewer than :data:`THIN` hits), up to :data:`EXTRA` documents
keyword search did not find are added **after** every keyword hit, most similar first, if their
similarity reaches :data:`MIN_SIMILARITY` ("automobile" for a query about a "car").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = ["EXTRA", "MIN_SIMILARITY", "THIN", "WEIGHT", "hybrid_order"]

WEIGHT: Final = 0.2
"""The similarity's share of the hybrid score (measured: ``docs/ranking.md``)."""
THIN: Final = 5
"""A keyword set with fewer hits than this gets purely semantic candidates."""
EXTRA: Final = 3
"""At most this many purely semantic candidates."""
MIN_SIMILARITY: Final = 0.35
"""The cosine a purely semantic candidate needs."""


def hybrid_order(
    scores: Sequence[float], similarities: Sequence[float], weight: float = WEIGHT
) -> tuple[int, ...]:
    """The candidates' indices, best first, by the hybrid score (ties: keyword order)."""
    if not scores:
        return ()
    best = max(scores)
    low, high = min(similarities), max(similarities)
    spread = high - low

    def hybrid(index: int) -> float:
        keyword = scores[index] / best if best > 0 else 0.0
        similar = (similarities[index] - low) / spread if spread > 0 else 0.0
        return (1 - weight) * keyword + weight * similar

    return tuple(sorted(range(len(scores)), key=lambda index: (-hybrid(index), index)))
