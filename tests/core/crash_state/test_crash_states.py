"""Durability against power loss: every state a power cut may leave, opened and checked.

A process killed with ``kill -9`` never loses the page cache, so tests that kill writers cannot
catch a missing or misordered fsync. Here each operation — a remember, an update, a forget, a
write that compacts a store at its capacity, a sync merge — runs under a recorder of its
``os`` calls; a file-system model (:mod:`tests.core.crash_state.model`, the rules are in its
docstring and in ``docs/security.md``) builds, for every cut point, the states a power cut may
leave, and :mod:`tests.core.crash_state.checker` opens each one as the next process would.

Each scenario ends with a second, small remember, so the first write's promises are also checked
at every cut of the write that follows it. The tests do not know how the store writes: a path
that appends to ``records.md`` is checked by the same rules (a torn tail must decode without it
or be named by ``doctor`` and repaired by ``doctor --fix``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from tests.core.crash_state.checker import (
    Outcome,
    Recorded,
    Step,
    active,
    all_of,
    check_scenario,
    corrected,
    gone,
    record_scenario,
)
from tests.core.crash_state.recorder import Call
from tests.core.store_helpers import manual

from memquill import RecordStore
from memquill.store._capacity import MIB
from memquill.store._results import Snapshot

LATER = "A later fact: the staging server is called kestrel."


def later() -> Step:
    """The write after the operation under test: its crash states must keep that operation."""
    return Step("later remember", lambda store: store.save([manual(LATER)]), active(LATER))


def run(recorded: Recorded, tmp_path: Path, name: str) -> Outcome:
    scratch = tmp_path / "states"
    scratch.mkdir()
    outcome = check_scenario(recorded, scratch)
    print(outcome.summary(name))
    return outcome


def expect_every_promise(outcome: Outcome, recorded: Recorded) -> None:
    assert not outcome.problems, "\n".join(outcome.problems[:8])
    writes_in_place = any(
        call.op == "open"
        and call.path is not None
        and call.path.endswith(os.sep + "records.md")
        and call.flags & (os.O_WRONLY | os.O_RDWR)
        for call in recorded.calls
    )
    if not writes_in_place:
        # Only complete, synced files are renamed into place: no state may need a repair.
        assert outcome.repaired == 0


def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def saved_then_corrected(here: Path, old: str, new: str) -> Step:
    """``old`` saved in ``here`` now; the step that corrects it to ``new`` (an update)."""
    saved = RecordStore(here).save([manual(old)])
    record_id = saved.targets[0].record_id
    assert record_id is not None

    def update(store: RecordStore) -> object:
        return store.correct(record_id, new, store.snapshot().revision)

    return Step("update", update, corrected(old, new))


# -- the five operations -----------------------------------------------------------------------


def test_a_remember_survives_every_power_cut(tmp_path: Path) -> None:
    here = workspace(tmp_path)
    RecordStore(here).save([manual("Deploys happen on Tuesdays.")])
    fact = "The build cache lives in /var/cache/ci."
    steps = [
        Step("remember", lambda store: store.save([manual(fact)]), active(fact)),
        later(),
    ]
    recorded = record_scenario(here, steps)
    expect_every_promise(run(recorded, tmp_path, "remember"), recorded)


def test_a_first_remember_in_a_new_workspace_survives_every_power_cut(tmp_path: Path) -> None:
    """``memory/`` is an entry of the workspace folder: until that folder is synced, a power cut
    may take it away with the acknowledged fact inside."""
    here = workspace(tmp_path)
    fact = "The first fact of a new workspace."
    steps = [Step("first remember", lambda store: store.save([manual(fact)]), active(fact))]
    recorded = record_scenario(here, steps)
    expect_every_promise(run(recorded, tmp_path, "first remember"), recorded)


def test_an_update_survives_every_power_cut(tmp_path: Path) -> None:
    here = workspace(tmp_path)
    old, new = "The on-call rota changes on Mondays.", "The on-call rota changes on Fridays."
    steps = [saved_then_corrected(here, old, new), later()]
    recorded = record_scenario(here, steps)
    expect_every_promise(run(recorded, tmp_path, "update"), recorded)


def test_an_appended_correction_survives_every_power_cut(tmp_path: Path) -> None:
    """A fact corrected once is in a v2 file: its next correction is an append."""
    here = workspace(tmp_path)
    first, old, new = "Standup at 9:00.", "Standup at 9:15.", "Standup at 9:30."
    store = RecordStore(here)
    saved = store.save([manual(first)])
    record_id = saved.targets[0].record_id
    assert record_id is not None
    store.correct(record_id, old, store.snapshot().revision)
    current = store.snapshot().records[-1].id

    def update(store: RecordStore) -> object:
        return store.correct(current, new, store.snapshot().revision)

    steps = [Step("appended update", update, corrected(old, new)), later()]
    recorded = record_scenario(here, steps)
    assert not any(call.op == "rename" for call in recorded.calls), "the correction rewrote"
    expect_every_promise(run(recorded, tmp_path, "appended update"), recorded)


def test_a_forget_survives_every_power_cut(tmp_path: Path) -> None:
    here = workspace(tmp_path)
    first, second = "The vault PIN hint is heron-42.", "The vault PIN hint is osprey-77."
    store = RecordStore(here)
    store.save([manual("Deploys happen on Tuesdays.")])
    saved = store.save([manual(first)])
    record_id = saved.targets[0].record_id
    assert record_id is not None
    store.correct(record_id, second, store.snapshot().revision)

    def forget(store: RecordStore) -> object:
        return store.revoke(record_id, store.snapshot().revision)

    promise = all_of(gone(first), gone(second), active("Deploys happen on Tuesdays."))
    steps = [Step("forget", forget, promise, forgets=(first, second)), later()]
    recorded = record_scenario(here, steps)
    expect_every_promise(run(recorded, tmp_path, "forget"), recorded)


def filled_to_capacity(here: Path) -> tuple[str, str]:
    """A 1 MiB store whose next correction only fits once old versions' text is dropped: the id
    of the fact to correct, and the text of the version it holds now."""
    store = RecordStore(here, capacity=MIB)
    text = "version {:03} of the long runbook. " + "x" * 15_000
    saved = store.save([manual(text.format(0), key="runbook")])
    record_id = saved.targets[0].record_id
    assert record_id is not None
    version = 0
    while os.path.getsize(here / "memory" / "records.md") < MIB - 20_000:
        version += 1
        store.correct(record_id, text.format(version), store.snapshot().revision)
    return record_id, text.format(version + 1)


@pytest.mark.slow  # a 1 MiB store, written out for each of ~80 states
def test_an_automatic_compaction_survives_every_power_cut(tmp_path: Path) -> None:
    here = workspace(tmp_path)
    record_id, new = filled_to_capacity(here)
    size_before = os.path.getsize(here / "memory" / "records.md")

    def update(store: RecordStore) -> object:
        return store.correct(record_id, new, store.snapshot().revision)

    steps = [Step("compacting update", update, active(new)), later()]
    recorded = record_scenario(here, steps, capacity=MIB)
    compacted = recorded.versions[1]
    assert sum(len(record.content) for record in compacted) < size_before // 4, (
        "the traced write did not compact"
    )
    expect_every_promise(run(recorded, tmp_path, "automatic compaction"), recorded)


def test_a_merge_survives_every_power_cut(tmp_path: Path) -> None:
    here = workspace(tmp_path)
    there = tmp_path / "there"
    there.mkdir()
    RecordStore(here).save([manual("Deploys happen on Tuesdays.")])
    theirs = "Their machine knows the VPN is split-tunnel."
    RecordStore(there).save([manual(theirs), manual("The printer is on floor 3.")])
    copy = (there / "memory" / "records.md").read_bytes()
    promise = all_of(active(theirs), active("Deploys happen on Tuesdays."))
    steps = [Step("merge", lambda store: store.merge(copy), promise), later()]
    recorded = record_scenario(here, steps)
    expect_every_promise(run(recorded, tmp_path, "merge"), recorded)


def test_resolving_a_conflict_copy_survives_every_power_cut(tmp_path: Path) -> None:
    """``sync resolve`` writes a backup, merges the copy and removes it only once the merged file
    is durable: at no cut may the copy's facts be in neither."""
    here = workspace(tmp_path)
    there = tmp_path / "there"
    there.mkdir()
    RecordStore(here).save([manual("Deploys happen on Tuesdays.")])
    theirs = "Their machine knows the VPN is split-tunnel."
    RecordStore(there).save([manual(theirs)])
    copy = "memory/records.sync-conflict-20260301-120000-ABCDEFG.md"
    (here / copy).write_bytes((there / "memory" / "records.md").read_bytes())

    def kept(snapshot: Snapshot, files: Mapping[str, bytes]) -> str | None:
        if active(theirs)(snapshot) is None or theirs.encode() in files.get(copy, b""):
            return None
        return "the copy's fact is neither merged nor in the copy"

    def resolve(store: RecordStore) -> object:
        return store.resolve_conflict_copies()

    promise = all_of(active(theirs), active("Deploys happen on Tuesdays."))
    steps = [Step("resolve", resolve, promise, always=kept), later()]
    recorded = record_scenario(here, steps)
    assert any(call.op == "link" for call in recorded.calls), "no backup was written"
    expect_every_promise(run(recorded, tmp_path, "resolve"), recorded)


