"""``MemquillMiddleware`` in a real ``create_agent`` agent with scripted LangChain models.

The agent's model is a ``GenericFakeChatModel`` that records what it was sent; the extraction
model is another one answering from a script. The agent keeps its thread in LangGraph's
``InMemorySaver``; memquill writes real workspaces.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field
from tests.adapters.extraction_models import ScriptedExtractorChat
from tests.core.lifecycle_helpers import GOOD, REPLIES, USERS

from memquill import MemorySession, MemquillError, WriteSource, remember
from memquill.lifecycle import job_status
from memquill_langchain import MemoryScope, MemquillMiddleware, MemquillToolkit, RunScope


class AgentModel(GenericFakeChatModel):
    """The agent's model: scripted replies; every request it received is kept."""

    seen: list[Any] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)

    def system(self, call: int = -1) -> str:
        first = self.seen[call][0]
        return first.text if isinstance(first, SystemMessage) else ""


def _agent_model(*replies: str | AIMessage) -> AgentModel:
    messages = [reply if isinstance(reply, AIMessage) else AIMessage(reply) for reply in replies]
    return AgentModel(messages=iter(messages))


def _per_user(root: Path):
    def resolve(run: RunScope) -> MemoryScope | None:
        if run.user_id is None:
            return None
        workspace = root / run.user_id
        workspace.mkdir(exist_ok=True)
        return MemoryScope(workspace)

    return resolve


def _say(agent: Any, text: str, message_id: str, thread: str, user: str) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread, "user_id": user}}
    return agent.invoke({"messages": [HumanMessage(text, id=message_id)]}, config)


def _records(workspace: Path) -> list[str]:
    records = MemorySession(workspace).store.snapshot().records
    return [record.content for record in records if record.status == "active"]


def test_a_conversation_is_remembered_without_a_memory_tool(tmp_path: Path) -> None:
    saver = InMemorySaver()
    extractor = ScriptedExtractorChat(messages=iter([]), replies=[GOOD])
    memory = MemquillMiddleware(_per_user(tmp_path), model=extractor, checkpointer=saver)
    model = _agent_model(*REPLIES, "You live in Lisbon.")
    agent = create_agent(model, [], middleware=[memory], checkpointer=saver)

    for number, text in enumerate(USERS, start=1):
        _say(agent, text, f"u{number}", "t1", "ana")
    assert memory.wait(60)

    assert len(extractor.calls) == 1
    assert _records(tmp_path / "ana") == [
        "The user lives in Lisbon since March.",
        "The user's daughter Ana starts school in September.",
        "The user wants to be called Joana.",
    ]
    (job,) = job_status(tmp_path / "ana").jobs
    assert (job.status, job.session_id) == ("completed", "t1")

    _say(agent, "Where do I live?", "u4", "t2", "ana")  # a new thread, the same user
    assert "The user lives in Lisbon since March." in model.system()
    assert "<memquill-memory>" in model.system()


def test_memory_is_added_to_the_agents_own_system_prompt(tmp_path: Path) -> None:
    workspace = tmp_path / "ana"
    workspace.mkdir()
    session = MemorySession(workspace, "setup")
    remember(session, "The user's favourite colour is green.", source=WriteSource.manual())
    memory = MemquillMiddleware(_per_user(tmp_path))
    model = _agent_model("Green.")
    agent = create_agent(model, [], middleware=[memory], system_prompt="You are kind.")
    _say(agent, "What is my favourite colour?", "u1", "t1", "ana")
    system = model.system()
    assert system.startswith("You are kind.\n\n<memquill-memory>\n")
    assert "favourite colour is green" in system


