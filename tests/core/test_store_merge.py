"""``RecordStore.merge`` is a store write: the writer lock, compare-and-swap, atomic replace.

Real processes: a writer paused inside its transaction (holding the lock, its staged file
written) makes a merge wait or fail ``busy`` with nothing changed, and neither loses a fact once
both finish; a merge killed with SIGKILL right before its rename leaves the old file intact.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tests.core.store_helpers import PAUSE_BEFORE_RENAME, children, manual, raw

from memquill import RecordStore
from memquill.errors import BusyError, ConflictError
from memquill.store._merge import MergeResult, merge_files

PAUSED_MERGE = """
import os, sys
from pathlib import Path
from memquill import RecordStore

real_replace = os.replace

def paused_replace(src, dst, *args, **kwargs):
    if str(src).endswith(".tmp"):
        print("staged", src, flush=True)
        if sys.stdin.readline().strip() != "go":
            raise SystemExit(3)
    return real_replace(src, dst, *args, **kwargs)

os.replace = paused_replace
store = RecordStore(sys.argv[1], lock_timeout=30)
result = store.merge(Path(sys.argv[2]).read_bytes())
print("merged", result.write.status, flush=True)
"""


@pytest.fixture
def workspaces(tmp_path: Path) -> tuple[Path, Path]:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    RecordStore(here).save([manual("shared fact")])
    (there / "memory").mkdir()
    (there / "memory" / "records.md").write_bytes(raw(here))
    RecordStore(there).save([manual("fact from there")])
    return here, there


def test_a_merge_waits_for_the_writer_and_neither_loses_a_fact(
    workspaces: tuple[Path, Path],
) -> None:
    here, there = workspaces
    theirs = raw(there)
    with children((PAUSE_BEFORE_RENAME, (str(here), "fact from a writer here"))) as [writer]:
        writer.expect("staged")
        before = raw(here)
        with pytest.raises(BusyError):
            RecordStore(here, lock_timeout=0.2).merge(theirs)
        assert raw(here) == before
        answers: list[MergeResult] = []
        waiting = threading.Thread(
            target=lambda: answers.append(RecordStore(here, lock_timeout=30).merge(theirs))
        )
        waiting.start()
        writer.send("go")
        writer.expect("saved")
        waiting.join(60)
        writer.finish()
    assert answers and answers[0].write.status == "saved"
    texts = {r.content for r in RecordStore(here).snapshot().records}
    assert texts == {"shared fact", "fact from there", "fact from a writer here"}


def test_a_merge_killed_before_its_rename_leaves_the_old_file(
    workspaces: tuple[Path, Path],
) -> None:
    here, there = workspaces
    before = raw(here)
    with children((PAUSED_MERGE, (str(here), str(there / "memory" / "records.md")))) as [merge]:
        merge.expect("staged")
        merge.kill()
    assert raw(here) == before
    staged = list((here / "memory").glob(".records-*.tmp"))
    assert staged  # the killed merge's staging file, removed by the next writer
    RecordStore(here).merge(raw(there))
    assert not list((here / "memory").glob(".records-*.tmp"))
    assert raw(here) == merge_files(b"", before, raw(there))[0]


def test_a_stale_expected_revision_is_a_conflict(workspaces: tuple[Path, Path]) -> None:
    here, there = workspaces
    store = RecordStore(here)
    stale = store.snapshot().revision
    store.save([manual("one more")])
    before = raw(here)
    with pytest.raises(ConflictError):
        store.merge(raw(there), expected_revision=stale)
    assert raw(here) == before
