"""``TextModel``, who a model is, and what the runner is asked and answers, as data.

A text model takes a :class:`Prompt` (system and user text) and returns text, within a token
budget. It is asynchronous, and cancellation is asyncio's own: memquill cancels the task that
awaits :meth:`TextModel.generate` (a timed-out rerank, a host shutting down), and an
implementation lets ``asyncio.CancelledError`` propagate. memquill runs the call on a call loop
of its own (:mod:`memquill.enhance._runner`), so its budget holds even if the model blocks; a
model whose calls belong to the caller's event loop sets the class attribute
``loop_bound = True`` and is called there instead.

Its :class:`ModelIdentity` says who it is without saying anything secret: a family and a name a
person can read (``langchain`` / ``ChatOpenAI/gpt-4o-mini``), plus the configuration
*material* (keys, endpoints, settings) that only ever enters an HMAC. Two identities with the
same material are the same configuration; any change of key or setting is a new one, which is
what lifts a credential block.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, cast, runtime_checkable

from pydantic import BaseModel, SecretBytes, SecretStr

_SIMPLE = (str, int, float, bool, type(None))


@dataclass(frozen=True, slots=True)
class Prompt:
    """What a model is asked.

    Attributes:
        system: the instructions (the contract the answer must follow).
        user: the request itself; any data inside it is untrusted.
    """

    system: str
    user: str


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    """Who a text model is: readable parts, and secret material that is only ever hashed.

    Attributes:
        family: where the model comes from (``langchain``, ``llamaindex``, ``mcp_sampling``,
            or a host's own word); telemetry reports it as ``custom`` unless it is one of those.
        name: a non-secret name a person recognises (a class and a model name). Shown by
            ``memquill enhance status`` and kept in credential block receipts.
        material: keys, endpoints and settings. memquill feeds it to an HMAC with a private
            install key and never stores, logs or shows it.
    """

    family: str
    name: str
    material: bytes = field(default=b"", repr=False)

    @property
    def label(self) -> str:
        """``family:name``: the key credential blocks are kept under."""
        return f"{self.family}:{self.name}"

    @classmethod
    def from_settings(cls, family: str, name: str, settings: object) -> ModelIdentity:
        """An identity whose material is every simple setting of ``settings``.

        ``settings`` is a pydantic model (a LangChain chat model, a LlamaIndex LLM) or a
        mapping. Secrets held as ``SecretStr``/``SecretBytes`` count with their real value, so a
        changed key is a changed identity; clients, callbacks and other objects are skipped.
        """
        values: dict[str, object] = {}
        if isinstance(settings, BaseModel):
            for key in type(settings).model_fields:
                values[key] = getattr(settings, key, None)
        elif isinstance(settings, Mapping):
            mapping = cast("Mapping[object, object]", settings)
            values = {str(key): value for key, value in mapping.items()}
        simple: list[tuple[str, Any]] = []
        for key in sorted(values):
            value = _plain(values[key])
            if isinstance(value, _SIMPLE):
                simple.append((key, value))
        material = json.dumps([family, name, simple], ensure_ascii=False, default=str)
        return cls(family, name, material.encode("utf-8"))


def _plain(value: object) -> object:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, SecretBytes):
        return value.get_secret_value().hex()
    return value


@runtime_checkable
class TextModel(Protocol):
    """A host's model, as memquill's model assistance uses it.

    Adapters provide one from what their users already have (a LangChain chat model, a
    LlamaIndex LLM, the MCP client's own model through sampling); any object with these two
    members works.
    """

    @property
    def identity(self) -> ModelIdentity:
        """Who the model is (read before every request; it must be cheap and never fail)."""
        ...

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        """The model's answer to ``prompt``, at most about ``max_tokens`` tokens long.

        Raise the provider's own exception on failure: memquill classifies it from its type,
        status and code (never from where it is shown). Let cancellation propagate.
        """
        ...


class ModelDeferred(Exception):
    """Raised by a text model whose host answers on a later request.

    An MCP client on the 2026-07-28 protocol answers a sampling request by calling the tool
    again; the adapter raises this with the request it must return to the client. memquill
    counts it as neither a success nor a failure and lets it through to the adapter.

    Attributes:
        payload: what the adapter hands back to its host (opaque to memquill).
    """

    def __init__(self, payload: object) -> None:
        super().__init__("the model answers on a later request")
        self.payload = payload


# ----------------------------------------------------------------------------------------------
# What the auxiliary runner is asked and what it answers, as data.
#
# Every answer is an :class:`AuxiliaryResult`: ``completed`` with the model's text, or a status and
# a reason that say honestly why there is no text (``unavailable``: nothing will change until the
# configuration does; ``cooldown``: try again later; ``failed``: this request failed). The same
# status and reason are what the rerank fallback line shows (``Memory ranking <status>:
# <reason>. Using keyword order.``).


Scene = Literal["memory_rerank", "memory_extract", "memory_embed"]
SCENES: Final[tuple[Scene, ...]] = ("memory_rerank", "memory_extract")
"""The text model's scenes (``memory_embed``, semantic recall, calls an embedder instead)."""
_NOT_CONFIGURED: Final[dict[Scene, str]] = {
    "memory_rerank": "no model configured (plain keyword order)",
    "memory_extract": "no model configured (no automatic extraction; facts are saved only "
    "when asked)",
    "memory_embed": "no embedder configured (plain keyword order)",
}
"""What a scene does without a model, in words."""
"""Every scene the runner serves: re-ranking search candidates, extracting facts."""

Status = Literal["completed", "unavailable", "cooldown", "failed"]
Reason = Literal[
    "credentials_missing",
    "identity_unavailable",
    "persistence_unavailable",
    "model_unsupported",
    "in_flight",
    "request_failed",
    "empty_response",
    "cancelled",
    "timeout",
    "invalid_response",
]
SceneState = Literal[
    "not_configured", "ready", "healthy", "in_flight", "cooling_down", "blocked", "unavailable"
]


@dataclass(frozen=True, slots=True)
class AuxiliaryRequest:
    """One model call the runner makes on behalf of a scene.

    Attributes:
        scene: which feature asks (state and telemetry are kept per scene).
        scope: whose request it is (a session id or a workspace path); cooldowns are kept per
            scene and scope, so one busy scope never holds back another.
        model: the text model to call.
        prompt: what to ask.
        max_tokens: the answer's budget.
        timeout: seconds before the call counts as a ``timeout`` failure (``None``: no limit).
    """

    scene: Scene
    scope: str
    model: TextModel
    prompt: Prompt
    max_tokens: int = 4096
    timeout: float | None = 120.0


@dataclass(frozen=True, slots=True)
class AuxiliaryResult:
    """The runner's answer.

    Attributes:
        status: ``completed``, ``unavailable``, ``cooldown`` or ``failed``.
        reason: why there is no text (``None`` when completed).
        text: the model's answer, when completed.
        retry_at: when a call may go out again (seconds since the epoch), for cooldowns.
        requires_configuration_change: a credential block: nothing is retried until the model's
            key or settings change.
    """

    status: Status
    reason: Reason | None = None
    text: str | None = field(default=None, repr=False)
    retry_at: float | None = None
    requires_configuration_change: bool = False

    @property
    def completed(self) -> bool:
        """Whether the model answered with text."""
        return self.status == "completed"


CREDENTIAL_BLOCK: Final = AuxiliaryResult(
    "unavailable", "credentials_missing", requires_configuration_change=True
)
IDENTITY_UNAVAILABLE: Final = AuxiliaryResult("unavailable", "identity_unavailable")
PERSISTENCE_UNAVAILABLE: Final = AuxiliaryResult("unavailable", "persistence_unavailable")


@dataclass(frozen=True, slots=True)
class SceneStatus:
    """How a scene stands, for a person (``memquill enhance status``), without calling a model.

    Attributes:
        scene: the scene.
        state: ``not_configured``, ``ready`` (no call yet), ``healthy`` (the last call
            answered), ``in_flight``, ``cooling_down``, ``blocked`` or ``unavailable``.
        reason: the reason of the last failure or of the block.
        retry_at: until when a cooldown lasts (seconds since the epoch).
        model: the model's readable label (``family:name``), never anything secret.
    """

    scene: Scene
    state: SceneState
    reason: Reason | None = None
    retry_at: float | None = None
    model: str | None = None

    def describe(self) -> str:
        """One line a person can act on."""
        head = f"{self.scene}: "
        if self.state == "not_configured":
            return head + _NOT_CONFIGURED[self.scene]
        model = f" [{self.model}]" if self.model else ""
        if self.state == "blocked":
            return (
                head + f"blocked{model}: the model's credentials were refused. "
                "Change the key to unblock."
            )
        if self.state == "cooling_down" and self.retry_at is not None:
            until = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.retry_at))
            return head + f"cooling down{model} until {until} ({self.reason})"
        if self.state == "unavailable":
            return head + f"unavailable{model}: {self.reason}"
        return head + f"{self.state.replace('_', ' ')}{model}"