def test_one_agent_never_shows_one_users_memory_to_another(tmp_path: Path) -> None:
    saver = InMemorySaver()
    extractor = ScriptedExtractorChat(messages=iter([]), replies=[GOOD])
    memory = MemquillMiddleware(_per_user(tmp_path), model=extractor, checkpointer=saver)
    model = _agent_model(*REPLIES, "I don't know yet.", "Nice to meet you.")
    agent = create_agent(model, [], middleware=[memory], checkpointer=saver)
    for number, text in enumerate(USERS, start=1):
        _say(agent, text, f"u{number}", "alice-thread", "alice")
    assert memory.wait(60)
    assert len(_records(tmp_path / "alice")) == 3

    _say(agent, "Where do I live? Lisbon?", "b1", "bob-thread", "bob")
    bob_saw = model.system()
    assert "Lisbon since March" not in bob_saw and "Joana" not in bob_saw
    # The runtime context can name the user too.
    agent.invoke(
        {"messages": [HumanMessage("What is my daughter called?", id="b2")]},
        {"configurable": {"thread_id": "bob-thread"}},
        context={"user_id": "bob"},
    )
    assert "Ana" not in model.system()
    assert memory.wait(60)
    assert _records(tmp_path / "bob") == []
    bob_view = job_status(tmp_path / "bob")
    assert (list(bob_view.jobs), bob_view.pending_turns) == ([], 2)
    assert {job.session_id for job in job_status(tmp_path / "alice").jobs} == {"alice-thread"}


def test_the_reply_never_waits_for_extraction(tmp_path: Path) -> None:
    saver = InMemorySaver()
    release = threading.Event()
    called = threading.Event()

    def hold(call: int) -> None:
        called.set()
        release.wait(60)

    extractor = ScriptedExtractorChat(messages=iter([]), replies=[GOOD], on_call=hold)
    memory = MemquillMiddleware(_per_user(tmp_path), model=extractor, checkpointer=saver)
    agent = create_agent(_agent_model(*REPLIES), [], middleware=[memory], checkpointer=saver)
    for number, text in enumerate(USERS, start=1):
        result = _say(agent, text, f"u{number}", "t1", "ana")
        assert result["messages"][-1].text == REPLIES[number - 1]
    assert called.wait(60), "the extraction should have started in the background"
    (job,) = job_status(tmp_path / "ana").jobs
    assert job.status == "running"  # the replies came back while the model was still busy
    release.set()
    assert memory.wait(60)
    assert job_status(tmp_path / "ana").jobs[0].status == "completed"


def test_a_message_edited_during_generation_saves_nothing(tmp_path: Path) -> None:
    saver = InMemorySaver()
    holder: dict[str, Any] = {}

    def edit(call: int) -> None:
        config = {"configurable": {"thread_id": "t1"}}
        holder["agent"].update_state(config, {"messages": [HumanMessage("Porto!", id="u1")]})

    extractor = ScriptedExtractorChat(messages=iter([]), replies=[GOOD], on_call=edit)
    memory = MemquillMiddleware(_per_user(tmp_path), model=extractor, checkpointer=saver)
    agent = create_agent(_agent_model(*REPLIES), [], middleware=[memory], checkpointer=saver)
    holder["agent"] = agent
    for number, text in enumerate(USERS, start=1):
        _say(agent, text, f"u{number}", "t1", "ana")
    assert memory.wait(60)
    (job,) = job_status(tmp_path / "ana").jobs
    assert (job.status, job.reason) == ("skipped", "source_changed")
    assert _records(tmp_path / "ana") == []


def test_a_turn_that_saved_through_the_write_tool_is_no_source(tmp_path: Path) -> None:
    saver = InMemorySaver()
    workspace = tmp_path / "ana"
    workspace.mkdir()
    tools = MemquillToolkit.from_workspace(workspace, session_id="t1").get_tools()
    call = {"name": "memory_remember", "args": {"content": "Likes tea."}, "id": "c1"}
    model = _agent_model(AIMessage("", tool_calls=[call]), "Saved.", "ok", "ok")
    extractor = ScriptedExtractorChat(messages=iter([]), replies=["[]"])
    memory = MemquillMiddleware(_per_user(tmp_path), model=extractor, checkpointer=saver)
    agent = create_agent(model, tools, middleware=[memory], checkpointer=saver)
    for number, text in enumerate(("Remember I like tea.", "Hi.", "Bye."), start=1):
        _say(agent, text, f"u{number}", "t1", "ana")
    assert memory.wait(60)
    ledger_job = memory.extraction(workspace).ledger.read().jobs[0]
    assert [ref.user_message_id for ref in ledger_job.sources] == ["u2", "u3"]
    assert ledger_job.status == "nothing"


