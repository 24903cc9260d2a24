"""An agent loop: ``create_agent`` with a scripted chat model that uses memory.

The model remembers a fact, searches for it, and corrects it with the record revision it read
in the search's ToolMessage artifact, so the third call only works if the artifact really
carries what the core returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from tests.adapters.langchain.langchain_helpers import SESSION_ID, records_text, session

from memquill_langchain import MemquillToolkit

Step = Callable[[Sequence[BaseMessage]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    """Answers turn N with ``script[N](messages)``; a step may read earlier tool results."""

    script: list[Step]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        return self  # the script already knows which tools it calls

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn = sum(isinstance(message, AIMessage) for message in messages)
        return ChatResult(generations=[ChatGeneration(message=self.script[turn](messages))])


def _last_artifact(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    tool_message = next(m for m in reversed(messages) if isinstance(m, ToolMessage))
    assert isinstance(tool_message.artifact, dict)
    return tool_message.artifact


def _calls(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _remember(messages: Sequence[BaseMessage]) -> AIMessage:
    return _calls("memory_remember", {"content": "Deploys happen on Tuesdays."}, "call-remember")


def _search(messages: Sequence[BaseMessage]) -> AIMessage:
    return _calls("memory_search", {"query": "deploys", "file_type": "longterm"}, "call-search")


def _update(messages: Sequence[BaseMessage]) -> AIMessage:
    hit = _last_artifact(messages)["hits"][0]
    args = {
        "id": hit["record_id"],
        "content": "Deploys happen on Wednesdays.",
        "expected_revision": hit["record_revision"],
    }
    return _calls("memory_update", args, "call-update")


def _answer(messages: Sequence[BaseMessage]) -> AIMessage:
    receipt = _last_artifact(messages)
    return AIMessage(content=f"Updated: {receipt['status']}")


def _record_blocks(root: Path) -> list[tuple[dict[str, Any], str]]:
    """Each record of ``memory/records.md`` as (metadata, one-line content)."""
    text = records_text(root)
    assert text is not None
    found = re.findall(r"<!-- memory-record (\{.*\}) -->\n(.*)\n", text)
    return [(json.loads(meta), content) for meta, content in found]


def _run_agent(tools: list[BaseTool], script: list[Step]) -> list[BaseMessage]:
    agent = create_agent(ScriptedChatModel(script=script), tools=tools)
    state = agent.invoke({"messages": [HumanMessage("Deploys moved to Wednesdays.")]})
    return state["messages"]


def test_remember_search_then_update_with_the_revision_read(tmp_path: Path) -> None:
    toolkit = MemquillToolkit(session=session(tmp_path))
    messages = _run_agent(toolkit.get_tools(), [_remember, _search, _update, _answer])

    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    assert [(m.name, m.tool_call_id, m.status) for m in tool_messages] == [
        ("memory_remember", "call-remember", "success"),
        ("memory_search", "call-search", "success"),
        ("memory_update", "call-update", "success"),
    ]
    saved, found, updated = (m.artifact for m in tool_messages)
    assert saved["status"] == "saved" and saved["sourceSessionId"] == SESSION_ID
    assert found["hits"][0]["record_id"] == saved["recordId"]
    assert found["hits"][0]["record_revision"] == saved["recordRevision"]
    assert "Deploys happen on Tuesdays." in tool_messages[1].content
    assert updated["operation"] == "update" and updated["status"] == "saved"
    assert messages[-1].content == "Updated: saved"

    blocks = _record_blocks(tmp_path)
    assert [(meta["id"], meta["status"], content) for meta, content in blocks] == [
        (saved["recordId"], "superseded", "Deploys happen on Tuesdays."),
        (updated["recordId"], "active", "Deploys happen on Wednesdays."),
    ]
    assert blocks[1][0]["supersedes"] == saved["recordId"]
    assert blocks[1][0]["source"] == {"kind": "tool", "sessionId": SESSION_ID}


def test_a_stale_revision_comes_back_as_an_error_tool_message(tmp_path: Path) -> None:
    toolkit = MemquillToolkit(session=session(tmp_path))

    def update_twice(messages: Sequence[BaseMessage]) -> AIMessage:
        hit = _last_artifact(messages)["hits"][0]
        args = {"id": hit["record_id"], "expected_revision": hit["record_revision"]}
        return AIMessage(
            content="",
            tool_calls=[
                {"name": "memory_update", "args": {**args, "content": "On Mondays."}, "id": "a"},
                {"name": "memory_update", "args": {**args, "content": "On Fridays."}, "id": "b"},
            ],
        )

    def done(messages: Sequence[BaseMessage]) -> AIMessage:
        return AIMessage(content="done")

    messages = _run_agent(toolkit.get_tools(), [_remember, _search, update_twice, done])
    updates = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    statuses = sorted(updates[call_id].status for call_id in ("a", "b"))
    assert statuses == ["error", "success"]
    failed = next(m for m in updates.values() if m.status == "error")
    assert isinstance(failed.content, str)
    assert failed.content.startswith('{"type":"memory_write_error","operation":"update"')
    # The loser's id is an old version now: the answer names the current one (no refresh loop).
    assert '"code":"not_found"' in failed.content and "its current version is" in failed.content
    winner = next(call_id for call_id in ("a", "b") if updates[call_id].status == "success")
    active = [content for meta, content in _record_blocks(tmp_path) if meta["status"] == "active"]
    assert active == [{"a": "On Mondays.", "b": "On Fridays."}[winner]]
