"""Which turns count, how every third closes a batch, and the receipt check (spec 9.1–9.2,
9.9, 12.6, 12.7)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.core.lifecycle_helpers import ExtractModel, new_setup, write_transcript

from memquill.lifecycle import (
    CommittedTurn,
    SourceMessage,
    TranscriptSource,
    committed_turns,
    job_status,
)
from memquill.lifecycle._host import SessionState, ToolCall, ToolOutput
from memquill.lifecycle._ledger import turn_id
from memquill.lifecycle._turns import has_memory_write
from memquill.store._codec import sha256_hex

RECEIPT = json.dumps(
    {"type": "memory_write_receipt", "operation": "remember", "status": "saved",
     "recordId": "r", "revision": "f" * 64, "sourceSessionId": "s1"}
)  # fmt: skip


def _turn(number: int, **fields: Any) -> CommittedTurn:
    values: dict[str, Any] = {"user_text": "I like green tea."}
    values.update(fields)
    return CommittedTurn("s1", f"u{number}", f"a{number}", **values)


REFUSED = {
    "unsuccessful": {"successful": False},
    "system turn": {"system_turn": True},
    "unknown user message": {"user_message_id": None},
    "a program's user message": {"human_user": False},
    "empty user text": {"user_text": "   "},
    "interrupted reply": {"assistant_completed": False},
}


@pytest.mark.parametrize("fields", REFUSED.values(), ids=REFUSED.keys())
def test_turns_that_do_not_count_touch_nothing(tmp_path, fields: dict[str, object]) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(None)
    base: dict[str, Any] = {"user_text": "I like green tea."}
    base.update(fields)
    turn = CommittedTurn("s1", base.pop("user_message_id", "u1"), "a1", **base)
    assert turn.refusal() is not None
    for _ in range(3):
        assert extraction.enqueue(turn) is False
    assert not (setup.workspace / ".assistant").exists()


@pytest.mark.parametrize("state", ["read_only", "unbound"])
def test_plan_mode_and_unbound_sessions_do_not_count(tmp_path, state: SessionState) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(None, gate=lambda session_id: state)
    assert [extraction.enqueue(_turn(n)) for n in (1, 2, 3)] == [False] * 3
    assert not (setup.workspace / ".assistant").exists()


def test_every_third_turn_closes_a_batch_and_a_repeat_counts_once(tmp_path) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(None)
    assert extraction.enqueue(_turn(1)) is False
    assert extraction.enqueue(_turn(1)) is False  # the same turn again: no-op
    assert extraction.enqueue(_turn(2)) is False
    assert job_status(setup.workspace).pending_turns == 2
    assert extraction.enqueue(_turn(3)) is True
    job = setup.job()
    assert job.id == turn_id("s1", "a3") == sha256_hex("s1:a3")
    assert [(r.user_message_id, r.assistant_message_id) for r in job.sources] == [
        ("u1", "a1"), ("u2", "a2"), ("u3", "a3"),
    ]  # fmt: skip
    assert (job.status, job.provider_id, job.attempts) == ("pending", "none", 0)
    assert job_status(setup.workspace).pending_turns == 0
    assert setup.ledger().read().counters == {"s1": 3}


def test_sessions_count_separately(tmp_path) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(None)
    for number in (1, 2):
        extraction.enqueue(CommittedTurn("a", f"u{number}", f"x{number}", user_text="hi"))
        extraction.enqueue(CommittedTurn("b", f"u{number}", f"x{number}", user_text="hi"))
    assert setup.ledger().read().counters == {"a": 2, "b": 2}
    assert extraction.enqueue(CommittedTurn("b", "u3", "x3", user_text="hi")) is True
    assert [job.session_id for job in setup.jobs()] == ["b"]


def test_pending_sources_survive_a_restart(tmp_path) -> None:
    setup = new_setup(tmp_path)
    setup.extraction(None).enqueue(_turn(1))
    setup.extraction(None).enqueue(_turn(2))
    assert setup.extraction(None).enqueue(_turn(3)) is True  # a new process, same ledger
    assert len(setup.job().sources) == 3


def test_a_turn_that_saved_through_a_write_tool_counts_but_is_no_source(tmp_path) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(None)
    wrote = _turn(
        2,
        tool_calls=(ToolCall("t1", "memory_remember"),),
        tool_outputs=(ToolOutput("t1", RECEIPT),),
    )
    read = _turn(
        3, tool_calls=(ToolCall("t2", "memory_get"),), tool_outputs=(ToolOutput("t2", "x"),)
    )
    extraction.enqueue(_turn(1))
    extraction.enqueue(wrote)
    assert extraction.enqueue(read) is True
    assert [r.user_message_id for r in setup.job().sources] == ["u1", "u3"]


def test_a_batch_whose_turns_all_saved_by_tool_makes_no_job(tmp_path) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(None)
    tools = {
        "tool_calls": (ToolCall("t", "memory_remember"),),
        "tool_outputs": (ToolOutput("t", RECEIPT),),
    }
    assert [extraction.enqueue(_turn(n, **tools)) for n in (1, 2, 3)] == [False] * 3
    assert setup.jobs() == [] and setup.ledger().read().counters == {"s1": 3}


def _saved(name: str, content: str = RECEIPT, *, error: bool = False, call_id: str = "t1") -> bool:
    return has_memory_write([ToolCall("t1", name)], [ToolOutput(call_id, content, error)])


def test_the_receipt_check() -> None:
    assert _saved("memory_remember")
    assert _saved("memory_update") and _saved("memory_forget")
    assert _saved("mcp__memquill__memory_remember")
    assert _saved("mcp__memquill-write__memory_forget")
    assert not _saved("memory_get")
    assert not _saved("memory_search")
    assert not _saved("my_memory_remember_helper")
    assert not _saved("memory_remember", error=True)
    assert not _saved("memory_remember", call_id="other")  # unpaired
    assert not _saved("memory_remember", RECEIPT.replace('"saved"', '"duplicate"'))
    assert not _saved("memory_remember", RECEIPT.replace('"saved"', '"blocked"'))
    assert not _saved("memory_remember", RECEIPT.replace('"f' + "f" * 63 + '"', '""'))
    assert not _saved("memory_remember", '{"type":"memory_write_error","code":"conflict"}')
    assert not _saved("memory_remember", "I saved it for you.")
    assert not _saved("Write", RECEIPT)
    assert not has_memory_write([], [])


def test_turns_from_a_transcript_use_only_text_blocks(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [
        {"id": "u1", "role": "user", "content": [
            {"type": "text", "text": "I like tea."},
            {"type": "image", "url": "x"},
        ]},
        {"id": "a1", "role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Noted."},
            {"type": "tool_use", "id": "t1", "name": "memory_get"},
            {"type": "tool_result", "tool_use_id": "t1", "content": "nothing"},
        ]},
        {"id": "u2", "role": "user", "content": "Remind me", "human": False},
        {"id": "a2", "role": "assistant", "content": "…", "status": "interrupted"},
        {"id": "a3", "role": "assistant", "content": "stray"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    source = TranscriptSource(path, "s")
    messages = source.read()
    assert [m.text for m in messages[:2]] == ["I like tea.", "Noted."]
    turns = committed_turns("s", messages)
    assert [(t.user_message_id, t.assistant_message_id) for t in turns] == [
        ("u1", "a1"), ("u2", "a3"),
    ]  # fmt: skip
    assert turns[0].refusal() is None and not turns[0].wrote_memory
    assert turns[1].refusal() == "not_human"


def test_committed_turns_pairs_each_user_message_with_its_last_reply() -> None:
    messages = [
        SourceMessage("a0", "assistant", "Hello! How can I help?"),
        SourceMessage("u1", "user", "Save that I like tea."),
        SourceMessage("a1", "assistant", "", tool_calls=(ToolCall("t", "memory_remember"),)),
        SourceMessage("t", "tool", RECEIPT, tool_outputs=(ToolOutput("t", RECEIPT),)),
        SourceMessage("a2", "assistant", "Saved."),
        SourceMessage("u2", "user", "Thanks"),
    ]
    (turn,) = committed_turns("s", messages)
    assert (turn.user_message_id, turn.assistant_message_id, turn.wrote_memory) == (
        "u1",
        "a2",
        True,
    )


async def test_flush_closes_a_partial_batch(tmp_path) -> None:
    setup = new_setup(tmp_path)
    write_transcript(setup.transcript, ["I like tea.", "I live in Oslo."], ["ok", "ok"])
    extraction = setup.extraction(ExtractModel(["[]"]))
    assert setup.record_all(extraction) == 0
    assert extraction.flush("s1") is True
    assert extraction.flush("s1") is False
    assert len(setup.job().sources) == 2 and setup.job().id == turn_id("s1", "a2")
    await extraction.aresume()
    assert setup.job().status == "nothing"


def test_flush_on_an_unused_workspace_creates_nothing(tmp_path) -> None:
    setup = new_setup(tmp_path)
    assert setup.extraction(None).flush("s1") is False
    assert not (setup.workspace / ".assistant").exists()


def test_record_never_raises_into_the_host(tmp_path) -> None:
    setup = new_setup(tmp_path)
    assistant = setup.workspace / ".assistant"
    assistant.mkdir()
    (assistant / "memory-jobs.json").write_text("{broken")
    assert setup.extraction(None).record(_turn(1)) is False
