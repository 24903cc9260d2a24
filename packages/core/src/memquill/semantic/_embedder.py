"""``Embedder``: what semantic recall asks of a host's embedding model, and its answers checked.

An embedder turns texts into vectors, a batch at a time, asynchronously, as a
:class:`~memquill.enhance.TextModel` answers prompts; it says who it is with the same
:class:`~memquill.enhance.ModelIdentity` (readable family and name, secret material only ever
hashed), so its calls go through the same auxiliary runner, with the same credential blocks,
cooldowns and statuses. The adapters make one from what users already have: a LangChain
``Embeddings``, a LlamaIndex ``BaseEmbedding``, a LangGraph ``IndexConfig``'s ``embed``.
memquill never downloads or runs a model of its own.

``kind`` tells query from document texts (some models embed them differently); an embedder
that does not care ignores it. Like a text model, it runs on a call loop of its own unless its
class says ``loop_bound = True``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from memquill.enhance import ModelIdentity

EmbedKind = Literal["query", "document"]
Vector = tuple[float, ...]
"""A unit-length vector (what the cache keeps and similarity multiplies)."""


@runtime_checkable
class Embedder(Protocol):
    """A host's embedding model, as semantic recall uses it."""

    @property
    def identity(self) -> ModelIdentity:
        """Who the embedder is (read before every call; cheap, never failing). A change of
        model, key or setting is a new identity, and the cached vectors are rebuilt."""
        ...

    @property
    def dims(self) -> int | None:
        """The vectors' length, if known (``None``: taken from the first answer)."""
        ...

    async def embed(self, texts: Sequence[str], *, kind: EmbedKind) -> Sequence[Sequence[float]]:
        """One vector per text, in order. Raise the provider's own exception on failure."""
        ...


def check_vectors(answer: object, count: int, dims: int | None) -> tuple[Vector, ...] | None:
    """``answer`` as ``count`` unit vectors of one length (``dims`` when given), or ``None``.

    Refused: not a sequence of ``count`` sequences of numbers, vectors of different lengths or
    of the wrong length, a non-finite number, a zero vector. A refused answer changes nothing.
    """
    tolist = getattr(answer, "tolist", None)  # a numpy array
    if callable(tolist):
        answer = tolist()
    if not isinstance(answer, Sequence) or isinstance(answer, (str, bytes)):
        return None
    rows: Sequence[object] = answer  # pyright: ignore[reportUnknownVariableType]
    if len(rows) != count:
        return None
    checked: list[Vector] = []
    length = dims
    for row in rows:
        vector = _vector(row)
        if vector is None or (length is not None and len(vector) != length):
            return None
        length = len(vector)
        checked.append(vector)
    return tuple(checked)


def _vector(row: object) -> Vector | None:
    if not isinstance(row, Sequence) or isinstance(row, (str, bytes)):
        tolist = getattr(row, "tolist", None)  # a numpy array
        if not callable(tolist):
            return None
        row = tolist()
        if not isinstance(row, list):
            return None
    values: list[float] = []
    for value in row:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        number = float(value)
        if not math.isfinite(number):
            return None
        values.append(number)
    norm = math.sqrt(math.fsum(v * v for v in values))
    if not values or norm == 0.0:
        return None
    return tuple(v / norm for v in values)
