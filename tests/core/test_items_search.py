"""``ItemStore.search``: what a search after a write analyses again, and its ranking against the
full ranking of every item (the query layer's :func:`memquill.query.rank` over a
:class:`memquill.query.Corpus` of every item taken)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memquill.items import ItemStore
from memquill.query._documents import record_document


def test_a_search_after_a_put_analyses_only_the_changed_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ItemStore(tmp_path)
    namespace = ("memories", "ana")
    for index in range(20):
        store.put(namespace, f"k{index}", {"content": f"note {index} about coffee and tea"})
    assert store.search(namespace, "coffee")
    built: list[str] = []

    def counted(record: object) -> object:
        built.append(getattr(record, "key", ""))
        return record_document(record)  # type: ignore[arg-type]

    monkeypatch.setattr("memquill.items._space.record_document", counted)
    store.put(namespace, "k3", {"content": "note 3 about coffee, corrected"})
    store.put(namespace, "new", {"content": "a new note about tea"})
    hits = store.search(namespace, "coffee tea", limit=30)
    assert sorted(built) == ["k3", "new"]
    assert {hit.item.key for hit in hits} >= {"k3", "new"}
    fresh = ItemStore(tmp_path).search(namespace, "coffee tea", limit=30)
    assert [(hit.item.key, hit.score) for hit in hits] == [
        (hit.item.key, hit.score) for hit in fresh
    ]
