"""The job ledger on disk: references only, strict on read, atomic, locked, bounded, private."""

from __future__ import annotations

import json
import os
import stat

import pytest
from tests.core.lifecycle_helpers import GOOD, USERS, ExtractModel, new_setup

from memquill import MemorySession, MemoryToolset
from memquill.errors import (
    JobBusyError,
    JobCorruptError,
    JobLimitError,
    JobUnsafePathError,
    StorageError,
)
from memquill.lifecycle import CommittedTurn, job_status
from memquill.lifecycle._ledger import (
    LEDGER_PATH,
    MAX_TURNS,
    Job,
    Ledger,
    LedgerFile,
    SourceRef,
    decode_ledger,
    encode_ledger,
    turn_id,
)
from memquill.store._lock import WriterLock


def _turn(number: int, session: str = "s1") -> CommittedTurn:
    return CommittedTurn(session, f"u{number}", f"a{number}", user_text="hello")


def _write(ledger: LedgerFile, document: object) -> None:
    ledger.directory.mkdir(exist_ok=True)
    ledger.path.write_text(json.dumps(document))


def test_a_missing_ledger_reads_empty_and_viewing_creates_nothing(tmp_path) -> None:
    ledger = LedgerFile.of(tmp_path)
    assert ledger.read() == Ledger()
    view = job_status(tmp_path)
    assert (list(view.jobs), view.capacity_reached, view.pending_turns) == ([], False, 0)
    assert list(tmp_path.iterdir()) == []


def test_the_ledger_round_trips_exactly() -> None:
    job = Job(
        turn_id("s1", "a3"), "s1", "u3", "a3", "custom:x", "failed", "2026-01-01T00:00:00.000Z",
        reason="request_failed", route_fingerprint="hmac-v1:" + "0" * 64, retry_at=123,
        sources=(SourceRef("u1", "a1"), SourceRef("u3", "a3")),
        requires_configuration_change=True, storage_blocked_revision='[1,2,3]', attempts=2,
    )  # fmt: skip
    ledger = Ledger(["0f" * 32], {"s1": 3}, [job], {"s2": [SourceRef("u9", "a9")]})
    data = encode_ledger(ledger)
    assert decode_ledger(data) == ledger
    assert encode_ledger(decode_ledger(data)) == data


CORRUPT = {
    "not json": b"{nope",
    "not utf-8": b"\xff\xfe",
    "wrong version": {"version": 2, "turns": [], "counters": {}, "jobs": []},
    "version as bool": {"version": True, "turns": [], "counters": {}, "jobs": []},
    "missing jobs": {"version": 1, "turns": [], "counters": {}},
    "unknown top key": {"version": 1, "turns": [], "counters": {}, "jobs": [], "text": "hi"},
    "turn not a string": {"version": 1, "turns": [1], "counters": {}, "jobs": []},
    "counter out of range": {"version": 1, "turns": [], "counters": {"s": 5001}, "jobs": []},
    "text in an id": {"version": 1, "turns": ["line one\nline two"], "counters": {}, "jobs": []},
    "id too long": {"version": 1, "turns": ["x" * 201], "counters": {}, "jobs": []},
    "turn id not a sha256": {"version": 1, "turns": ["A" * 64], "counters": {}, "jobs": []},
    "four pending sources": {
        "version": 1, "turns": [], "counters": {}, "jobs": [],
        "pendingSources": {"s": [{"userMessageId": "u", "assistantMessageId": "a"}] * 4},
    },
}  # fmt: skip
_JOB = {
    "id": turn_id("s", "a"),
    "sessionId": "s",
    "userMessageId": "u",
    "assistantMessageId": "a",
    "providerId": "none",
    "status": "pending",
    "updatedAt": "2026-01-01T00:00:00.000Z",
}
CORRUPT_JOBS = {
    "unknown status": {**_JOB, "status": "done"},
    "unknown key (text smuggled in)": {**_JOB, "userText": "I moved to Lisbon"},
    "attempts over 3": {**_JOB, "attempts": 4},
    "retryAt negative": {**_JOB, "retryAt": -1},
    "flag not a bool": {**_JOB, "requiresConfigurationChange": 1},
    "empty sources": {**_JOB, "sources": []},
    "missing session": {key: value for key, value in _JOB.items() if key != "sessionId"},
    "id rewritten": {**_JOB, "id": turn_id("s", "a9")},
    "id of another session": {**_JOB, "sessionId": "s2"},
}


