"""``ItemStore.put_many`` and ``RecordStore.upsert``: many puts in one write, each with the
rules of one ``put``; a namespace's write is all or none."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from memquill import InvalidInputError, RecordStore
from memquill.errors import BlockedError, CapacityError
from memquill.items import ItemStore
from memquill.items._store import ItemPut
from memquill.store._record import Record
from memquill.store._results import Candidate

ANA = ("memories", "ana")
MIB = 1024 * 1024
TOOL = {"kind": "tool", "sessionId": "s1"}


def _statuses(root: Path, namespace: tuple[str, ...]) -> list[tuple[str, str | None, str]]:
    store = RecordStore(root.joinpath(*namespace))
    try:
        return [(r.status, r.key, r.content) for r in store.snapshot().records]
    finally:
        store.close()


def test_a_delete_among_puts_is_its_own_write_in_its_place(tmp_path: Path) -> None:
    items = ItemStore(tmp_path)
    items.put(ANA, "gone", {"content": "Ana's code word is heron."})
    items.put_many(
        [
            ItemPut(ANA, "a", {"content": "Ana reads."}),
            ItemPut(ANA, "gone", None),
            ItemPut(ANA, "c", {"content": "Ana swims."}),
        ]
    )
    assert [item.key for item in items.items(ANA)] == ["c", "a"]
    assert [status for status, _, _ in _statuses(tmp_path, ANA)] == [
        "revoked",
        "active",
        "active",
    ]
    # The forget came before these puts: its words are blocked, as for puts one by one.
    with pytest.raises(BlockedError):
        items.put_many(
            [
                ItemPut(ANA, "d", {"content": "Ana runs."}),
                ItemPut(ANA, "again", {"content": "Ana's code word is heron."}),
            ]
        )
    assert items.get(ANA, "d") is None, "a namespace's write is all or none"
    items.close()


def test_a_namespace_past_its_capacity_writes_none_of_its_puts(tmp_path: Path) -> None:
    items = ItemStore(tmp_path, capacity=1 * MIB)
    items.put(ANA, "first", {"content": "Ana reads."})
    value = {"text": "x" * 15_000}
    with pytest.raises(CapacityError):
        items.put_many([ItemPut(ANA, f"k{index}", value) for index in range(100)])
    assert [key for _, key, _ in _statuses(tmp_path, ANA)] == ["first"]
    items.close()


def test_upsert_saves_corrects_and_leaves_alone_by_key(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save([Candidate("Ana drinks tea.", TOOL, "op-1", "drink")])
    store.save([Candidate("Ana lives in Porto.", TOOL, "op-2", "home")])
    result = store.upsert(
        [
            Candidate("Ana plays chess.", TOOL, "op-3", "game"),
            Candidate("Ana drinks coffee.", TOOL, "op-4", "drink"),
            Candidate("Ana lives in Porto.", TOOL, "op-5", "home"),
        ]
    )
    assert [target.status for target in result.targets] == ["saved", "saved", "duplicate"]
    assert [(r.status, r.key, r.content) for r in result.records] == [
        ("superseded", "drink", "Ana drinks tea."),
        ("active", "home", "Ana lives in Porto."),
        ("active", "game", "Ana plays chess."),
        ("active", "drink", "Ana drinks coffee."),
    ]
    assert store.upsert([Candidate("Ana plays chess.", TOOL, "op-6", "game")]).status == (
        "duplicate"
    )
    store.close()


@pytest.mark.parametrize(
    "candidates",
    [
        [],
        [Candidate("No key.", TOOL, "op-1")],
        [Candidate("One.", TOOL, "op-1", "k"), Candidate("Two.", TOOL, "op-2", "k")],
    ],
)
def test_upsert_refuses_what_names_no_fact_once_before_touching_anything(
    tmp_path: Path, candidates: list[Candidate]
) -> None:
    store = RecordStore(tmp_path)
    with pytest.raises(InvalidInputError):
        store.upsert(candidates)
    assert not (tmp_path / "memory").exists()
    store.close()


def test_a_put_again_writes_nothing_only_when_text_and_extra_are_the_same_json(
    tmp_path: Path,
) -> None:
    # 1 and 1.0 are equal in Python, not in what a read gives back: a put of 1.0 over 1 is a
    # change; the very same value is not, by either path (a put, an upsert).
    items = ItemStore(tmp_path)
    items.put(ANA, "n", {"content": "Ana's number.", "n": 1})
    store = RecordStore(tmp_path.joinpath(*ANA))
    try:
        before = store.snapshot().revision
        items.put(ANA, "n", {"content": "Ana's number.", "n": 1})
        assert store.snapshot().revision == before
        items.put(ANA, "n", {"content": "Ana's number.", "n": 1.0})
        after = store.snapshot()
        assert after.revision != before
        current = after.by_key(next(r.key for r in after.records if r.key) or "")
        assert current is not None and current.extra is not None
        assert current.holds(current.content, dict(current.extra))
        assert not current.holds(current.content, None)
        assert not current.holds(current.content + " ", dict(current.extra))
    finally:
        store.close()


def test_an_upsert_of_many_new_facts_reads_each_ones_operation_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each new fact's operation is looked up among the versions the batch appended before it:
    # scanning them for each made 10,000 puts cost 50 million hash reads (25 s, inside the
    # write's transaction, which a database ended at its idle timeout). New facts come in
    # runs between corrections here, so the lookups of several runs share the index.
    store = RecordStore(tmp_path)
    store.upsert(
        [Candidate(f"Fact {n} as first said.", TOOL, f"op-{n}", f"k{n}") for n in range(50)]
    )
    reads = 0
    plain = Record.operation_hash

    def counted(record: Record) -> str:
        nonlocal reads
        reads += 1
        return cast(str, plain.fget(record))  # pyright: ignore[reportOptionalCall]

    monkeypatch.setattr(Record, "operation_hash", property(counted))
    batch = [
        Candidate(f"Fact {n} corrected.", TOOL, f"fix-{n}", f"k{n}")
        if n < 50 and n % 10 == 0
        else Candidate(f"New fact {n}.", TOOL, f"new-{n}", f"new{n}")
        for n in range(2_000)
    ]
    result = store.upsert(batch)
    monkeypatch.undo()

    assert [target.status for target in result.targets] == ["saved"] * 2_000
    snapshot = store.snapshot()
    found = [snapshot.by_key(key) for key in ("k0", "k1", "new1999")]
    assert [record.content if record else None for record in found] == [
        "Fact 0 corrected.",
        "Fact 1 as first said.",
        "New fact 1999.",
    ]
    assert reads <= len(batch)  # each new version once (it was 1,998,900)
    store.close()
