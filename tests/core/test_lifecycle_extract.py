"""Extraction end to end (spec 12.6, translated): a batch saved with verbatim evidence, every
invalid answer refused at a cost, and a saved batch never saved or paid for twice.

Real workspace, ledger, records store and JSONL transcript; the model is scripted.
"""

from __future__ import annotations

import json

import pytest
from tests.core.lifecycle_helpers import (
    GOOD,
    USERS,
    ExtractModel,
    answer,
    fact,
    new_setup,
    write_transcript,
)

from memquill import MemorySession, forget
from memquill.lifecycle._prompt import EXTRACTION_SYSTEM_PROMPT
from memquill.store._record_key import RecordKey, operation_hashes


async def test_three_turns_make_one_batch_saved_with_exact_provenance(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model)

    assert setup.record_all(extraction) == 1
    report = await extraction.aresume()

    assert model.calls == 1 and report.calls == 1
    assert model.prompts[0].system == EXTRACTION_SYSTEM_PROMPT
    seen = model.turns_seen()
    assert [turn["messageId"] for turn in seen] == ["u1", "u2", "u3"]
    assert [turn["user"] for turn in seen] == list(USERS)
    records = setup.records()
    assert [r.content for r in records] == [f["content"] for f in json.loads(GOOD)]
    assert [r.source.get("messageId") for r in records] == ["u1", "u2", "u3"]
    for record in records:
        assert record.source["kind"] == "conversation"
        assert record.source["sessionId"] == "s1"
        assert record.source["role"] == "user"
    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("completed", None, 1)
    hashes = {r.operation_hash for r in records}
    key = RecordKey().load()
    assert hashes == {operation_hashes(key, f"{job.id}:{i}")[0] for i in range(3)}


async def test_every_evidence_is_a_verbatim_quote_of_its_user_message(tmp_path) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(ExtractModel([GOOD]))
    setup.record_all(extraction)
    await extraction.aresume()
    users = {f"u{i + 1}": text for i, text in enumerate(USERS)}
    for item in json.loads(GOOD):
        assert item["evidence"] in users[item["messageId"]]
    assert len(setup.records()) == 3


async def test_a_fenced_answer_is_accepted_and_an_empty_one_is_nothing(tmp_path) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(ExtractModel(["```json\n" + GOOD + "\n```"]))
    setup.record_all(extraction)
    await extraction.aresume()
    assert setup.job().status == "completed" and len(setup.records()) == 3

    other = new_setup(tmp_path / "other")
    empty = other.extraction(ExtractModel(["[]"]))
    other.record_all(empty)
    await empty.aresume()
    assert (other.job().status, other.records()) == ("nothing", [])


INVALID = {
    "invented quote": answer(fact("u1", "Lives in Porto.", "I moved to Porto")),
    "paraphrased quote": answer(fact("u1", "Lives in Lisbon.", "I relocated to Lisbon")),
    "quote from the assistant": answer(fact("u1", "Welcomed.", "Welcome to Lisbon")),
    "case changed": answer(fact("u1", "Lives in Lisbon.", "i moved to lisbon")),
    "foreign messageId": answer(fact("a1", "Lives in Lisbon.", "Lisbon")),
    "unknown messageId": answer(fact("u9", "Lives in Lisbon.", "Lisbon")),
    "nine facts": answer(*[fact("u1", f"Fact {i}.", "Lisbon") for i in range(9)]),
    "prose": "The user moved to Lisbon in March.",
    "an object, not an array": json.dumps(fact("u1", "Lives in Lisbon.", "Lisbon")),
    "blank content": answer(fact("u1", "  ", "Lisbon")),
    "blank evidence": answer(fact("u1", "Lives in Lisbon.", " ")),
    "one bad item among good ones": answer(
        fact("u1", "Lives in Lisbon.", "I moved to Lisbon"),
        fact("u2", "Has a son.", "my son"),
    ),
}


