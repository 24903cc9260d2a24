"""Scripted text models: a model whose every answer (or failure) a test writes down.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from memquill.enhance import ModelIdentity, ModelRanker, Prompt, TextModel
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
