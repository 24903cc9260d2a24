"""``StoreConformance``: the LangGraph store contract, as tests any ``BaseStore`` can run.

Written from what ``langgraph.store.base.BaseStore`` documents (and its stores share): upsert,
delete, namespace label rules, JSON values, filters, ``limit``/``offset``, the prefix a search
covers, ``list_namespaces`` with ``prefix``/``suffix``/``*``/``max_depth``, timestamps, TTL
refused when unsupported, a batch's order, and the async twins. Subclass it and give a fresh,
empty store::

    import pytest
    from memquill.testing import StoreConformance

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def store(self, tmp_path):
            return MyStore(tmp_path)

A few behaviours differ between LangGraph's own stores; a subclass declares its choice in the
class attributes below (memquill's ``MemquillStore`` keeps the defaults, and the suite also runs
against LangGraph's ``InMemoryStore`` with its own). As with :class:`ParitySuite`, a test that
is skipped fails, and a test overridden without ``@pytest.mark.xfail(reason=...)`` fails
``test_no_overrides_DO_NOT_OVERRIDE``.

memquill never imports LangGraph: the operation classes a batch takes are read from the module
of the store's own ``BaseStore`` class.
"""

from __future__ import annotations

import asyncio
import math
import re
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from types import ModuleType
from typing import Any, ClassVar, Final, Literal

import pytest

from memquill.testing._suite import unexcused_overrides

# ----------------------------------------------------------------------------------------------
# What the store suites share: sample values, and LangGraph's own classes read from the store.
#
# memquill never imports LangGraph: the operation classes a batch takes (``GetOp``, ``PutOp``,
# …) and ``InvalidNamespaceError`` are read from the module of the store's own ``BaseStore``.


Store = Any
"""A LangGraph ``BaseStore`` (typed loosely: memquill does not import LangGraph)."""

VALUES: dict[str, dict[str, Any]] = {
    "text": {"content": "Ana drinks her coffee black."},
    "fields": {"content": "Ana's timezone", "zone": "Europe/Lisbon", "confirmed": True},
    "json": {"theme": "dark", "size": 3, "ratio": 0.25, "none": None, "tags": ["a", "b"]},
    "nested": {"profile": {"name": "Ana Ü", "langs": ["pt", "en"], "n": {"deep": [1, 2.5]}}},
    "empty": {},
    "blank content": {"content": "   ", "other": 1},
    "content not text": {"content": {"kind": "note", "text": "x"}},
}


def base_module(store: Store) -> ModuleType:
    for cls in type(store).__mro__:
        if cls.__name__ == "BaseStore":
            return sys.modules[cls.__module__]
    raise TypeError(f"{type(store).__name__} is not a LangGraph BaseStore")


def operation(store: Store, name: str) -> Callable[..., Any]:
    operation: Callable[..., Any] = getattr(base_module(store), name)
    return operation


def refused(store: Store, call: Callable[[], object]) -> None:
    """``call`` raises LangGraph's ``InvalidNamespaceError``."""
    error_type: type[BaseException] = base_module(store).InvalidNamespaceError
    with pytest.raises(error_type):
        call()


def keys_of(found: list[Any]) -> list[tuple[tuple[str, ...], str]]:
    return [(tuple(item.namespace), item.key) for item in found]


def aware(moment: object) -> bool:
    return isinstance(moment, datetime) and moment.utcoffset() is not None


# ----------------------------------------------------------------------------------------------
# The searches and namespaces of the LangGraph store contract (a part of ``StoreConformance``).
#
# Filters, ``limit``/``offset``, the prefix a search covers, the order without a query, a
# ranked query, and ``list_namespaces`` with its options. The class attributes declare where a
# store chose otherwise; :class:`~memquill.testing.StoreConformance` inherits all of it.


