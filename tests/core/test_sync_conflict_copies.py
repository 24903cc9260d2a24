"""Conflict copies a file-sync tool leaves beside ``records.md``: noticed, never served, resolved.

Two machines share one record key (as a person sets it up) and each writes its own
``records.md``; the second machine's file then lands beside the first's under the name the
sync tool gives a conflict copy, exactly as Syncthing, Dropbox, Nextcloud/ownCloud or OneDrive
would leave it. ``search``, ``doctor`` and ``sync status`` name it, ``get`` refuses it, and
``memquill sync resolve`` (the real command) merges it, after a backup, and removes it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.core.sync_helpers import MEMQUILL, base_environment, run

from memquill import MemoryToolset, RecordStore, open_session
from memquill.private_paths import is_private
from memquill.store._record_key import RecordKey
from memquill.store._results import Candidate

SYNCTHING = "records.sync-conflict-20260301-120000-ABCDEFG.md"
COPIES = (
    SYNCTHING,
    "records (laptop's conflicted copy 2026-03-01).md",  # Dropbox
    "records (conflicted copy 2026-03-01 120000).md",  # Nextcloud, ownCloud
    "records_conflict-20260301-120000.md",  # older ownCloud
    "records-LAPTOP.md",  # OneDrive
)


class Machines:
    """Two workspaces with one key: ``here`` holds ``records.md``, ``there`` the other copy."""

    def __init__(self, root: Path) -> None:
        self.env = base_environment(root / "home", root / "data")
        key = RecordKey(root / "data" / "memquill")
        self.here_path, self.there_path = root / "here", root / "there"
        self.here_path.mkdir()
        self.there_path.mkdir()
        self.here = RecordStore(self.here_path, record_key=key)
        self.there = RecordStore(self.there_path, record_key=key)
        self.env["MEMQUILL_WORKSPACE"] = str(self.here_path)

    def save(self, store: RecordStore, text: str) -> str:
        result = store.save([Candidate(text, {"kind": "manual"}, f"manual:{text}")])
        assert result.record_id is not None
        return result.record_id

    def diverge(self) -> None:
        """Both had one fact; each then wrote alone (the sync tool was offline)."""
        self.save(self.here, "the deploy window is Tuesday")
        (self.there_path / "memory").mkdir()
        (self.there_path / "memory" / "records.md").write_bytes(self.raw())
        self.save(self.here, "fact from here")
        self.save(self.there, "fact from there")
        target = self.there.snapshot().records[0].id
        self.there.revoke(target, self.there.snapshot().revision)

    def raw(self) -> bytes:
        return (self.here_path / "memory" / "records.md").read_bytes()

    def leave_copy(self, name: str) -> Path:
        copy = self.here_path / "memory" / name
        copy.write_bytes((self.there_path / "memory" / "records.md").read_bytes())
        return copy

    def memquill(self, *args: str, check: bool = True):
        return run([MEMQUILL, *args], self.here_path, self.env, check=check)


@pytest.fixture
def machines(tmp_path: Path) -> Machines:
    return Machines(tmp_path)


@pytest.mark.parametrize("name", COPIES)
def test_every_tools_conflict_copy_is_noticed_and_private(machines: Machines, name: str) -> None:
    machines.diverge()
    machines.leave_copy(name)
    assert is_private(f"memory/{name}")
    session = open_session(machines.here_path, access="read")
    tools = MemoryToolset(session)
    found = tools.call("memory_search", {"query": "fact"})
    assert f"Memory conflict copies wait: memory/{name}." in found.text
    assert "fact from there" not in found.text  # its facts are not served
    refused = tools.call("memory_get", {"file_path": f"memory/{name}"})
    assert refused.is_error and "internal memory history" in refused.text
    report = session.store.doctor()
    assert report.conflict_copies == (f"memory/{name}",) and not report.ok


def test_sync_resolve_merges_a_syncthing_copy_after_a_backup(machines: Machines) -> None:
    machines.diverge()
    before = machines.raw()
    copy = machines.leave_copy(SYNCTHING)
    status = machines.memquill("sync", "status").stdout
    assert f"conflict copy memory/{SYNCTHING}" in status
    assert "problems found" in machines.memquill("doctor", check=False).stdout

    done = json.loads(machines.memquill("sync", "resolve", "--json").stdout)
    assert [c["path"] for c in done["copies"]] == [f"memory/{SYNCTHING}"]
    assert done["copies"][0]["merged"] and done["copies"][0]["report"]["added"] == 1
    assert not copy.exists()
    backup = machines.here_path / done["backup"]
    assert backup.read_bytes() == before and backup.stat().st_mode & 0o777 == 0o600
    texts = {r.content for r in machines.here.snapshot().records if r.status == "active"}
    assert texts == {"fact from here", "fact from there"}  # and the forgotten one stays gone
    assert b"deploy window" not in machines.raw()
    assert machines.memquill("doctor").stdout.rstrip().endswith("healthy")
    again = machines.memquill("sync", "resolve").stdout
    assert "no conflict copies" in again


def test_a_copy_merged_before_a_crash_is_removed_on_the_next_resolve(machines: Machines) -> None:
    machines.diverge()
    copy = machines.leave_copy(SYNCTHING)
    machines.here.merge(copy.read_bytes())  # merged; killed before the copy was removed
    merged = machines.raw()
    report = machines.here.resolve_conflict_copies()
    assert report.backup is None  # nothing changed, so nothing to back up
    assert report.copies[0].report is not None and not copy.exists()
    assert machines.raw() == merged


def test_a_copy_that_is_not_a_records_file_is_left_with_the_reason(machines: Machines) -> None:
    machines.diverge()
    copy = machines.here_path / "memory" / "records-LAPTOP.md"
    copy.write_text("my own notes about records\n")
    done = machines.memquill("sync", "resolve", check=False)
    assert done.returncode == 1
    assert "left memory/records-LAPTOP.md: The other copy of records.md is not" in done.stdout
    assert copy.exists()


def test_a_symlinked_copy_is_not_followed(machines: Machines, tmp_path: Path) -> None:
    machines.diverge()
    outside = tmp_path / "outside.md"
    outside.write_bytes((machines.there_path / "memory" / "records.md").read_bytes())
    link = machines.here_path / "memory" / SYNCTHING
    link.symlink_to(outside)
    before = machines.raw()
    report = machines.here.resolve_conflict_copies()
    assert report.copies[0].report is None and link.is_symlink()
    assert machines.raw() == before
