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
    SCENES,
    AuxiliaryRequest,
    AuxiliaryResult,
    ModelDeferred,
    ModelIdentity,
    Prompt,
    SceneStatus,
    TextModel,
)
from memquill.enhance._receipts import BlockReceipt, BlockReceipts
from memquill.enhance._rerank import ModelRanker
from memquill.enhance._runner import AuxiliaryRunner, default_runner, default_state_dir
from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.enhance._bridge import (
        WAIT_MARGIN as WAIT_MARGIN,
        blocking as blocking,
        model_loop as model_loop,
        run_blocking as run_blocking,
        within as within,
    )
    from memquill.enhance._rerank import fallback_line as fallback_line
    from memquill.enhance._runner import Call as Call
    from memquill.enhance._telemetry import ProviderEvent as ProviderEvent

__all__ = [
    "SCENES",
    "AuxiliaryRequest",
    "AuxiliaryResult",
    "AuxiliaryRunner",
    "BlockReceipt",
    "BlockReceipts",
    "ModelDeferred",
    "ModelIdentity",
    "ModelRanker",
    "Prompt",
    "SceneStatus",
    "TextModel",
    "default_runner",
    "default_state_dir",
]

_INTERNAL = {
    "WAIT_MARGIN": "memquill.enhance._bridge",
    "blocking": "memquill.enhance._bridge",
    "model_loop": "memquill.enhance._bridge",
    "run_blocking": "memquill.enhance._bridge",
    "within": "memquill.enhance._bridge",
    "fallback_line": "memquill.enhance._rerank",
    "Call": "memquill.enhance._runner",
    "ProviderEvent": "memquill.enhance._telemetry",
    "EVENT_NAME": "memquill.enhance._telemetry",
    "EXCERPT_UNITS": "memquill.enhance._rerank",
    "HEADING_UNITS": "memquill.enhance._rerank",
    "KEY_BYTES": "memquill.foundation.keyfiles",
    "KEY_FILE": "memquill.enhance._receipts",
    "MAX_CANDIDATES": "memquill.enhance._rerank",
    "MAX_COOLDOWN": "memquill.enhance._runner",
    "RERANK_MAX_TOKENS": "memquill.enhance._rerank",
    "RERANK_SYSTEM_PROMPT": "memquill.enhance._rerank",
    "RERANK_TIMEOUT": "memquill.enhance._rerank",
    "Failure": "memquill.enhance._classify",
    "Identified": "memquill.enhance._runner",
    "NoiseBudget": "memquill.enhance._telemetry",
    "Outcome": "memquill.enhance._classify",
    "ProviderClass": "memquill.enhance._telemetry",
    "Reason": "memquill.enhance._model",
    "RerankCandidate": "memquill.enhance._rerank",
    "RerankOutcome": "memquill.enhance._rerank",
    "RootCause": "memquill.enhance._classify",
    "Scene": "memquill.enhance._model",
    "SceneState": "memquill.enhance._model",
    "Status": "memquill.enhance._model",
    "StatusClass": "memquill.enhance._classify",
    "Telemetry": "memquill.enhance._telemetry",
    "classify": "memquill.enhance._classify",
    "parse_ranking": "memquill.enhance._rerank",
    "provider_class": "memquill.enhance._telemetry",
    "rerank": "memquill.enhance._rerank",
    "rerank_prompt": "memquill.enhance._rerank",
}
"""Names this facade serves but does not export: the core's own (what the parts above import)
and names that left its public list. Outside memquill they resolve with a
``DeprecationWarning``, until they are removed."""

__getattr__, __dir__ = _lazy_exports(__name__, _INTERNAL)
