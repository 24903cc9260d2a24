"""One embedder call through the auxiliary runner, its answer checked; or why keyword order stays.

Every semantic path (:class:`~memquill.semantic.SemanticRanker`,
:func:`~memquill.semantic._texts.similarity_order`) embeds through :func:`embed_call`: the runner's
scene ``memory_embed``, its credential blocks, cooldowns and statuses, then
:func:`~memquill.semantic._embedder.check_vectors`. A failure is raised as :class:`EmbedFallback`,
holding the runner's result (status and reason) for the fallback line.
"""

from __future__ import annotations

from memquill.enhance import AuxiliaryResult, AuxiliaryRunner, Call
from memquill.semantic._embedder import Embedder, EmbedKind, Vector, check_vectors


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
