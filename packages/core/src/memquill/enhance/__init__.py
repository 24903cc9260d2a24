"""Optional model assistance: a host's model, called honestly and quietly.

Memory never needs a model. When the host has one, it reaches memquill as a :class:`TextModel`
(the adapters make one from a LangChain chat model, a LlamaIndex LLM, or the MCP client's own
model through sampling), and every call goes through one :class:`AuxiliaryRunner`.

Building a feature on the runner (the rerank scene does exactly this; extraction does the same
with ``scene="memory_extract"``)::

    from memquill.enhance import AuxiliaryRequest, Prompt, default_runner

    result = await default_runner().run(
        AuxiliaryRequest(
            scene="memory_extract",
            scope=session_id,               # cooldowns are per (scene, scope)
            model=model,                    # any TextModel
            prompt=Prompt(system=CONTRACT, user=json.dumps(data)),  # data is untrusted
            max_tokens=1000,
            timeout=120.0,
        )
    )
    if result.completed:
        ...  # validate result.text strictly; a bad answer must change nothing
    elif result.requires_configuration_change:
        ...  # credentials refused: persistently blocked until the key changes; charge nothing
    else:
        ...  # result.status / result.reason say why; result.retry_at when a cooldown ends

What the runner guarantees a feature: it never raises for a model failure (cancellation of
the caller's task and :class:`ModelDeferred` pass through); a credential failure blocks every
scene, scope and process until the model's configuration changes; 429 and other 4xx, 5xx,
network errors and timeouts cool the (scene, scope) down for 60 s doubling to 300 s; no two
calls of one (scene, scope) run at once (``cooldown: in_flight``); failures are reported to
:class:`Telemetry` as enum-only, budgeted events. :meth:`AuxiliaryRunner.status` tells how a
scene stands without calling the model.
"""

from __future__ import annotations

from memquill.enhance._bridge import WAIT_MARGIN, blocking, model_loop, run_blocking, within
from memquill.enhance._classify import Failure, Outcome, RootCause, StatusClass, classify
from memquill.enhance._identity import KEY_FILE
from memquill.enhance._model import ModelDeferred, ModelIdentity, Prompt, TextModel
from memquill.enhance._ranker import ModelRanker
from memquill.enhance._receipts import BlockReceipt, BlockReceipts
from memquill.enhance._rerank import (
    EXCERPT_UNITS,
    HEADING_UNITS,
    MAX_CANDIDATES,
    RERANK_MAX_TOKENS,
    RERANK_SYSTEM_PROMPT,
    RERANK_TIMEOUT,
    RerankCandidate,
    RerankOutcome,
    fallback_line,
    parse_ranking,
    rerank,
    rerank_prompt,
)
from memquill.enhance._results import (
    SCENES,
    AuxiliaryRequest,
    AuxiliaryResult,
    Reason,
    Scene,
    SceneState,
    SceneStatus,
    Status,
)
from memquill.enhance._runner import (
    MAX_COOLDOWN,
    AuxiliaryRunner,
    Call,
    Identified,
    default_runner,
    default_state_dir,
)
from memquill.enhance._telemetry import (
    EVENT_NAME,
    NoiseBudget,
    ProviderClass,
    ProviderEvent,
    Telemetry,
    provider_class,
)
from memquill.keyfiles import KEY_BYTES

__all__ = [
    "EVENT_NAME",
    "EXCERPT_UNITS",
    "HEADING_UNITS",
    "KEY_BYTES",
    "KEY_FILE",
    "MAX_CANDIDATES",
    "MAX_COOLDOWN",
    "RERANK_MAX_TOKENS",
    "RERANK_SYSTEM_PROMPT",
    "RERANK_TIMEOUT",
    "SCENES",
    "WAIT_MARGIN",
    "AuxiliaryRequest",
    "AuxiliaryResult",
    "AuxiliaryRunner",
    "BlockReceipt",
    "BlockReceipts",
    "Call",
    "Failure",
    "Identified",
    "ModelDeferred",
    "ModelIdentity",
    "ModelRanker",
    "NoiseBudget",
    "Outcome",
    "Prompt",
    "ProviderClass",
    "ProviderEvent",
    "Reason",
    "RerankCandidate",
    "RerankOutcome",
    "RootCause",
    "Scene",
    "SceneState",
    "SceneStatus",
    "Status",
    "StatusClass",
    "Telemetry",
    "TextModel",
    "blocking",
    "classify",
    "default_runner",
    "default_state_dir",
    "fallback_line",
    "model_loop",
    "parse_ranking",
    "provider_class",
    "rerank",
    "rerank_prompt",
    "run_blocking",
    "within",
]
