"""``Embedder``: what semantic recall asks of a host's embedding model; made, called, checked.

An embedder turns texts into vectors, a batch at a time, asynchronously, as a
:class:`~memquill.enhance.TextModel` answers prompts; it says who it is with the same
:class:`~memquill.enhance.ModelIdentity` (readable family and name, secret material only ever
hashed), so its calls go through the same auxiliary runner, with the same credential blocks,
cooldowns and statuses. The adapters make one from what users already have: a LangChain
``Embeddings``, a LlamaIndex ``BaseEmbedding``, a LangGraph ``IndexConfig``'s ``embed``.
memquill never downloads or runs a model of its own.

Below the protocol: :class:`FunctionEmbedder` (a plain function as an embedder),
:func:`load_embedder` (``--embed MODULE:ATTRIBUTE``) and :func:`embed_call` (the one call every
semantic path makes, through the auxiliary runner).

``kind`` tells query from document texts (some models embed them differently); an embedder
that does not care ignores it. Like a text model, it runs on a call loop of its own unless its
class says ``loop_bound = True``.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, Protocol, runtime_checkable

from memquill.enhance import AuxiliaryResult, AuxiliaryRunner, Call, ModelIdentity

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


# ----------------------------------------------------------------------------------------------
# An :class:`Embedder` from a plain function, and what to tell a person who passed another thing.
#
# Hosts often hold an embedding *function* rather than an object: LangGraph's ``IndexConfig``
# takes ``embed`` as a callable of a list of texts, sync or async. :class:`FunctionEmbedder`
# wraps one; its identity names the function (module and qualified name), so two different
# functions never share cached vectors.


EmbedFunction = Callable[
    [list[str]], "Sequence[Sequence[float]] | Awaitable[Sequence[Sequence[float]]]"
]


class FunctionEmbedder:
    """An embedder calling ``function(texts)`` (sync or async) for queries and documents alike.

    Args:
        function: the embedding function.
        dims: the vectors' length, if known.
        family: the identity's family (``langgraph`` for an ``IndexConfig``'s ``embed``).
        name: the identity's name (default: the function's module and qualified name).
    """

    def __init__(
        self,
        function: EmbedFunction,
        *,
        dims: int | None = None,
        family: str = "function",
        name: str | None = None,
    ) -> None:
        self.function = function
        self._dims = dims
        label = name or _name_of(function)
        self._identity = ModelIdentity.from_settings(family, label, {"dims": dims})

    @property
    def identity(self) -> ModelIdentity:
        """The function's family and name."""
        return self._identity

    @property
    def dims(self) -> int | None:
        """The vectors' length, if given."""
        return self._dims

    async def embed(self, texts: Sequence[str], *, kind: EmbedKind) -> Sequence[Sequence[float]]:
        """``function(list(texts))``, awaited when it is a coroutine."""
        del kind  # one function for both
        answer = self.function(list(texts))
        if inspect.isawaitable(answer):
            answer = await answer
        return answer

    def __repr__(self) -> str:
        return f"FunctionEmbedder({self._identity.name!r})"


def _name_of(function: object) -> str:
    module = getattr(function, "__module__", None) or type(function).__module__
    qualified = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}.{qualified}"


# ----------------------------------------------------------------------------------------------
# ``load_embedder``: the embedder a ``MODULE:ATTRIBUTE`` spec names (``--embed``).


def load_embedder(spec: str) -> Embedder:
    """The :class:`Embedder` at ``module:attribute`` (called first when it is a factory).

    Raises:
        ValueError: the spec is malformed, cannot be imported, or does not lead to an embedder.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"--embed takes MODULE:ATTRIBUTE, not {spec!r}")
    try:
        value: object = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"--embed {spec}: {error}") from None
    if not isinstance(value, Embedder) and callable(value):
        try:
            value = value()
        except TypeError as error:
            raise ValueError(f"{spec} could not be called without arguments: {error}") from None
    if not isinstance(value, Embedder):
        raise ValueError(
            f"{spec} is not an embedder (identity, dims and an async embed(texts, kind=...))"
        )
    return value


# ----------------------------------------------------------------------------------------------
# One embedder call through the auxiliary runner, its answer checked; or why keyword order stays.
#
# Every semantic path (:class:`~memquill.semantic.SemanticRanker`,
# :func:`~memquill.semantic._texts.similarity_order`) embeds through :func:`embed_call`: the
# runner's scene ``memory_embed``, its credential blocks, cooldowns and statuses, then
# :func:`~memquill.semantic._embedder.check_vectors`. A failure is raised as :class:`EmbedFallback`,
# holding the runner's result (status and reason) for the fallback line.


class EmbedFallback(Exception):
    """Keyword order stays: ``result`` says why (status and reason)."""

    def __init__(self, result: AuxiliaryResult) -> None:
        super().__init__(result.reason)
        self.result = result


async def embed_call(
    runner: AuxiliaryRunner,
    embedder: Embedder,
    texts: list[str],
    kind: EmbedKind,
    scope: str,
    remaining: float,
) -> tuple[Vector, ...]:
    """The unit vectors of ``texts``, within ``remaining`` seconds.

    Raises:
        EmbedFallback: no time left, the runner refused or the call failed, or the answer is
            not ``len(texts)`` vectors of the embedder's length.
    """
    if remaining <= 0:
        raise EmbedFallback(AuxiliaryResult("failed", "timeout"))
    result, answer = await runner.execute(
        Call("memory_embed", scope, embedder, lambda: _answer(embedder, texts, kind), remaining)
    )
    if answer is None:
        raise EmbedFallback(result)
    vectors = check_vectors(answer, len(texts), embedder_dims(embedder))
    if vectors is None:
        raise EmbedFallback(AuxiliaryResult("failed", "invalid_response"))
    return vectors


def space_of(runner: AuxiliaryRunner, embedder: Embedder) -> str:
    """The vectors' space: the runner's keyed fingerprint of the identity, and the length.

    Raises:
        EmbedFallback: the identity cannot be read.
    """
    fingerprint = runner.fingerprint(embedder)
    if fingerprint is None:
        raise EmbedFallback(AuxiliaryResult("unavailable", "identity_unavailable"))
    return f"{fingerprint} dims={embedder_dims(embedder) or 'any'}"


def embedder_dims(embedder: Embedder) -> int | None:
    """The embedder's declared length, or ``None`` (unknown, or reading it failed)."""
    try:
        dims = embedder.dims
    except Exception:  # noqa: BLE001 - a host's embedder must never break a search
        return None
    return dims if isinstance(dims, int) and dims > 0 else None


async def _answer(embedder: Embedder, texts: list[str], kind: EmbedKind) -> object:
    return await embedder.embed(texts, kind=kind)
