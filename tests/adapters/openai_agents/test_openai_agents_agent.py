"""An OpenAI Agents SDK agent with memquill's tools, and its session as extraction's history.

No network: the SDK's ``Runner`` drives the agent with the SDK's own ``ScriptedModel``
(``agents.testing``), tracing off, conversations in a real ``SQLiteSession``. What is checked is
what the runner made of the tools (the schemas it was given, the outputs the model got) and
what reached the workspace; then extraction reads the session back and saves a fact with a
verbatim quote of the user, without writing to the session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    RunConfig,
    Runner,
    SQLiteSession,
    WebSearchTool,
    function_tool,
)
from agents.testing import ScriptedModel, assistant_message, function_call
from tests.core.lifecycle_helpers import ExtractModel, answer, fact

from memquill import MemorySession, open_session
from memquill.lifecycle import Extraction, committed_turns
from memquill.testing._models import FAKE_SECRET
from memquill_openai_agents import SessionSource, memory_tools

QUIET = RunConfig(tracing_disabled=True)


def records(workspace: Path) -> list[str]:
    snapshot = MemorySession(workspace).store.snapshot()
    return [record.content for record in snapshot.records if record.status == "active"]


def outputs(result: Any) -> list[str]:
    return [str(item.output) for item in result.new_items if item.type == "tool_call_output_item"]


async def test_the_agent_remembers_and_finds_a_fact(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            [function_call("memory_remember", {"content": "Ana takes oat milk."}, call_id="c1")],
            [function_call("memory_search", {"query": "oat milk"}, call_id="c2")],
            [assistant_message("Noted.")],
        ]
    )
    session = open_session(tmp_path, "chat-1")
    agent = Agent(name="assistant", model=model, tools=[*memory_tools(session)])
    result = await Runner.run(agent, "I take oat milk now.", run_config=QUIET)
    assert result.final_output == "Noted."
    saved, found = outputs(result)
    assert json.loads(saved)["status"] == "saved"
    assert "Ana takes oat milk." in found
    assert records(tmp_path) == ["Ana takes oat milk."]
    # The model was given the core's tools with strict schemas: every property required.
    given = {tool.name: tool for tool in model.calls[0].tools}
    assert sorted(given) == sorted(t.name for t in memory_tools(session))
    remember = given["memory_remember"]
    assert isinstance(remember, FunctionTool) and remember.strict_json_schema
    schema = remember.params_json_schema
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == ["content", "idempotency_key", "key"]


async def test_strict_nulls_and_failures_come_back_as_the_core_text(tmp_path: Path) -> None:
    # A strict model sends every property, the optional ones as null; a refused secret and
    # an unparsable argument string are answered with the core's failure text.
    nulls = {"content": "Deploys on Fridays.", "key": None, "idempotency_key": None}
    model = ScriptedModel(
        [
            [function_call("memory_remember", nulls, call_id="c1")],
            [function_call("memory_remember", {"content": f"key {FAKE_SECRET}"}, call_id="c2")],
            [function_call("memory_search", "{not json", call_id="c3")],
            [assistant_message("done")],
        ]
    )
    session = open_session(tmp_path, "chat-1")
    agent = Agent(name="assistant", model=model, tools=[*memory_tools(session)])
    result = await Runner.run(agent, "go", run_config=QUIET)
    saved, secret, broken = outputs(result)
    assert json.loads(saved)["status"] == "saved"
    assert json.loads(secret)["code"] == "secret" and FAKE_SECRET not in secret
    assert broken.startswith("Memory search failed: ")
    assert records(tmp_path) == ["Deploys on Fridays."]


@function_tool
def deploy_day() -> str:
    """The day deploys happen."""
    return "Friday"


async def test_the_memory_tools_join_the_hosts_own_in_one_list(tmp_path: Path) -> None:
    # ``Agent.tools`` is a ``list[Tool]`` and a list is invariant: the memory tools are a
    # ``list[Tool]`` too, so ``+`` with the host's tools type-checks as it is written
    # (pyright checks this file; the ``+`` is what is checked, hence RUF005's noqa).
    model = ScriptedModel(
        [
            [function_call("deploy_day", {}, call_id="c1")],
            [function_call("memory_remember", {"content": "Deploys on Fridays."}, call_id="c2")],
            [assistant_message("Noted.")],
        ]
    )
    session = open_session(tmp_path, "chat-1")
    tools = memory_tools(session) + [deploy_day]  # noqa: RUF005
    agent = Agent(name="assistant", model=model, tools=tools)
    result = await Runner.run(agent, "When do we deploy?", run_config=QUIET)
    day, saved = outputs(result)
    assert day == "Friday" and json.loads(saved)["status"] == "saved"
    assert records(tmp_path) == ["Deploys on Fridays."]
    # A hosted tool, another member of the SDK's ``Tool`` union, joins them the same way.
    hosted = Agent(name="researcher", tools=memory_tools(session) + [WebSearchTool()])  # noqa: RUF005
    assert [tool.name for tool in hosted.tools][-1] == "web_search"


async def test_a_read_only_session_gets_the_read_tools(tmp_path: Path) -> None:
    session = open_session(tmp_path, "chat-1", "read")
    assert [tool.name for tool in memory_tools(session)] == [
        "memory_search",
        "memory_get",
        "memory_recent",
    ]


class Watched(SQLiteSession):
    """A real SQLite session that counts the writes made to it."""

    writes = 0

    async def add_items(self, items: list[Any]) -> None:
        self.writes += 1
        await super().add_items(items)

    async def pop_item(self) -> Any:
        self.writes += 1
        return await super().pop_item()

    async def clear_session(self) -> None:
        self.writes += 1
        await super().clear_session()


async def test_extraction_learns_from_the_session_without_writing_to_it(tmp_path: Path) -> None:
    conversation = Watched("chat-1")
    model = ScriptedModel([[assistant_message("Welcome to Lisbon!")]])
    agent = Agent(name="assistant", model=model)
    await Runner.run(agent, "I moved to Lisbon in March.", session=conversation, run_config=QUIET)
    written = conversation.writes
    source = SessionSource(conversation)
    messages = await source.messages("chat-1")
    assert messages is not None
    assert [(m.id, m.role, m.text) for m in messages] == [
        ("i0", "user", "I moved to Lisbon in March."),
        ("i1", "assistant", "Welcome to Lisbon!"),
    ]
    assert await source.messages("someone-else") is None
    extractor = ExtractModel(
        [answer(fact("i0", "The user lives in Lisbon since March.", "moved to Lisbon in March"))]
    )
    extraction = Extraction(open_session(tmp_path, "chat-1"), source, model=extractor)
    (turn,) = committed_turns("chat-1", messages)
    assert turn.refusal() is None
    extraction.enqueue(turn)
    assert extraction.flush("chat-1")  # one turn: close its batch now
    await extraction.aresume()
    assert records(tmp_path) == ["The user lives in Lisbon since March."]
    assert extractor.turns_seen()[0]["user"] == "I moved to Lisbon in March."
    assert conversation.writes == written  # read, never written
    conversation.close()


async def test_a_session_the_source_opens_by_id(tmp_path: Path) -> None:
    database = tmp_path / "conversations.db"
    first = SQLiteSession("chat-7", database)
    await first.add_items([{"role": "user", "content": "hello"}])
    first.close()
    source = SessionSource(open=lambda session_id: SQLiteSession(session_id, database))
    messages = await source.messages("chat-7")
    assert messages is not None and [m.text for m in messages] == ["hello"]
    assert await source.messages("chat-8") is None
