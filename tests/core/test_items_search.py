"""``ItemStore.search``: what a search after a write analyses again, and its ranking against the
full ranking of every item (the query layer's :func:`memquill.query.rank` over a
:class:`memquill.query.Corpus` of every item taken)."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memquill.errors import BlockedError
from memquill.items import ItemStore
from memquill.items._space import StoredItem
from memquill.items._store import Accept
from memquill.query._documents import SearchDocument, record_document
from memquill.query._rank import Corpus, rank
from memquill.query._render import score_value
from memquill.store._results import ProjectedRecord

NOW = datetime(2026, 12, 6, tzinfo=UTC)


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


def reference(
    store: ItemStore,
    prefix: tuple[str, ...],
    query: str,
    accept: Accept | None,
    limit: int,
    offset: int,
) -> list[tuple[tuple[str, ...], str, float]]:
    """The search as it was defined before the term index: every item taken, its document
    built afresh, ranked by the full scan; ties by namespace, then key."""
    documents: list[SearchDocument] = []
    owners: dict[int, StoredItem] = {}
    for _, view in store._views(prefix):  # pyright: ignore[reportPrivateUsage]
        for name, record in view.records.items():
            item = view.items[name]
            if accept is None or accept(item.value):
                document = record_document(ProjectedRecord.of(view.snapshot, record))
                documents.append(document)
                owners[id(document)] = item
    if not documents or limit <= 0:
        return []
    corpus = Corpus(documents)
    ranked = rank(corpus, query, now=NOW, candidates=corpus.size)
    scored = [(hit.score, owners[id(hit.document)]) for hit in ranked]
    scored.sort(key=lambda pair: (-pair[0], pair[1].namespace, pair[1].key))
    chosen = scored[max(offset, 0) : max(offset, 0) + limit]
    return [(item.namespace, item.key, score_value(score)) for score, item in chosen]


VOCABULARY = ("coffee", "tea", "Tea time", "deploy-window", "went", "go", "art", "start", "咖啡")
# Many items share their text (ties at every score); some have a label (a title), a heading
# or several chunks (their re-scoring is bounded, not known, before they are ranked).
CONTENT = st.one_of(
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=5).map(" ".join),
    st.sampled_from(("coffee tea", "coffee", "tea", "go")),
    st.sampled_from(
        (
            "tea: coffee",
            "# Coffee\ntea",
            "coffee " + "tea " * 400,
            "tea " * 400 + "coffee",
            "art\n# Tea\n" + "go " * 500 + "coffee",
        )
    ),
)
STEP = st.tuples(
    st.sampled_from((("memories", "ana"), ("memories", "bob"), ("other",))),
    st.sampled_from(("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l")),
    st.none() | st.tuples(CONTENT, st.sampled_from(("food", "work"))),
)
Step = tuple[tuple[str, ...], str, tuple[str, str] | None]
Search = tuple[tuple[str, ...], str, bool, int, int]
SEARCH = st.tuples(
    st.sampled_from(((), ("memories",), ("memories", "ana"))),
    st.sampled_from(("", "coffee", "tea coffee", "go", "the of", "absent", "咖啡 art")),
    st.booleans(),
    st.integers(0, 12),
    st.one_of(st.integers(0, 4), st.integers(5, 40)),  # and past the end
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.lists(STEP, max_size=12), SEARCH), min_size=1, max_size=4))
def test_a_search_ranks_as_the_full_ranking_of_every_item(
    tmp_path_factory: pytest.TempPathFactory,
    rounds: list[
        tuple[
            list[tuple[tuple[str, ...], str, tuple[str, str] | None]],
            tuple[tuple[str, ...], str, bool, int, int],
        ]
    ],
) -> None:
    store = ItemStore(tmp_path_factory.mktemp("items"), now=lambda: NOW)
    for steps, (prefix, query, filtered, limit, offset) in rounds:
        for namespace, key, value in steps:  # puts, corrections and deletes between searches
            if value is None:
                store.delete(namespace, key)
            else:
                with contextlib.suppress(BlockedError):  # a forgotten item's words again
                    store.put(namespace, key, {"content": value[0], "topic": value[1]})
        accept: Accept | None = (lambda value: value.get("topic") == "food") if filtered else None
        hits = store.search(prefix, query, accept=accept, limit=limit, offset=offset)
        found = [(hit.item.namespace, hit.item.key, hit.score) for hit in hits]
        assert found == reference(store, prefix, query, accept, limit, offset)


def test_a_search_ranks_only_the_items_that_can_be_among_the_best(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ItemStore(tmp_path, now=lambda: NOW)
    for index in range(60):
        text = "coffee and tea" if index % 3 else "coffee, " + "tea " * 400  # some long
        store.put(("memories", "ana" if index % 2 else "bob"), f"k{index:02d}", {"content": text})
    ranked: list[int] = []

    def counted(*args: object, **kwargs: object) -> object:
        hits = rank(*args, **kwargs)  # type: ignore[arg-type]
        ranked.append(len(hits))
        return hits

    monkeypatch.setattr("memquill.items._store.rank", counted)
    for query, limit, offset in (("coffee tea", 3, 2), ("tea", 4, 0), ("tea", 2, 30)):
        hits = store.search(("memories",), query, limit=limit, offset=offset)
        found = [(hit.item.namespace, hit.item.key, hit.score) for hit in hits]
        assert found == reference(store, ("memories",), query, None, limit, offset)
    # Of 60 matching items, only those that can be among the best offset + limit (of equal
    # scores, the first by namespace and key).
    assert ranked == [5, 4, 32]


def test_tied_items_follow_namespace_then_key_after_a_namespace_changes(tmp_path: Path) -> None:
    # The tie order is kept with the corpus between searches; a namespace that changes gives a
    # new corpus, where a slot freed by a delete holds another item.
    moment = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    store = ItemStore(tmp_path, now=lambda: moment)
    namespace = ("memories", "u1")
    # Alike for the query (one "heron" in as many words), and different words: the forgotten
    # item's words cannot be saved again.
    for key, place in (("a", "pier"), ("c", "dock")):
        store.put(namespace, key, {"content": f"A heron on the {place}."})
    assert [hit.item.key for hit in store.search(("memories",), "heron", limit=1)] == ["a"]
    store.delete(namespace, "a")
    store.put(namespace, "d", {"content": "A heron on the quay."})
    assert [hit.item.key for hit in store.search(("memories",), "heron", limit=1)] == ["c"]
    store.close()
