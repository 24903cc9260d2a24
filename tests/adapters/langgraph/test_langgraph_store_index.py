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
from memquill.testing import TrigramEmbedder
from memquill.testing._models import PARITY_ALIASES
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


def _top(store: MemquillStore, query: str) -> list[str]:
    return _keys(store, query)[:2]


def test_an_index_reorders_near_equal_keyword_hits_by_similarity(tmp_path: Path) -> None:
    plain = MemquillStore(tmp_path)
    _fill(plain)
    assert _keys(plain, "automobile tyres") == ["a-bike", "b-car"]  # keyword: a tie, by key
    config: IndexConfig = {"dims": TRIGRAMS.dims, "embed": trigram_embed, "fields": ["content"]}
    store = MemquillStore(tmp_path, index=config)
    assert _keys(store, "automobile tyres") == ["b-car", "a-bike", "c-kitchen"]  # a car is one
    assert store.ranking == SEMANTIC_LINE
    # The nearest items join: every indexed item is a candidate, the best first.
    assert _keys(store, "bread")[0] == "c-kitchen"
    assert [i.key for i in store.search(("memories",), query="automobile tyres", offset=1)] == [
        "a-bike",
        "c-kitchen",
    ]


async def test_the_async_search_takes_the_index_too(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path, index={"embed": trigram_embed, "dims": TRIGRAMS.dims})
    _fill(store)
    found = await store.asearch(("memories",), query="automobile tyres")
    assert [item.key for item in found][:2] == ["b-car", "a-bike"]


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


def test_a_put_names_what_is_embedded_and_false_keeps_it_out(tmp_path: Path) -> None:
    embed = CountingEmbed(TRIGRAMS)
    config: IndexConfig = {"dims": TRIGRAMS.dims, "embed": embed, "fields": ["content"]}
    store = MemquillStore(tmp_path, index=config)
    store.put(ANA, "a-bike", {"content": "New tyres for the bicycle."})
    store.put(ANA, "b-car", {"content": "New tyres for the car."}, index=False)
    store.put(ANA, "c-note", {"content": "Tyres, bread.", "note": "a car"}, index=["note"])
    assert sorted(_keys(store, "automobile tyres")) == ["a-bike", "b-car", "c-note"]
    assert "New tyres for the car." not in embed.texts
    assert "Tyres, bread." not in embed.texts and "a car" in embed.texts
    # The choice is the item's, kept with it: a new store over the same root honours it.
    car, note = store.items.get(ANA, "b-car"), MemquillStore(tmp_path).items.get(ANA, "c-note")
    assert car is not None and car.index is False
    assert note is not None and note.index == ("note",)
    for bad in ([], [""], "note", True, [3]):  # wrong types among them, on purpose
        with pytest.raises(InvalidInputError, match="An index is"):
            store.put(
                ANA,
                "bad",
                {"content": "x"},
                index=bad,  # pyright: ignore[reportArgumentType]
            )
    assert store.get(ANA, "bad") is None


# -- item vectors live in each namespace workspace's vector cache ---------------------------


class CountingEmbed:
    """A LangGraph embed function that counts the texts it embeds (queries included)."""

    def __init__(self, embedder: TrigramEmbedder) -> None:
        self.embedder = embedder
        self.texts: list[str] = []

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return [self.embedder.vector(text) for text in texts]


COUNTED = CountingEmbed(TRIGRAMS)
OTHER = CountingEmbed(TrigramEmbedder(aliases=PARITY_ALIASES, name="other"))


def counted_embed(texts: Sequence[str]) -> list[list[float]]:
    return COUNTED(texts)


def other_embed(texts: Sequence[str]) -> list[list[float]]:
    return OTHER(texts)


def _item_rows(folder: Path) -> dict[str, bytes]:
    """Every row of ``folder``'s vector file (unit → vector bytes), read on its own."""
    import contextlib
    import sqlite3

    from memquill.index._vectors_file import vectors_path
    from memquill.paths import canonical_workspace

    path = vectors_path(canonical_workspace(folder))
    assert path is not None and path.is_file(), "no vector file"
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return {str(u): bytes(v) for u, v in connection.execute("SELECT unit, vector FROM vectors")}


