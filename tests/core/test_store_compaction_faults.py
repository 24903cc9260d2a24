"""Faults during an automatic compaction (issue 33, "Bad input and faults"), with real processes:
a writer killed with SIGKILL at random moments of the write that compacts, a disk that fills up
during it (``RLIMIT_FSIZE`` below the new file's size), a hand edit that broke a record, and a
merge of two copies near capacity. Each leaves the previous file intact: it decodes, holds every
acknowledged record, and holds the last write either fully or not at all.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import time
from pathlib import Path

import pytest
from tests.core.store_helpers import CHILD_TIMEOUT, children, manual, raw, records_path, tool

from memquill import RecordStore
from memquill.errors import Messages
from memquill.store._codec import decode_store
from memquill.store._record import Record
from memquill.store._tombstones import TEXT_HASH_FIELD

MIB = 1024 * 1024
TEXT = 16_000
"""Characters per version: the longest content, so few writes fill the store."""

IO_CALLS = ("open", "write", "pwrite", "fsync", "fdatasync", "ftruncate", "replace", "rename")
IO_CALLS += ("link", "unlink", "close")
"""The calls at which a writer may be cut off: every step a write takes on disk."""

# Opens the near-full store, says ready, and on "go" makes the correction that needs room.
# With a file-size limit given, it first lowers RLIMIT_FSIZE and ignores SIGXFSZ, so writes
# past the limit fail with EFBIG, as on a full disk.
COMPACTING_WRITE = """
import os, resource, signal, sys, time
from memquill import RecordStore
from memquill.errors import MemoryRecordError

workspace, limit, cut = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = RecordStore(workspace, capacity=1024 * 1024, lock_timeout=30)
print("ready", flush=True)
if sys.stdin.readline().strip() != "go":
    raise SystemExit(3)
calls = 0


def counted(call):
    def run(*args, **kwargs):
        global calls
        calls += 1
        if calls == cut:
            os.kill(os.getpid(), signal.SIGKILL)
        return call(*args, **kwargs)
    return run


if cut:  # count the write's file-system calls, or SIGKILL this process at call number ``cut``
    for name in IO_CALLS:
        setattr(os, name, counted(getattr(os, name)))
if limit:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
started = time.perf_counter()
try:
    snapshot = store.snapshot()
    active = next(r for r in snapshot.records if r.status == "active")
    result = store.correct(active.id, "the newest profile ".ljust(16_000, "z"), snapshot.revision)
except MemoryRecordError as error:
    print("error", error.code, error.message, flush=True)
else:
    print("saved", result.record_id, calls, time.perf_counter() - started, flush=True)
""".replace("IO_CALLS", repr(IO_CALLS))


@pytest.fixture(scope="module")
def near_full(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A 1 MiB store one correction short of full: one keyed fact and its history, every
    superseded version still holding its 16,000 characters."""
    workspace = tmp_path_factory.mktemp("near-full")
    store = RecordStore(workspace, capacity=MIB)
    current = store.save([tool("profile 0 ".ljust(TEXT, "x"), "profile")]).record_id or ""
    turn = 0
    while len(raw(workspace)) + TEXT + 1_000 < MIB:
        turn += 1
        text = f"profile {turn} ".ljust(TEXT, "y")
        current = store.correct(current, text, store.snapshot().revision).record_id or ""
    return raw(workspace)


def _workspace(root: Path, name: str, data: bytes) -> Path:
    workspace = root / name
    (workspace / "memory").mkdir(parents=True)
    records_path(workspace).write_bytes(data)
    return workspace


def _staging(workspace: Path) -> list[Path]:
    return sorted((workspace / "memory").glob(".records-*.tmp"))


def _compacting_write(workspace: Path, limit: int = 0, cut: int = 0) -> list[str]:
    """Run the compacting write in a child to the end: what it said, and after how many
    seconds from "go" (seen from here)."""
    with children((COMPACTING_WRITE, (str(workspace), str(limit), str(cut)))) as [child]:
        child.expect("ready")
        started = time.perf_counter()
        child.send("go")
        said = child.readline().strip().split(maxsplit=2)
        return [*said, str(time.perf_counter() - started)]


