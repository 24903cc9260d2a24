"""Scripted text models and deterministic embedders: model calls a test writes down.

A :data:`ModelScript` is one :class:`Reply` per model call, in order. A parity case declares it
as data (``model = ["[1, 0]", { raise = "http_429" }, { hang = true }]``), and every adapter
turns the same script into its framework's own fake model (a LangChain ``GenericFakeChatModel``
subclass, a LlamaIndex mock LLM, the MCP client's sampling callback), so one scripted
conversation runs identically everywhere. :class:`ScriptedTextModel` is the core's own.

Failures raise :class:`ScriptedProviderError` (an HTTP status like a provider SDK's error, and a
message that includes a fake secret, to prove it never leaks) or a built-in ``TimeoutError``.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from memquill.enhance import ModelIdentity, ModelRanker, Prompt, TextModel
from memquill.semantic import Embedder, EmbedKind, SemanticRanker
from memquill.tools import MemorySession

FAKE_SECRET: Final = "sk-proj-SCRIPTEDsecretDO-NOT-LEAK-0123456789abcdef"  # noqa: S105
"""A key-shaped string every scripted failure message carries: it must never be shown."""

ERROR_KINDS: Final = {"http_400": 400, "http_401": 401, "http_403": 403, "http_429": 429}
ERROR_KINDS.update({"http_500": 500, "http_503": 503})


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted model call: answer ``text``, raise ``error``, or ``hang`` until cancelled."""

    text: str | None = None
    error: str | None = None
    hang: bool = False


ModelScript = tuple[Reply, ...]


class ScriptedProviderError(Exception):
    """A provider failure with an HTTP status, shaped like an SDK's status error.

    Attributes:
        status_code: the HTTP status (``None`` for a network failure).
    """

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


def scripted_failure(kind: str) -> Exception:
    """The exception a scripted ``{ raise = kind }`` reply raises.

    Kinds: ``http_400``/``401``/``403``/``429``/``500``/``503``, ``timeout``, ``network``.
    """
    message = f"Provider said no (key {FAKE_SECRET})"
    if kind == "timeout":
        return TimeoutError(f"Request timed out after 30s (key {FAKE_SECRET})")
    if kind == "network":
        return ConnectionResetError(104, f"Connection reset by peer ({FAKE_SECRET})")
    if kind in ERROR_KINDS:
        return ScriptedProviderError(message, ERROR_KINDS[kind])
    raise ValueError(f"unknown scripted failure {kind!r}")


def parse_script(raw: Sequence[str | Mapping[str, Any]]) -> ModelScript:
    """A script from case data: a string is an answer; ``{raise = …}`` or ``{hang = true}``."""
    replies: list[Reply] = []
    for item in raw:
        if isinstance(item, str):
            replies.append(Reply(text=item))
        elif "raise" in item:
            scripted_failure(str(item["raise"]))  # rejects an unknown kind early
            replies.append(Reply(error=str(item["raise"])))
        elif item.get("hang"):
            replies.append(Reply(hang=True))
        else:
            raise ValueError(f"a scripted reply is a string, raise or hang, not {dict(item)!r}")
    return tuple(replies)


@dataclass(slots=True)
class ScriptedTextModel:
    """A :class:`~memquill.enhance.TextModel` that plays a :data:`ModelScript`.

    Attributes:
        script: the replies, one per call.
        name: the readable name in its identity.
        key: its fake credential (a new key is a new configuration).
        prompts: every prompt received, in order.
    """

    script: ModelScript
    name: str = "scripted"
    key: str = "scripted-key"
    prompts: list[Prompt] = field(default_factory=list[Prompt])

    @property
    def identity(self) -> ModelIdentity:
        """``custom:<name>``, with the key as its secret material."""
        return ModelIdentity("custom", self.name, self.key.encode("utf-8"))

    @property
    def calls(self) -> int:
        """How many times the model was called."""
        return len(self.prompts)

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        """Play the next reply."""
        index = len(self.prompts)
        self.prompts.append(prompt)
        if index >= len(self.script):
            raise LookupError(f"the model script has no reply for call {index + 1}")
        return await play(self.script[index])


async def play(reply: Reply) -> str:
    """Answer as ``reply`` says: its text, its failure, or never (until cancelled)."""
    if reply.hang:
        await asyncio.Event().wait()
    if reply.error is not None:
        raise scripted_failure(reply.error)
    return reply.text or ""


def script_of(session: MemorySession) -> ModelScript | None:
    """The script of ``session``'s model when it is a :class:`ScriptedTextModel`."""
    ranker = session.ranker
    if isinstance(ranker, ModelRanker) and isinstance(ranker.model, ScriptedTextModel):
        return ranker.model.script
    return None


def with_framework_model(
    session: MemorySession, build: Callable[[ModelScript], TextModel]
) -> MemorySession:
    """``session`` with its scripted model played by a framework's own fake model instead.

    An adapter's harness calls this with a function that builds its framework's fake model
    for a script (wrapped as a text model), so a parity case's replies travel through the
    framework. The runner and the timeout stay the session's. A session without a scripted
    model is returned as it is.
    """
    ranker = session.ranker
    script = script_of(session)
    if script is None or not isinstance(ranker, ModelRanker):
        return session
    native = ModelRanker(build(script), runner=ranker.runner, timeout=ranker.timeout)
    return session.with_ranker(native)


# ----------------------------------------------------------------------------------------------
# Deterministic embedders for tests and parity cases: no model, same vectors everywhere.
#
# :class:`TrigramEmbedder` hashes the character trigrams of each word (NFKC, case-folded,
# padded with spaces) into ``dims`` buckets with BLAKE2b, so texts that share word pieces are
# similar ("colour" and "color"), byte for byte the same on every platform and process.
# ``aliases`` map words to others before hashing, which lets a test speak of synonyms ("car" →
# "automobile") without a model. :class:`FailingEmbedder`, :class:`BlockingEmbedder` and
# :class:`HangingEmbedder` misbehave in the three ways semantic recall must survive.


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