def _ids(store: MemquillStore) -> dict[str, str]:
    return {
        key: found.record_id for key in ("a-bike", "b-car") if (found := store.items.get(ANA, key))
    }


def test_item_vectors_outlive_the_store_and_follow_the_embedder(tmp_path: Path) -> None:
    COUNTED.texts.clear()
    OTHER.texts.clear()
    config: IndexConfig = {"dims": TRIGRAMS.dims, "embed": counted_embed, "fields": ["content"]}
    first = MemquillStore(tmp_path, index=config)
    _fill(first)
    assert _top(first, "automobile tyres") == ["b-car", "a-bike"]
    items = ["Bake bread on Sunday.", "New tyres for the bicycle.", "New tyres for the car."]
    assert COUNTED.texts[0] == "automobile tyres" and sorted(COUNTED.texts[1:]) == items
    ids = _ids(first)
    folder = first.items.folder(ANA)
    assert set(_item_rows(folder)) >= {f"i:{i}" for i in ids.values()}
    # A new store over the same root, the same embedder: only the query is embedded.
    COUNTED.texts.clear()
    second = MemquillStore(tmp_path, index=config)
    assert _top(second, "automobile tyres") == ["b-car", "a-bike"]
    assert COUNTED.texts == ["automobile tyres"]
    # Another embedder: the vectors are rebuilt, none of the first one's is used.
    other = MemquillStore(tmp_path, index={**config, "embed": other_embed})
    assert _top(other, "automobile tyres") == ["b-car", "a-bike"]
    assert sorted(OTHER.texts) == sorted(["automobile tyres", *items])
    # ...and the first finds its own gone (one space per file): it embeds the items again.
    COUNTED.texts.clear()
    assert _top(MemquillStore(tmp_path, index=config), "automobile tyres") == ["b-car", "a-bike"]
    assert len(COUNTED.texts) == 4


def test_a_delete_removes_the_item_vector_at_the_write(tmp_path: Path) -> None:
    config: IndexConfig = {"dims": TRIGRAMS.dims, "embed": trigram_embed, "fields": ["content"]}
    store = MemquillStore(tmp_path, index=config)
    _fill(store)
    _keys(store, "automobile tyres")
    ids = _ids(store)
    folder = store.items.folder(ANA)
    rows = _item_rows(folder)
    store.delete(ANA, "b-car")
    after = _item_rows(folder)  # no search since the delete
    assert f"i:{ids['b-car']}" not in after
    assert after[f"i:{ids['a-bike']}"] == rows[f"i:{ids['a-bike']}"]
    from memquill.index._vectors_file import vectors_path
    from memquill.paths import canonical_workspace

    path = vectors_path(canonical_workspace(folder))
    assert path is not None
    assert rows[f"i:{ids['b-car']}"] not in path.read_bytes()  # secure_delete overwrote it


def test_a_delete_drops_the_vectors_the_store_keeps_in_memory(tmp_path: Path) -> None:
    embed = CountingEmbed(TRIGRAMS)
    config: IndexConfig = {"dims": TRIGRAMS.dims, "embed": embed, "fields": ["topic"]}
    store = MemquillStore(tmp_path, index=config)
    store.put(ANA, "a-bike", {"content": "Tyres ordered.", "topic": "bicycle tyres"})
    store.put(ANA, "b-car", {"content": "Tyres fitted.", "topic": "car tyres"})
    assert _top(store, "automobile tyres") == ["b-car", "a-bike"]
    assert "car tyres" in embed.texts
    store.delete(ANA, "b-car")
    # Other words (forgotten words are never saved again) on the same embedded topic.
    store.put(ANA, "c-car", {"content": "Tyres rotated.", "topic": "car tyres"})
    embed.texts.clear()
    assert _top(store, "automobile tyres") == ["c-car", "a-bike"]
    # The forgotten item's vector went with it, from memory too: the topic is embedded afresh.
    assert "car tyres" in embed.texts