def _records(workspace: Path) -> dict[str, Record]:
    return {record.id: record for record in decode_store(raw(workspace).decode()).records}


def _holds_the_write_fully(before: dict[str, Record], after: dict[str, Record]) -> None:
    """Every acknowledged record is there (same id, status, family and sources), the new
    version is the one active fact, and every superseded version was compacted."""
    assert set(before) < set(after)
    (new,) = set(after) - set(before)
    assert after[new].status == "active" and after[new].content.startswith("the newest profile")
    for record_id, old in before.items():
        kept = after[record_id]
        assert (kept.root_id, kept.meta.get("source")) == (old.root_id, old.meta.get("source"))
        assert kept.status == "superseded" and not kept.content
        assert TEXT_HASH_FIELD in kept.meta


def test_the_compacting_write_itself_compacts(near_full: bytes, tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, "ws", near_full)
    said = _compacting_write(workspace)
    assert said[0] == "saved", said
    _holds_the_write_fully(_records(_workspace(tmp_path, "old", near_full)), _records(workspace))
    assert len(raw(workspace)) < len(near_full) // 10


@pytest.fixture(scope="module")
def write_seconds(near_full: bytes, tmp_path_factory: pytest.TempPathFactory) -> float:
    """How long the compacting write takes in a child here (from "go" to its answer)."""
    workspace = _workspace(tmp_path_factory.mktemp("timing"), "ws", near_full)
    said = _compacting_write(workspace)
    assert said[0] == "saved", said
    return float(said[-1])


@pytest.fixture(scope="module")
def write_calls(near_full: bytes, tmp_path_factory: pytest.TempPathFactory) -> int:
    """How many file-system calls (:data:`IO_CALLS`) the compacting write makes."""
    workspace = _workspace(tmp_path_factory.mktemp("calls"), "ws", near_full)
    said = _compacting_write(workspace, cut=-1)
    assert said[0] == "saved", said
    return int(said[2].split()[0])


@pytest.mark.parametrize("attempt", range(3))
def test_a_writer_killed_at_a_random_moment_of_a_compacting_write(
    near_full: bytes, write_seconds: float, tmp_path: Path, attempt: int
) -> None:
    # From here, anywhere from before the write starts to just after it ends (a seeded draw
    # per attempt, so a failure can be replayed).
    delay = random.Random(3300 + attempt).uniform(0, write_seconds * 1.2)
    workspace = _workspace(tmp_path, "ws", near_full)
    before = _records(workspace)
    with children((COMPACTING_WRITE, (str(workspace), "0", "0"))) as [child]:
        child.expect("ready")
        child.send("go")
        time.sleep(delay)
        os.kill(child.pid, signal.SIGKILL)
        out, _ = child.process.communicate(timeout=CHILD_TIMEOUT)
    _check_after_a_kill(workspace, near_full, before, out.decode().split())


@pytest.mark.parametrize("attempt", range(6))
def test_a_writer_killed_at_a_random_step_of_a_compacting_write(
    near_full: bytes, write_calls: int, tmp_path: Path, attempt: int
) -> None:
    # Timed kills mostly land between steps; these land on one: the child SIGKILLs itself
    # as it enters its n-th file-system call (first, last, or a seeded draw in between).
    cut = (
        [1, write_calls][attempt]
        if attempt < 2
        else random.Random(33 + attempt).randint(2, write_calls - 1)
    )
    workspace = _workspace(tmp_path, "ws", near_full)
    before = _records(workspace)
    with children((COMPACTING_WRITE, (str(workspace), "0", str(cut)))) as [child]:
        child.expect("ready")
        child.send("go")
        out, _ = child.process.communicate(timeout=CHILD_TIMEOUT)
        assert child.process.returncode == -signal.SIGKILL, out
    _check_after_a_kill(workspace, near_full, before, out.decode().split())


