"""Extraction through each framework's scripted model: LangChain's ``GenericFakeChatModel``
and LlamaIndex's ``MockLLM``, wrapped by the adapters' TextModels, over real files.

The same rules as the core's own tests hold whatever model the host plugs in: verbatim
evidence, invalid answers charged, 401 free until the key changes, 429 cooled down, a crash
after the save recognised without a call, a forgotten fact never back, no text in the ledger,
an edit during generation saving nothing.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.adapters.extraction_models import FRAMEWORKS, FrameworkExtractor
from tests.core.lifecycle_helpers import GOOD, USERS, answer, fact, new_setup, write_transcript

from memquill import MemorySession, WriteSource, forget

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.parametrize("kind", FRAMEWORKS)

INVALID = {
    "invented quote": answer(fact("u1", "Lives in Porto.", "I moved to Porto")),
    "foreign messageId": answer(fact("a1", "Lives in Lisbon.", "Lisbon")),
    "nine facts": answer(*[fact("u1", f"Fact {i}.", "Lisbon") for i in range(9)]),
    "prose": "Sure! The user lives in Lisbon and has a daughter.",
}


async def test_a_full_conversation_is_saved_with_verbatim_evidence(tmp_path, kind) -> None:
    setup = new_setup(tmp_path)
    model = FrameworkExtractor(kind, [GOOD])
    extraction = setup.extraction(None)
    extraction.model = model.model
    setup.record_all(extraction)
    await extraction.aresume()
    assert model.calls == 1 and setup.job().status == "completed"
    users = {f"u{i + 1}": text for i, text in enumerate(USERS)}
    records = setup.records()
    assert len(records) == 3
    for record, item in zip(records, json.loads(GOOD), strict=True):
        assert record.content == item["content"]
        assert item["evidence"] in users[str(record.source["messageId"])]


@pytest.mark.parametrize("reply", INVALID.values(), ids=INVALID.keys())
async def test_an_invalid_answer_rejects_the_batch_and_charges(tmp_path, kind, reply) -> None:
    setup = new_setup(tmp_path)
    model = FrameworkExtractor(kind, [reply])
    extraction = _extraction(setup, model)
    setup.record_all(extraction)
    await extraction.aresume()
    job = setup.job()
    assert (job.status, job.reason, job.attempts) == ("failed", "extraction_or_storage_failed", 1)
    assert setup.records(active=False) == []


async def test_401_blocks_without_charge_until_the_key_changes(tmp_path, kind) -> None:
    setup = new_setup(tmp_path)
    model = FrameworkExtractor(kind, ["raise:http_401", GOOD])
    extraction = _extraction(setup, model)
    setup.record_all(extraction)
    for _ in range(3):
        await extraction.aresume()
        setup.clock.advance(600)
    job = setup.job()
    assert (job.status, job.reason, job.attempts, model.calls) == (
        "unavailable", "credentials_missing", 0, 1,
    )  # fmt: skip
    model.change_key("sk-rotated")
    await extraction.aresume()
    assert (model.calls, setup.job().status, setup.job().attempts) == (2, "completed", 1)


async def test_429_cools_down(tmp_path, kind) -> None:
    setup = new_setup(tmp_path)
    model = FrameworkExtractor(kind, ["raise:http_429", GOOD])
    extraction = _extraction(setup, model)
    setup.record_all(extraction)
    await extraction.aresume()
    await extraction.aresume()
    job = setup.job()
    assert (job.status, job.reason, job.attempts, model.calls) == ("failed", "request_failed", 1, 1)
    assert job.retry_at is not None and job.retry_at > setup.clock.now * 1000
    setup.clock.advance(61)
    await extraction.aresume()
    assert (model.calls, setup.job().status) == (2, "completed")


async def test_a_forgotten_fact_stays_forgotten_on_replay(tmp_path, kind) -> None:
    setup = new_setup(tmp_path)
    extraction = _extraction(setup, FrameworkExtractor(kind, [GOOD]))
    setup.record_all(extraction)
    await extraction.aresume()
    session = MemorySession(setup.workspace, "s1")
    for record in setup.records():
        forget(session, record.id, session.store.snapshot().revision, source=WriteSource.manual())
    setup.ledger().path.unlink()
    replay = FrameworkExtractor(kind, [GOOD])
    again = _extraction(setup, replay)
    setup.record_all(again)
    await again.aresume()
    assert replay.calls == 0 and setup.records() == []
    assert (setup.job().status, setup.job().reason) == ("skipped", "source_revoked")


async def test_the_ledger_never_holds_conversation_text(tmp_path, kind) -> None:
    setup = new_setup(tmp_path)
    extraction = _extraction(setup, FrameworkExtractor(kind, [GOOD]))
    setup.record_all(extraction)
    await extraction.aresume()
    text = setup.ledger().path.read_text()
    for phrase in (*USERS, *(r.content for r in setup.records())):
        assert phrase not in text
    for word in ("Lisbon", "marine", "Ana", "Joana", "sk-lc-one", "sk-li-one"):
        assert word not in text


async def test_an_edit_during_generation_saves_nothing(tmp_path, kind) -> None:
    setup = new_setup(tmp_path)

    def edit(call: int) -> None:
        write_transcript(setup.transcript, (*USERS[:2], "Please call me Joana, or Jo."))

    extraction = _extraction(setup, FrameworkExtractor(kind, [GOOD], on_call=edit))
    setup.record_all(extraction)
    await extraction.aresume()
    assert (setup.job().status, setup.job().reason) == ("skipped", "source_changed")
    assert setup.records(active=False) == []


CHILD = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from pathlib import Path

    import memquill.lifecycle._job as job_module
    from memquill.enhance._runner import AuxiliaryRunner
    from memquill.lifecycle import Extraction, TranscriptSource, committed_turns
    from memquill import MemorySession
    from tests.adapters.extraction_models import FrameworkExtractor

    workspace, transcript, state, kind, answer = sys.argv[1:6]
    real = job_module.save_candidates

    def save_then_die(session, candidates, **options):
        real(session, candidates, **options)
        os.kill(os.getpid(), signal.SIGKILL)

    job_module.save_candidates = save_then_die
    source = TranscriptSource(transcript, "s1")
    extraction = Extraction(
        MemorySession(workspace), source, model=FrameworkExtractor(kind, [answer]).model,
        runner=AuxiliaryRunner(state_dir=Path(state)),
    )
    for turn in committed_turns("s1", source.read()):
        extraction.enqueue(turn)
    asyncio.run(extraction.aresume())
    """
)


