"""A real consumer: a ``create_agent`` agent whose tools read and write through
``runtime.store``, driven by a scripted chat model."""

from __future__ import annotations

import json
from pathlib import Path

from langchain.agents import create_agent
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from tests.adapters.langgraph.scripted_model import call, last_tool_text, script, tool_texts

from memquill import RecordStore
from memquill_langchain.store import MemquillStore


def _user(runtime: ToolRuntime) -> tuple[str, str]:
    return ("memories", str(runtime.config.get("configurable", {})["user_id"]))


@tool
def remember(key: str, text: str, runtime: ToolRuntime) -> str:
    """Remember a fact about the user under a short key."""
    assert runtime.store is not None
    runtime.store.put(_user(runtime), key, {"content": text, "by": "agent"})
    return f"remembered {key}"


@tool
def recall(query: str, runtime: ToolRuntime) -> str:
    """Search what is remembered about the user."""
    assert runtime.store is not None
    found = runtime.store.search(_user(runtime), query=query)
    return json.dumps([{"key": i.key, "value": i.value, "score": i.score} for i in found])


@tool
def forget(key: str, runtime: ToolRuntime) -> str:
    """Forget a fact about the user."""
    assert runtime.store is not None
    runtime.store.delete(_user(runtime), key)
    return f"forgot {key}"


def test_an_agent_remembers_searches_updates_and_forgets_through_runtime_store(
    tmp_path: Path,
) -> None:
    model = script(
        call("remember", {"key": "drink", "text": "Ana drinks tea."}, "c1"),
        call("remember", {"key": "drink", "text": "Ana drinks coffee."}, "c2"),
        call("recall", {"query": "what does Ana drink"}, "c3"),
        call("forget", {"key": "drink"}, "c4"),
        call("recall", {"query": "drink"}, "c5"),
        AIMessage(content="Done."),
    )
    store = MemquillStore(tmp_path)
    agent = create_agent(model, [remember, recall, forget], store=store)
    state = agent.invoke(
        {"messages": [HumanMessage("I switched from tea to coffee; then forget it.")]},
        {"configurable": {"user_id": "ana", "thread_id": "t1"}},
    )
    texts = tool_texts(state["messages"])
    assert texts[:2] == ["remembered drink", "remembered drink"]
    hits = json.loads(texts[2])
    assert [(h["key"], h["value"]) for h in hits] == [
        ("drink", {"content": "Ana drinks coffee.", "by": "agent"})
    ]
    assert isinstance(hits[0]["score"], float)
    assert texts[3:] == ["forgot drink", "[]"]
    versions = RecordStore(tmp_path / "memories" / "ana").snapshot().records
    assert [r.status for r in versions] == ["revoked", "revoked"]  # corrected, then forgotten
    assert all(r.content == "" for r in versions)


def test_an_agents_users_never_see_each_others_memory(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path)
    for user, drink in (("ana", "coffee"), ("bo", "mate")):
        model = script(
            call("remember", {"key": "drink", "text": f"{user} drinks {drink}."}, "c1"),
            AIMessage(content="Noted."),
        )
        create_agent(model, [remember], store=store).invoke(
            {"messages": [HumanMessage(f"I drink {drink}.")]},
            {"configurable": {"user_id": user}},
        )
    for user, other in (("ana", "mate"), ("bo", "coffee")):
        model = script(call("recall", {"query": f"drinks {other}"}, "c1"), AIMessage("ok"))
        state = create_agent(model, [recall], store=store).invoke(
            {"messages": [HumanMessage("What do I drink?")]}, {"configurable": {"user_id": user}}
        )
        hits = json.loads(last_tool_text(state["messages"]))
        assert [h["value"]["content"] for h in hits] == [
            f"{user} drinks {'coffee' if user == 'ana' else 'mate'}."
        ]
