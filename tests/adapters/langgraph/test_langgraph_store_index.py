"""MemquillStore's ``index`` (LangGraph's ``IndexConfig``): the bounded hybrid, its fallback,
and every configuration it refuses. The embed is a plain function of texts, as LangGraph takes
it, over memquill's deterministic trigram embedder (no model)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pytest
from langgraph.store.base import IndexConfig

from memquill import InvalidInputError
from memquill.testing import PARITY_ALIASES, TrigramEmbedder
from memquill_langchain.store import SEMANTIC_LINE, MemquillStore

ANA = ("memories", "ana")
TRIGRAMS = TrigramEmbedder(aliases=PARITY_ALIASES)


def trigram_embed(texts: Sequence[str]) -> list[list[float]]:
    return [TRIGRAMS.vector(text) for text in texts]


def failing_embed(texts: Sequence[str]) -> list[list[float]]:
    raise RuntimeError("provider down")


def _fill(store: MemquillStore) -> None:
    store.put(ANA, "a-bike", {"content": "New tyres for the bicycle."})
    store.put(ANA, "b-car", {"content": "New tyres for the car."})
    store.put(ANA, "c-kitchen", {"content": "Bake bread on Sunday."})


def _keys(store: MemquillStore, query: str) -> list[str]:
    return [item.key for item in store.search(("memories",), query=query)]


def test_an_index_reorders_near_equal_keyword_hits_by_similarity(tmp_path: Path) -> None:
    plain = MemquillStore(tmp_path)
    _fill(plain)
    assert _keys(plain, "automobile tyres") == ["a-bike", "b-car"]  # keyword: a tie, by key
    config: IndexConfig = {"dims": TRIGRAMS.dims, "embed": trigram_embed, "fields": ["content"]}
    store = MemquillStore(tmp_path, index=config)
    assert _keys(store, "automobile tyres") == ["b-car", "a-bike"]  # "car" is an automobile
    assert store.ranking == SEMANTIC_LINE
    # Keyword search still decides what is found: similarity alone adds nothing here.
    assert _keys(store, "bread") == ["c-kitchen"]
    assert [i.key for i in store.search(("memories",), query="automobile tyres", offset=1)] == [
        "a-bike"
    ]


async def test_the_async_search_takes_the_index_too(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path, index={"embed": trigram_embed, "dims": TRIGRAMS.dims})
    _fill(store)
    found = await store.asearch(("memories",), query="automobile tyres")
    assert [item.key for item in found] == ["b-car", "a-bike"]


def test_a_failing_embed_keeps_keyword_order_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plain = MemquillStore(tmp_path)
    _fill(plain)
    store = MemquillStore(tmp_path, index={"embed": failing_embed, "fields": ["content"]})
    with caplog.at_level(logging.WARNING, logger="memquill.langchain"):
        found = store.search(("memories",), query="automobile tyres")
    assert [(i.key, i.score) for i in found] == [
        (i.key, i.score) for i in plain.search(("memories",), query="automobile tyres")
    ]
    line = "Memory ranking failed: request_failed. Using keyword order."
    assert store.ranking == line
    assert line in caplog.text
    # The runner's cooldown, as for rerank: the next search does not call the embedder.
    store.search(("memories",), query="automobile tyres")
    assert store.ranking is not None and store.ranking.startswith("Memory ranking cooldown: ")


@pytest.mark.parametrize(
    "index",
    [
        {"dims": 3},
        {"embed": trigram_embed, "dims": 0},
        {"embed": trigram_embed, "dims": True},
        {"embed": trigram_embed, "fields": "content"},
        {"embed": trigram_embed, "fields": []},
        {"embed": trigram_embed, "other": 1},
        {"embed": "no-such-provider:model", "dims": 3},
        "trigram",
    ],
    ids=["no-embed", "zero-dims", "bool-dims", "text-fields", "no-fields", "other", "name", "text"],
)
def test_a_bad_index_is_refused_and_changes_nothing(tmp_path: Path, index: object) -> None:
    with pytest.raises(InvalidInputError, match="An index is"):
        MemquillStore(tmp_path, index=index)
    assert list(tmp_path.iterdir()) == []


def test_a_put_takes_no_fields_of_its_own(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path, index={"embed": trigram_embed})
    with pytest.raises(InvalidInputError, match="a put takes only index=False"):
        store.put(ANA, "k", {"content": "x"}, index=["content"])
    assert store.get(ANA, "k") is None
    store.put(ANA, "k", {"content": "x"}, index=False)
    assert store.get(ANA, "k") is not None