# -- the checker can fail -----------------------------------------------------------------------


def broken(drop: Callable[[Call], bool], tmp_path: Path) -> Outcome:
    """A correction (a rewrite: staging file, rename, folder fsync) with some calls dropped."""
    here = workspace(tmp_path)
    old, new = "The build cache lives in /var/cache/ci.", "The build cache lives in /srv/ci."
    recorded = record_scenario(here, [saved_then_corrected(here, old, new)], drop=drop)
    return run(recorded, tmp_path, "broken update")


def broken_append(drop: Callable[[Call], bool], tmp_path: Path) -> Outcome:
    """A remember (an append to ``records.md``) with some calls dropped."""
    here = workspace(tmp_path)
    RecordStore(here).save([manual("Deploys happen on Tuesdays.")])
    fact = "The build cache lives in /var/cache/ci."
    steps = [Step("remember", lambda store: store.save([manual(fact)]), active(fact))]
    recorded = record_scenario(here, steps, drop=drop)
    return run(recorded, tmp_path, "broken remember")


def lost(outcome: Outcome, operation: str) -> list[str]:
    found = [line for line in outcome.problems if f"lost an acknowledged {operation}" in line]
    print("\n".join(found[:1] + [line for line in outcome.problems if "lost 1" in line][:1]))
    return found


