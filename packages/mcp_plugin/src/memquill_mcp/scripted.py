"""A scripted MCP client model: memquill's model scripts, answered through ``sampling``.

The parity suite declares a model's replies once (:data:`memquill.testing.ModelScript`); the MCP
harnesses give their client a sampling callback that plays them, so a case's model answers over
the real protocol, in-process or from a ``memquill-mcp`` subprocess over stdio:

- a text reply is the ``CreateMessageResult``;
- a scripted provider failure is a JSON-RPC error whose ``data.status`` carries the provider's
  HTTP status (what a client that forwards its provider's failure sends) and whose message
  carries the failure's text (which memquill must never show);
- a hang never answers, until the server gives up and the client is closed.
"""

from __future__ import annotations

from itertools import count
from typing import Any

from mcp.client.session import ClientRequestContext
from mcp.types import (
    INTERNAL_ERROR,
    CreateMessageRequestParams,
    CreateMessageResult,
    ErrorData,
    TextContent,
)

from memquill.testing import ModelScript, ScriptedProviderError, play

__all__ = ["ScriptedSampler"]


class ScriptedSampler:
    """A client's ``sampling_callback`` that plays a script, one reply per request.

    Attributes:
        requests: every sampling request received, in order.
    """

    def __init__(self, script: ModelScript) -> None:
        self._script = tuple(script)
        self._calls = count()
        self.requests: list[CreateMessageRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData:
        """Answer one ``sampling/createMessage`` request."""
        self.requests.append(params)
        index = next(self._calls)
        if index >= len(self._script):
            return ErrorData(code=INTERNAL_ERROR, message="the model script has no reply")
        reply = self._script[index]
        if reply.text is not None:
            content = TextContent(type="text", text=reply.text)
            return CreateMessageResult(role="assistant", content=content, model="scripted")
        data: dict[str, Any] | None = None
        try:
            await play(reply)
        except ScriptedProviderError as error:
            data = {"status": error.status_code} if error.status_code is not None else None
            return ErrorData(code=INTERNAL_ERROR, message=str(error), data=data)
        except Exception as error:  # noqa: BLE001 - a scripted failure becomes the client's error
            return ErrorData(code=INTERNAL_ERROR, message=str(error))
        return ErrorData(code=INTERNAL_ERROR, message="unreachable: a scripted failure returned")
