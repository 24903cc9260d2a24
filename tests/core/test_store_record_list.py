"""A snapshot's records read exactly like the tuple they stand for, and a write shares every
chunk it leaves alone with the snapshot before it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from memquill.store._record import Record
from memquill.store._record_list import CHUNK, RecordList


def _records(count: int, tag: str = "r") -> tuple[Record, ...]:
    return tuple(Record({"id": f"{tag}{n}"}, f"text {n}") for n in range(count))


SIZES = (0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7)


@pytest.mark.parametrize("size", SIZES)
def test_a_record_list_reads_as_its_tuple(size: int) -> None:
    items = _records(size)
    listed = RecordList(items)
    assert (
        len(listed) == size
        and tuple(listed) == items
        and list(reversed(listed)) == list(reversed(items))
    )
    assert listed == items and items == listed and listed == RecordList(items)
    assert listed != items[:-1] or size == 0
    for position in {0, 1, size // 2, size - 1, -1, -size, CHUNK, -CHUNK - 1}:
        if -size <= position < size:
            assert listed[position] is items[position]
    for bad in (size, -size - 1):
        with pytest.raises(IndexError):
            listed[bad]
    cuts = (slice(None), slice(1, None), slice(-3, None), slice(None, None, -2), slice(5, 2))
    for cut in (*cuts, slice(CHUNK - 1, CHUNK + 2), slice(-CHUNK - 2, -1), slice(size, None)):
        assert listed[cut] == items[cut]
    if items:
        assert items[-1] in listed and listed.index(items[-1]) == size - 1
    assert Record({}, "") not in listed and listed.count(Record({}, "")) == 0
    assert listed + _records(2, "x") == items + _records(2, "x")


def test_appending_shares_every_chunk_but_the_last() -> None:
    before = RecordList(_records(3 * CHUNK + 5))
    after = before.extended(_records(2, "new"))
    assert len(after) == 3 * CHUNK + 7 and tuple(after) == tuple(before) + _records(2, "new")
    for old, new in zip(before.chunks[:-1], after.chunks[:-1], strict=True):
        assert old is new
    assert before.extended(()) is before


def test_replacing_a_place_shares_every_other_chunk() -> None:
    items = _records(3 * CHUNK + 5)
    before = RecordList(items)
    fresh = Record({"id": "fresh"}, "fresh")
    after = before.replaced({CHUNK + 3: fresh})
    assert after[CHUNK + 3] is fresh and before[CHUNK + 3] is items[CHUNK + 3]
    expected = list(items)
    expected[CHUNK + 3] = fresh
    assert after == tuple(expected)
    shared = [n for n in range(len(before.chunks)) if before.chunks[n] is after.chunks[n]]
    assert shared == [0, 2, 3]
    with pytest.raises(IndexError):
        before.replaced({len(items): fresh})


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2 * CHUNK + 3),
    st.lists(st.integers(0, 3 * CHUNK), max_size=4),
    st.integers(0, CHUNK + 2),
)
def test_append_and_replace_match_the_tuple(size: int, places: list[int], added: int) -> None:
    items = _records(size)
    fresh = {p: Record({"id": f"f{p}"}, "f") for p in places if p < size}
    expected = list(items)
    for place, record in fresh.items():
        expected[place] = record
    expected.extend(_records(added, "a"))
    made = RecordList(items).replaced(fresh).extended(_records(added, "a"))
    assert made == tuple(expected) and len(made) == len(expected)
    assert all(len(chunk) == CHUNK for chunk in made.chunks[:-1])
    assert all(made.chunks)


def test_changes_are_the_places_holding_other_objects() -> None:
    items = _records(3 * CHUNK + 5)
    before = RecordList(items)
    fresh = _records(3, "fresh")
    after = before.replaced({3: fresh[0], 2 * CHUNK + 1: fresh[1]}).extended(_records(4, "new"))
    assert after.changes(before) == [3, 2 * CHUNK + 1]
    assert before.changes(after) == [3, 2 * CHUNK + 1]
    assert after.changes(after) == [] and before.extended(fresh).changes(before) == []
    shorter = RecordList(items[: CHUNK + 2])
    assert shorter.changes(before) == [] and before.changes(shorter) == []
    # A list decoded apart shares no chunk: its records are compared one by one.
    apart = RecordList((*items[:7], fresh[2], *items[8:]))
    assert apart.changes(before) == [7]
