"""Hand edits: ``doctor`` says which record and why; ``doctor --fix`` repairs what it can
without guessing, after a backup, and refuses the rest, changing nothing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.core.store_helpers import manual, raw, records_path, tree

from memquill import RecordStore
from memquill.errors import ConflictError, Messages
from memquill.store import SecretScanner
from memquill.store._diagnose import diagnose
from memquill.store._hand_edits import apply_repair, plan_repair
from memquill.store._secrets import secret_message
from memquill.store._transaction import locate

NOW = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
PORT = "The staging database listens on port 5434."


@pytest.fixture
def store(tmp_path: Path) -> RecordStore:
    store = RecordStore(tmp_path, now=lambda: NOW)
    store.save([manual("Deploys happen on Tuesdays.")])
    store.save([manual(PORT)])
    store.save([manual("The team lead is Ana.")])
    return store


def edit(workspace: Path, change: Callable[[bytes], bytes]) -> bytes:
    before = raw(workspace)
    records_path(workspace).write_bytes(change(before))
    return before


def test_the_issue_edit_is_diagnosed_then_kept_as_a_manual_version(
    tmp_path: Path, store: RecordStore
) -> None:
    old = store.snapshot()
    port = old.records[1]
    original = edit(tmp_path, lambda data: data.replace(b"port 5434", b"port 15434"))
    edited = raw(tmp_path)

    report = store.doctor()
    assert report.error is not None and report.error.code == "corrupt"
    assert report.diagnosis is not None
    assert (report.diagnosis.record_index, report.diagnosis.record_id) == (1, port.id)
    assert report.diagnosis.reason == (
        "its text was edited: contentLength says 42 UTF-16 units, the text is 43"
    )
    assert report.repair is not None and report.repair.refused is None
    assert not report.repaired and raw(tmp_path) == edited  # doctor alone changes nothing

    fixed = store.doctor(fix=True)
    assert fixed.error is None and fixed.repaired and fixed.ok
    assert fixed.backup is not None and fixed.backup.startswith("memory/.records-backup-")
    assert (tmp_path / fixed.backup).read_bytes() == edited  # the file as the person left it

    records = store.snapshot().records
    assert [r.status for r in records] == ["active", "superseded", "active", "active"]
    assert [r.content for r in records] == [
        "Deploys happen on Tuesdays.",
        "",  # the text before the edit is gone from the file already
        "The team lead is Ana.",
        "The staging database listens on port 15434.",
    ]
    new = records[-1]
    assert dict(new.source) == {"kind": "manual", "capturedAt": "2026-11-30T09:30:00.000Z"}
    assert (new.supersedes, new.root_id, new.created_at) == (
        port.id,
        port.root_id,
        "2026-11-30T09:30:00.000Z",
    )
    # The untouched facts keep their bytes, so their revisions still hold.
    assert [store.snapshot().record_revision(r) for r in (records[0], records[2])] == [
        old.record_revision(old.records[0]),
        old.record_revision(old.records[2]),
    ]
    assert original != edited


def test_crlf_from_an_editor_turns_back_into_the_same_bytes(
    tmp_path: Path, store: RecordStore
) -> None:
    store.save([manual("Two lines:\nfirst\nsecond")])
    original = edit(tmp_path, lambda data: data.replace(b"\n", b"\r\n"))
    report = store.doctor()
    assert report.diagnosis is not None and report.diagnosis.record_index is None
    assert report.diagnosis.reason == "an editor changed the line endings to CRLF (\\r\\n)"
    assert store.doctor(fix=True).ok
    assert raw(tmp_path) == original


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        pytest.param(
            lambda d: d.replace(b"\n", b"\r\n").replace(b"Ana", b"Anabel"),
            "record 3: line endings were changed and its length still disagrees",
            id="crlf-and-an-edit",
        ),
        pytest.param(
            lambda d: d.replace(b'"status":"active"', b'"status":"activ"', 1),
            "record 1 (id ",  # then: its status 'activ' is not active, superseded or revoked
            id="unknown-status",
        ),
        pytest.param(
            lambda d: d.replace(b'{"id"', b'{"id" oops', 1),
            "record 1: its marker line is not a JSON object memquill can read",
            id="broken-json",
        ),
        pytest.param(
            lambda d: d.replace(b"Ana.", b"Ana, password = hunter2-real."),
            "record 3: its edited text cannot be kept: " + secret_message(("assignment",)),
            id="a-secret",
        ),
        pytest.param(
            lambda d: d.replace(b"The team lead is Ana.", b"   "),
            "record 3: its edited text cannot be kept: " + Messages.CONTENT,
            id="blank",
        ),
        pytest.param(
            lambda d: d.replace(b"Ana.", b"Ana.\n<!-- memory-record {} -->"),
            "record 3: its edited text holds a record marker line",
            id="a-marker-inside",
        ),
        pytest.param(
            lambda d: b"# My notes\n\n" + d,
            "it does not start with memquill's records header",
            id="foreign",
        ),
    ],
)
def test_anything_ambiguous_is_refused_and_nothing_changes(
    tmp_path: Path, store: RecordStore, change: Callable[[bytes], bytes], refusal: str
) -> None:
    edit(tmp_path, change)
    before = tree(tmp_path)
    report = store.doctor(fix=True)
    assert report.repair is not None and report.repair.refused is not None
    assert report.repair.refused.startswith(refusal), report.repair.refused
    assert not report.repaired and report.error is not None
    assert tree(tmp_path) == before  # no backup, no staging file, no change


def test_edits_to_history_are_refused(tmp_path: Path, store: RecordStore) -> None:
    snapshot = store.snapshot()
    target = snapshot.records[0]
    store.correct(target.id, "Deploys happen on Wednesdays.", snapshot.revision)
    forgotten = store.snapshot().records[2]
    store.revoke(forgotten.id, store.snapshot().revision)
    edit(tmp_path, lambda d: d.replace(b"Deploys happen on Tuesdays.", b"Deploys: Tuesdays!!"))
    repair = store.doctor(fix=True).repair
    assert repair is not None and repair.refused == (
        "record 1: only a remembered fact's current version can be kept; this one is 'superseded'"
    )


def test_the_last_record_may_lose_its_trailing_blank_line(
    tmp_path: Path, store: RecordStore
) -> None:
    edit(tmp_path, lambda d: d.removesuffix(b"\n\n").replace(b"Ana.", b"Ana Lopez.") + b"\n")
    assert store.doctor(fix=True).ok
    assert store.snapshot().records[-1].content == "The team lead is Ana Lopez."


def test_the_repair_refuses_a_file_changed_since_it_was_planned(
    tmp_path: Path, store: RecordStore
) -> None:
    edit(tmp_path, lambda d: d.replace(b"Ana", b"Anabel"))
    edited = raw(tmp_path)
    plan = plan_repair(edited, now=NOW, secrets=SecretScanner())
    assert plan.refused is None
    records_path(tmp_path).write_bytes(edited + b"x")  # someone else edits meanwhile
    before = tree(tmp_path)
    with pytest.raises(ConflictError):
        apply_repair(locate(str(tmp_path)), edited, plan, now=NOW, lock_timeout=1)
    assert tree(tmp_path) == before


def test_the_backup_is_written_before_the_file_is_replaced(
    tmp_path: Path, store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    edit(tmp_path, lambda d: d.replace(b"Ana", b"Anabel"))
    edited = raw(tmp_path)

    def no_replace(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_replace)
    with pytest.raises(OSError):
        store.doctor(fix=True)
    monkeypatch.undo()
    assert raw(tmp_path) == edited
    backups = list((tmp_path / "memory").glob(".records-backup-*.md"))
    assert [path.read_bytes() for path in backups] == [edited]
    assert not list((tmp_path / "memory").glob("*.tmp"))


DEEP = b"[" * 1000 + b"]" * 1000


@pytest.mark.parametrize(
    ("change", "index", "reason"),
    [
        (lambda d: d.replace(b'"status"', b'"deep":' + DEEP + b',"status"', 1), 0,
         "its metadata is nested too deeply to read"),
        (lambda d: d.replace(b"Ana.\n\n", b"Ana.\n\n\n"), 3,
         "a record marker line was expected, found 'an empty line'"),
        (lambda d: d.replace(b"Ana", b"An\xffa"), 2,
         "is not UTF-8 text (a binary or re-encoded file?)"),
        (lambda d: d.replace(b' -->\nThe team', b'\nThe team'), 2,
         "its marker line does not end with ' -->'"),
    ],
)  # fmt: skip
def test_diagnose_names_the_record_and_the_reason(
    tmp_path: Path, store: RecordStore, change: Callable[[bytes], bytes], index: int, reason: str
) -> None:
    edit(tmp_path, change)
    found = diagnose(raw(tmp_path))
    assert found is not None
    assert found.record_index == index and found.reason.endswith(reason), found
    bad = raw(tmp_path).find(b"\xff")
    if bad >= 0:
        assert found.reason.startswith(f"byte {bad} ")
    report = store.doctor()
    assert report.error is not None and report.error.code == "corrupt"


def test_a_reviewed_repair_applies_only_to_the_file_that_was_reviewed(
    tmp_path: Path, store: RecordStore
) -> None:
    edit(tmp_path, lambda data: data.replace(b"port 5434", b"port 15434"))
    reviewed = store.doctor().repair
    assert reviewed is not None and len(reviewed.revision) == 64
    edit(tmp_path, lambda data: data.replace(b"Tuesdays", b"Tuesdays and Fridays"))
    changed = store.doctor().repair
    assert changed is not None and changed.refused is None
    assert changed.revision != reviewed.revision
    before = tree(tmp_path)
    with pytest.raises(ConflictError) as caught:
        store.doctor(fix=True, expected_revision=reviewed.revision)
    assert caught.value.message == Messages.STALE
    assert tree(tmp_path) == before
    fixed = store.doctor(fix=True, expected_revision=changed.revision)
    assert fixed.repaired and fixed.error is None


def test_a_hand_edit_is_one_operation_whether_doctor_or_import_keeps_it(tmp_path: Path) -> None:
    # The operation hash of a kept hand edit comes from the version edited and the new text:
    # the same edit is the same operation by either route, and the same new text in two facts
    # is two operations.
    fixed, imported = tmp_path / "fixed", tmp_path / "imported"
    fixed.mkdir()
    first = RecordStore(fixed, now=lambda: NOW)
    first.save([manual("Deploys happen on Tuesdays.")])
    first.save([manual(PORT)])
    shutil.copytree(fixed, imported)  # the same records and the same record key

    def same_text(data: bytes) -> bytes:
        data = data.replace(b"Deploys happen on Tuesdays.", b"Ask Ana.")
        return data.replace(PORT.encode(), b"Ask Ana.")

    edit(fixed, same_text)
    assert first.doctor(fix=True).repaired
    second = RecordStore(imported, now=lambda: NOW)
    assert second.replace(same_text(second.export()), second.snapshot().revision).status == "saved"

    def kept(store: RecordStore) -> list[tuple[object, object, object]]:
        return [
            (r.supersedes, r.meta["operationHash"], r.meta["keyId"])
            for r in store.snapshot().records
            if r.status == "active"
        ]

    assert kept(first) == kept(second)
    assert len({operation for _, operation, _ in kept(first)}) == 2
