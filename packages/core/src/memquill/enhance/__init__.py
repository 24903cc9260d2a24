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
the telemetry (``_telemetry``) as enum-only, budgeted events. :meth:`AuxiliaryRunner.status` tells
how a scene stands without calling the model.
"""

from __future__ import annotations

import typing

from memquill.enhance._model import (
    AuxiliaryRequest,
    AuxiliaryResult,
    ModelIdentity,
    Prompt,
    TextModel,
)
from memquill.enhance._rerank import ModelRanker
from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.enhance._bridge import (
        WAIT_MARGIN as WAIT_MARGIN,
        blocking as blocking,
        model_loop as model_loop,
        run_blocking as run_blocking,
        within as within,
    )
    from memquill.enhance._classify import (
        Failure as Failure,
        Outcome as Outcome,
        RootCause as RootCause,
        StatusClass as StatusClass,
        classify as classify,
    )
    from memquill.enhance._model import (
        SCENES as SCENES,
        ModelDeferred as ModelDeferred,
        Reason as Reason,
        Scene as Scene,
        SceneState as SceneState,
        SceneStatus as SceneStatus,
        Status as Status,
    )
    from memquill.enhance._receipts import (
        KEY_FILE as KEY_FILE,
        BlockReceipt as BlockReceipt,
        BlockReceipts as BlockReceipts,
    )
    from memquill.enhance._rerank import (
        EXCERPT_UNITS as EXCERPT_UNITS,
        HEADING_UNITS as HEADING_UNITS,
        MAX_CANDIDATES as MAX_CANDIDATES,
        RERANK_MAX_TOKENS as RERANK_MAX_TOKENS,
        RERANK_SYSTEM_PROMPT as RERANK_SYSTEM_PROMPT,
        RERANK_TIMEOUT as RERANK_TIMEOUT,
        RerankCandidate as RerankCandidate,
        RerankOutcome as RerankOutcome,
        fallback_line as fallback_line,
        parse_ranking as parse_ranking,
        rerank as rerank,
        rerank_prompt as rerank_prompt,
    )
    from memquill.enhance._runner import (
        MAX_COOLDOWN as MAX_COOLDOWN,
        AuxiliaryRunner as AuxiliaryRunner,
        Call as Call,
        Identified as Identified,
        default_runner,
        default_state_dir as default_state_dir,
    )
    from memquill.enhance._telemetry import (
        EVENT_NAME as EVENT_NAME,
        NoiseBudget as NoiseBudget,
        ProviderClass as ProviderClass,
        ProviderEvent as ProviderEvent,
        Telemetry as Telemetry,
        provider_class as provider_class,
    )
    from memquill.foundation.keyfiles import KEY_BYTES as KEY_BYTES

__all__ = [
    "AuxiliaryRequest",
    "AuxiliaryResult",
    "ModelIdentity",
    "ModelRanker",
    "Prompt",
    "TextModel",
    "default_runner",
]

__getattr__, __dir__ = _lazy_exports(__name__)
