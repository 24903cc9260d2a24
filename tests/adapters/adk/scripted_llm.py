"""An ADK model that plays a script: a ``BaseLlm`` whose turns may read the request so far.

Each turn is an ``LlmResponse``, or a function of the ``LlmRequest`` returning one (a tool call
that needs what an earlier tool answered). The requests are kept, to check what ADK sent.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field

Turn = LlmResponse | Callable[[LlmRequest], LlmResponse]


class ScriptedLlm(BaseLlm):
    """Answers each request with the next turn of ``script``; the last turn repeats."""

    model: str = "scripted"
    api_key: str = "scripted-key-one"
    script: list[Any] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        turn: Turn = self.script[min(len(self.requests), len(self.script) - 1)]
        self.requests.append(llm_request)
        yield turn(llm_request) if callable(turn) else turn


def text(words: str) -> LlmResponse:
    """The model's reply ``words``."""
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=words)]))


def call(name: str, **arguments: Any) -> LlmResponse:
    """The model's call of tool ``name`` with ``arguments``."""
    part = types.Part(function_call=types.FunctionCall(name=name, args=arguments))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def responses(request: LlmRequest) -> list[dict[str, Any]]:
    """The function responses in ``request``'s contents, oldest first."""
    return [
        dict(part.function_response.response or {})
        for content in request.contents
        for part in content.parts or ()
        if part.function_response is not None
    ]
