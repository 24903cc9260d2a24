"""The ADK adapter, end to end without network, in one file (one test process imports ADK).

- ``TestAdkParity``: every parity case through memquill's six tools as ADK ``FunctionTool``s
  (:class:`memquill_adk.AdkHarness`), compared with the core.
- ``MemquillMemoryService`` through ADK's own interface: facts saved through the one write
  path, memquill's ranking with record ids, forgetting, one folder per ``(app, user)``.
- Sessions feed extraction with the host's model (a scripted ``BaseLlm``); without a model
  nothing is recorded.
- An agent run: ADK's ``Runner`` with ``InMemorySessionService``, a scripted model calling
  memquill's tools and ADK's ``load_memory`` (which searches the service).
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
from pathlib import Path
from typing import Any, TypedDict

import pytest
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.session import Session
from google.adk.tools import load_memory
from google.genai import types
from tests.adapters.adk.scripted_llm import ScriptedLlm, call, responses, text

from memquill import NotFoundError, RecordStore, SecretError
from memquill.errors import InvalidInputError
from memquill.testing import ParitySuite
from memquill.testing._runner import HarnessFactory
from memquill_adk import AdkHarness, MemquillMemoryService, memory_tools
from memquill_adk.service import NO_MODEL

APP, USER = "travel", "ana"


class TestAdkParity(ParitySuite):
    """Each call through ``FunctionTool.run_async``, the answer read as ADK sends it."""

    def harness_factory(self) -> HarnessFactory:
        return AdkHarness


class Scope(TypedDict):
    app_name: str
    user_id: str


def entry(words: str) -> MemoryEntry:
    return MemoryEntry(content=types.Content(role="user", parts=[types.Part(text=words)]))


def texts(found: Any) -> list[str]:
    return [part.text for memory in found.memories for part in memory.content.parts]


async def test_add_search_delete_through_the_memory_service(tmp_path: Path) -> None:
    service = MemquillMemoryService(tmp_path)
    scope: Scope = {"app_name": APP, "user_id": USER}
    await service.add_memory(
        **scope, memories=[entry("Ana prefers window seats."), entry("Ana is vegetarian.")]
    )
    await service.add_memory(**scope, memories=[entry("Ana prefers window seats.")])  # again
    records = RecordStore(service.workspace(APP, USER)).snapshot().records
    assert [(r.content, r.source["kind"]) for r in records] == [
        ("Ana prefers window seats.", "tool"),
        ("Ana is vegetarian.", "tool"),
    ]
    found = await service.search_memory(**scope, query="window seat")
    assert texts(found) == ["Ana prefers window seats."]
    memory_id = found.memories[0].id
    assert memory_id == records[0].id and memory_id is not None
    assert found.memories[0].custom_metadata["score"] > 0
    await service.delete_memory(**scope, memory_id=memory_id)
    assert texts(await service.search_memory(**scope, query="window seat")) == []
    # The tombstone: the forgotten text is never saved again.
    await service.add_memory(**scope, memories=[entry("Ana prefers window seats.")])
    assert texts(await service.search_memory(**scope, query="window seat")) == []
    with pytest.raises(NotFoundError):
        await service.delete_memory(**scope, memory_id=memory_id + "0")


async def test_each_user_is_a_private_folder_and_reads_create_nothing(tmp_path: Path) -> None:
    service = MemquillMemoryService(tmp_path)
    assert texts(await service.search_memory(app_name=APP, user_id="bo", query="seat")) == []
    assert list(tmp_path.iterdir()) == []
    await service.add_memory(app_name=APP, user_id=USER, memories=[entry("Ana likes aisles.")])
    await service.add_memory(app_name=APP, user_id="Bo/..", memories=[entry("Bo likes rails.")])
    assert texts(await service.search_memory(app_name=APP, user_id=USER, query="likes")) == [
        "Ana likes aisles."
    ]
    assert texts(await service.search_memory(app_name=APP, user_id="Bo/..", query="likes")) == [
        "Bo likes rails."
    ]
    assert texts(await service.search_memory(app_name="other", user_id=USER, query="likes")) == []
    bo = service.workspace(APP, "Bo/..")
    assert bo.parent == tmp_path / APP and bo.name == "%42o%2F%2E%2E"
    assert stat.S_IMODE(os.stat(bo).st_mode) == 0o700
    with pytest.raises(InvalidInputError):
        await service.add_memory(app_name=APP, user_id="", memories=[entry("Nobody.")])


async def test_a_secret_or_an_empty_entry_changes_nothing(tmp_path: Path) -> None:
    service = MemquillMemoryService(tmp_path)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with pytest.raises(SecretError):
        await service.add_memory(
            app_name=APP, user_id=USER, memories=[entry("Fine text."), entry(f"token {token}")]
        )
    with pytest.raises(InvalidInputError):
        await service.add_memory(app_name=APP, user_id=USER, memories=[entry("  ")])
    assert RecordStore(service.workspace(APP, USER)).snapshot().records == ()


def conversation(session_id: str) -> Session:
    said = [
        ("u1", "user", "I moved to Lisbon in March, so plan trips from there."),
        ("a1", "planner", "Noted, trips from Lisbon."),
        ("u2", "user", "Also, call me Joana."),
        ("a2", "planner", "Sure, Joana."),
    ]
    events = [
        Event(
            id=event_id,
            invocation_id=f"i-{event_id}",
            author=author,
            content=types.Content(
                role="user" if author == "user" else "model", parts=[types.Part(text=words)]
            ),
        )
        for event_id, author, words in said
    ]
    return Session(id=session_id, app_name=APP, user_id=USER, events=events)


GOOD = json.dumps(
    [
        {
            "messageId": "u1",
            "content": "The user lives in Lisbon since March.",
            "evidence": "I moved to Lisbon in March",
        },
        {
            "messageId": "u2",
            "content": "The user wants to be called Joana.",
            "evidence": "call me Joana",
        },
    ]
)


async def test_a_session_feeds_extraction_with_the_hosts_model(tmp_path: Path) -> None:
    model = ScriptedLlm(script=[text(GOOD)])
    service = MemquillMemoryService(tmp_path, model=model)
    session = conversation("s-1")
    # ADK adds a session after each interaction: two turns close no batch of three yet.
    await service.add_session_to_memory(session)
    await service.add_session_to_memory(session)  # again: nothing new
    assert model.requests == []
    await service.flush_session(session)  # the conversation ended
    await service.flush_session(session)
    assert len(model.requests) == 1
    prompt = model.requests[0]
    parts = prompt.contents[0].parts
    assert parts is not None
    assert "I moved to Lisbon in March" in str(parts[0].text)
    assert prompt.config.system_instruction
    records = RecordStore(service.workspace(APP, USER)).snapshot().records
    assert [(r.content, r.source["kind"], r.source["sessionId"]) for r in records] == [
        ("The user lives in Lisbon since March.", "conversation", "s-1"),
        ("The user wants to be called Joana.", "conversation", "s-1"),
    ]
    found = await service.search_memory(app_name=APP, user_id=USER, query="Joana")
    assert texts(found) == ["The user wants to be called Joana."]
    ledger = (service.workspace(APP, USER) / ".assistant" / "memory-jobs.json").read_text()
    assert "Lisbon" not in ledger


async def test_invented_evidence_saves_nothing(tmp_path: Path) -> None:
    invented = GOOD.replace("I moved to Lisbon in March", "I moved to Porto")
    service = MemquillMemoryService(tmp_path, model=ScriptedLlm(script=[text(invented)]))
    await service.add_events_to_memory(
        app_name=APP, user_id=USER, events=conversation("s-2").events, session_id="s-2"
    )
    await service.flush_session(conversation("s-2"))
    assert RecordStore(service.workspace(APP, USER)).snapshot().records == ()


async def test_without_a_model_nothing_is_recorded_and_it_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    service = MemquillMemoryService(tmp_path)
    with caplog.at_level(logging.WARNING, logger="memquill.adk"):
        await service.add_session_to_memory(conversation("s-3"))
        await service.add_events_to_memory(
            app_name=APP, user_id=USER, events=conversation("s-3").events, session_id="s-3"
        )
    assert [record.getMessage() for record in caplog.records] == [NO_MODEL, NO_MODEL]
    assert list(tmp_path.iterdir()) == []


async def test_an_agent_runs_with_memquills_tools_and_adks_load_memory(tmp_path: Path) -> None:
    service = MemquillMemoryService(tmp_path)
    model = ScriptedLlm(
        script=[
            call("memory_remember", content="Ana takes oat milk in her coffee."),
            text("Saved."),
            call("load_memory", query="coffee"),
            lambda request: text(json.dumps(responses(request)[-1], default=str)),
        ]
    )
    agent = LlmAgent(
        name="planner",
        model=model,
        instruction="Help Ana.",
        tools=[*memory_tools(service.session(APP, USER)), load_memory],
    )
    sessions = InMemorySessionService()
    runner = Runner(app_name=APP, agent=agent, session_service=sessions, memory_service=service)
    session = await sessions.create_session(app_name=APP, user_id=USER)

    async def ask(words: str) -> list[Event]:
        message = types.Content(role="user", parts=[types.Part(text=words)])
        return [
            event
            async for event in runner.run_async(
                user_id=USER, session_id=session.id, new_message=message
            )
        ]

    await ask("Remember: I take oat milk in my coffee.")
    tools = model.requests[0].config.tools
    assert tools is not None and isinstance(tools[0], types.Tool)
    declared = {tool.name: tool for tool in tools[0].function_declarations or ()}
    assert set(declared) >= {"memory_search", "memory_remember", "memory_forget", "load_memory"}
    schema = declared["memory_remember"].parameters_json_schema
    assert schema is not None
    assert schema["additionalProperties"] is False and "content" in schema["properties"]
    saved = responses(model.requests[1])[-1]
    assert set(saved) == {"result"} and '"status":"saved"' in saved["result"].replace(" ", "")
    events = await ask("What do I take in my coffee?")
    assert "Ana takes oat milk in her coffee." in str(events[-1].content)
    # A bad call is the core's error text, as ADK's own tools answer a failure.
    failed = await memory_tools(service.session(APP, USER))[0].run_async(
        args={"query": ""},
        # ADK types a ToolContext (built from a live invocation); memquill's tools never read it.
        tool_context=None,  # pyright: ignore[reportArgumentType]
    )
    assert set(failed) == {"error"}


EXAMPLES = [
    ("docs/adapters/adk.md", "## The memory service"),
    ("README.md", "### Google ADK (`memquill-adk`)"),
    ("packages/adk_plugin/README.md", "## Install and use"),
]
ROOT = Path(__file__).resolve().parents[3]


def example_code(file: str, heading: str) -> str:
    content = (ROOT / file).read_text("utf-8")
    match = re.compile(r"```python\n(.*?)```", re.DOTALL).search(content, content.index(heading))
    assert match is not None, f"{file}: no Python block after {heading!r}"
    return match.group(1)


@pytest.mark.parametrize(("file", "heading"), EXAMPLES)
def test_the_example_runs_as_written(
    file: str, heading: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # In this process (ADK is imported here already); the root swapped for a temporary folder.
    code = example_code(file, heading)
    assert code == example_code(*EXAMPLES[0]) and '"/srv/memory"' in code
    exec(compile(code.replace('"/srv/memory"', repr(str(tmp_path))), file, "exec"), {})
    assert capsys.readouterr().out == "Ana prefers window seats.\n0\n"


def test_the_agent_example_builds_its_runner(tmp_path: Path) -> None:
    content = (ROOT / "docs/adapters/adk.md").read_text("utf-8")
    start = content.index("## An agent with memory")
    match = re.compile(r"```python\n(.*?)```", re.DOTALL).search(content, start)
    assert match is not None
    names: dict[str, Any] = {}
    exec(match.group(1).replace('"/srv/memory"', repr(str(tmp_path))), names)  # no model call
    assert isinstance(names["runner"], Runner) and names["runner"].memory_service is names["memory"]
    assert (tmp_path / "travel" / "ana").is_dir()
