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
import time
from typing import ClassVar

import pytest

from memquill.testing._overrides import unexcused_overrides
from memquill.testing._store_ops import VALUES, Store, aware, keys_of, operation, refused
from memquill.testing._store_search import SearchConformance
from memquill.testing._store_semantic import SemanticConformance


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
