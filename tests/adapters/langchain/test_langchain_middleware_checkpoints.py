"""``MemquillMiddleware`` with checkpointers that save late: nothing waits for the checkpoint.

LangGraph saves the checkpoint holding a turn's reply in the background (or, with
``durability="exit"``, when the run ends), so it may not be saved yet when ``after_agent``
records the turn. The middleware hands the messages it saw to the source instead of waiting:
these tests hold a real saver's ``put`` back and show the batch is extracted, from all three
turns and exactly once, while the checkpoint is still on its way, with two checkpointer reads
(the pass's, before and after the model) instead of a poll. Real ``create_agent`` agents,
``GenericFakeChatModel`` models, LangGraph's ``InMemorySaver``, a sync-only custom saver and
``SqliteSaver``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from tests.adapters.extraction_models import ScriptedExtractorChat
from tests.adapters.langchain.test_langchain_middleware import (
    _agent_model,
    _per_user,
    _records,
    _say,
)
from tests.core.lifecycle_helpers import GOOD, REPLIES, USERS

from memquill.lifecycle import SourceMessage, job_status
from memquill_langchain import CheckpointerSource, MemquillMiddleware

FACTS = [
    "The user lives in Lisbon since March.",
    "The user's daughter Ana starts school in September.",
    "The user wants to be called Joana.",
]


class LateSaver(InMemorySaver):
    """An ``InMemorySaver`` whose saves can be held back; counts every read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0
        self.holding = False
        self.held = threading.Event()  # a save is waiting
        self.release = threading.Event()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        self.reads += 1
        return super().get_tuple(config)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        if self.holding:
            self.held.set()
            assert self.release.wait(60), "the test never released the save"
        return super().put(config, checkpoint, metadata, new_versions)


class AsyncLateSaver(LateSaver):
    """:class:`LateSaver` for async agents: a held ``aput`` waits without blocking the loop."""

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        if self.holding:
            self.held.set()
            assert await asyncio.to_thread(self.release.wait, 60)
        return InMemorySaver.put(self, config, checkpoint, metadata, new_versions)


