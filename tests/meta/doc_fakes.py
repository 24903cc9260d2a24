"""Stand-ins for the names a docs snippet assumes its reader already has: a chat model, an LLM,
the host's write switch, a jobs source, an extraction model.

A snippet runs verbatim; only these names are given to it first (by the snippet's ``prelude``
in ``tests/meta/doc_snippets.py``). They are the examples' own offline models where one fits,
so they never reach a network, a key or a provider.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memquill.enhance import ModelIdentity, Prompt
from memquill.manage import JobsView

# Also, on use (module __getattr__): OfflineAgent, OfflineExtractor, OfflineExtractorLLM.
__all__ = [
    "Host",
    "Jobs",
    "QuotingModel",
    "agent_llm",
    "mock_llm",
]


@dataclass
class Host:
    """A host's Plan-mode switch: writes allowed while ``writable``."""

    writable: bool = True

    def may_write(self) -> bool:
        return self.writable


class Jobs:
    """A jobs source with no jobs yet (``memquill.manage.JobsSource``)."""

    def status(self) -> JobsView:
        return JobsView(())

    def resume(self) -> None:
        return None


class QuotingModel:
    """A ``TextModel`` that extracts each user message's first words as a fact, quoted."""

    identity = ModelIdentity("custom", "doc-quoting", b"doc-key")

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        turns = json.loads(prompt.user)["turns"]
        return json.dumps(
            [
                {
                    "messageId": turn["messageId"],
                    "content": f"The user said: {turn['user']}",
                    "evidence": " ".join(turn["user"].split()[:4]),
                }
                for turn in turns
            ]
        )


def agent_llm() -> Any:
    """A function-calling LlamaIndex LLM that answers from the memory in its prompt."""
    from examples.llamaindex_memory_agent import offline_agent
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    return MockFunctionCallingLLM(response_generator=offline_agent, is_chat_model=True)


def mock_llm() -> Any:
    """LlamaIndex's own offline LLM."""
    from llama_index.core.llms import MockLLM

    return MockLLM()


def __getattr__(name: str) -> Any:
    """The examples' offline models, imported on use (the frameworks are heavy)."""
    if name in {"OfflineAgent", "OfflineExtractor"}:
        from examples import langchain_memory_agent

        return getattr(langchain_memory_agent, name)
    if name == "OfflineExtractorLLM":
        from examples.llamaindex_memory_agent import OfflineExtractor

        return OfflineExtractor
    raise AttributeError(name)