async def test_kill_9_after_the_save_settles_without_calling_again(tmp_path, kind) -> None:
    setup = new_setup(tmp_path)
    args = [str(setup.workspace), str(setup.transcript), str(setup.state), kind, GOOD]
    child = subprocess.run([sys.executable, "-c", CHILD, *args], cwd=ROOT, timeout=180, check=False)
    assert child.returncode == -signal.SIGKILL
    assert (setup.job().status, len(setup.records())) == ("running", 3)

    model = FrameworkExtractor(kind, [GOOD])
    await _extraction(setup, model).aresume()
    assert model.calls == 0
    assert (setup.job().status, len(setup.records(active=False))) == ("completed", 3)


def _extraction(setup, model: FrameworkExtractor):
    extraction = setup.extraction(None)
    extraction.model = model.model
    return extraction


def test_memquill_extract_takes_the_frameworks_own_model(tmp_path, kind, monkeypatch, capsys):
    setup = new_setup(tmp_path)
    models = tmp_path / "models"
    models.mkdir()
    attribute = "chat" if kind == "langchain" else "llm"
    (models / f"framework_{kind}.py").write_text(
        "from tests.adapters.extraction_models import FrameworkExtractor\n"
        "from tests.core.lifecycle_helpers import GOOD\n"
        f"MODEL = FrameworkExtractor({kind!r}, [GOOD]).{attribute}\n"
    )
    monkeypatch.syspath_prepend(str(models))
    from memquill.cli import main

    args = ["--workspace", str(setup.workspace), "extract", str(setup.transcript), "--model"]
    status = main([*args, f"framework_{kind}:MODEL", "--state-dir", str(setup.state)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "model calls: 1" in out and len(setup.records()) == 3
