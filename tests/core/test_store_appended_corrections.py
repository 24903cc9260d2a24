"""A correction appends its new version; the version it replaces reads as superseded.

issue 33 item 3: an update's cost must not grow with the file. A correction used to rewrite the
whole file to turn the old version's ``active`` into ``superseded``. A ``v2`` file lets the new
version's ``supersedes`` say it instead: the old block stays as written and reads as superseded
since the new version's ``createdAt``, which is exactly what the rewrite wrote. A memquill
``v1`` file becomes ``v2`` at its first correction (one rewrite); the original system's files
keep their corrections rewritten, so that system still reads them. Any rewrite (a forget, a
compaction, a merge) writes every status in place again.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from tests.core.store_helpers import conversation, manual, raw, records_path, revision_of

from memquill import RecordStore
from memquill.store._codec import (
    HEADER,
    HEADER_V2,
    HEADER_V3,
    LEGACY_HEADER,
    decode_store,
    encode_block,
    encode_store,
)
from memquill.store._diagnose import diagnose
from memquill.store._record import FactKey, Record
from memquill.store._results import Candidate

STANDUP = FactKey("team/standup")


def _corrected(workspace: Path, times: int) -> tuple[RecordStore, Record]:
    """A store with one keyed fact corrected ``times`` times (and another fact beside it)."""
    store = RecordStore(workspace)
    standup = Candidate("The standup is at 9:00", {"kind": "manual"}, "k-1", key="team/standup")
    store.save([standup, manual("I like tea")])
    current = store.snapshot().by_key("team/standup")
    assert current is not None
    for turn in range(times):
        store.correct(STANDUP, f"The standup is at 9:{turn + 1:02d}", store.snapshot().revision)
        current = store.snapshot().by_key("team/standup")
        assert current is not None
    return store, current


def test_the_first_correction_rewrites_a_v1_file_as_v2_and_the_next_ones_append(
    tmp_path: Path,
) -> None:
    store, _ = _corrected(tmp_path, 0)
    assert raw(tmp_path).startswith(HEADER.encode())
    store.correct(STANDUP, "The standup is at 9:15", store.snapshot().revision)
    first = raw(tmp_path)
    assert first.startswith(HEADER_V2.encode())
    # The rewrite wrote every status in place: nothing in it is implied.
    assert encode_store(decode_store(first.decode())).encode() == first

    before = os.stat(records_path(tmp_path))
    result = store.correct(STANDUP, "The standup is at 9:30", store.snapshot().revision)
    after = os.stat(records_path(tmp_path))
    block = encode_block(result.records[-1]).encode()
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size + len(block))
    assert raw(tmp_path) == first + block


def test_an_appended_correction_reads_as_the_rewrite_would_have_written_it(
    tmp_path: Path,
) -> None:
    store, current = _corrected(tmp_path, 4)
    data = raw(tmp_path)
    image = decode_store(data.decode())
    family = [r for r in image.records if r.root_id == current.root_id]
    assert [r.status for r in family] == ["superseded"] * 4 + ["active"]
    for old, new in itertools.pairwise(family):
        assert new.supersedes == old.id
        assert old.updated_at == new.created_at
    # In the bytes, the appended corrections left their predecessors written active.
    assert data.count(b'"status":"active"') > 2
    # A rewrite of the same records reads back as the same records.
    rewritten = encode_store(image)
    assert decode_store(rewritten) == image
    fresh = RecordStore(tmp_path).snapshot()
    assert fresh.revision == store.snapshot().revision == revision_of(tmp_path, data)
    assert fresh.records == store.snapshot().records == image.records
    assert diagnose(data) is None  # doctor: healthy, no key "used twice"


def test_a_rewrite_writes_every_status_in_place_again(tmp_path: Path) -> None:
    store, _ = _corrected(tmp_path, 3)
    before = decode_store(raw(tmp_path).decode())
    tea = next(r for r in before.records if r.content == "I like tea")
    store.revoke(tea.id, store.snapshot().revision)  # the first forget: v2 becomes v3
    after = raw(tmp_path)
    assert after.startswith(HEADER_V3.encode())
    assert encode_store(decode_store(after.decode())).encode() == after
    assert after.count(b'"status":"active"') == 1
    kept = [r for r in decode_store(after.decode()).records if r.root_id != tea.root_id]
    assert kept == [r for r in before.records if r.root_id != tea.root_id]


def test_the_original_systems_file_keeps_its_corrections_rewritten(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save([manual("The standup is at 9:00")])
    legacy = LEGACY_HEADER.encode() + raw(tmp_path)[len(HEADER) :]
    records_path(tmp_path).write_bytes(legacy)
    store = RecordStore(tmp_path)
    fact = store.snapshot().records[0]
    store.correct(fact.id, "The standup is at 9:30", store.snapshot().revision)
    data = raw(tmp_path)
    assert data.startswith(LEGACY_HEADER.encode())
    assert b'"status":"superseded"' in data
    assert encode_store(decode_store(data.decode())).encode() == data


def test_another_store_reads_an_appended_correction_from_its_memo(tmp_path: Path) -> None:
    writer, _ = _corrected(tmp_path, 1)
    reader = RecordStore(tmp_path)
    older = reader.snapshot()  # the reader's memo now holds the file as it is
    first = older.by_key("team/standup")
    assert first is not None
    writer.save([conversation("Lunch is at noon", "lunch", message="m-1")])
    writer.correct(STANDUP, "The standup is at 10:00", writer.snapshot().revision)
    newer = reader.snapshot()  # decodes only the appended blocks
    current = newer.by_key("team/standup")
    assert current is not None and current.content == "The standup is at 10:00"
    old = newer.find(first.id)
    assert old is not None and old.status == "superseded"
    assert newer.find(first.id, active_only=True) is None
    assert newer.current(old) == current
    # The snapshot read before still answers as it did.
    assert older.by_key("team/standup") == first
    assert newer.records == RecordStore(tmp_path).snapshot().records


def test_a_snapshot_from_before_a_correction_keeps_its_answers(tmp_path: Path) -> None:
    store, first = _corrected(tmp_path, 1)
    before = store.snapshot()
    assert before.by_key("team/standup") == first
    store.correct(STANDUP, "The standup is at 10:00", before.revision)
    after = store.snapshot()
    moved = after.by_key("team/standup")
    assert moved is not None and moved.content == "The standup is at 10:00"
    assert before.by_key("team/standup") == first  # its own index, not the patched one
    assert before.find(first.id, active_only=True) == first


def test_a_corrected_conversation_message_stays_blocked(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save([conversation("I live in Paris", "paris", message="m-1")])
    fact = store.snapshot().records[0]
    store.correct(fact.id, "I live in Lyon", store.snapshot().revision)
    store.correct(store.snapshot().records[-1].id, "I live in Nice", store.snapshot().revision)
    again = store.save([conversation("I live in Paris", "paris", message="m-1")])
    assert again.status == "blocked"
    assert RecordStore(tmp_path).save(
        [conversation("I live in Paris", "paris", message="m-1")]
    ).status == ("blocked")
