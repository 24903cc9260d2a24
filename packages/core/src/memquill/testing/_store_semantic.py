"""The semantic part of the LangGraph store contract: a store built with an ``index``.

LangGraph's stores with an ``IndexConfig`` rank a query by the similarity of each item's
embedded fields: a paraphrase that shares no word with the query is found, and comes first when
it is the nearest; ``put(index=False)`` keeps an item out of the vector index and
``put(index=[fields])`` names what is embedded of it. The embedding is :func:`concept_embed`, a
deterministic function of four concepts (no model), so the suite states the same expectations
for every store: LangGraph's ``InMemoryStore(index=...)`` is the reference.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Sequence
from typing import Any, ClassVar, Final

import pytest

from memquill.testing._store_ops import Store

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
