"""Real processes: concurrent writers, compare-and-swap races, and writers killed mid-write.

The many-writer and compare-and-swap races run on both backends; the file's crash points are
here, the database's in ``test_store_postgres_faults.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.core.conftest import Backing
from tests.core.store_helpers import (
    PAUSE_BEFORE_RENAME,
    children,
    expect_unchanged,
    manual,
    raw,
    tree,
)

from memquill import RecordStore
from memquill.errors import Messages
from memquill.store._codec import decode_store

WORKERS = 8
SAVES = 50

SAVE_WORKER = """
import json, sys
from memquill import RecordStore
from memquill.store._results import Candidate

workspace, worker, count, location = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
store = RecordStore(workspace, lock_timeout=120, location=location)
print("ready", flush=True)
sys.stdin.readline()
for i in range(count):
    source = {"kind": "tool", "sessionId": f"worker-{worker}"}
    result = store.save([Candidate(f"worker {worker} fact {i}", source, f"{worker}:{i}")])
    print("ack", json.dumps([result.status, result.record_id, i]), flush=True)
"""

CORRECT_RACER = """
import sys
from memquill import RecordStore
from memquill.errors import MemoryRecordError

workspace, record_id, revision, text, location = sys.argv[1:6]
store = RecordStore(workspace, lock_timeout=60, location=location)
print("ready", flush=True)
sys.stdin.readline()
try:
    result = store.correct(record_id, text, revision)
    print("result", result.status, flush=True)
except MemoryRecordError as error:
    print("result", error.code, error.message, flush=True)
"""

# Holds the lock inside a real save, before anything is staged.
PAUSE_IN_TRANSACTION = """
import sys, time
import memquill.foundation.atomic as atomic
from memquill import RecordStore
from memquill.store._results import Candidate
from memquill.store import _transaction

_transaction.Draft.rewritten = True  # the whole-file way (a save into a file appends)

def stuck(path, data, **options):
    print("holding", flush=True)
    time.sleep(600)

atomic.write_new = stuck
RecordStore(sys.argv[1]).save([Candidate("never written", {"kind": "manual"}, "never")])
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def temp_files(workspace: Path) -> list[str]:
    return sorted(p.name for p in (workspace / "memory").glob(".records-*.tmp"))


@pytest.mark.slow
def test_eight_processes_saving_at_once_lose_nothing(backing: Backing) -> None:
    workspace, location = backing.workspace, backing.location_for_child()
    scripts = [
        (SAVE_WORKER, (str(workspace), str(w), str(SAVES), location)) for w in range(WORKERS)
    ]
    acknowledged: dict[str, str] = {}
    with children(*scripts) as workers:
        for worker in workers:
            worker.expect("ready")
        for worker in workers:
            worker.send("go")
        for number, worker in enumerate(workers):
            lines = worker.finish().splitlines()
            assert len(lines) == SAVES
            for line in lines:
                status, record_id, i = json.loads(line.removeprefix("ack "))
                assert status == "saved"
                acknowledged[record_id] = f"worker {number} fact {i}"
    assert len(acknowledged) == WORKERS * SAVES
    data = backing.raw()
    records = decode_store(data.decode()).records
    assert len(records) == WORKERS * SAVES
    assert all(record.status == "active" for record in records)
    assert {record.id: record.content for record in records} == acknowledged
    # Each worker's facts appear in the order it saved them.
    for number in range(WORKERS):
        mine = [r.content for r in records if r.source["sessionId"] == f"worker-{number}"]
        assert mine == [f"worker {number} fact {i}" for i in range(SAVES)]
    assert backing.store().snapshot().revision == backing.revision_of(data)
    if backing.kind == "file":
        assert temp_files(workspace) == []