def _check_after_a_kill(
    workspace: Path, near_full: bytes, before: dict[str, Record], said: list[str]
) -> None:
    """The file decodes and holds the write fully or not at all (not at all when it was not
    acknowledged); doctor reads it; the next writer removes any staging file left."""
    after = _records(workspace)  # decodes, or this raises CorruptError
    if raw(workspace) == near_full:
        assert not said, said
    else:
        _holds_the_write_fully(before, after)
    assert RecordStore(workspace, capacity=MIB).doctor().error is None
    RecordStore(workspace, capacity=MIB).save([manual("written after the crash")])
    assert not _staging(workspace)


def test_a_disk_full_during_a_compacting_write_keeps_the_old_file(
    near_full: bytes, tmp_path: Path
) -> None:
    reference = _workspace(tmp_path, "reference", near_full)
    assert _compacting_write(reference)[0] == "saved"
    new_size = len(raw(reference))

    workspace = _workspace(tmp_path, "ws", near_full)
    # Below the compacted file's size: all but its last 64 bytes can be written.
    said = _compacting_write(workspace, limit=new_size - 64)
    assert said[:3] == ["error", "storage", Messages.SAVE_FAILED], said
    assert raw(workspace) == near_full
    assert not _staging(workspace)
    assert RecordStore(workspace, capacity=MIB).doctor().ok


def test_a_hand_edit_that_broke_a_record_is_never_compacted_over(
    near_full: bytes, tmp_path: Path
) -> None:
    broken = near_full.replace(b"profile 3 ", b"profile 3! ", 1)
    workspace = _workspace(tmp_path, "ws", broken)
    said = _compacting_write(workspace)
    assert said[:3] == ["error", "corrupt", Messages.EDITED], said
    assert raw(workspace) == broken
    assert not _staging(workspace)


MERGE = """
import sys
from pathlib import Path
from memquill import RecordStore
from memquill.errors import MemoryRecordError

store = RecordStore(sys.argv[1], capacity=1024 * 1024, lock_timeout=30)
try:
    result = store.merge(Path(sys.argv[2]).read_bytes())
except MemoryRecordError as error:
    print("error", error.code, error.message, flush=True)
else:
    print("merged", result.write.status, flush=True)
"""


def _compacted_with_facts(root: Path, name: str, near_full: bytes, facts: int) -> Path:
    """The near-full store after its compacting write, then ``facts`` new 16,000-character
    facts of its own (nothing left to compact: its history holds no text)."""
    workspace = _workspace(root, name, near_full)
    assert _compacting_write(workspace)[0] == "saved"
    store = RecordStore(workspace, capacity=MIB)
    store.save(
        [manual(f"fact {n} only in {name}".ljust(TEXT, "t"), f"{name}-{n}") for n in range(facts)]
    )
    return workspace


@pytest.mark.parametrize("facts", [20, 34], ids=["fits", "too-big"])
def test_a_merge_of_two_copies_near_capacity_is_all_or_nothing(
    near_full: bytes, tmp_path: Path, facts: int
) -> None:
    # Both machines compacted the same history; each then saved facts of its own. With 20
    # each, the union fits in 1 MiB; with 34 each (over 1 MiB together) it cannot, even with
    # every old version's text dropped.
    here = _compacted_with_facts(tmp_path, "here", near_full, facts)
    there = _compacted_with_facts(tmp_path, "there", near_full, facts)
    before = raw(here)
    theirs = tmp_path / "theirs.md"
    shutil.copyfile(records_path(there), theirs)

    with children((MERGE, (str(here), str(theirs)))) as [child]:
        said = child.readline().strip().split(maxsplit=2)
    if facts > 20:
        assert said[:2] == ["error", "capacity"], said
        assert raw(here) == before
    else:
        assert said == ["merged", "saved"], said
        ours = {record.id for record in decode_store(before.decode()).records}
        assert ours | set(_records(there)) <= set(_records(here))
        assert len(raw(here)) <= MIB
    assert not _staging(here)
