"""Crashes and concurrency with real processes: kill -9 at the worst moments, two runners at once.

Each child is a separate Python process running the real runner over a real workspace; the
model inside it is scripted. Nothing is mocked in the parent, which checks the ledger, the
records and how often a model was called.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests.core.lifecycle_helpers import GOOD, ExtractModel, new_setup, write_transcript

from memquill.lifecycle import job_status
from memquill.lifecycle._ledger import turn_id

CHILD = textwrap.dedent(
    """
    import asyncio, json, os, signal, sys, time
    from pathlib import Path

    import memquill.lifecycle._job as job_module
    from memquill.enhance._runner import AuxiliaryRunner
    from memquill.enhance import ModelIdentity
    from memquill.lifecycle import Extraction, TranscriptSource, committed_turns, job_status
    from memquill import MemorySession

    workspace, transcript, state, mode, log = sys.argv[1:6]
    go = Path(log + ".go")

    class Model:
        identity = ModelIdentity("custom", "extractor", b"key-1")

        async def generate(self, prompt, *, max_tokens):
            turns = json.loads(prompt.user)["turns"]
            with open(log, "a") as handle:
                handle.write(f"{os.getpid()} {turns[0]['messageId']}\\n")
            if mode == "hang":
                await asyncio.sleep(3600)
            await asyncio.sleep(0.2)
            return json.dumps([
                {"messageId": t["messageId"], "content": "Said: " + quote(t["user"]),
                 "evidence": quote(t["user"])}
                for t in turns
            ])

    def quote(text):
        return " ".join(text.split()[:4])

    if mode == "die_after_save":
        real = job_module.save_candidates

        def save_then_die(session, candidates, **options):
            result = real(session, candidates, **options)
            os.kill(os.getpid(), signal.SIGKILL)
            return result

        job_module.save_candidates = save_then_die

    if mode == "race":
        while not go.exists():
            time.sleep(0.005)
    source = TranscriptSource(transcript, "s1")
    extraction = Extraction(
        MemorySession(workspace), source, model=Model(),
        runner=AuxiliaryRunner(state_dir=Path(state)),
    )
    for turn in committed_turns("s1", source.read()):
        extraction.enqueue(turn)

    async def main():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            await extraction.aresume()
            jobs = job_status(workspace).jobs
            if jobs and all(job.status in ("completed", "nothing", "skipped") for job in jobs):
                return
            await asyncio.sleep(0.01)

    asyncio.run(main())
    """
)


def _child(setup, mode: str, log: Path) -> subprocess.Popen[bytes]:
    args = [str(setup.workspace), str(setup.transcript), str(setup.state), mode, str(log)]
    return subprocess.Popen([sys.executable, "-c", CHILD, *args])


def _calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


async def test_kill_9_after_the_save_settles_completed_without_a_second_call(tmp_path) -> None:
    setup = new_setup(tmp_path)
    log = tmp_path / "calls.log"
    child = _child(setup, "die_after_save", log)
    assert child.wait(120) == -signal.SIGKILL
    job = setup.job()
    assert (job.status, job.attempts) == ("running", 1)
    saved = setup.records()
    assert len(saved) == 3 and len(_calls(log)) == 1

    model = ExtractModel([GOOD])
    report = await setup.extraction(model).aresume()

    assert model.calls == 0 and report.calls == 0
    assert (setup.job().status, setup.job().attempts) == ("completed", 1)
    assert [r.id for r in setup.records(active=False)] == [r.id for r in saved]


async def test_a_rewritten_job_id_is_corrupt_so_a_saved_batch_is_never_asked_for_again(
    tmp_path,
) -> None:
    """A batch saved just before a crash is recognised by its first record's key, which is
    ``<job id>:0``: with its id rewritten the next pass would ask again and save it twice."""
    setup = new_setup(tmp_path)
    log = tmp_path / "calls.log"
    assert _child(setup, "die_after_save", log).wait(120) == -signal.SIGKILL
    (job,) = setup.jobs()
    assert job.status == "running"
    saved = setup.records(active=False)
    ledger = setup.ledger().path
    forged = turn_id("s1", "a-forged")
    ledger.write_bytes(ledger.read_bytes().replace(job.id.encode(), forged.encode()))
    before = ledger.read_bytes()

    model = ExtractModel([GOOD])
    report = await setup.extraction(model).aresume()

    assert model.calls == 0 and report.calls == 0
    assert getattr(report.error, "code", None) == "job_corrupt"
    assert setup.records(active=False) == saved
    assert ledger.read_bytes() == before  # a corrupt ledger is never overwritten


async def test_kill_9_during_the_model_call_keeps_the_paid_attempt_and_recovers(tmp_path) -> None:
    setup = new_setup(tmp_path)
    log = tmp_path / "calls.log"
    child = _child(setup, "hang", log)
    deadline = time.monotonic() + 120
    while not _calls(log) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _calls(log), "the child never called its model"
    child.send_signal(signal.SIGKILL)
    assert child.wait(60) == -signal.SIGKILL
    assert (setup.job().status, setup.job().attempts) == ("running", 1)
    assert setup.records(active=False) == []

    model = ExtractModel([GOOD])
    await setup.extraction(model).aresume()
    assert model.calls == 1
    assert (setup.job().status, setup.job().attempts, len(setup.records())) == ("completed", 2, 3)


@pytest.mark.slow
def test_two_processes_at_once_never_double_charge_or_double_save(tmp_path) -> None:
    setup = new_setup(tmp_path)
    users = [f"Statement number {i:02d} from me." for i in range(1, 10)]
    write_transcript(setup.transcript, users, ["ok"] * 9)
    log = tmp_path / "calls.log"
    children = [_child(setup, "race", log) for _ in range(2)]
    time.sleep(0.3)
    Path(str(log) + ".go").write_text("go")
    assert [child.wait(120) for child in children] == [0, 0]

    calls = _calls(log)
    assert sorted(line.split()[1] for line in calls) == ["u1", "u4", "u7"]  # once per batch
    ledger = setup.ledger().read()
    assert len(ledger.turns) == 9 and len(set(ledger.turns)) == 9
    assert [(job.status, job.attempts) for job in ledger.jobs] == [("completed", 1)] * 3
    records = setup.records(active=False)
    assert len(records) == 9
    assert len({r.operation_hash for r in records}) == 9
    assert sorted(str(r.source.get("messageId")) for r in records) == sorted(
        f"u{i}" for i in range(1, 10)
    )
    assert job_status(setup.workspace).pending_turns == 0


@pytest.mark.slow
def test_two_processes_recording_at_once_lose_no_turn(tmp_path) -> None:
    setup = new_setup(tmp_path)
    script = textwrap.dedent(
        """
        import sys
        from memquill.lifecycle import CommittedTurn, Extraction, RecordedMessages
        from memquill import MemorySession

        workspace, session = sys.argv[1:3]
        extraction = Extraction(MemorySession(workspace), RecordedMessages())
        for number in range(60):
            turn = CommittedTurn(session, f"u{number}", f"a{number}", user_text="hello")
            extraction.enqueue(turn)
        """
    )
    children = [
        subprocess.Popen([sys.executable, "-c", script, str(setup.workspace), name])
        for name in ("left", "right")
    ]
    assert [child.wait(120) for child in children] == [0, 0]
    ledger = setup.ledger().read()
    assert len(ledger.turns) == 120 and ledger.counters == {"left": 60, "right": 60}
    assert sorted(json.dumps(job.session_id) for job in ledger.jobs).count('"left"') == 20