class SearchConformance:
    """Searches and namespaces, as :class:`~memquill.testing.StoreConformance` runs them."""

    unqueried_order: ClassVar[Literal["newest_first", "insertion"]] = "newest_first"
    """The order of a search without a query: ``newest_first`` (by ``updated_at``, as
    LangGraph's SQLite and PostgreSQL stores) or ``insertion`` (``InMemoryStore``: namespaces
    in the order they were first written, items in the order their keys were first put)."""
    ranks_queries: ClassVar[bool] = True
    """A search with a query returns only matching items, best first, with a ``score``
    (``InMemoryStore`` without an index ignores the query and scores nothing)."""
    lists_emptied_namespaces: ClassVar[bool] = False
    """A namespace whose items were all deleted is still listed (``InMemoryStore`` does)."""

    # -- search -----------------------------------------------------------------------------

    def test_filters_match_the_value(self, store: Store) -> None:
        """Equality, ``$eq $ne $gt $gte $lt $lte``, nested objects, lists, several at once."""
        rows: dict[str, dict[str, Any]] = {
            "a": {"kind": "fruit", "price": 1.5, "meta": {"origin": "pt"}, "tags": ["x", "y"]},
            "b": {"kind": "fruit", "price": 3, "meta": {"origin": "es"}, "tags": ["x"]},
            "c": {"kind": "veg", "price": 5, "meta": {"origin": "pt"}, "tags": []},
        }
        for key, value in rows.items():
            store.put(("shop",), key, value)

        def found(filters: dict[str, Any]) -> list[str]:
            return sorted(item.key for item in store.search(("shop",), filter=filters))

        assert found({"kind": "fruit"}) == ["a", "b"]
        assert found({"kind": {"$eq": "veg"}}) == ["c"]
        assert found({"kind": {"$ne": "veg"}}) == ["a", "b"]
        assert found({"price": {"$gt": 3}}) == ["c"]
        assert found({"price": {"$gte": 3}}) == ["b", "c"]
        assert found({"price": {"$lt": 3}}) == ["a"]
        assert found({"price": {"$lte": 3}}) == ["a", "b"]
        assert found({"price": {"$gt": 1, "$lt": 5}}) == ["a", "b"]
        assert found({"meta": {"origin": "pt"}}) == ["a", "c"]
        assert found({"tags": ["x"]}) == ["b"]
        assert found({"kind": "fruit", "meta": {"origin": "pt"}}) == ["a"]
        assert found({"kind": "meat"}) == []

    def test_limit_and_offset_page_through_every_item(self, store: Store) -> None:
        """Pages never overlap, never miss an item, and keep the order of one long search."""
        for index in range(7):
            store.put(("pages", f"p{index % 2}"), f"k{index}", {"content": f"item {index}"})
        whole = keys_of(store.search(("pages",), limit=100))
        assert len(whole) == 7
        pages = [keys_of(store.search(("pages",), limit=3, offset=start)) for start in (0, 3, 6)]
        assert [len(page) for page in pages] == [3, 3, 1]
        assert [key for page in pages for key in page] == whole
        assert store.search(("pages",), limit=3, offset=7) == []
        assert len(store.search(("pages",))) == 7  # the default limit is 10

    def test_a_search_covers_the_namespaces_under_its_prefix(self, store: Store) -> None:
        """A prefix is a sequence of whole labels: ``("docs",)`` is not ``("docsx",)``."""
        store.put(("docs", "a"), "k", {"content": "a"})
        store.put(("docs", "b", "deep"), "k", {"content": "b"})
        store.put(("docs",), "k", {"content": "top"})
        store.put(("docsx",), "k", {"content": "x"})
        assert sorted(keys_of(store.search(("docs",)))) == [
            (("docs",), "k"),
            (("docs", "a"), "k"),
            (("docs", "b", "deep"), "k"),
        ]
        assert keys_of(store.search(("docs", "a"))) == [(("docs", "a"), "k")]
        assert len(store.search(())) == 4
        assert store.search(("nothing",)) == []

    def test_the_order_without_a_query(self, store: Store) -> None:
        """The order the store declares (``unqueried_order``), the same at every call."""
        # Distinct clocks, so that "newest" is unambiguous even at millisecond resolution.
        for namespace, key in ((("o", "x"), "a"), (("o", "y"), "b"), (("o", "x"), "c")):
            store.put(namespace, key, {"content": key})
            time.sleep(0.005)
        store.put(("o", "y"), "b", {"content": "b, changed"})
        found = keys_of(store.search(("o",)))
        x, y = ("o", "x"), ("o", "y")
        if self.unqueried_order == "newest_first":
            assert found == [(y, "b"), (x, "c"), (x, "a")]
        else:
            assert found == [(x, "a"), (x, "c"), (y, "b")]
        assert keys_of(store.search(("o",))) == found

    def test_a_query_ranks_the_matching_items(self, store: Store) -> None:
        """With ``ranks_queries``: matches only, the best first, each with a float score."""
        store.put(("notes",), "coffee", {"content": "Ana drinks coffee every morning."})
        store.put(("notes", "deep"), "tea", {"content": "Bo prefers green tea, no coffee."})
        store.put(("notes",), "bike", {"content": "Ana rides a bike to work."})
        found = store.search(("notes",), query="coffee morning")
        if not self.ranks_queries:
            assert sorted(item.key for item in found) == ["bike", "coffee", "tea"]
            return
        assert [item.key for item in found] == ["coffee", "tea"]
        scores = [item.score for item in found]
        assert all(isinstance(score, float) for score in scores)
        assert scores == sorted(scores, reverse=True)
        assert [item.key for item in store.search(("notes",), query="coffee", limit=1)] == [
            found[0].key
        ]
        filtered = store.search(("notes",), query="coffee", filter={"content": {"$ne": "x"}})
        assert {item.key for item in filtered} == {"coffee", "tea"}

    # -- namespaces -------------------------------------------------------------------------

    def test_list_namespaces_options(self, store: Store) -> None:
        """``prefix``, ``suffix``, ``*`` in either, ``max_depth`` (truncated, deduplicated),
        ``limit`` and ``offset``, in sorted order: the example ``BaseStore`` documents."""
        spaces = [
            ("a", "b", "c"),
            ("a", "b", "d", "e"),
            ("a", "b", "d", "i"),
            ("a", "b", "f"),
            ("a", "c", "f"),
            ("z",),
        ]
        for namespace in reversed(spaces):
            store.put(namespace, "k", {"content": "/".join(namespace)})
        assert store.list_namespaces() == sorted(spaces)
        assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
            ("a", "b", "c"),
            ("a", "b", "d"),
            ("a", "b", "f"),
        ]
        assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
        assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
        assert store.list_namespaces(suffix=("d", "*")) == [
            ("a", "b", "d", "e"),
            ("a", "b", "d", "i"),
        ]
        assert store.list_namespaces(prefix=("a",), suffix=("c",)) == [("a", "b", "c")]
        assert store.list_namespaces(max_depth=1) == [("a",), ("z",)]
        assert store.list_namespaces(limit=2) == sorted(spaces)[:2]
        assert store.list_namespaces(limit=2, offset=4) == sorted(spaces)[4:6]
        assert store.list_namespaces(prefix=("q",)) == []

    def test_a_namespace_whose_items_were_deleted(self, store: Store) -> None:
        """Listed or not, as the store declares (``lists_emptied_namespaces``)."""
        store.put(("users", "ana"), "k", {"content": "x"})
        store.put(("users", "bo"), "k", {"content": "y"})
        store.delete(("users", "ana"), "k")
        expected = (
            [("users", "ana"), ("users", "bo")]
            if self.lists_emptied_namespaces
            else [("users", "bo")]
        )
        assert store.list_namespaces() == expected


