"""A ``v3`` records file: a forget appended as tombstones that claim the versions they forget.

The read side of forgetting without a rewrite (docs/record-format.md, "Appended forgets"): a
later ``revoked`` block whose id an earlier block has takes that block's place, so the file
reads as the same records, with the same record revisions, as the file a rewrite writes; a
claimed block is skipped whatever it holds, including the filler an in-place erasure leaves
(:func:`erase_block`), which keeps the block's shape however much of that write reaches the
disk, sector by sector. A block no tombstone claims is still corrupt.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from tests.core.store_helpers import manual, records_path

from memquill import RecordStore
from memquill.errors import CorruptError
from memquill.store._codec import (
    HEADER_V2,
    HEADER_V3,
    HEADERS,
    decode_store,
    encode_block,
    erase_block,
)
from memquill.store._diagnose import diagnose, torn_tail
from memquill.store._memo import decode_snapshot

SECTOR = 512


def _blocks(raw: bytes) -> list[bytes]:
    """The block bytes of a records file, in order."""
    text = raw.decode("utf-8")
    header = next(h for h in HEADERS if text.startswith(h))
    return [block.encode() for block in _split(text[len(header) :])]


def _split(body: str) -> list[str]:
    image = decode_store(HEADER_V2 + body)
    return [encode_block(record) for record in image.records]


def _forgotten(tmp_path: Path, *, erase: bool = False) -> tuple[bytes, bytes, int]:
    """A v3 file holding three facts and the appended forget of the second (its block erased
    in place when ``erase``), the file a rewrite gives for the same forget, and the place of
    the forgotten block."""
    store = RecordStore(tmp_path)
    store.save(
        [manual("the first fact"), manual("ünïcode, 北京 and 🎉 in the second", "prefs/second")]
    )
    store.save([manual("the third fact")])
    before = records_path(tmp_path).read_bytes()
    target = store.snapshot().records[1]
    rewritten = store.revoke(target.id, store.snapshot().revision)
    after = records_path(tmp_path).read_bytes()
    tombstone = next(r for r in rewritten.records if r.id == target.id)
    blocks = _blocks(before)
    if erase:
        blocks[1] = erase_block(blocks[1])
    v3 = HEADER_V3.encode() + b"".join(blocks) + encode_block(tombstone).encode()
    return v3, after, 1


def test_an_appended_forget_reads_as_the_rewritten_file(tmp_path: Path) -> None:
    v3, rewritten, _ = _forgotten(tmp_path)
    identity = b"workspace"
    appended, whole = decode_snapshot(identity, v3), decode_snapshot(identity, rewritten)
    assert list(appended.records) == list(whole.records)
    assert [appended.record_revision(r) for r in appended.records] == [
        whole.record_revision(r) for r in whole.records
    ]
    assert diagnose(v3) is None
    assert torn_tail(v3) is None


def test_an_erased_block_reads_as_its_tombstone(tmp_path: Path) -> None:
    v3, rewritten, place = _forgotten(tmp_path, erase=True)
    assert "北京".encode() not in v3.split(b"<!-- memory-record ")[place + 1]
    assert decode_store(v3.decode()).records == decode_store(rewritten.decode()).records
    assert diagnose(v3) is None


def test_an_erased_block_no_tombstone_claims_is_corrupt_and_named(tmp_path: Path) -> None:
    v3, _, place = _forgotten(tmp_path, erase=True)
    unclaimed = v3[: v3.rindex(b"<!-- memory-record ")]
    with pytest.raises(CorruptError) as raised:
        decode_store(unclaimed.decode())
    assert raised.value.record_index == place
    found = diagnose(unclaimed)
    assert found is not None and found.record_index == place
    assert "no tombstone follows it" in found.reason


def test_only_a_v3_file_takes_claims(tmp_path: Path) -> None:
    v3, _, _ = _forgotten(tmp_path)
    as_v2 = HEADER_V2.encode() + v3[len(HEADER_V3) :]
    with pytest.raises(CorruptError):
        decode_store(as_v2.decode())


def test_a_tombstone_claims_no_tombstone(tmp_path: Path) -> None:
    v3, _, _ = _forgotten(tmp_path)
    twice = v3 + v3[v3.rindex(b"<!-- memory-record ") :]
    with pytest.raises(CorruptError) as raised:
        decode_store(twice.decode())
    assert raised.value.record_index == 4
    found = diagnose(twice)
    assert found is not None and found.record_index == 4


def test_a_forgotten_key_is_free_again_after_its_claim(tmp_path: Path) -> None:
    v3, _, _ = _forgotten(tmp_path)
    (tmp_path / "again").mkdir()
    again = RecordStore(tmp_path / "again")
    again.save([replace(manual("a new second fact"), key="prefs/second")])
    reused = again.snapshot().records[0]
    records = decode_store((v3 + encode_block(reused).encode()).decode()).records
    assert [r.key for r in records if r.status == "active"] == [None, None, "prefs/second"]


def test_the_store_reads_and_extends_a_v3_file(tmp_path: Path) -> None:
    v3, _, _ = _forgotten(tmp_path, erase=True)
    records_path(tmp_path).write_bytes(v3)
    store = RecordStore(tmp_path)
    assert [r.status for r in store.snapshot().records] == ["active", "revoked", "active"]
    store.save([manual("a fourth fact")])
    third = store.snapshot().records[2]
    store.correct(third.id, "the third fact, corrected", store.snapshot().revision)
    raw = records_path(tmp_path).read_bytes()
    assert raw.startswith(v3)  # appended: the claims and the erased block stay as they were
    statuses = [r.status for r in RecordStore(tmp_path).snapshot().records]
    assert statuses == ["active", "revoked", "superseded", "active", "active"]
    assert store.doctor().ok


text_of = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Cf")), min_size=1, max_size=300
).filter(str.strip)


@settings(max_examples=40, deadline=None)
@given(content=text_of, key_text=text_of, seed=st.integers(0, 2**32 - 1))
def test_any_sector_mix_of_an_erasure_reads_as_its_tombstone(
    tmp_path_factory: pytest.TempPathFactory, content: str, key_text: str, seed: int
) -> None:
    # A power cut inside the in-place erasure leaves each 512-byte sector old or new, at any
    # alignment of the block in the file: every such mix must still read as the tombstone.
    tmp_path = tmp_path_factory.mktemp("mix")
    store = RecordStore(tmp_path)
    store.save([manual("a leading fact " * random.Random(seed).randrange(1, 40))])
    store.save([replace(manual(content, note=key_text), extra={"label": key_text})])
    before = records_path(tmp_path).read_bytes()
    target = store.snapshot().records[1]
    rewritten = store.revoke(target.id, store.snapshot().revision)
    tombstone = next(r for r in rewritten.records if r.id == target.id)
    blocks = _blocks(before)
    head = HEADER_V3.encode() + blocks[0]
    old, new = blocks[1], erase_block(blocks[1])
    assert len(old) == len(new)
    rng = random.Random(seed)
    mixed = bytearray(old)
    for start in range(-(len(head) % SECTOR), len(old), SECTOR):
        if rng.random() < 0.5:
            mixed[max(start, 0) : start + SECTOR] = new[max(start, 0) : start + SECTOR]
    file = head + bytes(mixed) + encode_block(tombstone).encode()
    expected = decode_store(records_path(tmp_path).read_bytes().decode()).records
    assert decode_store(file.decode("utf-8")).records == expected
