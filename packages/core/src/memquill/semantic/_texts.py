"""The bounded hybrid for texts a caller holds (a key-value store's items), not a workspace's.

:func:`similarity_order` re-orders keyword hits the caller ranked (their scores, their texts)
by :func:`~memquill.semantic._hybrid.hybrid_order`, as
:class:`~memquill.semantic.SemanticRanker` does for ``memory_search``: the query and every
text not in ``memo`` are embedded through the auxiliary runner (scene ``memory_embed``) within
``timeout``; any failure keeps keyword order and answers the rerank fallback line instead.
``memo`` (text digest → vector) is the caller's to keep and to empty. Given ``units`` — each
text's workspace and unit name (``i:<record id>`` for a key-value store's item) — the vectors
are also kept in that workspace's vector cache (:mod:`memquill.semantic._vectors`), so
another process with the same embedder finds them, and a forget deletes them at the write.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import MutableMapping, Sequence
from operator import mul

from memquill.enhance import WAIT_MARGIN, AuxiliaryRunner, blocking, default_runner, fallback_line
from memquill.semantic._embedder import Embedder, EmbedFallback, Vector, embed_call, space_of
from memquill.semantic._hybrid import WEIGHT, hybrid_order
from memquill.semantic._vectors import ItemUnit, keep_vectors, kept_vectors

_BATCH = 64


def text_digest(space: str, text: str) -> str:
    """The memo key of ``text`` embedded in ``space``."""
    return hashlib.sha256(f"{space}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


async def similarity_order(
    embedder: Embedder,
    query: str,
    texts: Sequence[str],
    scores: Sequence[float],
    *,
    memo: MutableMapping[str, Vector],
    runner: AuxiliaryRunner | None = None,
    scope: str = "items",
    weight: float = WEIGHT,
    timeout: float = 3.0,
    units: Sequence[ItemUnit] | None = None,
) -> tuple[tuple[int, ...] | None, str | None]:
    """``(order, None)``: the hits' indices, best first; or ``(None, line)``: keyword order
    stays, and ``line`` says why (``Memory ranking <status>: <reason>. Using keyword order.``).
    Fewer than two hits: ``(None, None)``, nothing to order."""
    if len(texts) < 2:
        return None, None
    work = asyncio.ensure_future(
        _order(
            embedder,
            query,
            texts,
            scores,
            memo,
            runner or default_runner(),
            (scope, weight, timeout),
            units,
        )
    )
    done, _ = await asyncio.wait({work}, timeout=timeout + WAIT_MARGIN)
    if not done:
        work.cancel()
        return None, fallback_line("failed", "timeout")
    return work.result()


def similarity_order_blocking(
    embedder: Embedder,
    query: str,
    texts: Sequence[str],
    scores: Sequence[float],
    *,
    memo: MutableMapping[str, Vector],
    runner: AuxiliaryRunner | None = None,
    scope: str = "items",
    weight: float = WEIGHT,
    timeout: float = 3.0,
    units: Sequence[ItemUnit] | None = None,
) -> tuple[tuple[int, ...] | None, str | None]:
    """:func:`similarity_order` for synchronous callers (on the process's model-call loop)."""
    call = similarity_order(
        embedder,
        query,
        texts,
        scores,
        memo=memo,
        runner=runner,
        scope=scope,
        weight=weight,
        timeout=timeout,
        units=units,
    )
    return blocking(call, timeout + 2 * WAIT_MARGIN, (None, fallback_line("failed", "timeout")))


async def similarities(
    embedder: Embedder,
    query: str,
    texts: Sequence[str],
    *,
    memo: MutableMapping[str, Vector],
    runner: AuxiliaryRunner | None = None,
    scope: str = "items",
    timeout: float = 3.0,
    units: Sequence[ItemUnit] | None = None,
) -> tuple[list[float] | None, str | None]:
    """``(similarities, None)``: the cosine of each text with ``query`` (what dense retrieval
    ranks by); or ``(None, line)``: the embedder failed, ``line`` says why. Vectors are found
    and kept as :func:`similarity_order` finds and keeps them."""
    work = asyncio.ensure_future(
        _similarities(
            embedder, query, texts, memo, runner or default_runner(), (scope, timeout), units
        )
    )
    done, _ = await asyncio.wait({work}, timeout=timeout + WAIT_MARGIN)
    if not done:
        work.cancel()
        return None, fallback_line("failed", "timeout")
    return work.result()


def similarities_blocking(
    embedder: Embedder,
    query: str,
    texts: Sequence[str],
    *,
    memo: MutableMapping[str, Vector],
    runner: AuxiliaryRunner | None = None,
    scope: str = "items",
    timeout: float = 3.0,
    units: Sequence[ItemUnit] | None = None,
) -> tuple[list[float] | None, str | None]:
    """:func:`similarities` for synchronous callers (on the process's model-call loop)."""
    call = similarities(
        embedder,
        query,
        texts,
        memo=memo,
        runner=runner,
        scope=scope,
        timeout=timeout,
        units=units,
    )
    return blocking(call, timeout + 2 * WAIT_MARGIN, (None, fallback_line("failed", "timeout")))


async def _order(
    embedder: Embedder,
    query: str,
    texts: Sequence[str],
    scores: Sequence[float],
    memo: MutableMapping[str, Vector],
    runner: AuxiliaryRunner,
    settings: tuple[str, float, float],
    units: Sequence[ItemUnit] | None,
) -> tuple[tuple[int, ...] | None, str | None]:
    scope, weight, timeout = settings
    found, line = await _similarities(embedder, query, texts, memo, runner, (scope, timeout), units)
    if found is None:
        return None, line
    return hybrid_order(scores, found, weight), None


async def _similarities(
    embedder: Embedder,
    query: str,
    texts: Sequence[str],
    memo: MutableMapping[str, Vector],
    runner: AuxiliaryRunner,
    settings: tuple[str, float],
    units: Sequence[ItemUnit] | None,
) -> tuple[list[float] | None, str | None]:
    scope, timeout = settings
    deadline = time.monotonic() + timeout
    try:
        space = space_of(runner, embedder)
        keys = [text_digest(space, text) for text in texts]
        if units is not None:
            # Only what the memo lacks is looked up in the workspaces' caches.
            lacking = [n for n, key in enumerate(keys) if key not in memo]
            if lacking:
                memo.update(
                    await asyncio.to_thread(
                        kept_vectors,
                        space,
                        [units[n] for n in lacking],
                        [texts[n] for n in lacking],
                        [keys[n] for n in lacking],
                    )
                )
        (wanted,) = await embed_call(
            runner, embedder, [query], "query", scope, deadline - time.monotonic()
        )
        missing = sorted(
            {key: text for key, text in zip(keys, texts, strict=True) if key not in memo}.items()
        )
        for start in range(0, len(missing), _BATCH):
            batch = missing[start : start + _BATCH]
            vectors = await embed_call(
                runner,
                embedder,
                [t for _, t in batch],
                "document",
                scope,
                deadline - time.monotonic(),
            )
            memo.update((key, vector) for (key, _), vector in zip(batch, vectors, strict=True))
        if units is not None and missing:
            await asyncio.to_thread(keep_vectors, space, units, texts, keys, memo)
    except EmbedFallback as failure:
        return None, fallback_line(failure.result.status, failure.result.reason)
    return [
        sum(map(mul, memo[key], wanted)) if len(memo[key]) == len(wanted) else 0.0 for key in keys
    ], None
