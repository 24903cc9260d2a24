"""Cosine similarity of one query with a workspace's unit vectors, computed once per set.

Every vector is unit length (:func:`~memquill.semantic._embedder.check_vectors` normalises
it), so the cosine is the dot product. :class:`Similarities` keeps the units' vectors as one matrix
while the set of units (keys and digests, in one space) stays the same, so a search multiplies one
matrix by one vector: with numpy when it is installed (it is not a dependency of memquill), in
plain Python otherwise (``sum(map(mul, …))``, about twice the speed of a generator). The two
paths agree to float32 rounding; vectors of another length than the query score 0.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import import_module
from operator import mul
from typing import Any

from memquill.semantic._embedder import Vector


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
    try:
        return import_module("numpy")
    except ImportError:
        return None


def _matrix(rows: Sequence[Vector], dims: int) -> Any:
    """The rows as a float32 matrix, or ``None`` (no numpy, no rows, or rows of mixed length)."""
    numpy = _numpy()
    if numpy is None or not rows or any(len(row) != dims for row in rows):
        return None
    return numpy.asarray(rows, dtype=numpy.float32)
