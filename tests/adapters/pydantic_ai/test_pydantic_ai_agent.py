"""A Pydantic AI agent with memquill's toolset, driven end to end by a ``FunctionModel``.

No network: the model is Pydantic AI's own scripted ``FunctionModel``. What is checked is what
the agent loop made of the toolset: the instructions it sent, the tool results the model got
(``ModelRetry`` for a call the model can fix, a ``failed`` result otherwise), and what reached
the workspace. Runs are awaited: ``run_sync`` leaves an unclosed event loop on the thread,
which a later test would report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from memquill import MemorySession, MemoryToolset
from memquill.testing._models import FAKE_SECRET
from memquill_pydantic_ai import MemquillToolset


class Script:
    """A model that makes the given tool calls, one per turn, then says ``done``."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls = list(calls)
        self.returned: list[ToolReturnPart] = []
        self.instructions: list[str | None] = []

    def reply(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.instructions.append(info.instructions)
        last = messages[-1]
        if isinstance(last, ModelRequest):
            self.returned += [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if not self.calls:
            return ModelResponse(parts=[TextPart("done")])
        name, arguments = self.calls.pop(0)
        return ModelResponse(parts=[ToolCallPart(name, arguments)])


def text(part: ToolReturnPart) -> str:
    """The tool's answer: memquill's tools return JSON text."""
    assert isinstance(part.content, str), part.content
    return part.content


def facts(workspace: Path) -> str:
    records = workspace / "memory" / "records.md"
    return records.read_text("utf-8") if records.exists() else ""


async def test_the_agent_remembers_and_finds_a_fact(tmp_path: Path) -> None:
    script = Script(
        [
            ("memory_remember", {"content": "Ana takes her coffee with oat milk.", "key": "prefs"}),
            ("memory_search", {"query": "coffee"}),
        ]
    )
    toolset = MemquillToolset.from_workspace(tmp_path, session_id="chat-1")
    result = await Agent(FunctionModel(script.reply), toolsets=[toolset]).run("Remember my coffee.")
    assert result.output == "done"
    remembered, found = script.returned
    assert remembered.outcome == "success" and '"status":"saved"' in text(remembered)
    assert found.outcome == "success" and "oat milk" in text(found)
    assert "oat milk" in facts(tmp_path)
    # The instructions are the core's usage prompt for the six tools.
    session = MemorySession(tmp_path, "other")
    assert script.instructions[0] == MemoryToolset(session).system_prompt()


async def test_a_call_the_model_can_fix_is_retried_with_the_core_text(tmp_path: Path) -> None:
    script = Script(
        [
            ("memory_remember", {"content": "Deploys happen on Fridays.", "when": "now"}),
            ("memory_remember", {"content": "Deploys happen on Fridays."}),
        ]
    )
    toolset = MemquillToolset.from_workspace(tmp_path, session_id="chat-1")
    await Agent(FunctionModel(script.reply), toolsets=[toolset]).run("Remember deploy day.")
    refused, saved = script.returned
    assert refused.outcome == "retried"
    assert refused.content == (
        '{"type":"memory_write_error","operation":"remember","code":"invalid",'
        '"message":"when: Extra inputs are not permitted"}'
    )
    assert refused.retry is not None and refused.retry.cause == "model_retry"
    assert saved.outcome == "success"
    assert facts(tmp_path).count("Deploys happen on Fridays.") == 1


async def test_a_refused_write_is_a_failed_result_and_spends_no_retry(tmp_path: Path) -> None:
    # Three refused secrets in a row with max_retries=1: ModelRetry would end the run with
    # UnexpectedModelBehavior after the second; ToolFailed lets the model go on.
    secret = {"content": f"My key is {FAKE_SECRET}"}
    script = Script([("memory_remember", secret)] * 3)
    toolset = MemquillToolset.from_workspace(tmp_path, session_id="chat-1")
    result = await Agent(FunctionModel(script.reply), toolsets=[toolset]).run("Keep my key.")
    assert result.output == "done"
    assert [part.outcome for part in script.returned] == ["failed"] * 3
    assert all('"code":"secret"' in text(part) for part in script.returned)
    assert FAKE_SECRET not in facts(tmp_path)


async def test_a_read_only_toolset_offers_the_read_tools(tmp_path: Path) -> None:
    seen: list[list[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append([tool.name for tool in info.function_tools])
        return ModelResponse(parts=[TextPart("done")])

    toolset = MemquillToolset.from_workspace(tmp_path, session_id="chat-1", access="read")
    await Agent(FunctionModel(model), toolsets=[toolset]).run("hi")
    assert seen == [["memory_search", "memory_get", "memory_recent"]]


async def test_recall_puts_what_is_remembered_in_the_instructions(tmp_path: Path) -> None:
    writer = MemquillToolset.from_workspace(tmp_path, session_id="chat-1")
    saved = writer.tools.call("memory_remember", {"content": "Atlas ships on Fridays."})
    assert not saved.is_error
    script = Script([])
    toolset = MemquillToolset.from_workspace(tmp_path, session_id="chat-2", recall=True)
    await Agent(FunctionModel(script.reply), toolsets=[toolset]).run("When does Atlas ship?")
    (instructions,) = script.instructions
    assert instructions is not None
    memory = instructions.split("<memquill-memory>\n", 1)[1]
    assert "Atlas ships on Fridays." in memory and memory.endswith("</memquill-memory>")


async def test_test_model_calls_every_read_tool_with_arguments_from_its_schema(
    tmp_path: Path,
) -> None:
    # TestModel calls each offered tool with arguments generated from its JSON schema (strings
    # are "a": the write tools' id and revision patterns refuse those, and TestModel repeats
    # the same arguments after a retry, so they are left to the scripted tests above).
    (tmp_path / "note.md").write_text("# Note\nAtlas ships on Fridays.\n", "utf-8")
    toolset = MemquillToolset.from_workspace(tmp_path, session_id="chat-1", access="read")
    model = TestModel()
    result = await Agent(model, toolsets=[toolset]).run("use memory")
    called = {
        part.tool_name
        for message in result.all_messages()
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    }
    assert called == {tool.name for tool in toolset.tools.tools}