@pytest.mark.parametrize("document", CORRUPT.values(), ids=CORRUPT.keys())
def test_anything_else_is_corrupt(tmp_path, document: object) -> None:
    ledger = LedgerFile.of(tmp_path)
    ledger.directory.mkdir()
    data = document if isinstance(document, bytes) else json.dumps(document).encode()
    ledger.path.write_bytes(data)
    with pytest.raises(JobCorruptError, match=r"not valid"):
        ledger.read()
    with pytest.raises(JobCorruptError):
        job_status(tmp_path)


def test_the_valid_job_the_corrupt_ones_are_made_from_reads(tmp_path) -> None:
    ledger = LedgerFile.of(tmp_path)
    _write(ledger, {"version": 1, "turns": [], "counters": {}, "jobs": [_JOB]})
    assert [job.id for job in ledger.read().jobs] == [_JOB["id"]]


@pytest.mark.parametrize("job", CORRUPT_JOBS.values(), ids=CORRUPT_JOBS.keys())
def test_every_job_field_is_checked(tmp_path, job: object) -> None:
    ledger = LedgerFile.of(tmp_path)
    _write(ledger, {"version": 1, "turns": [], "counters": {}, "jobs": [job]})
    with pytest.raises(JobCorruptError):
        ledger.read()


def test_a_corrupt_ledger_is_never_overwritten(tmp_path) -> None:
    ledger = LedgerFile.of(tmp_path)
    ledger.directory.mkdir()
    ledger.path.write_text("{broken")
    with pytest.raises(JobCorruptError), ledger.change():
        pass
    assert ledger.path.read_text() == "{broken"


def test_limits(tmp_path) -> None:
    ledger = LedgerFile.of(tmp_path)
    ledger.directory.mkdir()
    ledger.path.write_bytes(b" " * (4 * 1024 * 1024 + 1))
    with pytest.raises(JobLimitError, match="full"):
        ledger.read()
    turns = [f"{i:064x}" for i in range(MAX_TURNS + 1)]
    _write(ledger, {"version": 1, "turns": turns, "counters": {}, "jobs": []})
    with pytest.raises(JobLimitError):
        ledger.read()


def test_the_five_thousandth_turn_is_the_last(tmp_path) -> None:
    setup = new_setup(tmp_path)
    ledger = setup.ledger()
    _write(ledger, {"version": 1, "turns": [f"{i:064x}" for i in range(MAX_TURNS - 1)],
                    "counters": {}, "jobs": []})  # fmt: skip
    extraction = setup.extraction(None)
    extraction.enqueue(_turn(1))
    assert job_status(setup.workspace).capacity_reached
    with pytest.raises(JobLimitError):
        extraction.enqueue(_turn(2))
    assert extraction.record(_turn(3)) is False  # recording never raises into the host


@pytest.mark.parametrize("which", ["folder", "ledger", "lock", "runner"])
def test_symlinks_and_odd_files_are_unsafe(tmp_path, which: str) -> None:
    workspace = tmp_path / "ws"
    elsewhere = tmp_path / "elsewhere"
    workspace.mkdir()
    elsewhere.mkdir()
    ledger = LedgerFile.of(workspace)
    if which == "folder":
        ledger.directory.symlink_to(elsewhere)
    else:
        ledger.directory.mkdir()
        name = {"ledger": "memory-jobs.json", "lock": "memory-jobs.json.lock"}.get(
            which, "memory-jobs.json.runner"
        )
        (elsewhere / "target").write_text("{}")
        (ledger.directory / name).symlink_to(elsewhere / "target")
    with pytest.raises(JobUnsafePathError, match="not a regular workspace file"):
        ledger.read()
    with pytest.raises(JobUnsafePathError), ledger.change():
        pass
    assert [p.name for p in elsewhere.iterdir()] == ([] if which == "folder" else ["target"])
    if which != "folder":
        assert (elsewhere / "target").read_text() == "{}"


