"""The store remembers the last file it decoded or wrote, and trusts it only for the same bytes.

Every figure a long-lived store reports (records, revisions, the bytes it writes) must equal
what a store that never saw the file reports: the memo may only save work, never change an
answer.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from tests.core.store_helpers import expect_error, manual, raw, records_path, revision_of

from memquill import RecordStore
from memquill.errors import CorruptError, Messages
from memquill.store._codec import (
    HEADER,
    HEADER_V2,
    HEADER_V3,
    LEGACY_HEADER,
    decode_store,
    encode_store,
)
from memquill.store._record_list import CHUNK


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def assert_as_fresh(workspace: Path, store: RecordStore) -> None:
    """``store`` answers exactly as a store that never saw the file, and the file is canonical."""
    data = raw(workspace)
    mine, fresh = store.snapshot(), RecordStore(workspace).snapshot()
    assert mine.revision == fresh.revision == revision_of(workspace, data)
    assert [(r.meta, r.content) for r in mine.records] == [
        (r.meta, r.content) for r in fresh.records
    ]
    assert mine.size_bytes == len(data)
    if data:
        # Canonical: rewriting gives the same bytes, or (appended corrections, appended
        # forgets) the bytes that write every status in place and read as the same records.
        image = decode_store(data.decode())
        rewritten = encode_store(image).encode()
        assert rewritten == data or (
            image.header in (HEADER_V2, HEADER_V3) and decode_store(rewritten.decode()) == image
        )


def test_an_unchanged_file_is_decoded_once(workspace: Path) -> None:
    store = RecordStore(workspace)
    store.save([manual("one")])
    first = store.snapshot()
    assert store.snapshot() is first
    assert store.projection() is store.projection()


def test_an_edit_of_the_same_length_is_seen_and_kept(workspace: Path) -> None:
    store = RecordStore(workspace)
    store.save([manual("the cat sat")])
    before = store.snapshot()
    edited = raw(workspace).replace(b"the cat sat", b"the dog sat")
    records_path(workspace).write_bytes(edited)
    after = store.snapshot()
    assert after.revision != before.revision
    assert [r.content for r in after.records] == ["the dog sat"]
    # A save builds on the edited file, never on the remembered one.
    store.save([manual("another")])
    assert [r.content for r in decode_store(raw(workspace).decode()).records] == [
        "the dog sat",
        "another",
    ]
    assert_as_fresh(workspace, store)


def test_appends_by_another_writer_are_decoded_from_where_the_file_was(workspace: Path) -> None:
    mine, other = RecordStore(workspace), RecordStore(workspace)
    mine.save([manual("mine 1")])
    for n in range(3):
        other.save([manual(f"other {n}")])
        assert_as_fresh(workspace, mine)
        mine.save([manual(f"mine {n + 2}")])
        assert_as_fresh(workspace, mine)
    contents = [r.content for r in mine.snapshot().records]
    assert contents == ["mine 1", "other 0", "mine 2", "other 1", "mine 3", "other 2", "mine 4"]


def test_another_writers_append_is_taken_in_sharing_the_records_it_left_alone(
    workspace: Path,
) -> None:
    # More records than a chunk holds, in a v2 file (its first correction rewrote it), so an
    # appended correction supersedes its version in place.
    mine, other = RecordStore(workspace), RecordStore(workspace)
    for start in range(0, CHUNK + 100, 40):  # 40 candidates a save at most
        mine.save([manual(f"fact {n}") for n in range(start, min(start + 40, CHUNK + 100))])
    first = mine.snapshot().records[0]
    mine.correct(first.id, "fact 0, corrected", mine.snapshot().revision)
    before = mine.snapshot().records
    assert raw(workspace).startswith(HEADER_V2.encode())
    other.save([manual("another")])
    saved = mine.snapshot().records
    # Taken in from where the file was: the records before it are the same chunks, not a copy.
    assert saved.chunks[0] is before.chunks[0]
    late = saved[CHUNK + 50]
    other.correct(late.id, "fact late, corrected", other.snapshot().revision)
    corrected = mine.snapshot().records
    assert corrected.chunks[0] is saved.chunks[0]  # the superseded version is in the second
    assert corrected.changes(saved) == [CHUNK + 50]
    assert corrected[CHUNK + 50].status == "superseded"
    assert_as_fresh(workspace, mine)


def test_a_hand_written_block_appended_is_kept_then_rewritten_canonically(workspace: Path) -> None:
    store = RecordStore(workspace)
    store.save([manual("first")])
    store.snapshot()
    # A person appends a valid block with spaces in its metadata (decodes, but not canonical).
    spaced = (
        '<!-- memory-record {"id": "11111111-1111-4111-8111-111111111111", '
        '"rootId": "11111111-1111-4111-8111-111111111111", "source": {"kind": "manual"}, '
        '"status": "active", "createdAt": "2025-01-01T00:00:00.000Z", '
        '"updatedAt": "2025-01-01T00:00:00.000Z", "operationHash": "x", "contentLength": 4} -->\n'
        "hand\n\n"
    )
    with records_path(workspace).open("ab") as handle:
        handle.write(spaced.encode())
    assert [r.content for r in store.snapshot().records] == ["first", "hand"]
    store.save([manual("after")])
    # A save appends: the hand-written block stays as written (it decodes) until a write
    # rewrites the file, which writes it canonically.
    assert b'{"id": "1111' in raw(workspace)
    assert store.snapshot().revision == RecordStore(workspace).snapshot().revision
    first = store.snapshot().records[0]
    store.correct(first.id, "first, corrected", store.snapshot().revision)
    assert b'{"id": "1111' not in raw(workspace)
    assert_as_fresh(workspace, store)


def test_a_corrupt_append_is_reported_as_a_fresh_store_reports_it(workspace: Path) -> None:
    store = RecordStore(workspace)
    store.save([manual("one"), manual("two")])
    store.snapshot()
    with records_path(workspace).open("ab") as handle:
        handle.write(b"<!-- memory-record {not json} -->\nx\n\n")
    mine = expect_error("corrupt", Messages.EDITED, store.snapshot)
    fresh = expect_error("corrupt", Messages.EDITED, RecordStore(workspace).snapshot)
    assert getattr(mine, "record_index", None) == getattr(fresh, "record_index", None) == 2
    with records_path(workspace).open("ab") as handle:
        handle.write(b"\xff\xfe")
    expect_error("corrupt", Messages.EDITED, store.save, [manual("never")])


def test_a_workspace_that_now_resolves_elsewhere_is_not_taken_for_the_old_one(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    RecordStore(first).save([manual("same fact", "k")])
    (second / "memory").mkdir()
    records_path(second).write_bytes(raw(first))
    link = tmp_path / "link"
    link.symlink_to(first)
    store = RecordStore(link)
    at_first = store.snapshot()
    link.unlink()
    link.symlink_to(second)
    at_second = store.snapshot()
    assert at_first.revision == revision_of(first, raw(first))
    assert at_second.revision == revision_of(second, raw(second)) != at_first.revision


def test_a_legacy_header_survives_saves_through_the_memo(workspace: Path) -> None:
    store = RecordStore(workspace)
    store.save([manual("one")])
    data = raw(workspace)
    records_path(workspace).write_bytes(LEGACY_HEADER.encode() + data[len(HEADER.encode()) :])
    store.save([manual("two")])
    store.save([manual("three")])
    assert raw(workspace).startswith(LEGACY_HEADER.encode())
    assert_as_fresh(workspace, store)


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["save", "other-save", "correct", "revoke", "compact", "edit"]),
        st.integers(0, 1000),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(OPERATIONS)
def test_any_sequence_answers_as_a_fresh_store(
    tmp_path: Path, steps: list[tuple[str, int]]
) -> None:
    workspace = tmp_path / f"ws-{os.urandom(4).hex()}"
    workspace.mkdir()
    mine, other = RecordStore(workspace), RecordStore(workspace)
    for number, (kind, pick) in enumerate(steps):
        active = [r for r in mine.snapshot().records if r.status == "active"]
        target = active[pick % len(active)] if active else None
        revision = mine.snapshot().revision
        if kind == "save" or target is None:
            mine.save([manual(f"fact {number}")])
        elif kind == "other-save":
            other.save([manual(f"other {number}")])
        elif kind == "correct":
            other.correct(target.id, f"corrected {number}", revision)
        elif kind == "revoke":
            mine.revoke(target.id, revision)
        elif kind == "compact":
            other.compact(revision)
        else:  # a person edits a fact's text in place, keeping the format valid
            data = raw(workspace)
            old = target.content.encode()
            records_path(workspace).write_bytes(data.replace(old, old.upper(), 1))
        assert_as_fresh(workspace, mine)
        assert_as_fresh(workspace, other)


def test_readers_in_other_threads_get_the_revision_of_the_bytes_they_read_while_forgets_erase(
    workspace: Path,
) -> None:
    """A forget erases the memo's own buffer in place: a reader comparing bytes with it at
    the same moment must still get the revision of exactly the bytes it read."""
    store = RecordStore(workspace)
    first = store.save([manual("a fact to forget at once", "first")])
    store.revoke(first.record_ids[0] or "", first.revision)  # v3: later forgets append
    memo = store.backend.memo
    identity = store.backend.identity()
    stop = threading.Event()
    wrong: list[tuple[str, str]] = []
    seen = [0]

    def read() -> None:
        while not stop.is_set():
            data = raw(workspace)
            try:
                decoded = memo.decode(identity, data)
            except CorruptError:
                continue  # a read inside an append: the store reads again under the lock
            seen[0] += 1
            if decoded.snapshot.revision != revision_of(workspace, data):
                wrong.append((decoded.snapshot.revision, revision_of(workspace, data)))

    readers = [threading.Thread(target=read) for _ in range(2)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads every few instructions: the window is small
    for reader in readers:
        reader.start()
    try:
        for cycle in range(150):
            saved = store.save([manual(f"churned fact {cycle}", f"churn-{cycle}")])
            store.revoke(saved.record_ids[0] or "", saved.revision)
    finally:
        stop.set()
        for reader in readers:
            reader.join()
        sys.setswitchinterval(interval)
    assert seen[0] > 0
    assert wrong == []
    assert_as_fresh(workspace, store)