def test_the_checker_catches_a_missing_folder_fsync(tmp_path: Path) -> None:
    memory = os.path.realpath(tmp_path / "workspace" / "memory")
    outcome = broken(lambda call: call.op == "fsync" and call.path == memory, tmp_path)
    assert lost(outcome, "update")


def test_the_checker_catches_a_missing_staging_fsync(tmp_path: Path) -> None:
    def staging(call: Call) -> bool:
        name = os.path.basename(call.path or "")
        return call.op == "fsync" and name.startswith(".records-") and name.endswith(".tmp")

    assert lost(broken(staging, tmp_path), "update")


def test_the_checker_catches_a_missing_append_fsync(tmp_path: Path) -> None:
    records = os.path.realpath(tmp_path / "workspace" / "memory" / "records.md")
    outcome = broken_append(lambda call: call.op == "fsync" and call.path == records, tmp_path)
    assert lost(outcome, "remember")


@pytest.mark.parametrize("op", ["write", "fsync"])
def test_the_recorder_sees_the_write_path(tmp_path: Path, op: str) -> None:
    """A recorder that saw nothing would make every state trivially fine."""
    here = workspace(tmp_path)
    steps = [Step("remember", lambda store: store.save([manual("A fact.")]), active("A fact."))]
    recorded = record_scenario(here, steps)
    assert any(call.op == op for call in recorded.calls), recorded.calls