# ----------------------------------------------------------------------------------------------
# The semantic part of the LangGraph store contract: a store built with an ``index``.
#
# LangGraph's stores with an ``IndexConfig`` rank a query by the similarity of each item's
# embedded fields: a paraphrase that shares no word with the query is found, and comes first when
# it is the nearest; ``put(index=False)`` keeps an item out of the vector index and
# ``put(index=[fields])`` names what is embedded of it. The embedding is :func:`concept_embed`, a
# deterministic function of four concepts (no model), so the suite states the same expectations
# for every store: LangGraph's ``InMemoryStore(index=...)`` is the reference.


CONCEPTS: Final = {
    "animal": {"dog", "dogs", "puppy", "pet", "pets", "cat", "biscuit"},
    "drink": {"coffee", "drinks", "drink", "oat", "flat", "whites", "tea"},
    "place": {"porto", "lisbon", "moved", "city"},
}
"""The words of each concept; a text with none of them is the fourth concept, ``other``."""
_WORD: Final = re.compile(r"[a-z]+")


def concept_embed(texts: Sequence[str]) -> list[list[float]]:
    """Unit vectors over ``animal drink place other``: each word of a concept counts once."""
    vectors: list[list[float]] = []
    for text in texts:
        words = _WORD.findall(text.lower())
        counts = [float(sum(word in members for word in words)) for members in CONCEPTS.values()]
        counts.append(0.0 if any(counts) else 1.0)
        norm = math.sqrt(sum(value * value for value in counts))
        vectors.append([value / norm for value in counts])
    return vectors


