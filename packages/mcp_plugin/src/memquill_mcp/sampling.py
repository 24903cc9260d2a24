"""The connected MCP client's own model as a :class:`~memquill.enhance.TextModel` (sampling).

When a client declares the ``sampling`` capability, memquill can re-rank search candidates with
the host's model: no key, no provider and no network in memquill at all. Each request goes out
as ``sampling/createMessage`` through the SDK's resolver machinery (a ``Sample`` marker), which
follows the negotiated protocol:

- up to 2025-11-25, a request sent to the client in the middle of the tool call; memquill
  awaits the answer under its own timeout and cancellation, like any model call;
- from 2026-07-28, an ``InputRequiredResult``: the tool call ends, the client samples, then
  calls the tool again with the answer. :meth:`SamplingTextModel.generate` raises
  :class:`~memquill.enhance.ModelDeferred` carrying that result, which the server returns as is; on
  the second round the recorded answer is the model's text.

Without the capability there is no model (:func:`sampling_model` returns ``None``): search
answers in plain keyword order, byte for byte as without model assistance.
"""

from __future__ import annotations

from typing import Any, Final

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import (
    Resolve,
    Sample,
    build_resolver_plans,
    resolve_arguments,
)
from mcp.types import (
    CreateMessageResult,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)

from memquill.enhance import ModelDeferred, ModelIdentity, Prompt

__all__ = ["SamplingTextModel", "sampling_model"]

_PARAMETER: Final = "answer"


def sampling_model(ctx: Context[Any, Any]) -> SamplingTextModel | None:
    """The client's model for this call, or ``None`` when the client cannot sample."""
    try:
        capabilities = ctx.client_capabilities
    except (LookupError, ValueError):  # called outside a client request
        return None
    if capabilities is None or capabilities.sampling is None:
        return None
    return SamplingTextModel(ctx)


class SamplingTextModel:
    """The model of the client that sent the current request.

    It is loop-bound (``loop_bound = True``): a sampling request travels on the server's session,
    so memquill calls it on the server's event loop, never on a call loop of its own.

    Args:
        ctx: the tool call's context (the request the sampling request belongs to).
    """

    loop_bound = True
    """Called on the caller's event loop (see the class doc)."""

    def __init__(self, ctx: Context[Any, Any]) -> None:
        self._ctx = ctx

    @property
    def identity(self) -> ModelIdentity:
        """``mcp_sampling:<client name>``: the client's model, behind the client's own keys."""
        name = "mcp-client"
        try:
            params = self._ctx.request_context.session.client_params
        except (LookupError, ValueError, AttributeError):
            params = None
        if params is not None and params.client_info.name:
            name = params.client_info.name
        return ModelIdentity("mcp_sampling", name)

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        """Ask the client's model (see the module docstring for the two protocol eras)."""
        marker = Sample(
            [SamplingMessage(role="user", content=TextContent(type="text", text=prompt.user))],
            max_tokens=max_tokens,
            system_prompt=prompt.system,
            include_context="none",
        )

        def memquill_sample() -> Sample:
            return marker

        resolved = {_PARAMETER: (Resolve(memquill_sample), False)}
        plans = build_resolver_plans(resolved, set())
        outcome = await resolve_arguments(resolved, plans, {}, self._ctx)
        if isinstance(outcome, InputRequiredResult):
            raise ModelDeferred(outcome)
        answer = outcome[_PARAMETER]
        if not isinstance(answer, CreateMessageResult):
            return ""
        content = answer.content
        return content.text if isinstance(content, TextContent) else ""
