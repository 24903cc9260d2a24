"""Any ADK ``BaseLlm`` (``Gemini``, ``LiteLlm``, a host's own) as memquill's ``TextModel``.

Extraction asks one question at a time: a system text and a user text in, text out. The call
is the model's own ``generate_content_async`` with an ``LlmRequest`` whose
``system_instruction`` is the system text and whose one ``user`` content is the user text, the
output budget as ``max_output_tokens``; the answer is the text of the final (non-partial)
responses. Provider exceptions are raised unchanged for memquill to classify; cancellation is
asyncio's. The identity is ``adk:<class>/<model>``, every simple setting of the model being
the fingerprint material, so another model or key is another configuration.
"""

from __future__ import annotations

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from memquill.enhance import ModelIdentity, Prompt

__all__ = ["AdkTextModel"]


class AdkTextModel:
    """An ADK model as a memquill text model (loop-bound: called on the caller's event loop,
    where the model's async client belongs).

    Args:
        llm: the model (any ``BaseLlm``).
    """

    loop_bound = True
    """Called on the caller's event loop (see the class doc)."""

    def __init__(self, llm: BaseLlm) -> None:
        self.llm = llm

    @property
    def identity(self) -> ModelIdentity:
        """``adk:<class>/<model>``; the model's settings are the secret material."""
        return ModelIdentity.from_settings(
            "adk", f"{type(self.llm).__name__}/{self.llm.model}", self.llm
        )

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        """Ask the model; the final responses' text."""
        request = LlmRequest(
            model=self.llm.model,
            contents=[types.Content(role="user", parts=[types.Part(text=prompt.user)])],
            config=types.GenerateContentConfig(
                system_instruction=prompt.system, max_output_tokens=max_tokens
            ),
        )
        texts: list[str] = []
        async for response in self.llm.generate_content_async(request, stream=False):
            if response.partial or response.content is None:
                continue
            texts.extend(part.text for part in response.content.parts or () if part.text)
        return "".join(texts)

    def __repr__(self) -> str:
        return f"AdkTextModel({type(self.llm).__name__})"