class SemanticConformance:
    """Searches of a store built with ``index=semantic_index`` (see the module docstring)."""

    semantic_index: ClassVar[dict[str, Any]] = {
        "embed": concept_embed,
        "dims": 4,
        "fields": ["content"],
    }
    """The ``index`` the ``indexed_store`` fixture builds its store with."""

    @pytest.fixture
    def indexed_store(self) -> Store:
        """A fresh, empty store built with ``index=self.semantic_index``: override this."""
        raise NotImplementedError("override the indexed_store fixture")

    def test_a_paraphrase_is_found_and_ranked_first(self, indexed_store: Store) -> None:
        """A query that shares no word with the nearest item finds it first; every item found
        has a score, best first."""
        store = indexed_store
        store.put(("memories", "ana"), "dog", {"content": "User's dog is called Biscuit."})
        store.put(("memories", "ana"), "drink", {"content": "Ana drinks oat flat whites."})
        for query, nearest in (("which puppy", "dog"), ("pet", "dog"), ("coffee", "drink")):
            found = store.search(("memories",), query=query)
            assert found and found[0].key == nearest, (query, [i.key for i in found])
            scores = [item.score for item in found]
            assert all(isinstance(score, float) for score in scores), scores
            assert scores == sorted(scores, reverse=True), scores
            assert found[0].score > found[-1].score or len(found) == 1

    def test_a_put_index_names_what_is_embedded(self, indexed_store: Store) -> None:
        """``put(index=False)`` keeps an item out of the vector index; ``put(index=[...])``
        embeds the fields it names instead of the store's."""
        store = indexed_store
        store.put(("m",), "dog", {"content": "My dog sleeps."}, index=False)
        store.put(("m",), "list", {"content": "Groceries.", "note": "puppy food"}, index=["note"])
        store.put(("m",), "drink", {"content": "Tea at five."})
        found = [item.key for item in store.search(("m",), query="pet")]
        assert found[0] == "list", found
        assert "dog" not in found[:2], found
        assert store.search(("m",), query="coffee")[0].key == "drink"

    def test_the_async_search_ranks_by_the_index_too(self, indexed_store: Store) -> None:
        """``asearch`` finds the paraphrase as ``search`` does."""
        store = indexed_store

        async def run() -> list[Any]:
            await store.aput(("memories", "ana"), "dog", {"content": "User's dog is Biscuit."})
            await store.aput(("memories", "ana"), "drink", {"content": "Ana drinks flat whites."})
            found: list[Any] = await store.asearch(("memories",), query="which puppy")
            return found

        assert asyncio.run(run())[0].key == "dog"


