"""The ``memquill`` command end to end, through the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.core.store_helpers import manual, raw, records_path, tree

from memquill import RecordStore
from memquill.errors import ERRORS, Messages
from memquill.store._codec import HEADER, MAX_STORE_BYTES, StoreImage, encode_store
from memquill.store._record import JSONValue, Record
from memquill.store._secrets import secret_message

MEMQUILL = str(Path(sys.executable).parent / "memquill")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """An environment whose home and data folders are private to the test."""
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("MEMQUILL_", "XDG_"))
    }
    environment.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        MEMQUILL_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    return environment


@pytest.fixture
def workspace(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    env["MEMQUILL_WORKSPACE"] = str(path)
    return path


def memquill(
    env: dict[str, str], *args: str, status: int = 0, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [MEMQUILL, *args], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )
    assert done.returncode == status, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def as_json(env: dict[str, str], *args: str) -> Any:
    return json.loads(memquill(env, *args, "--json").stdout)


def fails(
    env: dict[str, str], code: str, message: str, *args: str, cwd: Path | None = None
) -> None:
    done = memquill(env, *args, status=ERRORS[code].exit_status, cwd=cwd)
    # A corrupt store also says what to run about it.
    hint = f"hint: {Messages.REPAIR_HINT}\n" if code == "corrupt" else ""
    assert done.stderr == f"error[{code}]: {message}\n{hint}"
    assert done.stdout == ""


def test_exit_statuses_are_distinct_per_code() -> None:
    statuses = [info.exit_status for info in ERRORS.values()]
    assert len(set(statuses)) == len(ERRORS) == 18
    assert not {0, 1, 2} & set(statuses)


def test_list_never_creates_the_default_workspace(tmp_path: Path, env: dict[str, str]) -> None:
    default = tmp_path / "data" / "memquill" / "workspace"
    for extra in ((), ("--all",)):
        assert memquill(env, "list", *extra).stdout == "(no remembered facts yet)\n"
    assert as_json(env, "list") == {"revision": None, "records": []}
    configured = tmp_path / "configured" / "ws"
    env["MEMQUILL_WORKSPACE"] = str(configured)
    memquill(env, "list", status=ERRORS["invalid"].exit_status)  # a named folder must exist
    assert not default.exists() and not configured.exists()
    assert not (tmp_path / "data").exists() and not (tmp_path / "configured").exists()


def test_the_default_workspace_is_created_on_first_write(
    tmp_path: Path, env: dict[str, str]
) -> None:
    memquill(env, "remember", "first fact")
    default = tmp_path / "data" / "memquill" / "workspace"
    assert [r.content for r in RecordStore(default).snapshot().records] == ["first fact"]
    # Only the default is created: a folder named by the variable or the flag must exist, so
    # a typo never scatters memory into a new folder.
    named = tmp_path / "nested" / "ws"
    env["MEMQUILL_WORKSPACE"] = str(named)
    done = memquill(env, "remember", "second fact", status=ERRORS["invalid"].exit_status)
    assert done.stderr == (
        f"error[invalid]: The workspace {named} (from $MEMQUILL_WORKSPACE) does not exist, and "
        f"memquill does not create it. Create it (mkdir -p {named}) or unset MEMQUILL_WORKSPACE "
        "to use the default folder.\n"
    )
    flagged = memquill(
        env, "--workspace", str(named), "remember", "x", status=ERRORS["invalid"].exit_status
    )
    assert flagged.stderr == (
        f"error[invalid]: The workspace {named} (from --workspace) does not exist. Create it "
        f"first (mkdir -p {named}) or pass an existing folder.\n"
    )
    assert not (tmp_path / "nested").exists()
    named.mkdir(parents=True)
    memquill(env, "remember", "second fact")
    assert records_path(named).exists()


def test_remember_list_update_forget_compact_doctor_in_text(
    workspace: Path, env: dict[str, str]
) -> None:
    secret_ish = "My locker code is 4711\nsecond line stays out of the list"
    saved = memquill(env, "remember", secret_ish).stdout.splitlines()
    assert saved[0].startswith("saved ") and "(record revision " in saved[0]
    record_id = saved[0].split()[1]
    snapshot = RecordStore(workspace).snapshot()
    assert saved[1] == f"store revision {snapshot.revision}"
    assert memquill(env, "remember", secret_ish).stdout.startswith(f"duplicate {record_id}")

    listing = memquill(env, "list").stdout.splitlines()
    record_revision = snapshot.record_revision(snapshot.records[0])
    assert listing[0] == (
        f"store revision {snapshot.revision}  (1 active, 1 version, {snapshot.size_bytes:,} bytes)"
    )
    assert listing[1].startswith(f"{record_id[:8]}  ")
    assert listing[1].endswith(f"rev {record_revision[:8]}  My locker code is 4711")
    assert len(listing) == 2

    updated = memquill(
        env, "update", record_id[:8], "My locker code is 4712", "--revision", record_revision[:8]
    ).stdout
    new_id = updated.split()[1]
    assert updated.startswith("saved ") and new_id != record_id
    listing = memquill(env, "list").stdout
    # Whole sentences: a bare "4711" turns up by chance in the revisions beside them.
    assert "My locker code is 4712" in listing and "My locker code is 4711" not in listing
    history = memquill(env, "list", "--all").stdout
    assert "[superseded]  My locker code is 4711" in history

    revision = RecordStore(workspace).snapshot().revision
    assert memquill(env, "forget", new_id, "--revision", revision).stdout.startswith("forgotten ")
    data = raw(workspace)
    assert b"My locker code is 4711" not in data and b"My locker code is 4712" not in data
    assert b"locker" not in data
    # Nor anywhere else in the workspace: no staging file or backup keeps it.
    assert not [path for path, content in tree(workspace).items() if b"locker" in content]
    assert memquill(env, "list").stdout.endswith("(no remembered facts)\n")
    assert memquill(env, "list", "--all").stdout.count("[revoked]") == 2

    # Forgotten facts stay forgotten, and the CLI says how to save them anew on purpose, with
    # its own exit status (issue 23, item 3).
    again = memquill(env, "remember", secret_ish, status=ERRORS["blocked"].exit_status)
    assert again.stdout.startswith("blocked\nstore revision ")
    assert again.stderr == f"error[blocked]: {Messages.BLOCKED}\n"
    assert memquill(env, "remember", secret_ish, "--idempotency-key", "new-key").stdout.startswith(
        "saved"
    )

    # Compact folds the forgotten fact's two tombstones into one ledger record (issue 33);
    # a second compact has nothing left to do.
    revision = RecordStore(workspace).snapshot().revision
    assert memquill(env, "compact", "--revision", revision).stdout.startswith("saved: ")
    revision = RecordStore(workspace).snapshot().revision
    assert memquill(env, "compact", "--revision", revision).stdout == (
        f"duplicate: store revision {revision}\n"
    )
    assert memquill(env, "remember", secret_ish, status=ERRORS["blocked"].exit_status)
    doctor = memquill(env, "doctor").stdout
    assert doctor.startswith("store: ok (1 active, 1 revoked); revision ")
    assert "lock: free" in doctor and doctor.endswith("healthy\n")


def test_the_same_flow_in_json(workspace: Path, env: dict[str, str]) -> None:
    saved = as_json(env, "remember", "prefers dark mode", "--idempotency-key", "theme")
    assert set(saved) == {
        "status",
        "record_id",
        "key",
        "record_revision",
        "revision",
        "forgotten_at",
    }
    assert saved["key"] is None
    assert saved["status"] == "saved"
    listing = as_json(env, "list")
    assert listing["revision"] == saved["revision"]
    (record,) = listing["records"]
    assert record["id"] == saved["record_id"]
    assert record["record_revision"] == saved["record_revision"]
    assert record["content"] == "prefers dark mode" and record["status"] == "active"
    assert record["source"]["kind"] == "manual" and "capturedAt" in record["source"]
    updated = as_json(
        env, "update", saved["record_id"], "prefers light mode", "--revision", saved["revision"]
    )
    assert updated["status"] == "saved" and updated["record_id"] != saved["record_id"]
    full = as_json(env, "list", "--all")["records"]
    assert [r["status"] for r in full] == ["superseded", "active"]
    compacted = as_json(env, "compact", "--revision", updated["revision"])
    assert compacted["status"] == "saved" and compacted["record_id"] is None
    assert as_json(env, "list", "--all")["records"][0]["content"] == ""
    forgotten = as_json(env, "forget", updated["record_id"], "--revision", compacted["revision"])
    assert forgotten["status"] == "saved"
    assert b"mode" not in raw(workspace)
    again = as_json(env, "forget", updated["record_id"], "--revision", forgotten["revision"])
    assert again["status"] == "duplicate" and again["revision"] == forgotten["revision"]
    report = as_json(env, "doctor")
    assert report["ok"] is True and report["error"] is None
    assert report["counts"] == {"revoked": 2}
    assert report["used_bytes"] == len(raw(workspace))
    assert report["max_bytes"] == MAX_STORE_BYTES


def test_forget_says_forgotten_in_words_and_saved_in_json(
    workspace: Path, env: dict[str, str]
) -> None:
    memquill(env, "remember", "--key", "deploy/day", "Deploys happen on Tuesdays")
    done = memquill(env, "forget", "deploy/day").stdout.splitlines()
    assert done[0].startswith("forgotten ") and " key deploy/day " in done[0]
    assert "saved" not in done[0]
    assert done[1].startswith("store revision ")
    memquill(env, "remember", "--key", "deploy/day", "Deploys happen on Mondays")
    # The JSON status stays the write's outcome, as every other write reports it.
    assert as_json(env, "forget", "deploy/day")["status"] == "saved"


def test_workspace_option_overrides_the_environment(tmp_path: Path, env: dict[str, str]) -> None:
    other = tmp_path / "other"
    other.mkdir()
    env["MEMQUILL_WORKSPACE"] = str(tmp_path / "unused")
    memquill(env, "--workspace", str(other), "remember", "one")
    memquill(env, "remember", "two", "--workspace", "other", cwd=tmp_path)
    assert [r.content for r in RecordStore(other).snapshot().records] == ["one", "two"]
    assert not (tmp_path / "unused").exists()


def test_doctor_finds_and_fixes_stale_staging_files(workspace: Path, env: dict[str, str]) -> None:
    memquill(env, "remember", "a fact")
    stale = workspace / "memory" / ".records-0000.tmp"
    stale.write_text("left by a crash")
    found = memquill(env, "doctor", status=1).stdout
    assert "staging file memory/.records-0000.tmp: stale (run doctor --fix)" in found
    assert found.endswith("problems found\n")
    assert as_json_status(env, 1, "doctor")["temp_files"] == ["memory/.records-0000.tmp"]
    fixed = memquill(env, "doctor", "--fix").stdout
    assert "staging file memory/.records-0000.tmp: removed" in fixed
    assert not stale.exists()


def as_json_status(env: dict[str, str], status: int, *args: str) -> Any:
    return json.loads(memquill(env, *args, "--json", status=status).stdout)


def test_doctor_reports_a_corrupt_store_without_touching_it(
    workspace: Path, env: dict[str, str]
) -> None:
    memquill(env, "remember", "a fact")
    record_id = RecordStore(workspace).snapshot().records[0].id
    records_path(workspace).write_bytes(raw(workspace).replace(b"a fact", b"a fact!"))
    before = tree(workspace)
    text = memquill(env, "doctor", status=1).stdout
    assert text.startswith(
        f"store: error[corrupt] in record 1 (id {record_id[:8]}…): its text was edited: "
        "contentLength says 6 UTF-16 units, the text is 7\n"
        "fix: `memquill doctor --fix` will write a backup of memory/records.md, then:\n"
        f"  - record 1 (id {record_id[:8]}…): its edited text becomes a new version with source "
        "manual, and the old version is marked superseded\n"
    )
    report = as_json_status(env, 1, "doctor")
    # The text's "record 1" is the JSON's "record" too (issue 23, item 6); the index is 0-based.
    assert report["error"] == {
        "code": "corrupt",
        "message": Messages.EDITED,
        "record": 1,
        "record_index": 0,
    }
    assert report["diagnosis"]["record_id"] == record_id
    assert (report["diagnosis"]["record"], report["diagnosis"]["record_index"]) == (1, 0)
    assert report["repair"]["refused"] is None and len(report["repair"]["changes"]) == 1
    assert report["repaired"] is False and report["backup"] is None
    assert tree(workspace) == before

    # An edit memquill cannot undo without guessing: --fix refuses and changes nothing.
    records_path(workspace).write_bytes(raw(workspace).replace(b'{"id"', b'{"id" oops'))
    before = tree(workspace)
    text = memquill(env, "doctor", "--fix", status=1).stdout
    assert "store: error[corrupt] in record 1: its metadata is not valid JSON" in text
    assert "fix: cannot repair this without guessing: record 1: its marker line is not a" in text
    assert tree(workspace) == before


def test_every_failure_has_its_code_message_and_status(
    tmp_path: Path, workspace: Path, env: dict[str, str]
) -> None:
    saved = RecordStore(workspace).save([manual("a fact", "k")])
    record = saved.record_id or ""
    RecordStore(workspace).save([manual("another fact", "k2")])
    before = tree(workspace)
    fails(env, "conflict", Messages.STALE, "update", record, "x", "--revision", saved.revision)
    fails(env, "conflict", Messages.STALE, "compact", "--revision", saved.revision)
    fails(env, "invalid", Messages.CONTENT, "remember", "   ")
    fails(env, "invalid", Messages.REVISION_FORMAT, "forget", record, "--revision", "abc")
    fails(env, "invalid", Messages.REVISION_FORMAT, "update", record, "x", "--revision", "Z" * 64)
    fails(
        env, "secret", secret_message(("assignment",)), "remember", "password = hunter2", "--json"
    )
    fails(
        env, "not_found", Messages.ACTIVE_NOT_FOUND, "update", "f" * 8, "x", "--revision", "0" * 8
    )
    fails(env, "not_found", Messages.NOT_FOUND, "forget", "f" * 8, "--revision", "0" * 8)
    # Shorter than an id prefix: a key, and the message says why it was taken for one.
    short = "No active fact has the key ffff. (A record id prefix needs at least 8 characters.)"
    fails(env, "not_found", short, "update", "ffff", "x", "--revision", "0" * 8)
    fails(env, "not_found", short, "forget", "ffff")
    fails(env, "invalid", Messages.KEY_FORMAT, "forget", "prefs//coffee")
    assert tree(workspace) == before

    lock = workspace / "memory" / ".records-lock"
    lock.unlink()
    lock.mkdir()
    fails(env, "busy", Messages.LOCK_HELD, "remember", "blocked by a directory")
    assert lock.is_dir()
    lock.rmdir()

    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    not_a_folder = f"The workspace {a_file} (from --workspace) is not a folder."
    fails(env, "unsafe_path", not_a_folder, "--workspace", str(a_file), "list")
    nope = tmp_path / "nope"
    missing = (
        f"The workspace {nope} (from --workspace) does not exist. Create it first "
        f"(mkdir -p {nope}) or pass an existing folder."
    )
    fails(env, "invalid", missing, "--workspace", str(nope), "remember", "x")
    assert not nope.exists()

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = tmp_path / "linked"
    (linked / "memory").parent.mkdir()
    (linked / "memory").symlink_to(elsewhere, target_is_directory=True)
    fails(env, "unsafe_path", Messages.MEMORY_PATH, "--workspace", str(linked), "remember", "x")
    assert list(elsewhere.iterdir()) == []

    foreign = b"# My own memory\n\nI like tea.\n"
    records_path(workspace).write_bytes(foreign)
    fails(env, "corrupt", Messages.FOREIGN, "list")
    fails(env, "corrupt", Messages.FOREIGN, "remember", "x")
    assert raw(workspace) == foreign

    records_path(workspace).write_bytes(HEADER.encode() + b"x" * MAX_STORE_BYTES)
    fails(env, "capacity", Messages.FULL, "list")
    fails(env, "capacity", Messages.FULL, "remember", "x")


def test_usage_errors_exit_2(workspace: Path, env: dict[str, str]) -> None:
    memquill(env, status=2)
    memquill(env, "frobnicate", status=2)
    assert tree(workspace) == {}


def test_an_ambiguous_id_prefix_is_refused(workspace: Path, env: dict[str, str]) -> None:
    def record(record_id: str, content: str) -> Record:
        meta: dict[str, JSONValue] = {
            "id": record_id,
            "rootId": record_id,
            "source": {"kind": "manual"},
            "status": "active",
            "createdAt": "2025-01-01T00:00:00.000Z",
            "updatedAt": "2025-01-01T00:00:00.000Z",
            "operationHash": "0" * 64,
        }
        return Record(meta, content)

    ids = ["abcdef01-0000-4000-8000-000000000001", "abcdef01-0000-4000-8000-000000000002"]
    records_path(workspace).parent.mkdir()
    image = StoreImage(HEADER, (record(ids[0], "one"), record(ids[1], "two")))
    records_path(workspace).write_text(encode_store(image))
    revision = RecordStore(workspace).snapshot().revision
    fails(env, "invalid", Messages.ID_AMBIGUOUS, "forget", "abcdef01", "--revision", revision)
    done = memquill(env, "forget", ids[1], "--revision", revision[:12])
    assert done.stdout.startswith(f"forgotten {ids[1]}")
    assert [r.status for r in RecordStore(workspace).snapshot().records] == ["active", "revoked"]


def test_a_person_may_remember_forgotten_words_and_is_told(
    workspace: Path, env: dict[str, str]
) -> None:
    """Issue 32 item 3: the CLI is a person (source ``manual``): saved, with a note."""
    saved = as_json(env, "remember", "Bob's birthday is 1 June.", "--key", "bob/birthday")
    as_json(env, "forget", "bob/birthday")
    when = next(
        r.updated_at for r in RecordStore(workspace).snapshot().records if r.status == "revoked"
    )

    again = memquill(env, "remember", "bob's birthday is 1 june.")

    assert again.stdout.startswith("saved ")
    assert Messages.REMEMBERED_AGAIN.format(when=when) in again.stdout
    assert saved["forgotten_at"] is None


def test_compact_needs_no_revision_and_capacity_names_it(
    workspace: Path, env: dict[str, str]
) -> None:
    """Issue 32 item 9: ``memquill compact`` compacts what the store holds now; a full store's
    error names the command."""
    saved = as_json(env, "remember", "prefers dark mode", "--key", "ui/mode")
    as_json(env, "update", "ui/mode", "prefers light mode")

    compacted = as_json(env, "compact")

    assert compacted["status"] == "saved" and compacted["revision"] != saved["revision"]
    assert [r["content"] for r in as_json(env, "list", "--all")["records"]] == [
        "",
        "prefers light mode",
    ]
    assert "`memquill compact`" in Messages.FULL
