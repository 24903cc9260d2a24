"""A put's work on its text is done once: its credential scan (the item store checks a put
before it makes the namespace's folder, and the write's own check takes that result instead
of scanning again; every write path still refuses credentials) and its fingerprint under the
record key."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from memquill import RecordStore
from memquill.errors import SecretError
from memquill.items import ItemStore
from memquill.items._store import ItemPut
from memquill.store import SecretScanner
from memquill.store._results import Candidate

ANA = ("memories", "ana")
TOOL = {"kind": "tool", "sessionId": "s1"}
SECRET = "the deploy key is AKIA" + "ABCDEFGHIJKLMNOP"


class CountingScanner(SecretScanner):
    """The built-in detectors, counting how many times each text is scanned."""

    def __init__(self) -> None:
        super().__init__()
        self.scanned: Counter[str] = Counter()

    def findings(self, text: str) -> tuple[str, ...]:
        self.scanned[text] += 1
        return super().findings(text)


def test_a_put_scans_its_text_and_extra_once_each(tmp_path: Path) -> None:
    scanner = CountingScanner()
    items = ItemStore(tmp_path, secrets=scanner)
    try:
        items.put(ANA, "coffee", {"content": "Ana drinks oat flat whites.", "mood": "calm"})
        items.put(ANA, "coffee", {"content": "Ana drinks black coffee.", "mood": "awake"})
        items.put_many([ItemPut(ANA, "tea", {"content": "Ana likes green tea.", "mood": "warm"})])
    finally:
        items.close()
    texts = [
        "Ana drinks oat flat whites.",  # saved
        "Ana drinks black coffee.",  # corrected
        "Ana likes green tea.",  # upserted
    ]
    assert [scanner.scanned[text] for text in texts] == [1, 1, 1], scanner.scanned
    extras = sorted(text for text in scanner.scanned if text.startswith("{"))
    assert len(extras) == 3 and all(scanner.scanned[text] == 1 for text in extras), extras


def test_a_write_not_checked_ahead_still_scans_and_refuses(tmp_path: Path) -> None:
    scanner = CountingScanner()
    store = RecordStore(tmp_path, secrets=scanner)
    store.check("Ana reads novels.")
    store.save([Candidate("Ana reads novels.", TOOL, "op-1", "books")])
    store.save([Candidate("Ana reads novels.", TOOL, "op-2", "more-books")])
    assert scanner.scanned["Ana reads novels."] == 2  # checked ahead once, then on its own
    with pytest.raises(SecretError):
        store.save([Candidate(SECRET, TOOL, "op-3", "key")])
    with pytest.raises(SecretError):
        store.upsert([Candidate(SECRET, TOOL, "op-4", "key")])
    assert [record.content for record in store.snapshot().records] == ["Ana reads novels."] * 2


def test_the_texts_held_for_the_writes_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memquill.store._store.CLEAN_HELD", 40)
    scanner = CountingScanner()
    store = RecordStore(tmp_path, secrets=scanner)
    texts = ["Ana reads a novel a week.", "Ana swims on Tuesdays ok.", "Ana grows basil at home."]
    for text in texts:
        store.check(text)  # 25, 25, 24 characters: the second one drops the first
    store.upsert([Candidate(text, TOOL, f"op-{n}", f"k{n}") for n, text in enumerate(texts)])
    assert [scanner.scanned[text] for text in texts] == [2, 2, 1]
    held = store._clean  # pyright: ignore[reportPrivateUsage]
    assert not held


def test_a_put_fingerprints_its_text_once_per_record_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key source's known keys begin with its current one: each hash and fingerprint of a
    # save or correction was computed twice under it.
    import memquill.store._append as append
    import memquill.store._edits as edits

    calls: Counter[str] = Counter()
    for module in (append, edits):
        original = module.text_fingerprint

        def counted(key: bytes, text: str, original: Callable[[bytes, str], str] = original) -> str:
            calls[text] += 1
            return original(key, text)

        monkeypatch.setattr(module, "text_fingerprint", counted)
    items = ItemStore(tmp_path)
    try:
        items.put(ANA, "first", {"content": "Ana keeps a diary."})  # the namespace's first
        items.put(ANA, "coffee", {"content": "Ana drinks oat flat whites."})
        items.put(ANA, "coffee", {"content": "Ana drinks black coffee."})
        items.put_many([ItemPut(ANA, "tea", {"content": "Ana likes green tea."})])
        items.put_many([ItemPut(ANA, "tea", {"content": "Ana likes mint tea."})])
    finally:
        items.close()
    texts = [
        "Ana drinks oat flat whites.",
        "Ana drinks black coffee.",
        "Ana likes green tea.",
        "Ana likes mint tea.",
    ]
    assert [calls[text] for text in texts] == [1, 1, 1, 1], calls