@pytest.mark.parametrize("revision_kind", ["store", "record"])
def test_two_processes_correcting_one_revision_one_wins(
    backing: Backing, revision_kind: str
) -> None:
    store = backing.store()
    saved = store.save([manual("the original", "k")])
    revision = saved.revision if revision_kind == "store" else saved.record_revision or ""
    record = saved.record_id or ""
    location = backing.location_for_child()
    scripts = [
        (
            CORRECT_RACER,
            (str(backing.workspace), record, revision, f"correction {n}", location),
        )
        for n in (1, 2)
    ]
    with children(*scripts) as racers:
        for racer in racers:
            racer.expect("ready")
        for racer in racers:
            racer.send("go")
        outcomes = [racer.expect("result") for racer in racers]
        for racer in racers:
            racer.finish()
    winner = f"correction {outcomes.index('saved') + 1}"
    records = store.snapshot().records
    # The loser's id names an old version now: it is told the current one, never overwrites it.
    current = store.snapshot().record_revision(records[-1])[:16]
    loser = Messages.CORRECTED.format(old=record, current=records[-1].id, revision=current)
    assert sorted(outcomes) == sorted(["saved", f"not_found {loser}"])
    assert [(r.status, r.content) for r in records] == [
        ("superseded", "the original"),
        ("active", winner),
    ]


def test_a_paused_writer_blocks_contenders_and_hides_its_staged_data(workspace: Path) -> None:
    store = RecordStore(workspace, lock_timeout=0.1)
    initial = store.save([manual("before", "before")])
    before = raw(workspace)
    with children((PAUSE_BEFORE_RENAME, (str(workspace), "from the child"))) as (child,):
        staged = Path(child.expect("staged"))
        assert staged.parent == workspace / "memory" and b"from the child" in staged.read_bytes()
        expect_unchanged(
            workspace, "busy", Messages.LOCK_HELD, store.save, [manual("contender", "c")]
        )
        snapshot = store.snapshot()
        assert snapshot.revision == initial.revision
        assert [r.content for r in snapshot.records] == ["before"]
        assert [r.content for r in store.projection().records] == ["before"]
        assert raw(workspace) == before
        child.send("go")
        child_revision = child.expect("saved").split()[0]
        child.finish()
    assert not staged.exists()
    assert store.snapshot().revision == child_revision
    expect_unchanged(
        workspace,
        "conflict",
        Messages.STALE,
        store.save,
        [manual("late", "late")],
        initial.revision,
    )
    store.save([manual("after", "after")], child_revision)
    assert [r.content for r in store.snapshot().records] == ["before", "from the child", "after"]


@pytest.mark.parametrize("fixer", ["api", "cli"])
def test_a_writer_killed_after_staging_leaves_the_old_file(workspace: Path, fixer: str) -> None:
    store = RecordStore(workspace, lock_timeout=0)
    initial = store.save([manual("old fact", "old")])
    before = raw(workspace)
    with children((PAUSE_BEFORE_RENAME, (str(workspace), "never published"))) as (child,):
        staged = Path(child.expect("staged"))
        child.kill()
    # The old file is intact, the staged file is the only trace, and the lock is free at once.
    assert raw(workspace) == before
    assert temp_files(workspace) == [staged.name]
    assert b"never published" in staged.read_bytes()
    assert store.snapshot().revision == initial.revision
    report = store.doctor()
    assert report.temp_files == (f"memory/{staged.name}",) and not report.ok
    assert report.lock_held is False
    if fixer == "api":
        fixed = store.doctor(fix=True)
        assert fixed.removed == (f"memory/{staged.name}",) and fixed.ok
    else:
        command = [str(Path(sys.executable).parent / "memquill"), "doctor", "--fix", "--json"]
        done = subprocess.run(
            [*command, "--workspace", str(workspace)], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["removed"] == [f"memory/{staged.name}"]
    assert temp_files(workspace) == []
    assert raw(workspace) == before
    # The next writer, holding the revision from before the crash, succeeds without waiting.
    assert store.save([manual("next", "next")], initial.revision).status == "saved"
    assert [r.content for r in store.snapshot().records] == ["old fact", "next"]


def test_a_writer_killed_while_holding_the_lock_needs_no_cleanup(workspace: Path) -> None:
    store = RecordStore(workspace, lock_timeout=0)
    initial = store.save([manual("old fact", "old")])
    image = tree(workspace)
    with children((PAUSE_IN_TRANSACTION, (str(workspace),))) as (child,):
        child.expect("holding")
        expect_unchanged(workspace, "busy", Messages.LOCK_HELD, store.save, [manual("x", "x")])
        child.kill()
    assert tree(workspace) == image
    assert store.doctor().ok
    assert store.save([manual("next", "next")], initial.revision).status == "saved"
