"""Extraction cannot invent or repeat: substantial quotes, grounded content, no fact saved twice.

The attack this answers: a model replying to every batch with ``{"content": "The user is a
billionaire who owns a yacht named Zeus", "evidence": "a"}`` had that sentence saved 30 times
over 10 batches, each attributed to a real user message. Real workspace, ledger, records store
and JSONL transcript; only the model is scripted (``docs/extraction.md`` lists the rules).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from tests.core.lifecycle_helpers import (
    ExtractModel,
    Setup,
    answer,
    fact,
    new_setup,
    write_transcript,
)

from memquill.enhance import Prompt
from memquill.errors import ExtractionInvalidError
from memquill.lifecycle._prompt import PromptTurn, parse_facts

BILLIONAIRE = "The user is a billionaire who owns a yacht named Zeus"
LISBON = "I moved to Lisbon in March and I work as a marine biologist."
TEA = "I really prefer tea over coffee these days."


def _turns(*users: str) -> list[PromptTurn]:
    return [PromptTurn(f"u{i}", text, "ok") for i, text in enumerate(users, start=1)]


# -- the rules, one by one -----------------------------------------------------------------

ACCEPTED = [
    pytest.param(
        "User prefers tea over coffee", "I really prefer tea over coffee", TEA, id="paraphrase"
    ),
    pytest.param("Lives in Lisbon.", "I moved to Lisbon", LISBON, id="terse paraphrase"),
    pytest.param(
        "The user said they currently work as a marine biologist.",
        "I work as a marine biologist",
        LISBON,
        id="framing words",
    ),
    pytest.param(TEA, TEA, TEA, id="the quote itself"),
    pytest.param("用户住在里斯本。", "我住在里斯本", "我住在里斯本，在医院工作。", id="CJK"),
]


@pytest.mark.parametrize(("content", "evidence", "user"), ACCEPTED)
def test_grounded_facts_with_substantial_quotes_are_accepted(
    content: str, evidence: str, user: str
) -> None:
    (accepted,) = parse_facts(answer(fact("u1", content, evidence)), _turns(user))
    assert (accepted.content, accepted.evidence) == (content, evidence)


QUOTE = "I moved to Lisbon in March"
REFUSED = [
    pytest.param(BILLIONAIRE, "a", LISBON, "evidence is too short", id="one letter"),
    pytest.param("Lives in Lisbon.", "to Lisbon", LISBON, "evidence is too short", id="two words"),
    pytest.param(
        "Moved house.", "I moved to", LISBON, "evidence is too short", id="under 12 characters"
    ),
    pytest.param(
        "The user does not.",
        "and I do not",
        "Tea, and I do not mind.",
        "only stop words",
        id="stop words",
    ),
    pytest.param(BILLIONAIRE, QUOTE, LISBON, "not grounded", id="invented with a real quote"),
    pytest.param(
        "The user lives in Lisbon and owns a yacht.",
        QUOTE,
        LISBON,
        "not grounded",
        id="half invented",
    ),
    pytest.param("The user said so.", QUOTE, LISBON, "no significant word", id="no word"),
    pytest.param(
        "The user is a marine biologist.",
        QUOTE,
        LISBON,
        "shares no word with its evidence",
        id="not in the quote",
    ),
]


@pytest.mark.parametrize(("content", "evidence", "user", "rule"), REFUSED)
def test_each_rule_refuses_the_answer_and_says_which(
    content: str, evidence: str, user: str, rule: str
) -> None:
    with pytest.raises(ExtractionInvalidError, match=rf"\(item 1: [^)]*{rule}"):
        parse_facts(answer(fact("u1", content, evidence)), _turns(user))


@pytest.mark.parametrize(("content", "evidence", "user", "rule"), REFUSED)
async def test_a_refused_answer_saves_nothing_and_charges_the_attempt(
    tmp_path, content: str, evidence: str, user: str, rule: str
) -> None:
    setup = new_setup(tmp_path)
    write_transcript(setup.transcript, (user, "Thanks.", "Bye now."), ("Noted.", "ok", "ok"))
    model = ExtractModel([answer(fact("u1", content, evidence))])
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    await extraction.aresume()
    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("failed", "extraction_or_storage_failed", 1)
    assert setup.records(active=False) == []


# -- ten batches, as the attack ran them ---------------------------------------------------


def _ten_batches(setup: Setup, user: Callable[[int], str]) -> None:
    users = [user(number) for number in range(1, 31)]
    write_transcript(setup.transcript, users, [f"Reply {n}." for n in range(1, 31)])


def _every_turn(content: str, evidence: str) -> Callable[[Prompt], str]:
    def reply(prompt: Prompt) -> str:
        turns = json.loads(prompt.user)["turns"]
        return answer(*(fact(turn["messageId"], content, evidence) for turn in turns))

    return reply


SETTLED = ("completed", "nothing", "skipped", "unavailable")


async def _settle_all(setup: Setup, model: ExtractModel) -> None:
    extraction = setup.extraction(model)
    assert setup.record_all(extraction) == 10
    for _ in range(40):  # three calls a pass; failed jobs wait 60 s for their next attempt
        await extraction.aresume()
        if all(
            job.status in ("completed", "nothing", "skipped", "unavailable") for job in setup.jobs()
        ):
            return
        setup.clock.advance(61)
    raise AssertionError([job.status for job in setup.jobs()])


async def test_the_invented_fact_of_every_batch_is_never_saved(tmp_path) -> None:
    setup = new_setup(tmp_path)
    _ten_batches(setup, lambda n: f"Turn {n}: a question about the weather today.")
    model = ExtractModel([_every_turn(BILLIONAIRE, "a")])

    await _settle_all(setup, model)

    assert setup.records(active=False) == []
    assert {(job.status, job.reason) for job in setup.jobs()} == {
        ("unavailable", "retry_exhausted")
    }
    assert model.calls == 30  # three paid attempts per batch, never more


async def test_a_grounded_fact_repeated_by_every_batch_is_saved_once(tmp_path) -> None:
    setup = new_setup(tmp_path)
    _ten_batches(setup, lambda n: f"{TEA} This is message {n}.")
    spellings = iter(["User prefers tea over coffee", "user  PREFERS tea over coffee"] * 10)

    def reply(prompt: Prompt) -> str:
        return _every_turn(next(spellings), "I really prefer tea over coffee")(prompt)

    model = ExtractModel([reply])

    await _settle_all(setup, model)

    records = setup.records(active=False)
    assert [r.content for r in records] == ["User prefers tea over coffee"]
    assert records[0].source["messageId"] == "u1"
    assert {job.status for job in setup.jobs()} == {"completed"}
    assert model.calls == 10


async def test_a_batch_whose_first_fact_was_known_is_still_recovered_after_a_crash(
    tmp_path,
) -> None:
    setup = new_setup(tmp_path)
    users = (TEA, "My daughter Ana starts school in September.", "Bye.") * 2
    write_transcript(setup.transcript, users, ["ok"] * 6)
    tea = fact("u1", "User prefers tea over coffee", "I really prefer tea over coffee")
    ana = fact("u5", "The user's daughter Ana starts school.", "daughter Ana starts school")
    model = ExtractModel([answer(tea), answer({**tea, "messageId": "u4"}, ana)])
    extraction = setup.extraction(model)
    assert setup.record_all(extraction) == 2
    await extraction.aresume()
    assert [r.content for r in setup.records()] == [tea["content"], ana["content"]]
    second = setup.jobs()[1]
    with setup.ledger().change() as ledger:  # as if the process died after saving
        ledger.replace_job(second.evolve(status="running"))

    report = await extraction.aresume()

    assert report.calls == 0 and model.calls == 2
    assert setup.jobs()[1].status == "completed"
    assert len(setup.records(active=False)) == 2