class SyncOnlySaver(BaseCheckpointSaver[str]):
    """A custom saver with the sync API only (the async methods are the base's, which raise)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = InMemorySaver()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.inner.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return self.inner.list(config, filter=filter, before=before, limit=limit)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.inner.put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.inner.put_writes(config, writes, task_id, task_path)

    def get_next_version(self, current: str | None, channel: None) -> str:
        return self.inner.get_next_version(current, channel)


def _agent_on(
    tmp_path: Path, saver: BaseCheckpointSaver[Any], on_call: Any = None
) -> tuple[ScriptedExtractorChat, MemquillMiddleware, Any]:
    """The extraction model, the middleware and the agent, all on ``saver``."""
    extractor = ScriptedExtractorChat(messages=iter([]), replies=[GOOD], on_call=on_call)
    memory = MemquillMiddleware(_per_user(tmp_path), model=extractor, checkpointer=saver)
    agent = create_agent(_agent_model(*REPLIES), [], middleware=[memory], checkpointer=saver)
    return extractor, memory, agent


def _extraction_prompts_hold_every_turn(extractor: ScriptedExtractorChat) -> None:
    assert len(extractor.calls) == 1  # exactly once
    assert all(text in extractor.prompts[0] for text in USERS)


def _one_job_of_three_turns(workspace: Path) -> None:
    (job,) = job_status(workspace).jobs
    assert (job.status, job.session_id) == ("completed", "t1")
    assert job_status(workspace).pending_turns == 0


def test_a_turn_whose_checkpoint_is_still_being_saved_is_extracted_at_once(
    tmp_path: Path,
) -> None:
    saver = LateSaver()
    called = threading.Event()
    extractor, memory, agent = _agent_on(tmp_path, saver, lambda call: called.set())
    for number, text in enumerate(USERS[:2], start=1):
        _say(agent, text, f"u{number}", "t1", "ana")
    assert memory.wait(60)

    reads_before = saver.reads
    saver.holding = True  # from here on no checkpoint is saved until the test says so
    third = threading.Thread(target=_say, args=(agent, USERS[2], "u3", "t1", "ana"))
    third.start()
    try:
        assert saver.held.wait(60)
        assert called.wait(60), "the extraction should run without the checkpoint"
        assert memory.wait(60)
        reads_while_held = saver.reads - reads_before
        assert third.is_alive()  # the reply's checkpoint is still not saved
        assert _records(tmp_path / "ana") == FACTS
    finally:
        saver.release.set()
        third.join(60)
    _extraction_prompts_hold_every_turn(extractor)
    _one_job_of_three_turns(tmp_path / "ana")
    # The third run's own read when it started, then the pass's two (before and after the
    # model): nothing polled the checkpointer.
    assert reads_while_held == 3
    saved = saver.get_tuple({"configurable": {"thread_id": "t1", "checkpoint_ns": ""}})
    assert saved is not None
    assert [m.id for m in saved.checkpoint["channel_values"]["messages"]][-2:][0] == "u3"


async def test_an_async_agent_extracts_while_its_checkpoint_is_still_being_saved(
    tmp_path: Path,
) -> None:
    saver = AsyncLateSaver()
    called = asyncio.Event()
    extractor, memory, agent = _agent_on(tmp_path, saver, lambda call: called.set())
    config: Any = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
    for number, text in enumerate(USERS[:2], start=1):
        await agent.ainvoke({"messages": [HumanMessage(text, id=f"u{number}")]}, config)
    await memory.drain()

    reads_before = saver.reads
    saver.holding = True
    third = asyncio.create_task(
        agent.ainvoke({"messages": [HumanMessage(USERS[2], id="u3")]}, config)
    )
    try:
        assert await asyncio.to_thread(saver.held.wait, 60)
        await asyncio.wait_for(called.wait(), 60)  # the extraction runs without the checkpoint
        await memory.drain()
        assert not third.done()  # the reply's checkpoint is still not saved
        assert _records(tmp_path / "ana") == FACTS
        assert saver.reads - reads_before == 3
    finally:
        saver.release.set()
        await third
    _extraction_prompts_hold_every_turn(extractor)
    _one_job_of_three_turns(tmp_path / "ana")


@pytest.mark.parametrize("saver_kind", ["in-memory", "sync-only custom", "sqlite"])
@pytest.mark.parametrize("durability", ["async", "sync", "exit"])
def test_every_saver_and_durability_records_each_turn_once(
    tmp_path: Path, saver_kind: str, durability: str
) -> None:
    saver: BaseCheckpointSaver[Any]
    if saver_kind == "in-memory":
        saver = InMemorySaver()
    elif saver_kind == "sync-only custom":
        saver = SyncOnlySaver()
    else:
        connection = sqlite3.connect(tmp_path / "threads.db", check_same_thread=False)
        saver = SqliteSaver(connection)
    extractor, memory, agent = _agent_on(tmp_path, saver)
    for number, text in enumerate(USERS, start=1):
        config: Any = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
        agent.invoke(
            {"messages": [HumanMessage(text, id=f"u{number}")]},
            config,
            durability=durability,  # pyright: ignore[reportArgumentType]
        )
    assert memory.wait(60)
    assert _records(tmp_path / "ana") == FACTS
    _extraction_prompts_hold_every_turn(extractor)
    _one_job_of_three_turns(tmp_path / "ana")
    ledger = memory.extraction(tmp_path / "ana").ledger.read()
    assert [ref.user_message_id for ref in ledger.jobs[0].sources] == ["u1", "u2", "u3"]
    if isinstance(saver, SqliteSaver):
        saver.conn.close()


async def test_held_messages_give_way_to_the_checkpointer_once_it_caught_up(
    tmp_path: Path,
) -> None:
    saver = InMemorySaver()
    agent = create_agent(_agent_model("Hello."), [], checkpointer=saver)
    _say(agent, "Hi.", "u1", "t1", "ana")
    saved = saver.get_tuple({"configurable": {"thread_id": "t1", "checkpoint_ns": ""}})
    assert saved is not None
    source = CheckpointerSource(saver)
    seen = [SourceMessage("u1", "user", "Hi, from the run.")]

    source.hold("t2", saved.checkpoint["id"], seen)  # a thread the saver has nothing of yet
    assert await source.messages("t2") == tuple(seen)
    source.hold("t1", str(uuid6()), seen)  # newer than the saved checkpoint: still on its way
    assert await source.messages("t1") == tuple(seen)

    source.hold("t1", saved.checkpoint["id"], seen)  # saved: the checkpointer decides
    from_saver = await source.messages("t1")
    assert from_saver is not None and from_saver[0].text == "Hi."
    # A checkpoint newer than the held messages (here a deletion) is the truth.
    agent.update_state({"configurable": {"thread_id": "t1"}}, {"messages": [RemoveMessage("u1")]})
    source.hold("t1", saved.checkpoint["id"], seen)
    after = await source.messages("t1")
    assert after is not None and "u1" not in [message.id for message in after]
