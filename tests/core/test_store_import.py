"""``export`` → edit by hand → ``import``, on the workspace file and on PostgreSQL.

An edit that changes a fact's length leaves its ``contentLength`` wrong; ``import`` reads the
copy as ``doctor --fix`` reads a hand-edited file and keeps each edit as a new version with
source ``manual``, after a backup of the records it replaces, in one validated write.
``import --dry-run`` shows the same plan and writes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.core.conftest import Backing
from tests.core.store_helpers import manual

from memquill import RecordStore
from memquill.errors import ERRORS, Messages
from memquill.store._codec import decode_store
from memquill.store._results import Candidate

MEMQUILL = str(Path(sys.executable).parent / "memquill")


def run(
    backing: Backing, tmp_path: Path, *args: str, status: int = 0
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMQUILL_", "XDG_"))}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), MEMQUILL_DISABLE_PLUGIN_AUTOLOAD="1")
    if backing.location is not None:
        env["MEMQUILL_STORE"] = backing.location
    done = subprocess.run(
        [MEMQUILL, "--workspace", str(backing.workspace), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == status, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture
def store(backing: Backing, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RecordStore:
    # The same record key as the commands' (their data folder is the test's).
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return backing.store()


def seed(store: RecordStore) -> None:
    port = "The staging server listens on port 5434."
    store.save([Candidate(port, {"kind": "manual"}, "op-port", "infra/staging-port")])
    store.save([manual("Stand-up is at 9:30.")])
    plan = store.save([manual("A secret plan.")])
    store.revoke(plan.record_id or "", plan.revision)


def test_an_export_edited_by_hand_imports_as_new_versions_after_a_backup(
    backing: Backing, store: RecordStore, tmp_path: Path
) -> None:
    seed(store)
    copy = tmp_path / "records.md"
    run(backing, tmp_path, "export", "--output", str(copy))
    exported = copy.read_bytes()
    assert exported == backing.raw()
    old = store.find_key("infra/staging-port")
    assert old is not None
    # The edit changes the fact's length, so its contentLength is wrong now.
    edited = exported.replace(b"port 5434.", b"port 15434 (moved in May).")
    copy.write_bytes(edited)
    revision = store.snapshot().revision
    before = backing.image()
    sentence = (
        f"record 1 (id {old.id[:8]}…): its edited text becomes a new version with source "
        "manual, and the old version is marked superseded"
    )
    dry = run(backing, tmp_path, "import", "--dry-run", "--revision", revision[:12], str(copy))
    assert dry.stdout == (
        f"import would write a backup of the records, then:\n  - {sentence}\n"
        f"store revision {revision}\n"
    )
    assert backing.image() == before  # a dry run writes nothing

    done = run(backing, tmp_path, "import", "--revision", revision[:12], str(copy), "--json")
    result = json.loads(done.stdout)
    assert result["status"] == "saved" and result["changes"] == [sentence]
    backup = backing.workspace / result["backup"]
    assert result["backup"].startswith("memory/.records-backup-")
    assert backup.read_bytes() == exported  # the records as they were, first
    assert backup.stat().st_mode & 0o777 == 0o600

    snapshot = store.snapshot()
    assert snapshot.revision == result["revision"]
    current = snapshot.by_key("infra/staging-port")
    assert current is not None and current.id != old.id
    assert current.content == "The staging server listens on port 15434 (moved in May)."
    assert current.supersedes == old.id and current.root_id == old.root_id
    assert current.source["kind"] == "manual" and "capturedAt" in current.source
    superseded = snapshot.find(old.id)
    assert superseded is not None and superseded.status == "superseded"
    assert superseded.content == old.content  # kept, as a correction keeps it
    assert [r.status for r in snapshot.records] == ["superseded", "active", "revoked", "active"]
    assert b"secret plan" not in backing.raw()
    doctor = run(backing, tmp_path, "doctor")
    assert "store: ok (2 active, 1 revoked, 1 superseded)" in doctor.stdout

    # The same copy again would undo that: its record 1 is superseded in the store now.
    before = backing.image()
    again = run(
        backing,
        tmp_path,
        "import",
        "--revision",
        snapshot.revision,
        str(copy),
        status=ERRORS["invalid"].exit_status,
    )
    assert again.stderr == f"error[invalid]: {Messages.IMPORT_CHANGES_HISTORY}\n"
    assert backing.image() == before


def test_a_copy_that_cannot_be_read_without_guessing_names_the_record_and_changes_nothing(
    backing: Backing, store: RecordStore, tmp_path: Path
) -> None:
    seed(store)
    copy = tmp_path / "records.md"
    exported = store.export()
    revision = store.snapshot().revision
    before = backing.image()
    broken = exported.replace(b'{"id"', b'{id"', 1).replace(b"port 5434.", b"port 15434.")
    copy.write_bytes(broken)
    for extra in ((), ("--dry-run",)):
        done = run(
            backing,
            tmp_path,
            "import",
            *extra,
            "--revision",
            revision,
            str(copy),
            status=ERRORS["corrupt"].exit_status,
        )
        reason = "record 1: its marker line is not a JSON object memquill can read"
        # No hint to run doctor: doctor checks the store, which is fine.
        assert done.stderr == (
            f"error[corrupt]: {Messages.IMPORT_UNREADABLE.format(reason=reason)}\n"
        )
    assert backing.image() == before


def test_edits_to_history_are_refused_and_line_endings_are_forgiven(
    backing: Backing, store: RecordStore, tmp_path: Path
) -> None:
    saved = store.save([manual("Lunch is at noon.")])
    store.correct(saved.record_id or "", "Lunch is at one.", saved.revision)
    copy = tmp_path / "records.md"
    exported = store.export()
    revision = store.snapshot().revision
    before = backing.image()
    copy.write_bytes(exported.replace(b"Lunch is at noon.", b"Lunch is at 11:45 sharp."))
    refused = run(
        backing,
        tmp_path,
        "import",
        "--revision",
        revision,
        str(copy),
        status=ERRORS["invalid"].exit_status,
    )
    assert refused.stderr == f"error[invalid]: {Messages.IMPORT_CHANGES_HISTORY}\n"
    assert backing.image() == before
    # An editor that turned every line ending into CRLF changed nothing a person meant.
    copy.write_bytes(exported.replace(b"\n", b"\r\n"))
    same = run(backing, tmp_path, "import", "--revision", revision, str(copy))
    assert same.stdout == f"duplicate: store revision {revision}\n"
    assert backing.image() == before


def test_the_store_plans_and_applies_the_same_change(backing: Backing, store: RecordStore) -> None:
    seed(store)
    exported = store.export()
    edited = exported.replace(b"Stand-up is at 9:30.", b"Stand-up is at 9:15, on Zoom.")
    snapshot = store.snapshot()
    plan = store.plan_import(edited, snapshot.revision)
    assert len(plan.changes) == 1 and plan.revision == snapshot.revision
    assert store.snapshot() == snapshot
    result = store.replace(edited, snapshot.revision)
    assert result.status == "saved" and result.backup is not None
    contents = [r.content for r in decode_store(backing.raw().decode()).records]
    assert contents[-1] == "Stand-up is at 9:15, on Zoom."
    assert [r.content for r in plan.records][-1] == contents[-1]
    # Unchanged: nothing to plan, and the import is a duplicate without a backup.
    now = store.snapshot()
    assert store.plan_import(store.export()).changes == ()
    unchanged = store.replace(store.export(), now.revision)
    assert (unchanged.status, unchanged.backup) == ("duplicate", None)
