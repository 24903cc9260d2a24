"""Deterministic embedders for tests and parity cases: no model, same vectors everywhere.

:class:`TrigramEmbedder` hashes the character trigrams of each word (NFKC, case-folded,
padded with spaces) into ``dims`` buckets with BLAKE2b, so texts that share word pieces are
similar ("colour" and "color"), byte for byte the same on every platform and process.
``aliases`` map words to others before hashing, which lets a test speak of synonyms ("car" →
"automobile") without a model. :class:`FailingEmbedder`, :class:`BlockingEmbedder` and
:class:`HangingEmbedder` misbehave in the three ways semantic recall must survive.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from memquill.enhance import ModelIdentity
from memquill.semantic import Embedder, EmbedKind, SemanticRanker
from memquill.tools import MemorySession

_WORD: Final = re.compile(r"\w+")
PARITY_ALIASES: Final = {"car": "automobile", "cars": "automobile", "vehicle": "automobile"}
"""The synonyms parity cases rely on."""


class TrigramEmbedder:
    """Hashed character-trigram vectors (see the module doc).

    Args:
        dims: the vectors' length.
        aliases: words replaced before hashing (lowercase).
        name: the identity's name (another name is another embedder: vectors are rebuilt).
    """

    def __init__(
        self, dims: int = 256, *, aliases: Mapping[str, str] | None = None, name: str = "trigram"
    ) -> None:
        self._dims = dims
        self.aliases = dict(aliases or {})
        self.calls: list[tuple[EmbedKind, int]] = []
        self._identity = ModelIdentity.from_settings(
            "testing", name, {"dims": dims, "aliases": repr(sorted(self.aliases.items()))}
        )

    @property
    def identity(self) -> ModelIdentity:
        """``testing:<name>``."""
        return self._identity

    @property
    def dims(self) -> int:
        """The vectors' length."""
        return self._dims

    async def embed(self, texts: Sequence[str], *, kind: EmbedKind) -> list[list[float]]:
        """One vector per text."""
        self.calls.append((kind, len(texts)))
        return [self.vector(text) for text in texts]

    def vector(self, text: str) -> list[float]:
        """The vector of ``text`` (unit length; all zeros but one for a text without words)."""
        buckets = [0.0] * self._dims
        folded = unicodedata.normalize("NFKC", text).casefold()
        for word in _WORD.findall(folded):
            word = self.aliases.get(word, word)
            padded = f" {word} "
            for start in range(len(padded) - 2):
                digest = hashlib.blake2b(padded[start : start + 3].encode(), digest_size=4)
                buckets[int.from_bytes(digest.digest(), "big") % self._dims] += 1.0
        norm = math.sqrt(sum(value * value for value in buckets))
        if norm == 0:
            buckets[0] = 1.0
            return buckets
        return [value / norm for value in buckets]


def parity_embedder() -> TrigramEmbedder:
    """The embedder parity cases use (``--embed memquill.testing:parity_embedder``)."""
    return TrigramEmbedder(aliases=PARITY_ALIASES, name="parity-trigram")


def failing_parity_embedder() -> FailingEmbedder:
    """The failing embedder parity cases use: every call raises (``request_failed``)."""
    return FailingEmbedder(RuntimeError("the embedding provider is down"), name="parity-failing")


PARITY_EMBEDDERS: Final = {
    "parity": "memquill.testing:parity_embedder",
    "failing": "memquill.testing:failing_parity_embedder",
}
"""A parity case's ``embedder`` → the ``MODULE:ATTR`` that builds it (``--embed`` takes it)."""
_SPECS: Final = {"parity-trigram": PARITY_EMBEDDERS["parity"]} | {
    "parity-failing": PARITY_EMBEDDERS["failing"]
}


def parity_embedder_spec(session: MemorySession) -> str | None:
    """The ``MODULE:ATTR`` of ``session``'s parity embedder (``None``: it has none), for a
    harness that rebuilds the session elsewhere (``memquill-mcp --embed``)."""
    ranker = session.ranker
    if not isinstance(ranker, SemanticRanker):
        return None
    return _SPECS.get(ranker.embedder.identity.name)


def with_framework_embedder(
    session: MemorySession, build: Callable[[TrigramEmbedder], Embedder]
) -> MemorySession:
    """``session`` with its parity embedder played through a framework's own embeddings.

    An adapter's harness calls this with a function that wraps the deterministic embedder in
    its framework's embeddings class (then in the adapter's embedder), so a parity case's
    vectors travel through the framework. The runner and the timeout stay the session's. A
    session without a parity embedder is returned as it is.
    """
    ranker = session.ranker
    if parity_embedder_spec(session) is None or not isinstance(ranker, SemanticRanker):
        return session
    embedder = ranker.embedder
    assert isinstance(embedder, TrigramEmbedder)
    native = SemanticRanker(
        build(embedder), ranker.query, runner=ranker.runner, timeout=ranker.timeout
    )
    return session.with_ranker(native)


def trigram_vectors(embedder: TrigramEmbedder, texts: Sequence[str]) -> list[list[float]]:
    """What ``embedder`` answers for ``texts``, synchronously (a framework's fake embeddings
    call this): the vectors, or its failure raised."""
    if isinstance(embedder, FailingEmbedder):
        raise embedder.error
    return [embedder.vector(text) for text in texts]


class FailingEmbedder(TrigramEmbedder):
    """Raises ``error`` at every call."""

    def __init__(self, error: Exception, *, name: str = "failing") -> None:
        super().__init__(name=name)
        self.error = error

    async def embed(self, texts: Sequence[str], *, kind: EmbedKind) -> list[list[float]]:
        """Raise."""
        raise self.error


class BlockingEmbedder(TrigramEmbedder):
    """Blocks its thread for ``seconds`` (``time.sleep``) before answering."""

    def __init__(self, seconds: float) -> None:
        super().__init__(name="blocking")
        self.seconds = seconds

    async def embed(self, texts: Sequence[str], *, kind: EmbedKind) -> list[list[float]]:
        """Sleep without awaiting, then answer."""
        time.sleep(self.seconds)
        return await super().embed(texts, kind=kind)


class HangingEmbedder(TrigramEmbedder):
    """Awaits forever."""

    def __init__(self) -> None:
        super().__init__(name="hanging")

    async def embed(self, texts: Sequence[str], *, kind: EmbedKind) -> list[list[float]]:
        """Never answer."""
        await asyncio.Event().wait()
        raise AssertionError("unreachable")
