"""A real consumer: LangMem's memory tools (``create_manage_memory_tool``,
``create_search_memory_tool``) in a ``create_agent`` agent on MemquillStore, driven by a scripted
chat model (only that model object is ever given to LangMem: nothing reaches a network)."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.base import IndexConfig
from langgraph.store.memory import InMemoryStore
from langgraph.warnings import LangGraphDeprecatedSinceV10
from tests.adapters.langgraph.scripted_model import call, last_tool_text, script, tool_texts

from memquill import RecordStore
from memquill.testing import StoreConformance
from memquill_langchain.store import MemquillStore

with warnings.catch_warnings():
    # trustcall, which LangMem imports, still takes Send from where LangGraph 0.x kept it.
    warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
    from langmem import create_manage_memory_tool, create_search_memory_tool


_CREATED = re.compile(r"created memory ([0-9a-f-]{36})")


def _memory_id(messages: Sequence[BaseMessage]) -> str:
    for text in tool_texts(messages):
        found = _CREATED.search(text)
        if found:
            return found.group(1)
    raise AssertionError("no memory was created")


async def test_langmems_memory_tools_work_on_it(tmp_path: Path) -> None:
    namespace = ("memories", "{langgraph_user_id}")
    tools = [
        create_manage_memory_tool(namespace=namespace),
        create_search_memory_tool(namespace=namespace),
    ]
    model = script(
        call("manage_memory", {"content": "Ana drinks tea every morning."}, "c1"),
        call("search_memory", {"query": "morning tea"}, "c2"),
        lambda m: call(
            "manage_memory",
            {
                "content": "Ana drinks coffee every morning.",
                "action": "update",
                "id": _memory_id(m),
            },
            "c3",
        ),
        call("search_memory", {"query": "coffee"}, "c4"),
        lambda m: call("manage_memory", {"action": "delete", "id": _memory_id(m)}, "c5"),
        call("search_memory", {"query": "coffee"}, "c6"),
        AIMessage(content="All done."),
    )
    store = MemquillStore(tmp_path)
    agent = create_agent(model, tools, store=store)
    state = await agent.ainvoke(
        {"messages": [HumanMessage("I drink coffee now, not tea. Actually, forget that.")]},
        {"configurable": {"langgraph_user_id": "ana"}},
    )
    texts = tool_texts(state["messages"])
    memory_id = _memory_id(state["messages"])
    assert texts[0] == f"created memory {memory_id}"
    first = json.loads(texts[1])
    assert [(m["key"], m["value"]) for m in first] == [
        (memory_id, {"content": "Ana drinks tea every morning."})
    ]
    assert first[0]["namespace"] == ["memories", "ana"]
    assert texts[2] == f"updated memory {memory_id}"
    assert [m["value"]["content"] for m in json.loads(texts[3])] == [
        "Ana drinks coffee every morning."
    ]
    assert texts[4] == f"Deleted memory {memory_id}"
    assert json.loads(texts[5]) == []
    snapshot = RecordStore(tmp_path / "memories" / "ana").snapshot()
    assert [r.status for r in snapshot.records] == ["revoked", "revoked"]
    # Another user of the same tools and store sees nothing of Ana's.
    other = script(call("search_memory", {"query": "coffee tea morning"}, "c1"), AIMessage("ok"))
    state = await create_agent(other, tools, store=store).ainvoke(
        {"messages": [HumanMessage("What do I drink?")]},
        {"configurable": {"langgraph_user_id": "bo"}},
    )
    assert json.loads(last_tool_text(state["messages"])) == []


async def test_langmem_keeps_a_readable_fact_per_memory(tmp_path: Path) -> None:
    namespace = ("memories", "{langgraph_user_id}")
    manage = create_manage_memory_tool(namespace=namespace)
    model = script(
        call("manage_memory", {"content": "Ana's daughter is called Rita."}, "c1"),
        call("manage_memory", {"content": "Ana lives in Porto."}, "c2"),
        AIMessage(content="Saved."),
    )
    store = MemquillStore(tmp_path)
    await create_agent(model, [manage], store=store).ainvoke(
        {"messages": [HumanMessage("My daughter is Rita; I live in Porto.")]},
        {"configurable": {"langgraph_user_id": "ana"}},
    )
    text = (tmp_path / "memories" / "ana" / "memory" / "records.md").read_text()
    assert "\nAna's daughter is called Rita.\n" in text and "\nAna lives in Porto.\n" in text
    found = store.search(("memories", "ana"), query="Porto")
    assert [item.value for item in found] == [{"content": "Ana lives in Porto."}]


@pytest.mark.parametrize("kind", ["memquill", "in-memory"])
async def test_langmem_finds_a_paraphrased_memory_with_an_index(tmp_path: Path, kind: str) -> None:
    """LangMem's search tool on a store with an ``index`` finds what shares no word with the
    query, on MemquillStore as on LangGraph's ``InMemoryStore``."""
    index = StoreConformance.semantic_index
    store = (
        MemquillStore(tmp_path, index=index)
        if kind == "memquill"
        else InMemoryStore(index=cast("IndexConfig", index))
    )
    namespace = ("memories", "{langgraph_user_id}")
    tools = [
        create_manage_memory_tool(namespace=namespace),
        create_search_memory_tool(namespace=namespace),
    ]
    model = script(
        call("manage_memory", {"content": "User's dog is called Biscuit."}, "c1"),
        call("manage_memory", {"content": "Ana drinks oat flat whites."}, "c2"),
        call("search_memory", {"query": "pet"}, "c3"),
        call("search_memory", {"query": "coffee"}, "c4"),
        AIMessage(content="Done."),
    )
    state = await create_agent(model, tools, store=store).ainvoke(
        {"messages": [HumanMessage("Remember my dog and my coffee.")]},
        {"configurable": {"langgraph_user_id": "ana"}},
    )
    texts = tool_texts(state["messages"])
    pet, coffee = json.loads(texts[2]), json.loads(texts[3])
    assert pet[0]["value"] == {"content": "User's dog is called Biscuit."}
    assert coffee[0]["value"] == {"content": "Ana drinks oat flat whites."}
    assert pet[0]["score"] > pet[-1]["score"]
