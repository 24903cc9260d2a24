"""Compact tombstones (issue 33, item 1): forgotten facts and old history fold into one small
ledger that keeps every blocking power, so a workspace's lifetime is unbounded."""

from __future__ import annotations

import base64
import string
from pathlib import Path
from typing import cast

import pytest
from hypothesis import given, settings, strategies as st
from tests.core.store_helpers import conversation, manual, raw, records_path, tool

from memquill import RecordStore
from memquill.errors import NotFoundError
from memquill.store._codec import decode_store
from memquill.store._merge import merge_files
from memquill.store._record import JSONValue, Record
from memquill.store._record_key import RecordKey
from memquill.store._results import Candidate
from memquill.store._tombstones import (
    LEDGER_FIELD,
    RETENTION_DEPTH,
    Ledger,
    is_ledger,
    ledger_of,
    token,
)

MIB = 1024 * 1024


def _remember_and_forget(store: RecordStore, candidate: Candidate) -> str:
    saved = store.save([candidate])
    assert saved.status == "saved" and saved.record_id is not None
    gone = store.revoke(saved.record_id, store.snapshot().revision)
    assert gone.status == "saved"
    return next(r.updated_at for r in store.snapshot().records if r.id == saved.record_id)


def test_compact_folds_forgotten_facts_into_one_ledger_of_32_bytes_each(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    for n in range(50):
        _remember_and_forget(store, tool(f"churn value {n}", f"op-{n}"))
    before = len(raw(tmp_path))

    assert store.compact(store.snapshot().revision).status == "saved"

    records = store.snapshot().records
    assert len(records) == 1 and is_ledger(records[0])
    after = len(raw(tmp_path))
    assert after < 600 + 50 * 32 < before // 10
    # An older memquill's decoder reads it: one forgotten record with no text.
    image = decode_store(records_path(tmp_path).read_text(encoding="utf-8"))
    assert [(r.status, r.content) for r in image.records] == [("revoked", "")]
    assert store.compact(store.snapshot().revision).status == "duplicate"  # deterministic


def test_folded_tombstones_block_as_the_full_ones_did(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    when = _remember_and_forget(store, tool("Bob's birthday is 1 June.", "op-bob", "s1"))
    _remember_and_forget(store, conversation("Ana likes tea.", "job:0", "s2", "m1"))
    store.save([manual("Keep me.")])

    store.compact(store.snapshot().revision)
    assert sum(1 for r in store.snapshot().records if is_ledger(r)) == 1
    assert [r.status for r in store.snapshot().records if not is_ledger(r)] == ["active"]

    retry = store.save([tool("Bob's birthday is 1 June.", "op-bob", "s1")])
    assert retry.status == "blocked"  # the operation hash
    same_message = store.save([conversation("Something else.", "job:9", "s2", "m1")])
    assert same_message.status == "blocked"  # the source key
    words = store.save([tool("  bob's BIRTHDAY is 1 june. ", "op-new", "s3")])
    assert (words.status, words.targets[0].forgotten_at) == ("blocked", when)
    person = store.save([manual("Bob's birthday is 1 June.")])
    assert (person.status, person.targets[0].forgotten_at) == ("saved", when)
    assert store.save([tool("Bob's birthday is 3 June.", "op-3", "s3")]).status == "saved"


def test_forgetting_a_folded_fact_again_answers_as_before_the_fold(tmp_path: Path) -> None:
    # An agent that retries a forget (its first call timed out) after a compaction folded
    # the fact gets what it got before the fold, "forgotten already", not "no such fact".
    store = RecordStore(tmp_path)
    saved = store.save([tool("a fact to forget twice", "op-twice")])
    assert saved.record_id is not None
    assert store.revoke(saved.record_id, store.snapshot().revision).status == "saved"
    again = store.revoke(saved.record_id, "0" * 64)
    assert (again.status, again.record_id) == ("duplicate", saved.record_id)
    store.compact(store.snapshot().revision)
    assert [is_ledger(r) for r in store.snapshot().records] == [True]
    before = raw(tmp_path)
    folded = store.revoke(saved.record_id, "0" * 64)
    assert (folded.status, folded.record_id) == ("duplicate", saved.record_id)
    assert raw(tmp_path) == before
    # An id that never was is still not found.
    with pytest.raises(NotFoundError):
        store.revoke("00000000-0000-4000-8000-000000000000", store.snapshot().revision)


def test_history_beyond_the_retention_depth_goes(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    first = store.save([tool("profile 0", "op-profile", "s1")])
    assert first.record_id is not None
    current = first.record_id
    for turn in range(1, 40):
        result = store.correct(
            current,
            f"profile {turn}",
            store.snapshot().revision,
            {"kind": "tool", "sessionId": "s"},
        )
        assert result.record_id is not None
        current = result.record_id

    store.compact(store.snapshot().revision)

    records = store.snapshot().records
    assert sum(1 for r in records if r.status == "superseded") == RETENTION_DEPTH
    assert [r.content for r in records if r.status == "active"] == ["profile 39"]
    assert store.save([tool("profile 0", "op-profile", "s1")]).status == "blocked"


@pytest.mark.slow
def test_remember_forget_cycles_and_updates_past_the_capacity(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, capacity=1 * MIB)
    # Live facts fill all but ~90 KB, so the churn reaches the capacity within ~100 cycles.
    for batch in (range(30), range(30, 60)):
        store.save([manual(f"{n} ".ljust(16_000, "z"), f"fill-{n}") for n in batch])
    profile = store.save([tool("profile 0 ".ljust(500, "p"), "op-profile")])
    assert profile.record_id is not None
    current = profile.record_id
    for cycle in range(250):
        _remember_and_forget(store, tool(f"fact {cycle} ".ljust(100, "f"), f"op-{cycle}"))
        result = store.correct(
            current,
            f"profile {cycle + 1} ".ljust(500, "p"),
            store.snapshot().revision,
            {"kind": "tool", "sessionId": "s"},
        )
        assert result.record_id is not None
        current = result.record_id

    records = store.snapshot().records
    assert len(raw(tmp_path)) <= 1 * MIB
    assert sum(1 for r in records if is_ledger(r)) == 1
    assert len(records) < 60 + 1 + 1 + RETENTION_DEPTH + 250
    assert store.save([tool("fact 7 ".ljust(100, "f"), "op-other")]).status == "blocked"


def test_a_fact_forgotten_and_folded_on_one_machine_stays_forgotten_in_a_merge(
    tmp_path: Path,
) -> None:
    keys = RecordKey(tmp_path / "key")
    (tmp_path / "a").mkdir()
    store = RecordStore(tmp_path / "a", record_key=keys)
    saved = store.save([tool("Ana likes tea.", "op-ana"), tool("Bo likes jazz.", "op-bo")])
    live = raw(tmp_path / "a")  # the other machine's copy: both facts live
    assert saved.record_id is not None
    store.revoke(saved.record_id, store.snapshot().revision)
    store.compact(store.snapshot().revision)
    folded = raw(tmp_path / "a")

    for base in (b"", live):
        one, _ = merge_files(base, folded, live, keys.load())
        other, _ = merge_files(base, live, folded, keys.load())
        assert one == other == merge_files(base, folded, folded, keys.load())[0]
        records = decode_store(one.decode()).records
        assert [r.content for r in records if r.status == "active"] == ["Bo likes jazz."]
        assert b"Ana likes tea" not in one and sum(1 for r in records if is_ledger(r)) == 1


_TOKENS = st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=8, max_size=8)
_LAST = 4_102_444_800_000  # 2100-01-01, in milliseconds


def _stamp(millis: int) -> str:
    return base64.urlsafe_b64encode(millis.to_bytes(6, "big")).decode()


_STAMPS = st.integers(min_value=0, max_value=_LAST).map(_stamp)


@settings(max_examples=150, deadline=None)
@given(
    base=st.tuples(*(st.sets(_TOKENS, max_size=30) for _ in range(3))),
    base_texts=st.dictionaries(_TOKENS, _STAMPS, max_size=30),
    added=st.tuples(*(st.sets(_TOKENS, max_size=10) for _ in range(3))),
    added_texts=st.dictionaries(_TOKENS, _STAMPS, max_size=10),
    restamp=st.integers(min_value=0, max_value=10),
    shuffled=st.booleans(),
)
def test_a_ledger_grown_from_a_written_one_is_written_as_one_sorted_whole(
    base: tuple[set[str], set[str], set[str]],
    base_texts: dict[str, str],
    added: tuple[set[str], set[str], set[str]],
    added_texts: dict[str, str],
    restamp: int,
    shuffled: bool,
) -> None:
    # A fold inserts what it adds into the ledger as written; the bytes must be those of
    # sorting every token again, also when texts get a later time or the ledger was edited.
    written = Ledger(set(base[0]), set(base[1]), set(base[2]), dict(base_texts)).record()
    if shuffled:  # a hand edit: the roots reversed
        body = dict(cast(dict[str, str], written.meta[LEDGER_FIELD]))
        roots = body["roots"]
        body["roots"] = "".join(reversed([roots[i : i + 8] for i in range(0, len(roots), 8)]))
        written = Record({**written.meta, LEDGER_FIELD: cast(JSONValue, body)}, "")
    grown = ledger_of([written])
    for part, tokens in zip((grown.roots, grown.ops, grown.sources), added, strict=True):
        part.update(tokens)
    for text, stamp in added_texts.items():
        grown.add_text(text, stamp)
    for text in sorted(base_texts)[:restamp]:
        grown.add_text(text, _stamp(_LAST + 1))  # later than any stamp drawn

    whole = Ledger(set(grown.roots), set(grown.ops), set(grown.sources), dict(grown.texts))
    assert grown.record().meta == whole.record().meta


def test_the_time_a_text_was_last_forgotten_is_the_latest_though_base64_sorts_otherwise() -> None:
    # 52 is "0" in base64url and 51 is "z", which sorts after "0": compared as text, the
    # earlier time would win and a blocked save would name the first forget.
    base = 1_780_000_000_000 // 64 * 64
    earlier, later = _stamp(base + 51), _stamp(base + 52)
    assert earlier > later  # as text
    text = token("hmac-v1:the same words")
    for order in ((earlier, later), (later, earlier)):
        ledger = Ledger()
        for stamp in order:
            ledger.add_text(text, stamp)
        when = ledger.forgotten_at(["hmac-v1:the same words"])
        assert when is not None and when.endswith(".052Z")
        assert ledger.record().updated_at == when
