"""Forgotten means gone (issue 11, items 1 and 2).

1. A writer killed after its staging write and before its rename leaves a staging file holding
   the whole file of that moment; the next writer removes it under the lock, so a fact forgotten
   afterwards is on no file in the workspace.
2. Tombstones keep an ``operationHash``; memquill keys it (HMAC under a secret outside the
   workspace), so a copy of ``records.md`` cannot confirm a guess of a forgotten fact, while the
   original system's unkeyed hashes are still honoured.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path

import pytest
from tests.core.store_helpers import PAUSE_BEFORE_RENAME, children, manual, raw, records_path

from memquill import MemorySession, WriteSource, forget, remember
from memquill.errors import Messages, StorageError
from memquill.foundation import atomic
from memquill.store._codec import HEADER, decode_store, sha256_hex
from memquill.store._record_key import KEY_FILE, KEYED_PREFIX, RecordKey
from memquill.store._store import RecordStore

PIN_FACT = "My bank PIN is {:04d}"
SECRET_PIN = 4821


def files_holding(root: Path, needle: str) -> list[str]:
    """Every file under ``root`` (hidden ones too, symlinks not followed) whose bytes hold it."""
    found: list[str] = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if not path.is_symlink() and needle.encode() in path.read_bytes():
                found.append(path.relative_to(root).as_posix())
    return found


def files_holding_the_pin(root: Path) -> list[str]:
    """:func:`files_holding` for the PIN as a word of its own: its four digits also turn up,
    by chance, inside the hex of a hash or an id (about one run in a hundred)."""
    word = re.compile(rb"(?<![0-9A-Za-z])%d(?![0-9A-Za-z])" % SECRET_PIN)
    return [
        name
        for name in files_holding(root, str(SECRET_PIN))
        if word.search((root / name).read_bytes())
    ]


# -- item 1: staging files ---------------------------------------------------------------------


def test_a_killed_writers_staging_file_does_not_outlive_a_forget(tmp_path: Path) -> None:
    fact = PIN_FACT.format(SECRET_PIN)
    store = RecordStore(tmp_path)
    saved = store.save([manual(fact, "pin")])
    # A real writer, SIGKILLed after its staging file is written and fsynced, before the rename.
    with children((PAUSE_BEFORE_RENAME, (str(tmp_path), "Another fact"))) as [writer]:
        staged = Path(writer.expect("staged"))
        assert fact.encode() in staged.read_bytes()  # the whole file of that moment
        writer.kill()
    assert staged.exists(), "the killed writer left its staging file"
    assert [record.content for record in store.snapshot().records] == [fact]  # old file intact
    forgotten = store.revoke(saved.record_id or "", saved.revision)
    assert forgotten.status == "saved"
    assert not staged.exists()
    assert files_holding(tmp_path, fact) == []
    assert files_holding_the_pin(tmp_path) == []


def test_every_writer_cleans_up_even_when_it_writes_nothing(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save([manual("A fact", "a")])
    stale = tmp_path / "memory" / ".records-0123.tmp"
    stale.write_text("a forgotten fact")
    folder = tmp_path / "memory" / ".records-folder.tmp"
    folder.mkdir()  # not a staging file memquill writes: a person decides
    assert store.save([manual("A fact", "a")]).status == "duplicate"
    assert not stale.exists() and folder.is_dir()


def test_the_removal_is_made_durable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = RecordStore(tmp_path)
    store.save([manual("A fact", "a")])
    stale = tmp_path / "memory" / ".records-dead.tmp"
    stale.write_text("a forgotten fact")
    synced: list[tuple[Path, bool]] = []
    real = atomic.fsync_folder

    def spy(directory: Path) -> None:
        synced.append((directory, stale.exists()))
        real(directory)

    monkeypatch.setattr(atomic, "fsync_folder", spy)
    store.save([manual("Another fact", "b")])
    # The first directory fsync comes right after the removal, before the new file is staged.
    assert synced[0] == (tmp_path / "memory", False)


# -- item 2: keyed tombstone hashes ------------------------------------------------------------


def _unkeyed_guesses(record: dict[str, object], guess: str) -> set[str]:
    """The hashes the original scheme would store for ``guess``, from what the file shows."""
    source = record["source"]
    assert isinstance(source, dict)
    session = source.get("sessionId", "")
    keys = {
        "manual:" + sha256_hex(guess),
        f"tool:{session}:" + hashlib.md5(guess.encode()).hexdigest(),
        guess,
    }
    return {sha256_hex(key) for key in keys}


def test_a_copy_of_records_md_cannot_confirm_a_guess(tmp_path: Path) -> None:
    fact = PIN_FACT.format(SECRET_PIN)
    person = WriteSource.manual()
    model = WriteSource("tool", session_id="chat-7")
    session = MemorySession(tmp_path, "chat-7")
    # The model first: once forgotten, its words block a model (issue 32), never a person.
    for source in (model, person):
        saved = remember(session, fact, source=source)
        forget(session, saved.record_id or "", saved.revision, source=person)
    image = decode_store(records_path(tmp_path).read_text("utf-8"))
    tombstones = [json.loads(json.dumps(dict(r.meta))) for r in image.records]
    assert len(tombstones) == 2 and all(r["status"] == "revoked" for r in tombstones)
    assert all(str(r["operationHash"]).startswith(KEYED_PREFIX) for r in tombstones)
    assert all(str(r["textHash"]).startswith(KEYED_PREFIX) for r in tombstones)
    # The attack of the issue: every four-digit PIN, every way the original scheme hashes it.
    found = [
        pin
        for record in tombstones
        for pin in range(10_000)
        if record["operationHash"] in _unkeyed_guesses(record, PIN_FACT.format(pin))
    ]
    assert found == []
    assert files_holding_the_pin(tmp_path) == []


def test_forgotten_facts_stay_blocked(tmp_path: Path) -> None:
    fact = PIN_FACT.format(SECRET_PIN)
    model = WriteSource("tool", session_id="chat-7")
    session = MemorySession(tmp_path, "chat-7")
    saved = remember(session, fact, source=model)
    assert remember(session, fact, source=model).status == "duplicate"
    forget(session, saved.record_id or "", saved.revision, source=model)
    assert remember(session, fact, source=model).status == "blocked"


def _original_file(workspace: Path, status: str, content: str, key: str) -> None:
    """A ``records.md`` as the original system writes it: unkeyed ``sha256(key)``."""
    meta = {
        "id": "0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01",
        "rootId": "0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01",
        "source": {"kind": "tool", "sessionId": "chat-7"},
        "status": status,
        "createdAt": "2025-01-02T03:04:05.006Z",
        "updatedAt": "2025-01-02T03:04:05.006Z",
        "operationHash": sha256_hex(key),
        "contentLength": len(content),
    }
    block = f"<!-- memory-record {json.dumps(meta, separators=(',', ':'))} -->\n{content}\n\n"
    path = records_path(workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + block, "utf-8")


def test_unkeyed_hashes_of_the_original_system_still_block_and_dedupe(tmp_path: Path) -> None:
    fact = "The spare key is under the blue pot"
    key = "tool:chat-7:" + hashlib.md5(fact.encode()).hexdigest()
    model = WriteSource("tool", session_id="chat-7")
    session = MemorySession(tmp_path, "chat-7")
    _original_file(tmp_path, "revoked", "", key)
    assert remember(session, fact, source=model).status == "blocked"
    _original_file(tmp_path, "active", fact, key)
    again = remember(session, fact, source=model)
    assert (again.status, again.record_id) == ("duplicate", "0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01")


def test_a_moved_workspace_keeps_blocking_when_the_key_moves_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fact = PIN_FACT.format(SECRET_PIN)
    model = WriteSource("tool", session_id="chat-7")
    here, there = tmp_path / "here", tmp_path / "there"
    monkeypatch.setenv("XDG_DATA_HOME", str(here))
    first = tmp_path / "ws-1"
    first.mkdir()
    saved = remember(MemorySession(first, "chat-7"), fact, source=model)
    forget(MemorySession(first, "chat-7"), saved.record_id or "", saved.revision, source=model)
    # Another machine: the workspace copied, and the key copied to its data folder.
    second = tmp_path / "ws-2"
    (second / "memory").mkdir(parents=True)
    (second / "memory" / "records.md").write_bytes(raw(first))
    (there / "memquill").mkdir(parents=True)
    key = here / "memquill" / KEY_FILE
    (there / "memquill" / KEY_FILE).write_bytes(key.read_bytes())
    (there / "memquill" / KEY_FILE).chmod(0o600)
    monkeypatch.setenv("XDG_DATA_HOME", str(there))
    assert remember(MemorySession(second, "chat-7"), fact, source=model).status == "blocked"
    # Without the key (a fresh one is made), the keyed hash is not recognised: the trade-off
    # docs/security.md states.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "elsewhere"))
    assert remember(MemorySession(second, "chat-7"), fact, source=model).status == "saved"


def test_the_key_is_owner_only_in_the_user_data_folder(tmp_path: Path) -> None:
    key = RecordKey(tmp_path / "data")
    store = RecordStore(tmp_path, record_key=key)
    assert not key.path.exists()  # nothing is created until a write needs it
    store.save([manual("A fact", "a")])
    data = key.load()
    assert len(data) == 32 and key.load() == data
    info = os.lstat(key.path)
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    assert key.path == tmp_path / "data" / KEY_FILE


@pytest.mark.skipif(os.name != "posix", reason="modes, symlinks and FIFOs are POSIX")
@pytest.mark.parametrize("problem", ["symlink", "group-readable", "short", "fifo", "folder"])
def test_an_unsafe_key_fails_the_write_and_writes_nothing(tmp_path: Path, problem: str) -> None:
    keys = tmp_path / "keys"
    keys.mkdir()
    path = keys / KEY_FILE
    real = tmp_path / "elsewhere-key"
    real.write_bytes(os.urandom(32))
    real.chmod(0o600)
    if problem == "symlink":
        path.symlink_to(real)
    elif problem == "group-readable":
        path.write_bytes(os.urandom(32))
        path.chmod(0o640)
    elif problem == "short":
        path.write_bytes(os.urandom(16))
        path.chmod(0o600)
    elif problem == "fifo":
        os.mkfifo(path, 0o600)
    else:
        path.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    store = RecordStore(workspace, record_key=RecordKey(keys))
    with pytest.raises(StorageError) as info:
        store.save([manual("A fact", "a")])
    assert info.value.message == Messages.RECORD_KEY_UNAVAILABLE
    assert list(workspace.iterdir()) == []


def test_a_hand_edit_kept_by_doctor_is_keyed_too(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save([manual("My bank PIN is 482", "pin")])
    # A person fixes the fact in an editor; doctor --fix keeps the edit as a manual version.
    edited = raw(tmp_path).replace(b"PIN is 482\n", b"PIN is 4821\n")
    records_path(tmp_path).write_bytes(edited)
    assert store.doctor(fix=True).repaired
    kept = store.snapshot().records[-1]
    assert kept.content == PIN_FACT.format(SECRET_PIN)
    assert kept.operation_hash.startswith(KEYED_PREFIX)
    store.revoke(kept.id, store.snapshot().revision)
    old_id = kept.meta["supersedes"]
    tombstone = store.snapshot().records[-1]
    guesses = {sha256_hex(f"hand-edit:{old_id}:{PIN_FACT.format(pin)}") for pin in range(10_000)}
    assert tombstone.operation_hash not in guesses
    backups = list((tmp_path / "memory").glob(".records-backup-*.md"))
    assert len(backups) == 1  # the repair's backup: the file as it was, kept for the person
