"""``forget_current``: a forget for callers with no revision of their own (the item store's
``delete``, ADK's ``delete_memory``), which reads the revision itself and, when another writer
moves the fact between its read and its forget, reads again. The other writer is a real
``memquill update`` process, run by the host's write check, which every write asks after the
read and before the store is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.core.cli_helpers import cli_env, run_cli

from memquill import ConflictError, MemorySession, NotFoundError, WriteSource, remember
from memquill.store._backend import FileBackend
from memquill.store._record import FactKey
from memquill.store._results import Snapshot
from memquill.store._store import RecordStore
from memquill.tools._writes import forget_current

KEY = "deploy/day"
SOURCE = WriteSource("tool", session_id="s")


class SecondWriter:
    """The host's write check: for its first ``times`` calls once armed, another process
    corrects the fact named ``KEY`` before the write goes on."""

    def __init__(self, workspace: Path, tmp_path: Path, times: int) -> None:
        self.env = cli_env(tmp_path)
        self.env["MEMQUILL_WORKSPACE"] = str(workspace)
        self.times = times
        self.armed = False
        self.asked = 0
        self.corrections = 0

    def __call__(self) -> bool:
        if self.armed:
            self.asked += 1
            if self.corrections < self.times:
                self.corrections += 1
                text = f"Deploys happen on day {self.corrections}"
                done = run_cli(self.env, "update", KEY, text)
                assert done.returncode == 0, done.stderr
        return True


def _session(tmp_path: Path, times: int) -> tuple[MemorySession, SecondWriter, str]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    writer = SecondWriter(workspace, tmp_path, times)
    session = MemorySession(workspace, "s", "read_write", authorize_write=writer)
    saved = remember(session, "Deploys happen on Tuesdays", source=SOURCE, key=KEY)
    assert saved.record_id is not None
    writer.armed = True
    return session, writer, saved.record_id


def test_a_correction_between_the_read_and_the_forget_is_read_again_and_forgotten(
    tmp_path: Path,
) -> None:
    session, writer, _ = _session(tmp_path, times=1)

    outcome = forget_current(session, FactKey(KEY), source=SOURCE)

    assert outcome is not None and outcome.status == "saved"
    assert writer.asked == 2  # the first forget met the correction, the second forgot it
    snapshot = RecordStore(session.workspace).snapshot()
    assert snapshot.by_key(KEY) is None
    # The version forgotten is the other writer's correction, and no text of the fact is left.
    corrected = snapshot.find(outcome.record_id or "")
    assert corrected is not None and corrected.status == "revoked"
    records = (session.workspace / "memory" / "records.md").read_text(encoding="utf-8")
    assert "Deploys happen" not in records


def test_a_fact_that_keeps_moving_is_a_conflict_after_eight_attempts(tmp_path: Path) -> None:
    session, writer, _ = _session(tmp_path, times=8)

    with pytest.raises(ConflictError):
        forget_current(session, FactKey(KEY), source=SOURCE)

    assert writer.asked == 8
    assert RecordStore(session.workspace).snapshot().by_key(KEY) is not None


def test_nothing_to_forget_writes_nothing(tmp_path: Path) -> None:
    session, writer, _ = _session(tmp_path, times=0)
    before = RecordStore(session.workspace).snapshot().revision

    assert forget_current(session, FactKey("deploy/other"), source=SOURCE) is None
    assert forget_current(session, "0" * 36, source=SOURCE) is None

    assert writer.asked == 0
    assert RecordStore(session.workspace).snapshot().revision == before


def test_a_version_named_by_id_and_corrected_meanwhile_is_not_found(tmp_path: Path) -> None:
    # An id names one version: once corrected, the forget names the current one instead of
    # forgetting a fact the caller never read.
    session, writer, first_id = _session(tmp_path, times=1)

    with pytest.raises(NotFoundError, match="was corrected; its current version is"):
        forget_current(session, first_id, source=SOURCE)

    assert writer.asked == 1
    assert RecordStore(session.workspace).snapshot().by_key(KEY) is not None


def test_a_fact_this_session_wrote_is_forgotten_without_reading_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A framework's put and delete in turn: the delete looks at the store as the put left it.
    session, _, _ = _session(tmp_path, times=0)
    reads: list[str] = []
    real = FileBackend.snapshot

    def counted(backend: FileBackend) -> Snapshot:
        reads.append("read")
        return real(backend)

    monkeypatch.setattr(FileBackend, "snapshot", counted)
    outcome = forget_current(session, FactKey(KEY), source=SOURCE)

    assert outcome is not None and outcome.status == "saved"
    assert reads == []
    assert RecordStore(session.workspace).snapshot().by_key(KEY) is None


def test_a_fact_another_process_changed_since_is_read_again_and_forgotten(
    tmp_path: Path,
) -> None:
    # The session last saw the first version; another process corrected it, then saved a
    # fact the session never saw. Both are forgotten as they stand.
    session, writer, _ = _session(tmp_path, times=0)
    assert run_cli(writer.env, "update", KEY, "Deploys happen on Fridays").returncode == 0
    added = run_cli(writer.env, "remember", "Releases ship monthly", "--key", "release/cadence")
    assert added.returncode == 0, added.stderr

    moved = forget_current(session, FactKey(KEY), source=SOURCE)
    unseen = forget_current(session, FactKey("release/cadence"), source=SOURCE)

    assert moved is not None and moved.status == "saved"
    assert unseen is not None and unseen.status == "saved"
    snapshot = RecordStore(session.workspace).snapshot()
    assert snapshot.by_key(KEY) is None and snapshot.by_key("release/cadence") is None
    records = (session.workspace / "memory" / "records.md").read_text(encoding="utf-8")
    assert "Fridays" not in records and "monthly" not in records