@pytest.mark.parametrize("reply", INVALID.values(), ids=INVALID.keys())
async def test_an_invalid_answer_rejects_the_batch_and_charges_an_attempt(tmp_path, reply) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([reply])
    extraction = setup.extraction(model)
    setup.record_all(extraction)

    await extraction.aresume()

    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("failed", "extraction_or_storage_failed", 1)
    assert job.retry_at == int(setup.clock.now * 1000) + 60_000
    assert setup.records(active=False) == []
    await extraction.aresume()  # the 60 s wait holds for the same model configuration
    assert model.calls == 1


async def test_malformed_answers_cost_three_attempts_at_most_over_passive_resumes(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel(["not JSON"])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    calls: list[int] = []
    for _ in range(6):
        await extraction.aresume()
        calls.append(model.calls)
        setup.clock.advance(301)
    assert calls == [1, 2, 3, 3, 3, 3]
    job = setup.job()
    assert (job.status, job.reason, job.attempts, job.retry_at) == (
        "unavailable",
        "retry_exhausted",
        3,
        None,
    )
    model.key = "another-key"  # a configuration change never reopens a spent budget
    extraction.retry()
    assert extraction.wait(30)
    await extraction.aresume()
    assert model.calls == 3 and setup.job().reason == "retry_exhausted"


async def test_a_saved_batch_is_recovered_without_asking_the_model_again(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    await extraction.aresume()
    with setup.ledger().change() as ledger:  # as if the process died after saving
        ledger.replace_job(setup.job().evolve(status="running"))

    report = await extraction.aresume()

    assert model.calls == 1 and report.calls == 0
    assert setup.job().status == "completed"
    assert len(setup.records(active=False)) == 3


async def test_a_forgotten_fact_stays_forgotten_when_the_conversation_is_replayed(
    tmp_path,
) -> None:
    setup = new_setup(tmp_path)
    first = ExtractModel([GOOD])
    extraction = setup.extraction(first)
    setup.record_all(extraction)
    await extraction.aresume()
    session = MemorySession(setup.workspace, "s1")
    target = setup.records()[0]
    forget(session, target.id, session.store.snapshot().revision, source=_manual())

    # The same conversation again, from scratch: a new ledger, the same transcript.
    setup.ledger().path.unlink()
    replay = ExtractModel([GOOD])
    again = setup.extraction(replay)
    assert setup.record_all(again) == 1
    await again.aresume()

    assert replay.calls == 0  # the first key is a tombstone: recognised before any call
    assert (setup.job().status, setup.job().reason) == ("skipped", "source_revoked")
    contents = [r.content for r in setup.records()]
    assert target.content not in contents and len(contents) == 2


async def test_a_forgotten_fact_also_blocks_a_new_batch_from_the_same_message(tmp_path) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(ExtractModel([GOOD]))
    setup.record_all(extraction)
    await extraction.aresume()
    session = MemorySession(setup.workspace, "s1")
    target = next(r for r in setup.records() if r.source.get("messageId") == "u2")
    forget(session, target.id, session.store.snapshot().revision, source=_manual())

    # Same session, the same user message re-extracted by a later job (other keys).
    setup.ledger().path.unlink()
    lines = [
        {"id": "u2", "role": "user", "content": USERS[1]},
        {"id": "a7", "role": "assistant", "content": "ok"},
        {"id": "u8", "role": "user", "content": "Thanks."},
        {"id": "a8", "role": "assistant", "content": "ok"},
        {"id": "u9", "role": "user", "content": "Bye."},
        {"id": "a9", "role": "assistant", "content": "ok"},
    ]
    setup.transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    model = ExtractModel([answer(fact("u2", "Ana is a student.", "Ana starts school"))])
    again = setup.extraction(model)
    setup.record_all(again)
    await again.aresume()
    assert model.calls == 1
    assert (setup.job().status, setup.job().reason) == ("skipped", "source_revoked")
    assert "Ana" not in " ".join(r.content for r in setup.records())


async def test_a_user_message_edited_during_generation_saves_nothing(tmp_path) -> None:
    setup = new_setup(tmp_path)

    def edit_then_answer(prompt: object) -> str:
        edited = (USERS[0].replace("Lisbon", "Porto"), *USERS[1:])
        write_transcript(setup.transcript, edited)
        return GOOD

    extraction = setup.extraction(ExtractModel([edit_then_answer]))
    setup.record_all(extraction)
    await extraction.aresume()

    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("skipped", "source_changed", 1)
    assert setup.records(active=False) == []


async def test_a_deleted_source_is_unavailable_and_costs_nothing(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([GOOD])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    write_transcript(setup.transcript, ("hello",), ("hi",), start=7)
    await extraction.aresume()
    assert (setup.job().status, setup.job().reason, model.calls) == (
        "skipped",
        "source_unavailable",
        0,
    )


async def test_content_with_a_secret_is_refused_and_charged(tmp_path) -> None:
    setup = new_setup(tmp_path)
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    write_transcript(setup.transcript, (f"my key is {secret}", *USERS[1:]))
    reply = answer(fact("u1", f"The key is {secret}.", secret))
    extraction = setup.extraction(ExtractModel([reply]))
    setup.record_all(extraction)
    await extraction.aresume()
    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("failed", "extraction_or_storage_failed", 1)
    assert setup.records(active=False) == []


async def test_turns_the_model_sees_are_cut_to_their_budgets(tmp_path) -> None:
    setup = new_setup(tmp_path)
    long_user, long_reply = "é" * 5000 + " Lisbon", "x" * 5000
    write_transcript(setup.transcript, (long_user, *USERS[1:]), (long_reply, *["ok"] * 2))
    model = ExtractModel(["[]"])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    await extraction.aresume()
    first = model.turns_seen()[0]
    assert first["user"] == "é" * 2000  # floor(6000 / 3 sources)
    assert first["assistant"] == "x" * 1000  # floor(3000 / 3 usable)


def _manual():
    from memquill import WriteSource

    return WriteSource.manual()


async def test_forgotten_words_are_not_extracted_again_from_a_new_message(tmp_path) -> None:
    """Issue 32 item 3: a fact forgotten by a person, said again in a later message, is not
    saved by extraction (its words match the tombstone's fingerprint); the rest of the batch
    is."""
    setup = new_setup(tmp_path)
    extraction = setup.extraction(ExtractModel([GOOD]))
    setup.record_all(extraction)
    await extraction.aresume()
    session = MemorySession(setup.workspace, "s1")
    target = next(r for r in setup.records() if r.source.get("messageId") == "u2")
    forget(session, target.id, session.store.snapshot().revision, source=_manual())

    setup.ledger().path.unlink()
    lines = [
        {
            "id": "u7",
            "role": "user",
            "content": "Again: my daughter Ana starts school in September.",
        },
        {"id": "a7", "role": "assistant", "content": "ok"},
        {"id": "u8", "role": "user", "content": "I also play the cello every week."},
        {"id": "a8", "role": "assistant", "content": "ok"},
        {"id": "u9", "role": "user", "content": "Bye."},
        {"id": "a9", "role": "assistant", "content": "ok"},
    ]
    setup.transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    model = ExtractModel(
        [
            answer(
                fact(
                    "u7",
                    "The user's daughter Ana starts  school in September.",
                    "Ana starts school",
                ),
                fact("u8", "The user plays the cello.", "play the cello every week"),
            )
        ]
    )
    again = setup.extraction(model)
    setup.record_all(again)
    await again.aresume()

    assert model.calls == 1
    assert (setup.job().status, setup.job().reason) == ("completed", None)
    contents = [r.content for r in setup.records()]
    assert "The user plays the cello." in contents
    assert not any("Ana" in content for content in contents)
