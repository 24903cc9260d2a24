"""The transaction's draft reads as the list it stands for, copying the snapshot's records only
once something but appending touches it (a save into a large store copies no reference)."""

from __future__ import annotations

import operator
from collections.abc import Callable

import pytest

from memquill.store._record import Record
from memquill.store._transaction import Draft


def _records(count: int) -> tuple[Record, ...]:
    return tuple(Record({"id": f"r{n}"}, f"text {n}") for n in range(count))


def test_an_appended_draft_reads_as_the_whole_list_without_copying() -> None:
    base, more = _records(5), _records(8)[5:]
    draft = Draft(base)
    draft.append(more[0])
    draft.extend(more[1:])
    expected = [*base, *more]
    assert draft._base is base  # nothing copied yet
    assert len(draft) == 8 and list(draft) == expected and draft[5:] == list(more)
    for position in range(-8, 8):
        assert draft[position] is expected[position]
    for bad in (8, -9):
        with pytest.raises(IndexError):
            draft[bad]
    assert base[2] in draft and more[1] in draft and Record({}, "") not in draft
    assert not draft.rewritten and draft._base is base
    assert draft.frozen() == tuple(expected)
    assert operator.ne(Draft(base), list(base)) is False and Draft(base) != list(base[1:])


def test_a_replaced_place_reads_as_replaced_before_and_after_the_copy() -> None:
    base = _records(6)
    draft = Draft(base)
    new = Record({"id": "new"}, "new")
    draft[2] = new
    draft.append(new)
    expected = [*base[:2], new, *base[3:], new]
    assert draft._base is base  # one place replaced: still nothing copied
    assert draft[2] is new and draft[-5] is new and draft[6:] == [new]
    assert draft.frozen() == tuple(expected) and draft.replaced == {2}
    assert list(draft) == expected and draft._base == ()  # iterating copies, once
    assert draft.frozen() == tuple(expected)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__(1, Record({"id": "x"}, "x")),
        lambda d: d.__setitem__(slice(None), list(d)[::-1]),
        lambda d: d.__delitem__(0),
        lambda d: d.insert(0, Record({"id": "x"}, "x")),
        lambda d: d.pop(),
        lambda d: d.remove(d[3]),
        lambda d: d.sort(key=lambda r: r.content, reverse=True),
        lambda d: d.reverse(),
        lambda d: d.clear(),
    ],
)
def test_any_other_change_acts_on_the_whole_list(change: Callable[[list[Record]], object]) -> None:
    base = _records(4)
    draft, plain = Draft(base), list(base)
    draft.append(_records(5)[4])
    plain.append(_records(5)[4])
    change(draft)
    change(plain)
    assert list(draft) == plain and len(draft) == len(plain) and draft == plain
    assert operator.ne(draft, plain) is False  # != reads the whole list too
    assert draft.rewritten
