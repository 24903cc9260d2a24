"""What the auxiliary runner is asked and what it answers, as data.

Every answer is an :class:`AuxiliaryResult`: ``completed`` with the model's text, or a status and
a reason that say honestly why there is no text (``unavailable``: nothing will change until the
configuration does; ``cooldown``: try again later; ``failed``: this request failed). The same
status and reason are what the rerank fallback line shows (``Memory ranking <status>:
<reason>. Using keyword order.``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Final, Literal

from memquill.enhance._model import Prompt, TextModel

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
