"""A LangChain chat model as memquill's TextModel: identity, answers, real provider failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatResult
from pydantic import Field, SecretStr

from memquill.enhance import AuxiliaryRequest, Prompt, TextModel
from memquill.enhance._runner import AuxiliaryRunner
from memquill.testing._models import FAKE_SECRET
from memquill_langchain import ChatModelTextModel


class ProviderLike(GenericFakeChatModel):
    """A fake chat model with a key and a model name, raising what a provider SDK raises."""

    model_name: str = "fake-mini"
    api_key: SecretStr = SecretStr("sk-one")
    error: Any = None
    seen: list[Any] = Field(default_factory=list)
    options: list[dict[str, Any]] = Field(default_factory=list)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(messages)
        self.options.append(kwargs)
        if self.error is not None:
            raise self.error
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


def _model(**fields: Any) -> ProviderLike:
    return ProviderLike(messages=iter([AIMessage("[1, 0]")]), **fields)


def test_identity_is_readable_and_its_material_follows_the_key() -> None:
    text_model = ChatModelTextModel(_model())
    assert isinstance(text_model, TextModel)
    identity = text_model.identity
    assert (identity.family, identity.name) == ("langchain", "ProviderLike/fake-mini")
    assert FAKE_SECRET not in repr(identity) and "sk-one" not in repr(identity)
    assert b"sk-one" in identity.material
    other_key = ChatModelTextModel(_model(api_key=SecretStr("sk-two"))).identity
    other_model = ChatModelTextModel(_model(model_name="fake-large")).identity
    assert len({identity.material, other_key.material, other_model.material}) == 3


async def test_generate_sends_system_and_user_messages_and_the_budget() -> None:
    chat = _model()
    answer = await ChatModelTextModel(chat).generate(Prompt("rules", "data"), max_tokens=300)
    assert answer == "[1, 0]"
    (messages,) = chat.seen
    assert [type(m) for m in messages] == [SystemMessage, HumanMessage]
    assert [m.content for m in messages] == ["rules", "data"]
    assert chat.options[0]["max_tokens"] == 300
    plain = _model()
    await ChatModelTextModel(plain, max_tokens_param=None).generate(Prompt("a", "b"), max_tokens=9)
    assert "max_tokens" not in plain.options[0]


def _status_error(cls: type[openai.APIStatusError], status: int) -> openai.APIStatusError:
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx.Response(status, request=request)
    # The locked client types this httpx2; the lowest-versions job runs this file against one
    # built on httpx, and both read it by attribute, so httpx's objects serve both.
    return cls(
        f"Incorrect API key provided: {FAKE_SECRET}",
        response=response,  # pyright: ignore[reportArgumentType]
        body=None,
    )


@pytest.mark.parametrize(
    ("error", "status", "reason"),
    [
        (_status_error(openai.AuthenticationError, 401), "unavailable", "credentials_missing"),
        (_status_error(openai.RateLimitError, 429), "failed", "request_failed"),
        (_status_error(openai.InternalServerError, 500), "failed", "request_failed"),
        (
            openai.APITimeoutError(
                request=httpx.Request("POST", "https://api.openai.com"),  # pyright: ignore[reportArgumentType]
            ),
            "failed",
            "request_failed",
        ),
    ],
    ids=["401", "429", "500", "timeout"],
)
async def test_real_provider_errors_through_langchain_are_classified(
    tmp_path: Path, error: Exception, status: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    runner = AuxiliaryRunner(state_dir=tmp_path)
    model = ChatModelTextModel(_model(error=error))
    request = AuxiliaryRequest("memory_rerank", "s", model, Prompt("a", "b"), 300)
    result = await runner.run(request)
    assert (result.status, result.reason) == (status, reason)
    assert FAKE_SECRET not in caplog.text and FAKE_SECRET not in repr(result)
    for path in tmp_path.iterdir():
        assert FAKE_SECRET.encode() not in path.read_bytes()


QUERY = {"query": "paella saffron"}


def _ranked_toolkit(tmp_path: Path, script: list[Any]) -> Any:
    from memquill.testing._cases import load_fixtures
    from memquill.testing._models import parse_script
    from memquill_langchain import MemquillToolkit
    from memquill_langchain.scripted import ScriptedChatModel

    fixture = load_fixtures()["rerank"]
    fixture.build(tmp_path)
    chat = ScriptedChatModel.from_script(parse_script(script))
    return MemquillToolkit.from_workspace(tmp_path, "lc-rank", "read", model=chat)


def test_the_toolkit_ranks_with_a_chat_model(tmp_path: Path) -> None:
    toolkit = _ranked_toolkit(tmp_path, ["[2, 0, 1]"])
    (search,) = [tool for tool in toolkit.get_tools() if tool.name == "memory_search"]
    message = search.invoke(
        {
            "type": "tool_call",
            "name": "memory_search",
            "id": "1",
            "args": {"query": "paella saffron"},
        }
    )
    assert message.content.startswith("1. [b.md:3]")
    assert message.artifact["reranked"] is True


async def test_a_chat_model_hanging_past_three_seconds_keeps_keyword_order(tmp_path: Path) -> None:
    toolkit = _ranked_toolkit(tmp_path, [{"hang": True}])
    (search,) = [tool for tool in toolkit.get_tools() if tool.name == "memory_search"]
    message = await search.ainvoke(
        {
            "type": "tool_call",
            "name": "memory_search",
            "id": "1",
            "args": {"query": "paella saffron"},
        }
    )
    assert message.content.startswith(
        "Memory ranking failed: timeout. Using keyword order.\n\n1. [c.md:3]"
    )