def test_a_folder_where_the_ledger_should_be_is_unsafe(tmp_path) -> None:
    ledger = LedgerFile.of(tmp_path)
    ledger.path.mkdir(parents=True)
    with pytest.raises(JobUnsafePathError):
        ledger.read()


def test_a_relative_workspace_is_refused(tmp_path) -> None:
    from memquill.errors import UnsafePathError

    with pytest.raises(UnsafePathError):
        LedgerFile.of("relative/ws")
    with pytest.raises(StorageError):
        LedgerFile.of(tmp_path / "missing")


def test_writes_are_atomic_private_and_leave_no_staging_files(tmp_path) -> None:
    ledger = LedgerFile.of(tmp_path)
    with ledger.change() as document:
        document.turns.append("t" * 64)
    assert stat.S_IMODE(os.stat(ledger.directory).st_mode) & 0o077 == 0
    assert stat.S_IMODE(os.stat(ledger.path).st_mode) == 0o600
    # memquill.foundation.atomic names staging files so
    stale = ledger.directory / ".memory-jobs-0123.tmp"
    stale.write_text("half a write")  # left by a writer that died before its rename
    with ledger.change() as document:
        document.turns.append("u" * 64)
    assert ledger.read().turns == ["t" * 64, "u" * 64]
    assert not stale.exists()
    assert [p.name for p in ledger.directory.iterdir() if p.suffix == ".tmp"] == []


def test_an_unchanged_ledger_is_not_rewritten(tmp_path) -> None:
    ledger = LedgerFile.of(tmp_path)
    with ledger.change() as document:
        document.turns.append("t" * 64)
    before = os.stat(ledger.path).st_ino
    with ledger.change():
        pass
    assert os.stat(ledger.path).st_ino == before


def test_a_held_change_lock_is_busy_after_the_wait(tmp_path) -> None:
    ledger = LedgerFile(LedgerFile.of(tmp_path).root, lock_timeout=0.2)
    ledger.directory.mkdir()
    held = WriterLock(ledger.directory / "memory-jobs.json.lock", 1.0)
    busy = pytest.raises(JobBusyError, match="holds the extraction job ledger lock")
    with held, busy, ledger.change():
        pass


def test_the_runner_lock_is_claimed_without_waiting(tmp_path) -> None:
    ledger = LedgerFile.of(tmp_path)
    ledger.directory.mkdir()
    with ledger.runner_claim() as first, ledger.runner_claim() as second:
        assert (first, second) == (True, False)
    with ledger.runner_claim() as again:
        assert again


async def test_the_ledger_never_holds_message_text_or_keys(tmp_path) -> None:
    setup = new_setup(tmp_path)
    model = ExtractModel([GOOD], key="sk-proj-THISKEYMUSTNEVERAPPEAR1234567890")
    extraction = setup.extraction(model)
    setup.record_all(extraction)
    await extraction.aresume()
    assert setup.job().status == "completed"
    text = setup.ledger().path.read_text("utf-8")
    for phrase in [*USERS, "Welcome to Lisbon!", *(r.content for r in setup.records())]:
        assert phrase not in text
    for word in ("Lisbon", "biologist", "daughter", "Ana", "September", "Joana", "March"):
        assert word not in text, word
    assert "sk-proj" not in text and "THISKEY" not in text


async def test_the_ledger_is_private_to_every_query(tmp_path) -> None:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(ExtractModel([GOOD]))
    setup.record_all(extraction)
    await extraction.aresume()
    job_id = setup.job().id
    tools = MemoryToolset(MemorySession(setup.workspace, "s1", "read"))
    got = tools.call("memory_get", {"file_path": LEDGER_PATH})
    assert got.is_error and "internal memory history is not query content" in got.text
    found = tools.call("memory_search", {"query": job_id[:16]})
    assert LEDGER_PATH not in found.text and job_id not in found.text
    found = tools.call("memory_search", {"query": "pending sessionId memory jobs"})
    assert ".assistant" not in found.text