class StoreConformance(SearchConformance, SemanticConformance):
    """The LangGraph store contract (see the module docstring). Override the ``store``
    fixture; adjust the class attributes where your store chose otherwise (these, and
    :class:`SearchConformance`'s for searches and namespaces). Override ``indexed_store`` too:
    a fresh store built with ``index=self.semantic_index`` (:class:`SemanticConformance`)."""

    keeps_created_at: ClassVar[bool] = True
    """A put on a key in use keeps the item's ``created_at`` (``InMemoryStore`` resets it)."""

    @pytest.fixture
    def store(self) -> Store:
        """A fresh, empty store for one test: override this fixture."""
        raise NotImplementedError("a StoreConformance subclass must override the store fixture")

    # -- items ------------------------------------------------------------------------------

    @pytest.mark.parametrize("name", list(VALUES))
    def test_a_value_put_is_the_value_got(self, store: Store, name: str) -> None:
        """Any JSON object comes back equal, with the item's namespace, key and timestamps."""
        value = VALUES[name]
        store.put(("users", "ana"), "item", value)
        item = store.get(("users", "ana"), "item")
        assert item is not None
        assert item.value == value
        assert (tuple(item.namespace), item.key) == (("users", "ana"), "item")
        assert aware(item.created_at) and aware(item.updated_at)
        assert item.created_at <= item.updated_at
        assert item.dict()["value"] == value

    def test_a_missing_item_is_none(self, store: Store) -> None:
        """Neither an unknown key nor an unknown namespace is an error."""
        store.put(("users", "ana"), "known", {"content": "x"})
        assert store.get(("users", "ana"), "unknown") is None
        assert store.get(("users", "nobody"), "known") is None
        assert store.get(("nowhere",), "known") is None

    def test_a_put_on_a_key_in_use_replaces_the_value(self, store: Store) -> None:
        """Upsert: one item, the last value, ``updated_at`` never earlier."""
        store.put(("users", "ana"), "prefs", {"content": "tea", "n": 1})
        first = store.get(("users", "ana"), "prefs")
        store.put(("users", "ana"), "prefs", {"content": "coffee", "n": 2})
        second = store.get(("users", "ana"), "prefs")
        assert second.value == {"content": "coffee", "n": 2}
        assert second.updated_at >= first.updated_at
        if self.keeps_created_at:
            assert second.created_at == first.created_at
        assert keys_of(store.search(("users",))) == [(("users", "ana"), "prefs")]

    def test_a_deleted_item_is_gone(self, store: Store) -> None:
        """``delete`` and ``put(value=None)`` remove the item; a later put makes a new one."""
        put = operation(store, "PutOp")
        store.put(("users", "ana"), "a", {"content": "first"})
        store.put(("users", "ana"), "b", {"content": "second"})
        first = store.get(("users", "ana"), "a")
        store.delete(("users", "ana"), "a")
        store.batch([put(("users", "ana"), "b", None)])
        assert store.get(("users", "ana"), "a") is None
        assert store.get(("users", "ana"), "b") is None
        assert store.search(("users",)) == []
        store.delete(("users", "ana"), "a")  # deleting nothing is no error
        store.delete(("users", "nobody"), "a")
        store.put(("users", "ana"), "a", {"content": "again"})
        again = store.get(("users", "ana"), "a")
        assert again.value == {"content": "again"}
        assert again.created_at >= first.created_at

    @pytest.mark.parametrize(
        "key",
        [
            "a/b/c",
            "with space",
            "ünï-cødé",
            "3f2a9c1e-0000-4000-8000-000000000000",
            ".",
            "..",
            "%41",
            "a//b",
            "/leading",
            "UPPER",
            "x" * 60,
        ],
    )
    def test_a_key_is_any_text(self, store: Store, key: str) -> None:
        """A key comes back as given and names one item."""
        store.put(("users", "ana"), key, {"content": f"value of {key}"})
        store.put(("users", "ana"), "other", {"content": "another"})
        assert store.get(("users", "ana"), key).value == {"content": f"value of {key}"}
        assert store.get(("users", "ana"), key).key == key
        assert sorted(item.key for item in store.search(("users", "ana"))) == sorted([key, "other"])

    def test_labels_are_any_text_and_case_counts(self, store: Store) -> None:
        """Labels that differ only in case, or that are not ASCII, are other namespaces."""
        spaces = [("Ana",), ("ana",), ("a b", "ü"), ("memory",), ("memory", "x"), ("~-_",)]
        for index, namespace in enumerate(spaces):
            store.put(namespace, "k", {"content": f"item {index}"})
        for index, namespace in enumerate(spaces):
            assert store.get(namespace, "k").value == {"content": f"item {index}"}
        assert store.list_namespaces() == sorted(spaces)

    def test_namespace_labels_are_checked(self, store: Store) -> None:
        """Empty namespaces, a ``langgraph`` root, and labels that are empty, not text, or
        hold a period are refused, and nothing is written."""
        value = {"content": "x"}
        refused(store, lambda: store.put((), "k", value))
        refused(store, lambda: store.put(("langgraph", "x"), "k", value))
        for bad in (("a.b",), ("users", ""), ("users", 3), ("users", "a.b")):
            refused(store, lambda bad=bad: store.put(bad, "k", value))
            refused(store, lambda bad=bad: store.get(bad, "k"))
            refused(store, lambda bad=bad: store.delete(bad, "k"))
            refused(store, lambda bad=bad: store.search(bad))
            refused(store, lambda bad=bad: store.list_namespaces(prefix=bad))
            refused(store, lambda bad=bad: store.list_namespaces(suffix=bad))
        assert store.search(()) == []
        assert store.list_namespaces() == []

    def test_the_langgraph_root_is_refused_by_put_alone(self, store: Store) -> None:
        """``BaseStore`` refuses a ``langgraph`` root (and an empty namespace) in ``put`` and
        ``aput`` only: a put given to ``batch``, a get, a delete and a search take it; a get
        or a delete of the empty namespace finds nothing."""
        put = operation(store, "PutOp")
        store.batch([put(("langgraph", "x"), "k", {"content": "kept"})])
        assert store.get(("langgraph", "x"), "k").value == {"content": "kept"}
        assert keys_of(store.search(("langgraph",))) == [(("langgraph", "x"), "k")]
        store.delete(("langgraph", "x"), "k")
        store.delete(("langgraph", "never"), "k")
        asyncio.run(store.adelete(("langgraph", "x"), "k"))
        assert store.get(("langgraph", "x"), "k") is None
        assert store.get((), "k") is None
        store.delete((), "k")
        refused(store, lambda: store.put(("langgraph", "x"), "k", {"content": "x"}))

    def test_ttl_is_refused_when_not_supported(self, store: Store) -> None:
        """A store without TTL raises ``NotImplementedError`` for a ``ttl`` (``None`` is fine)."""
        if store.supports_ttl:
            store.put(("users",), "k", {"content": "x"}, ttl=5)
            return
        with pytest.raises(NotImplementedError):
            store.put(("users",), "k", {"content": "x"}, ttl=5)
        assert store.get(("users",), "k") is None
        store.put(("users",), "k", {"content": "x"}, ttl=None)
        assert store.get(("users",), "k") is not None

    def test_an_item_put_with_a_ttl_expires(self, store: Store) -> None:
        """With TTL supported: an item is there until its time to live (minutes) runs out,
        then neither read nor searched nor listed; an item without one stays."""
        if not store.supports_ttl:
            return
        store.put(("users", "ana"), "brief", {"content": "short lived"}, ttl=0.01)
        store.put(("users", "ana"), "kept", {"content": "kept"}, ttl=None)
        store.put(("users", "bo"), "brief", {"content": "short lived too"}, ttl=0.01)
        assert store.get(("users", "ana"), "brief", refresh_ttl=False) is not None
        time.sleep(0.8)
        assert store.get(("users", "ana"), "brief") is None
        assert keys_of(store.search(("users",))) == [(("users", "ana"), "kept")]
        assert store.list_namespaces(prefix=("users",)) == [("users", "ana")]

    # -- batches and async ------------------------------------------------------------------

    def test_a_batch_answers_each_operation_in_order(self, store: Store) -> None:
        """One result per operation; reads see the store before the batch's puts, and of two
        puts to one item the last wins."""
        get, put, search = (
            operation(store, "GetOp"),
            operation(store, "PutOp"),
            operation(store, "SearchOp"),
        )
        listing = operation(store, "ListNamespacesOp")
        store.put(("b",), "old", {"content": "old"})
        results = store.batch(
            [
                put(("b",), "new", {"content": "first"}),
                get(("b",), "old"),
                get(("b",), "new"),
                put(("b",), "new", {"content": "second"}),
                search(("b",)),
                listing(),
                put(("b",), "old", None),
            ]
        )
        assert len(results) == 7
        assert results[0] is None and results[3] is None and results[6] is None
        assert results[1].value == {"content": "old"}
        assert results[2] is None
        assert keys_of(results[4]) == [(("b",), "old")]
        assert results[5] == [("b",)]
        assert store.get(("b",), "new").value == {"content": "second"}
        assert store.get(("b",), "old") is None

    def test_the_async_twins_do_what_the_sync_methods_do(self, store: Store) -> None:
        """``aput aget asearch adelete alist_namespaces abatch``."""

        async def run() -> None:
            await store.aput(("users", "ana"), "k", {"content": "async coffee", "n": 1})
            await store.aput(("users", "bo"), "k", {"content": "tea", "n": 2})
            item = await store.aget(("users", "ana"), "k")
            assert item.value == {"content": "async coffee", "n": 1}
            assert keys_of(await store.asearch(("users",), filter={"n": 2})) == [
                (("users", "bo"), "k")
            ]
            if self.ranks_queries:
                found = await store.asearch(("users",), query="coffee")
                assert keys_of(found) == [(("users", "ana"), "k")]
            assert await store.alist_namespaces(prefix=("users",)) == [
                ("users", "ana"),
                ("users", "bo"),
            ]
            await store.adelete(("users", "ana"), "k")
            assert await store.aget(("users", "ana"), "k") is None
            get = operation(store, "GetOp")
            assert [r.value for r in await store.abatch([get(("users", "bo"), "k")])] == [
                {"content": "tea", "n": 2}
            ]
            if not store.supports_ttl:
                with pytest.raises(NotImplementedError):
                    await store.aput(("users",), "k", {"content": "x"}, ttl=5)

        asyncio.run(run())
        assert store.get(("users", "bo"), "k").value == {"content": "tea", "n": 2}

    # -- the guard --------------------------------------------------------------------------

    def test_no_overrides_DO_NOT_OVERRIDE(self) -> None:
        """Every suite test is inherited as is, or excused with an xfail reason."""
        bad = unexcused_overrides(StoreConformance, type(self))
        assert not bad, (
            f"store tests overridden or removed without @pytest.mark.xfail(reason=...): {bad}"
        )
