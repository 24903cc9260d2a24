"""The searches and namespaces of the LangGraph store contract (a part of ``StoreConformance``).

Filters, ``limit``/``offset``, the prefix a search covers, the order without a query, a
ranked query, and ``list_namespaces`` with its options. The class attributes declare where a
store chose otherwise; :class:`~memquill.testing.StoreConformance` inherits all of it.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal

from memquill.testing._store_ops import Store, keys_of


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
