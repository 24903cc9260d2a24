"""Hybrid order as pure arithmetic: cosine similarity, and how it re-orders keyword candidates.

Keyword ranking stays the base. For the (at most 20) keyword candidates, each hit's keyword
score is divided by the best one's, each hit's similarity (cosine, the best of its chunks) is
scaled between the candidates' lowest and highest, and the two are mixed::

    hybrid = (1 - w) * score / best_score + w * (similarity - lowest) / (highest - lowest)

with ``w`` = :data:`WEIGHT`. So similarity moves a hit past another only when their keyword
scores are within ``w / (1 - w)`` of the best score of each other (a quarter, at 0.2): a
clearly better keyword match is never buried. Ties keep keyword order.

The keyword hits keep that order among themselves in every case. What else is shown depends
on whether keyword search is **confident** (:func:`keyword_confident`): it found at least two
hits and its best score is at least :data:`MARGIN` times the score of the last of its first
:data:`THIN` hits (the fifth, or the last when there are fewer). Then, when the keyword set is
thin (fewer than :data:`THIN` hits), up to :data:`EXTRA` documents keyword search did not find
are added **after** every keyword hit, most similar first, if their similarity reaches
:data:`MIN_SIMILARITY`.

Where keyword search is not confident (no hit, one hit, or hits it cannot tell apart, such as
many notes sharing one common word of the query), the nearest documents join
(:func:`joined_order`): up to :data:`EXTRA` documents keyword search did not find (up to
:data:`JOIN_FULL` when it found :data:`THIN` hits or more, enough to fill the list), each with a
similarity of at least :data:`MIN_SIMILARITY` and above every keyword hit's (nearer than
anything keyword search found), most similar first. Each candidate gets a join
score, the same mix with the similarity's share :data:`JOIN_WEIGHT` (a joining document's
keyword score is 0, similarity scaled over every candidate), and the two lists are merged by
it: the keyword hits keep their bounded order among themselves, and a joining document goes
before the first keyword hit (in that order) whose join score it exceeds. A paraphrase with no
word in common with the query is then first when it is clearly the nearest ("which puppy"
finds "User's dog is called Biscuit.").
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from operator import mul
from typing import Any, Final

from memquill.lazy import installed
from memquill.semantic._embedder import Vector

# ----------------------------------------------------------------------------------------------
# Cosine similarity of one query with a workspace's unit vectors, computed once per set.
#
# Every vector is unit length (:func:`~memquill.semantic._embedder.check_vectors` normalises it), so
# the cosine is the dot product. :class:`Similarities` keeps the units' vectors as one matrix while
# the set of units (keys and digests, in one space) stays the same, so a search multiplies one
# matrix by one vector: with numpy when it is installed (it is not a dependency of memquill), in
# plain Python otherwise (``sum(map(mul, …))``, about twice the speed of a generator). The two paths
# agree to float32 rounding; vectors of another length than the query score 0.


class Similarities:
    """Dot products of a query with the current units' vectors (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, tuple[tuple[str, str], ...]] | None = None
        self._rows: tuple[Vector, ...] = ()
        self._matrix: Any = None

    def cosines(
        self,
        space: str,
        units: Sequence[tuple[str, str]],
        vectors: Sequence[Vector],
        query: Vector,
    ) -> list[float]:
        """The query's cosine with each of ``vectors`` (those of ``units``, in order)."""
        key = (space, tuple(units))
        with self._lock:
            if key != self._key:
                self._rows = tuple(vectors)
                self._matrix = _matrix(self._rows, len(query))
                self._key = key
            rows, matrix = self._rows, self._matrix
        if matrix is not None:
            numpy = _numpy()
            return [float(v) for v in matrix @ numpy.asarray(query, dtype=numpy.float32)]
        return [sum(map(mul, row, query)) if len(row) == len(query) else 0.0 for row in rows]


def _numpy() -> Any:
    return installed("numpy")


def _matrix(rows: Sequence[Vector], dims: int) -> Any:
    """The rows as a float32 matrix, or ``None`` (no numpy, no rows, or rows of mixed length)."""
    numpy = _numpy()
    if numpy is None or not rows or any(len(row) != dims for row in rows):
        return None
    return numpy.asarray(rows, dtype=numpy.float32)


WEIGHT: Final = 0.2
"""The similarity's share of the hybrid score (measured: ``docs/ranking.md``)."""
THIN: Final = 5
"""A keyword set with fewer hits than this gets purely semantic candidates."""
EXTRA: Final = 3
"""At most this many purely semantic candidates."""
MIN_SIMILARITY: Final = 0.35
"""The cosine a purely semantic candidate needs."""
MARGIN: Final = 1.5
"""Keyword search is confident when its best score is at least this many times the score of
the last of its first :data:`THIN` hits (measured: ``docs/ranking.md``)."""
JOIN_FULL: Final = 1
"""At most this many documents join a keyword set of :data:`THIN` hits or more that keyword
search is not confident of (measured: ``docs/ranking.md``)."""
JOIN_WEIGHT: Final = 0.65
"""The similarity's share of the join score where keyword search is not confident (measured:
``docs/ranking.md``)."""


def keyword_confident(scores: Sequence[float], thin: int = THIN, margin: float = MARGIN) -> bool:
    """Whether keyword search is confident in its order of hits scored ``scores`` (best first).

    Confident: at least two hits, and the best score at least ``margin`` times the score of
    hit ``min(len(scores), thin)``. No hit, one hit (nothing to tell it from) and hits of
    near-equal scores are not.
    """
    if len(scores) < 2:
        return False
    last = scores[min(len(scores), thin) - 1]
    return scores[0] > 0 and scores[0] >= margin * last


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


def joined_order(
    scores: Sequence[float],
    similarities: Sequence[float],
    joining: Sequence[float],
    weight: float = WEIGHT,
    join_weight: float = JOIN_WEIGHT,
) -> tuple[int, ...]:
    """Keyword hits (``scores``, ``similarities``) merged with joining documents (their
    ``joining`` similarities, most similar first; indices after the hits'), best first.

    The hits keep :func:`hybrid_order` among themselves; a joining document goes before the
    first hit whose join score (``join_weight`` the similarity's share) it exceeds (ties: the
    hit first).
    """
    hits = list(hybrid_order(scores, similarities, weight))
    every = [*similarities, *joining]
    if not every:
        return ()
    best = max(scores, default=0.0)
    low, high = min(every), max(every)
    spread = high - low

    def join(index: int) -> float:
        keyword = scores[index] / best if index < len(scores) and best > 0 else 0.0
        similar = (every[index] - low) / spread if spread > 0 else 0.0
        return (1 - join_weight) * keyword + join_weight * similar

    near = list(range(len(scores), len(every)))
    order: list[int] = []
    while hits and near:
        order.append(near.pop(0) if join(near[0]) > join(hits[0]) else hits.pop(0))
    return (*order, *hits, *near)
