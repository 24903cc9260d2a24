"""A LlamaIndex LLM as memquill's TextModel: identity, answers, real provider failures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.llms.mock import MockLLM

from memquill.enhance import AuxiliaryRequest, Prompt, TextModel
from memquill.enhance._runner import AuxiliaryRunner
from memquill.testing._models import FAKE_SECRET, parse_script
from memquill_llamaindex import LLMTextModel
from memquill_llamaindex.scripted import ScriptedLLM


class ProviderLike(MockLLM):
    """A mock LLM with a plain-string key (as LlamaIndex integrations keep it) that can fail."""

    api_key: str = "key-one"
    error: Any = None
    seen: list[Any] = []  # noqa: RUF012 - pydantic copies field defaults per instance

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        self.seen.append((list(messages), kwargs))
        if self.error is not None:
            raise self.error
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content="[0, 1]"))


def _llm(**fields: Any) -> ProviderLike:
    llm = ProviderLike(max_tokens=None)
    llm.seen = []
    for name, value in fields.items():
        setattr(llm, name, value)
    return llm


def test_identity_is_readable_and_its_material_follows_the_key() -> None:
    model = LLMTextModel(_llm())
    assert isinstance(model, TextModel)
    identity = model.identity
    assert (identity.family, identity.name) == ("llamaindex", "ProviderLike/unknown")
    assert "key-one" not in repr(identity) and b"key-one" in identity.material
    assert LLMTextModel(_llm(api_key="key-two")).identity.material != identity.material


async def test_generate_sends_system_and_user_messages_and_the_budget() -> None:
    llm = _llm()
    assert await LLMTextModel(llm).generate(Prompt("rules", "data"), max_tokens=300) == "[0, 1]"
    ((messages, options),) = llm.seen
    assert [(m.role, m.content) for m in messages] == [
        (MessageRole.SYSTEM, "rules"),
        (MessageRole.USER, "data"),
    ]
    assert options == {"max_tokens": 300}


async def test_the_scripted_mock_plays_answers_failures_and_fences() -> None:
    script = parse_script(["[1, 0]", {"raise": "http_503"}, "```json\n[0, 1]\n```"])
    model = LLMTextModel(ScriptedLLM.from_script(script))
    assert await model.generate(Prompt("a", "b"), max_tokens=5) == "[1, 0]"
    with pytest.raises(Exception, match="Provider said no") as raised:
        await model.generate(Prompt("a", "b"), max_tokens=5)
    assert getattr(raised.value, "status_code", None) == 503
    assert await model.generate(Prompt("a", "b"), max_tokens=5) == "```json\n[0, 1]\n```"


def _anthropic(cls: type[anthropic.APIStatusError], status: int) -> anthropic.APIStatusError:
    request = httpx.Request("POST", "https://api.anthropic.com/v1/messages")
    response = httpx.Response(status, request=request)
    # The locked client types this httpx2; the lowest-versions job runs this file against one
    # built on httpx, and both read it by attribute, so httpx's objects serve both.
    return cls(
        f"invalid x-api-key {FAKE_SECRET}",
        response=response,  # pyright: ignore[reportArgumentType]
        body=None,
    )


@pytest.mark.parametrize(
    ("error", "status", "reason"),
    [
        (_anthropic(anthropic.AuthenticationError, 401), "unavailable", "credentials_missing"),
        (_anthropic(anthropic.RateLimitError, 429), "failed", "request_failed"),
        (_anthropic(anthropic.OverloadedError, 529), "failed", "request_failed"),
        (
            anthropic.APITimeoutError(
                request=httpx.Request("POST", "https://x"),  # pyright: ignore[reportArgumentType]
            ),
            "failed",
            "request_failed",
        ),
    ],
    ids=["401", "429", "529", "timeout"],
)
async def test_real_provider_errors_through_llamaindex_are_classified(
    tmp_path: Path, error: Exception, status: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    runner = AuxiliaryRunner(state_dir=tmp_path)
    model = LLMTextModel(_llm(error=error))
    result = await runner.run(AuxiliaryRequest("memory_rerank", "s", model, Prompt("a", "b"), 300))
    assert (result.status, result.reason) == (status, reason)
    assert FAKE_SECRET not in caplog.text and FAKE_SECRET not in repr(result)
    for path in tmp_path.iterdir():
        assert FAKE_SECRET.encode() not in path.read_bytes()


def _ranked_tools(tmp_path: Path, script: list[Any]) -> Any:
    from memquill.testing._cases import load_fixtures
    from memquill_llamaindex import MemquillToolSpec

    fixture = load_fixtures()["rerank"]
    fixture.build(tmp_path)
    llm = ScriptedLLM.from_script(parse_script(script))
    spec = MemquillToolSpec.from_workspace(tmp_path, "li-rank", "read", model=llm)
    (search,) = [tool for tool in spec.to_tool_list() if tool.metadata.name == "memory_search"]
    return search


def test_the_tool_spec_ranks_with_an_llm(tmp_path: Path) -> None:
    output = _ranked_tools(tmp_path, ["[2, 0, 1]"]).call(query="paella saffron")
    assert output.content.startswith("1. [b.md:3]") and output.raw_output["reranked"] is True


async def test_an_llm_hanging_past_three_seconds_keeps_keyword_order(tmp_path: Path) -> None:
    output = await _ranked_tools(tmp_path, [{"hang": True}]).acall(query="paella saffron")
    assert output.content.startswith(
        "Memory ranking failed: timeout. Using keyword order.\n\n1. [c.md:3]"
    )
