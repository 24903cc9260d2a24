"""A real ``FunctionAgent`` loop with a scripted model: remember, then search, on real files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from tests.adapters.llamaindex.llamaindex_helpers import AGENT_WARNINGS, Mode, Script, run_agent

from memquill import MemorySession, MemoryToolset
from memquill.errors import Messages
from memquill_llamaindex import MemquillToolSpec, memquill_tools

pytestmark = pytest.mark.filterwarnings(AGENT_WARNINGS)

FACT = "The user drinks oolong tea every morning."


async def test_the_agent_remembers_then_finds_the_fact(
    session: MemorySession, workspace: Path
) -> None:
    script = Script(
        [("memory_remember", {"content": FACT}), ("memory_search", {"query": "oolong tea"})],
        answer="You drink oolong tea every morning.",
    )
    spec = MemquillToolSpec(session)
    agent = FunctionAgent(
        tools=spec.to_tool_list(), llm=script.llm(), system_prompt=spec.system_prompt()
    )
    outcome = await run_agent(agent, "Remember that I drink oolong tea every morning.")

    assert outcome.answer == "You drink oolong tea every morning."
    assert [result.tool_name for result in outcome.results] == ["memory_remember", "memory_search"]
    remembered, searched = (result.tool_output for result in outcome.results)
    receipt = json.loads(remembered.content)
    assert receipt["status"] == "saved" and receipt["sourceSessionId"] == "chat-1"
    assert remembered.raw_output == receipt and not remembered.is_error
    core_search = MemoryToolset(session).call("memory_search", {"query": "oolong tea"})
    assert searched.content == core_search.text
    assert searched.raw_output == core_search.structured
    assert searched.content.startswith(f"1. [memory/records/{receipt['recordId']}.md:1]")
    assert FACT in searched.content

    # What the model was shown: the core's exact texts, the core's prompt, all six tools.
    assert script.tool_messages() == [remembered.content, searched.content]
    assert script.seen[0][0].content == spec.system_prompt()
    assert script.offered[0] == spec.spec_functions

    records = (workspace / "memory" / "records.md").read_text("utf-8")
    assert FACT in records and receipt["recordId"] in records


async def test_the_agent_is_refused_in_plan_mode(
    session: MemorySession, mode: Mode, workspace: Path
) -> None:
    mode.plan = True
    script = Script([("memory_remember", {"content": FACT})], answer="I could not save it.")
    agent = FunctionAgent(tools=memquill_tools(session), llm=script.llm())
    outcome = await run_agent(agent, "Remember that I drink oolong tea every morning.")

    (result,) = outcome.results
    assert result.tool_output.is_error is True
    assert json.loads(result.tool_output.content) == {
        "type": "memory_write_error",
        "operation": "remember",
        "code": "invalid",
        "message": Messages.WRITE_UNAUTHORIZED,
    }
    assert script.tool_messages() == [result.tool_output.content]
    assert not (workspace / "memory" / "records.md").exists()


async def test_a_read_only_agent_is_offered_no_write_tools(
    make_session: Callable[..., MemorySession], workspace: Path
) -> None:
    session = make_session("read")
    script = Script([("memory_remember", {"content": FACT})], answer="I cannot save.")
    agent = FunctionAgent(tools=memquill_tools(session), llm=script.llm())
    outcome = await run_agent(agent, "Remember that I drink oolong tea every morning.")

    assert script.offered[0] == ["memory_search", "memory_get", "memory_recent"]
    (result,) = outcome.results
    assert result.tool_output.is_error is True  # LlamaIndex's own "tool not found"
    assert not (workspace / "memory" / "records.md").exists()
