"""Bad input: each case has its error code and exact message, and changes nothing on disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.core.store_helpers import (
    conversation,
    expect_error,
    expect_unchanged,
    manual,
    raw,
    records_path,
    tree,
)

from memquill import RecordStore, WriteResult
from memquill.errors import Messages
from memquill.store._codec import HEADER, MAX_STORE_BYTES
from memquill.store._record import JSONValue
from memquill.store._results import Candidate
from memquill.store._secrets import secret_message

SOME_ID = "0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01"
SOME_REVISION = "0" * 64

Operation = Callable[[RecordStore], object]

# Every public entry point that reads or writes the store.
OPERATIONS: dict[str, Operation] = {
    "snapshot": lambda store: store.snapshot(),
    "projection": lambda store: store.projection(),
    "preflight": lambda store: store.preflight(),
    "save": lambda store: store.save([manual("a new fact")]),
    "correct": lambda store: store.correct(SOME_ID, "new", SOME_REVISION),
    "revoke": lambda store: store.revoke(SOME_ID, SOME_REVISION),
    "compact": lambda store: store.compact(SOME_REVISION),
}
WITH_DOCTOR: dict[str, Operation] = {**OPERATIONS, "doctor": lambda store: store.doctor(fix=True)}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture(params=[False, True], ids=["empty", "existing"])
def target(
    request: pytest.FixtureRequest, workspace: Path
) -> tuple[RecordStore, WriteResult | None]:
    """A store that is empty (nothing on disk) or holds two facts."""
    store = RecordStore(workspace, lock_timeout=2)
    if not request.param:
        return store, None
    return store, store.save([manual("first fact", "a"), conversation("second fact", "b")])


@pytest.fixture
def seeded(workspace: Path) -> tuple[RecordStore, WriteResult]:
    store = RecordStore(workspace, lock_timeout=2)
    return store, store.save([manual("first fact", "a"), conversation("second fact", "b")])


# -- content ---------------------------------------------------------------------------------

BAD_CONTENT = {
    "empty": "",
    "spaces": "   ",
    "whitespace": " \n\t\r\n ",
    "16001 units": "x" * 16001,
    "16002 units of emoji": "😀" * 8001,
    "NUL": "before\0after",
    "lone surrogate": "broken \ud800 text",
}


@pytest.mark.parametrize("content", list(BAD_CONTENT.values()), ids=list(BAD_CONTENT))
def test_bad_content_is_refused_before_anything_is_touched(
    workspace: Path, target: tuple[RecordStore, WriteResult | None], content: str
) -> None:
    store, seeded = target
    expect_unchanged(workspace, "invalid", Messages.CONTENT, store.save, [manual(content, "k")])
    if seeded is not None:
        record = seeded.record_id or ""
        expect_unchanged(
            workspace, "invalid", Messages.CONTENT, store.correct, record, content, seeded.revision
        )


@pytest.mark.parametrize(
    "content", ["x" * 16000, "😀" * 8000, "记" * 16000, "a\n\tb", " padded "], ids=repr
)  # a carriage return is a control character: refused (test_control_characters.py)
def test_content_at_the_limits_is_accepted(workspace: Path, content: str) -> None:
    store = RecordStore(workspace)
    store.save([manual(content, "k")])
    assert store.snapshot().records[0].content == content


# -- source, key, batch, reservation ---------------------------------------------------------

BAD_SOURCES: dict[str, tuple[Any, str]] = {
    "none": (None, Messages.SOURCE_REQUIRED),
    "string": ("manual", Messages.SOURCE_REQUIRED),
    "no kind": ({}, Messages.SOURCE_REQUIRED),
    "unknown kind": ({"kind": "email"}, Messages.SOURCE_REQUIRED),
    "kind a list": ({"kind": ["tool"], "sessionId": "s"}, Messages.SOURCE_REQUIRED),
    "tool without session": ({"kind": "tool"}, Messages.TOOL_SOURCE),
    "tool with empty session": ({"kind": "tool", "sessionId": ""}, Messages.TOOL_SOURCE),
    "conversation without message": (
        {"kind": "conversation", "sessionId": "s"},
        Messages.CONVERSATION_SOURCE,
    ),
    "conversation without session": (
        {"kind": "conversation", "messageId": "m"},
        Messages.CONVERSATION_SOURCE,
    ),
    "bad role": ({"kind": "manual", "role": "system"}, Messages.SOURCE_ROLE),
    "role an object": ({"kind": "manual", "role": {}}, Messages.SOURCE_ROLE),
    "201-unit session": ({"kind": "tool", "sessionId": "s" * 201}, Messages.SOURCE_REFERENCE),
    "newline in message": (
        {"kind": "conversation", "sessionId": "s", "messageId": "m\n1"},
        Messages.SOURCE_REFERENCE,
    ),
    "numeric session": ({"kind": "tool", "sessionId": 5}, Messages.SOURCE_REFERENCE),
    "numeric capturedAt": ({"kind": "manual", "capturedAt": 7}, Messages.SOURCE_REFERENCE),
    "lone surrogate in session": (
        {"kind": "tool", "sessionId": "\udc00"},
        Messages.SOURCE_REFERENCE,
    ),
    "extra key not JSON": ({"kind": "manual", "extra": object()}, Messages.SOURCE_REFERENCE),
    "extra key lone surrogate": ({"kind": "manual", "extra": "\ud800"}, Messages.SOURCE_REFERENCE),
}


@pytest.mark.parametrize("source, message", list(BAD_SOURCES.values()), ids=list(BAD_SOURCES))
def test_bad_sources_are_refused(
    workspace: Path, target: tuple[RecordStore, WriteResult | None], source: Any, message: str
) -> None:
    store, seeded = target
    expect_unchanged(workspace, "invalid", message, store.save, [Candidate("fact", source, "k")])
    if seeded is not None:
        record = seeded.record_id or ""
        expect_unchanged(
            workspace, "invalid", message, store.correct, record, "new", seeded.revision, source
        )


def test_sources_at_the_limits_are_accepted(workspace: Path) -> None:
    store = RecordStore(workspace)
    source: dict[str, JSONValue] = {
        "kind": "conversation",
        "sessionId": "s" * 200,
        "messageId": "😀" * 100,
        "x": [1],
    }
    store.save([Candidate("fact", source, "k")])
    assert dict(store.snapshot().records[0].source) == source


@pytest.mark.parametrize(
    "key", ["", "k" * 1001, "😀" * 501, "key \ud800"], ids=["empty", "1001", "astral", "surrogate"]
)
def test_bad_idempotency_keys_are_refused(
    workspace: Path, target: tuple[RecordStore, WriteResult | None], key: str
) -> None:
    store, _ = target
    batch = [manual("fine", "fine"), Candidate("fact", {"kind": "manual"}, key)]
    expect_unchanged(workspace, "invalid", Messages.KEY_REQUIRED, store.save, batch)


def test_a_key_of_1000_units_is_accepted(workspace: Path) -> None:
    assert RecordStore(workspace).save([manual("fact", "😀" * 500)]).status == "saved"


@pytest.mark.parametrize("size", [0, 41])
def test_batches_must_hold_one_to_forty(
    workspace: Path, target: tuple[RecordStore, WriteResult | None], size: int
) -> None:
    store, _ = target
    batch = [manual(f"fact {i}", f"k{i}") for i in range(size)]
    expect_unchanged(workspace, "invalid", Messages.BATCH_SIZE, store.save, batch)
    expect_unchanged(workspace, "invalid", Messages.BATCH_SIZE, store.save, iter(batch))


@pytest.mark.parametrize("reserve", [-1, True, 1.5, "10"], ids=repr)
def test_the_preflight_reserve_must_be_a_non_negative_integer(
    workspace: Path, target: tuple[RecordStore, WriteResult | None], reserve: Any
) -> None:
    store, _ = target
    expect_unchanged(workspace, "invalid", Messages.RESERVATION, store.preflight, reserve)


# -- revisions and ids -----------------------------------------------------------------------


def test_a_stale_store_revision_is_refused_everywhere(
    workspace: Path, seeded: tuple[RecordStore, WriteResult]
) -> None:
    store, first = seeded
    store.save([manual("third fact", "c")])
    record = first.record_id or ""
    expect_unchanged(
        workspace, "conflict", Messages.STALE, store.save, [manual("x")], first.revision
    )
    expect_unchanged(
        workspace, "conflict", Messages.STALE, store.correct, record, "x", first.revision
    )
    expect_unchanged(workspace, "conflict", Messages.STALE, store.revoke, record, first.revision)
    expect_unchanged(workspace, "conflict", Messages.STALE, store.compact, first.revision)


@pytest.mark.parametrize("revision", ["", "xyz", "A" * 64, "0" * 64])
def test_malformed_or_unknown_revisions_are_stale(
    workspace: Path, seeded: tuple[RecordStore, WriteResult], revision: str
) -> None:
    store, first = seeded
    record = first.record_id or ""
    expect_unchanged(workspace, "conflict", Messages.STALE, store.correct, record, "x", revision)
    expect_unchanged(workspace, "conflict", Messages.STALE, store.revoke, record, revision)


def test_a_stale_record_revision_is_refused(
    workspace: Path, seeded: tuple[RecordStore, WriteResult]
) -> None:
    store, first = seeded
    record = first.record_id or ""
    old = first.record_revision or ""
    corrected = store.correct(record, "first fact, corrected", old)
    # The record changed (it is superseded now), so its old record revision is stale, and
    # the answer names the current version instead of sending the caller round a refresh loop.
    message = Messages.CORRECTED.format(
        old=record, current=corrected.record_id, revision=(corrected.record_revision or "")[:16]
    )
    expect_unchanged(workspace, "not_found", message, store.revoke, record, old)
    # Another record's revision does not vouch for this one.
    other = store.projection().records[0]
    assert other.id == first.record_ids[1]
    newest = store.projection().records[1]
    expect_unchanged(
        workspace, "conflict", Messages.STALE, store.correct, newest.id, "x", other.record_revision
    )


def test_unknown_ids_are_not_found(
    workspace: Path, seeded: tuple[RecordStore, WriteResult]
) -> None:
    store, first = seeded
    revision = first.revision
    expect_unchanged(
        workspace, "not_found", Messages.ACTIVE_NOT_FOUND, store.correct, SOME_ID, "x", revision
    )
    expect_unchanged(workspace, "not_found", Messages.NOT_FOUND, store.revoke, SOME_ID, revision)
    prefix = (first.record_id or "")[:8]
    expect_unchanged(workspace, "not_found", Messages.NOT_FOUND, store.revoke, prefix, revision)


def test_a_reused_key_with_other_content_changes_nothing(
    workspace: Path, seeded: tuple[RecordStore, WriteResult]
) -> None:
    store, _ = seeded
    expect_unchanged(
        workspace, "conflict", Messages.KEY_REUSED, store.save, [manual("other text", "a")]
    )
    reused = [conversation("second fact", "b", message="another")]
    expect_unchanged(workspace, "conflict", Messages.KEY_REUSED, store.save, reused)


# -- unsafe paths ----------------------------------------------------------------------------


@pytest.mark.parametrize("operation", list(WITH_DOCTOR.values()), ids=list(WITH_DOCTOR))
def test_a_symlinked_memory_directory_cannot_escape(
    tmp_path: Path, workspace: Path, operation: Operation
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "records.md").write_bytes(HEADER.encode())
    (workspace / "memory").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    expect_unchanged(
        workspace, "unsafe_path", Messages.MEMORY_PATH, operation, RecordStore(workspace)
    )
    assert tree(outside) == before


@pytest.mark.parametrize("dangling", [False, True], ids=["to a file", "dangling"])
@pytest.mark.parametrize("operation", list(WITH_DOCTOR.values()), ids=list(WITH_DOCTOR))
def test_a_symlinked_records_file_cannot_escape(
    tmp_path: Path, workspace: Path, operation: Operation, dangling: bool
) -> None:
    outside = tmp_path / "outside.md"
    if not dangling:
        outside.write_bytes(HEADER.encode())
    (workspace / "memory").mkdir()
    records_path(workspace).symlink_to(outside)
    expect_unchanged(
        workspace, "unsafe_path", Messages.MEMORY_PATH, operation, RecordStore(workspace)
    )
    assert outside.exists() is not dangling
    if not dangling:
        assert outside.read_bytes() == HEADER.encode()


@pytest.mark.parametrize("odd", ["memory is a file", "records.md is a directory"])
@pytest.mark.parametrize("operation", list(WITH_DOCTOR.values()), ids=list(WITH_DOCTOR))
def test_memory_paths_of_the_wrong_type_are_unsafe(
    workspace: Path, operation: Operation, odd: str
) -> None:
    if odd == "memory is a file":
        (workspace / "memory").write_text("not a directory")
    else:
        records_path(workspace).mkdir(parents=True)
    expect_unchanged(
        workspace, "unsafe_path", Messages.MEMORY_PATH, operation, RecordStore(workspace)
    )


@pytest.mark.parametrize("operation", list(WITH_DOCTOR.values()), ids=list(WITH_DOCTOR))
def test_a_workspace_must_be_an_existing_absolute_directory(
    tmp_path: Path, operation: Operation
) -> None:
    file = tmp_path / "a-file"
    file.write_text("hello")
    before = tree(tmp_path)
    expect_error("unsafe_path", Messages.WORKSPACE_NOT_DIR, operation, RecordStore(file))
    expect_error("unsafe_path", Messages.ABSOLUTE_WORKSPACE, operation, RecordStore("relative/ws"))
    expect_error("unsafe_path", Messages.ABSOLUTE_WORKSPACE, operation, RecordStore(""))
    expect_error(
        "storage", Messages.WORKSPACE_MISSING, operation, RecordStore(tmp_path / "missing")
    )
    assert tree(tmp_path) == before
    assert not Path("relative").exists()


# -- corrupt and oversized files -------------------------------------------------------------


def _good_file(workspace: Path) -> bytes:
    RecordStore(workspace).save([manual("first fact", "a"), manual("第二 😀", "b")])
    data = raw(workspace)
    records_path(workspace).unlink()
    return data


CORRUPT_FILES: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "foreign": (lambda good: b"# My own memory\n\nI like tea.\n", Messages.FOREIGN),
    "BOM": (lambda good: b"\xef\xbb\xbf" + good, Messages.FOREIGN),
    "CRLF everywhere": (lambda good: good.replace(b"\n", b"\r\n"), Messages.FOREIGN),
    "CRLF in content": (
        lambda good: good.replace(b"first fact", b"first\r\nfact"),
        Messages.EDITED,
    ),
    "truncated": (lambda good: good[: len(good) - 20], Messages.EDITED),
    "truncated to a byte": (lambda good: good[:1], Messages.FOREIGN),
    "length changed": (lambda good: good.replace(b"first fact", b"first fact!"), Messages.EDITED),
    "trailing whitespace": (lambda good: good + b" \n", Messages.EDITED),
    "invalid UTF-8": (lambda good: good.replace("😀".encode(), b"\xf0\x9f"), Messages.EDITED),
    "binary": (lambda good: bytes(range(256)), Messages.FOREIGN),
}


@pytest.mark.parametrize("operation", list(OPERATIONS.values()), ids=list(OPERATIONS))
@pytest.mark.parametrize("damage, message", list(CORRUPT_FILES.values()), ids=list(CORRUPT_FILES))
def test_a_corrupt_or_foreign_file_is_never_read_or_overwritten(
    workspace: Path, operation: Operation, damage: Callable[[bytes], bytes], message: str
) -> None:
    records_path(workspace).parent.mkdir(exist_ok=True)
    records_path(workspace).write_bytes(damage(_good_file(workspace)))
    expect_unchanged(workspace, "corrupt", message, operation, RecordStore(workspace))


def test_doctor_reports_corruption_with_the_record_index(workspace: Path) -> None:
    good = _good_file(workspace)
    records_path(workspace).write_bytes(good.replace("第二".encode(), "第三".encode()[:-1]))
    before = tree(workspace)
    report = RecordStore(workspace).doctor(fix=True)
    assert report.error is not None and not report.ok
    assert (report.error.code, report.error.message) == ("corrupt", Messages.EDITED)
    assert getattr(report.error, "record_index", None) == 1
    assert report.used_bytes == len(good) - 1
    assert tree(workspace) == before


@pytest.mark.parametrize("operation", list(OPERATIONS.values()), ids=list(OPERATIONS))
def test_a_file_over_2_mib_is_refused_even_for_reads(workspace: Path, operation: Operation) -> None:
    records_path(workspace).parent.mkdir()
    records_path(workspace).write_bytes(
        HEADER.encode() + b"x" * (MAX_STORE_BYTES + 1 - len(HEADER))
    )
    expect_unchanged(workspace, "capacity", Messages.FULL, operation, RecordStore(workspace))
    report = RecordStore(workspace).doctor()
    assert report.error is not None and report.error.code == "capacity"
    assert report.used_bytes == MAX_STORE_BYTES + 1


def test_nothing_is_created_by_refused_input_in_an_empty_workspace(workspace: Path) -> None:
    store = RecordStore(workspace)
    cases: list[tuple[str, str, Callable[[], object]]] = [
        ("invalid", Messages.BATCH_SIZE, lambda: store.save([])),
        ("invalid", Messages.CONTENT, lambda: store.save([manual("")])),
        (
            "invalid",
            Messages.TOOL_SOURCE,
            lambda: store.save([Candidate("x", {"kind": "tool"}, "k")]),
        ),
        (
            "secret",
            secret_message(("assignment",)),
            lambda: store.save([manual("password = hunter2!")]),
        ),
        ("invalid", Messages.CONTENT, lambda: store.correct(SOME_ID, "", SOME_REVISION)),
        (
            "secret",
            secret_message(("aws_access_key",)),
            lambda: store.correct(SOME_ID, "AKIAABCDEFGHIJKLMNOP", SOME_REVISION),
        ),
        ("invalid", Messages.RESERVATION, lambda: store.preflight(-1)),
    ]
    for code, message, call in cases:
        expect_error(code, message, call)
    assert tree(workspace) == {}