def test_without_a_checkpointer_the_seen_messages_are_the_source(tmp_path: Path) -> None:
    extractor = ScriptedExtractorChat(messages=iter([]), replies=[GOOD])
    memory = MemquillMiddleware(_per_user(tmp_path), model=extractor)
    model = _agent_model(*REPLIES)
    agent = create_agent(model, [], middleware=[memory])
    history: list[AnyMessage] = []
    for number, text in enumerate(USERS, start=1):
        config: RunnableConfig = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
        said = HumanMessage(text, id=f"u{number}")
        history = agent.invoke({"messages": [*history, said]}, config)["messages"]
    assert memory.wait(60)
    assert len(_records(tmp_path / "ana")) == 3


def test_runs_the_resolver_leaves_out_record_nothing(tmp_path: Path) -> None:
    def automatic(run: RunScope) -> MemoryScope:
        return MemoryScope(tmp_path, record=run.configurable.get("kind") != "heartbeat")

    memory = MemquillMiddleware(automatic)
    agent = create_agent(_agent_model("ok", "ok"), [], middleware=[memory])
    heartbeat: RunnableConfig = {"configurable": {"thread_id": "t", "kind": "heartbeat"}}
    agent.invoke({"messages": [HumanMessage("ping", id="h1")]}, heartbeat)
    assert not (tmp_path / ".assistant").exists()
    agent.invoke(
        {"messages": [HumanMessage("hello", id="u1")]}, {"configurable": {"thread_id": "t"}}
    )
    assert memory.wait(60)
    assert job_status(tmp_path).pending_turns == 1


async def test_an_async_agent_extracts_on_its_own_loop(tmp_path: Path) -> None:
    saver = InMemorySaver()
    extractor = ScriptedExtractorChat(messages=iter([]), replies=[GOOD])
    memory = MemquillMiddleware(_per_user(tmp_path), model=extractor, checkpointer=saver)
    agent = create_agent(_agent_model(*REPLIES), [], middleware=[memory], checkpointer=saver)
    for number, text in enumerate(USERS, start=1):
        config: RunnableConfig = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
        await agent.ainvoke({"messages": [HumanMessage(text, id=f"u{number}")]}, config)
    await memory.drain()
    assert len(_records(tmp_path / "ana")) == 3
    assert job_status(tmp_path / "ana").jobs[0].status == "completed"


@pytest.fixture(autouse=True)
def _no_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMQUILL_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_a_new_users_workspace_is_created_private_and_remembers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The documented resolver, for a user whose folder (and its parent) does not exist yet."""
    root = tmp_path / "srv" / "memory"
    saver = InMemorySaver()
    extractor = ScriptedExtractorChat(messages=iter([]), replies=[GOOD])
    memory = MemquillMiddleware(
        lambda run: MemoryScope(f"{root}/{run.user_id}"), model=extractor, checkpointer=saver
    )
    agent = create_agent(_agent_model(*REPLIES), [], middleware=[memory], checkpointer=saver)
    previous = os.umask(0)  # whatever the umask, the folders are private
    try:
        for number, text in enumerate(USERS, start=1):
            _say(agent, text, f"u{number}", "t1", "ana")
    finally:
        os.umask(previous)
    assert memory.wait(60)

    assert "MEMORY_JOB_ENQUEUE_FAILED" not in caplog.text
    assert len(_records(root / "ana")) == 3
    for folder in (root.parent, root, root / "ana"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_a_scope_that_cannot_be_used_fails_the_run_loudly(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    cases = {
        "missing, not to be created": (MemoryScope(tmp_path / "nobody", create=False), "storage"),
        "a file": (MemoryScope(tmp_path / "a-file"), "unsafe_path"),
        "under a file": (MemoryScope(tmp_path / "a-file" / "ana"), "storage"),
        "relative": (MemoryScope("relative/ana"), "unsafe_path"),
    }
    for name, (scope, code) in cases.items():
        model = _agent_model("Hello.")
        agent = create_agent(model, [], middleware=[MemquillMiddleware(lambda run, s=scope: s)])
        with pytest.raises(MemquillError) as failed:
            _say(agent, "Hi.", "u1", "t1", "ana")
        assert failed.value.code == code, name
        assert model.seen == [], name  # the agent never answered without its memory
    assert not (tmp_path / "nobody").exists()
