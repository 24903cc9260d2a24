"""Semantic recall: the hybrid order, the vector cache, forgetting, and every fallback.

Everything runs with the deterministic trigram embedder (no model): real workspaces, real
sessions, the real runner, the real SQLite vector file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from memquill import MemorySession, MemoryToolset, WriteSource, forget, remember
from memquill.enhance._runner import AuxiliaryRunner
from memquill.index._vectors_file import vectors_path
from memquill.paths import canonical_workspace
from memquill.query._documents import note_document
from memquill.semantic import Embedder, SemanticRanker
from memquill.semantic._hybrid import hybrid_order
from memquill.semantic._ranker import Unit, extra_hit
from memquill.semantic._vectors import VectorCache
from memquill.testing import TrigramEmbedder
from memquill.testing._models import (
    PARITY_ALIASES,
    BlockingEmbedder,
    FailingEmbedder,
    HangingEmbedder,
)

FALLBACK_TIMEOUT = "Memory ranking failed: timeout. Using keyword order."
SEMANTIC = "Memory ranking semantic: keyword results re-ordered by similarity"


def _workspace(root: Path) -> Path:
    root.mkdir()
    (root / "garage.md").write_text("# Garage\n\nThe automobile needs new tyres.\n", "utf-8")
    (root / "kitchen.md").write_text("# Kitchen\n\nBake bread on Sunday.\n", "utf-8")
    (root / "tyres.md").write_text("# Tyres\n\nTyres for the bicycle.\n", "utf-8")
    return root


def _session(root: Path, embedder: Embedder, *, timeout: float = 3.0) -> MemorySession:
    session = MemorySession(root, "s1")
    runner = AuxiliaryRunner(state_dir=root.with_name(root.name + "-state"))
    ranker = SemanticRanker(embedder, session.query, runner=runner, timeout=timeout)
    return session.with_ranker(ranker)


def _search(session: MemorySession, query: str, **options: object) -> str:
    return MemoryToolset(session).call("memory_search", {"query": query, **options}).text


def test_the_bound_keeps_a_clearly_better_keyword_match_first() -> None:
    # Keyword 10 vs 5: similarity at its most (1 vs 0) cannot bridge a factor of two at 0.2.
    assert hybrid_order([10.0, 5.0], [0.0, 1.0]) == (0, 1)
    # Near-equal keyword scores: the similar one wins.
    assert hybrid_order([10.0, 9.5], [0.1, 0.9]) == (1, 0)
    # Equal similarity: keyword order, ties by index.
    assert hybrid_order([3.0, 3.0, 3.0], [0.5, 0.5, 0.5]) == (0, 1, 2)


def test_a_synonym_keyword_search_misses_is_found_and_said(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    root_plain = MemorySession(root, "s1")
    assert "No matching memories found." in _search(root_plain, "car")
    text = _search(_session(root, TrigramEmbedder(aliases=PARITY_ALIASES)), "car")
    assert text.startswith(SEMANTIC + ", 1 found by similarity alone.\n\n1. [garage.md:3]")
    assert "The automobile needs new tyres." in text


def test_similarity_reorders_near_equal_keyword_hits_only(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a-bike.md").write_text("Tyres for the bicycle.\n", "utf-8")
    (root / "b-auto.md").write_text("Tyres for the automobile.\n", "utf-8")
    long = "An automobile story, " + "long and winding, " * 30 + "about tyres.\n"
    (root / "garage.md").write_text(long, "utf-8")
    plain = _search(MemorySession(root, "s1"), "tyres car")
    assert plain.index("[a-bike.md") < plain.index("[b-auto.md") < plain.index("[garage.md")
    hybrid = _search(_session(root, TrigramEmbedder(aliases=PARITY_ALIASES)), "tyres car")
    assert hybrid.startswith(SEMANTIC + ".\n\n1. [b-auto.md")
    # garage.md is as similar, but its keyword score is far below: the bound keeps it last.
    assert hybrid.index("[a-bike.md") < hybrid.index("[garage.md")


def test_vectors_live_in_an_owner_only_file_and_are_reused(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    embedder = TrigramEmbedder()
    session = _session(root, embedder)
    _search(session, "bread")
    path = vectors_path(canonical_workspace(root))
    assert path is not None and path.parent == Path(os.environ["MEMQUILL_INDEX_DIR"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # The search's index refresh embedded the notes' chunks (index time), then the query.
    assert embedder.calls == [("document", 3), ("query", 1)]
    _search(session, "tyres")
    assert embedder.calls[2:] == [("query", 1)]  # documents come from the cache
    # Another process (a fresh cache object) reads them from the file.
    fresh = SemanticRanker(
        embedder, session.query, runner=AuxiliaryRunner(state_dir=tmp_path / "st2")
    )
    units = fresh.cache.units()
    assert sorted(units) == ["n:garage.md#0", "n:kitchen.md#0", "n:tyres.md#0"]
    # A changed note is embedded again, alone.
    (root / "kitchen.md").write_text("# Kitchen\n\nBake rye bread on Sunday.\n", "utf-8")
    _search(session, "bread")
    assert embedder.calls[3:] == [("document", 1), ("query", 1)]


def test_another_embedder_rebuilds_the_cache(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    first = TrigramEmbedder(name="one")
    _search(_session(root, first), "bread")
    second = TrigramEmbedder(name="two")
    _search(_session(root, second), "bread")
    # Nothing of "one" was reused (the chunks are embedded at the refresh when it reads the
    # notes again, else by the search).
    assert sorted(second.calls) == [("document", 3), ("query", 1)]
    again = TrigramEmbedder(name="one")
    _search(_session(root, again), "bread")
    assert sorted(again.calls) == [("document", 3), ("query", 1)]  # one space at a time


def test_a_forgotten_fact_is_never_returned_and_its_vector_is_deleted(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    session = _session(root, TrigramEmbedder(aliases=PARITY_ALIASES))
    outcome = remember(session, "Anna drives an old automobile.", source=WriteSource("manual"))
    assert outcome.record_id is not None
    assert f"memory/records/{outcome.record_id}.md" in _search(session, "car")
    ranker = session.ranker
    assert isinstance(ranker, SemanticRanker)
    assert f"r:{outcome.record_id}" in ranker.cache.units()
    forget(session, outcome.record_id, outcome.revision, source=WriteSource("manual"))
    text = _search(session, "car")
    assert outcome.record_id not in text and "Anna" not in text
    assert f"r:{outcome.record_id}" not in ranker.cache.units()
    path = vectors_path(canonical_workspace(root))
    assert path is not None
    fresh = VectorCache(path)
    assert all(not unit.startswith("r:") for unit in fresh.units())


def test_a_forget_deletes_the_vector_at_the_write_before_any_search(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    session = _session(root, TrigramEmbedder(aliases=PARITY_ALIASES))
    kept = remember(session, "Ben rides a red bicycle.", source=WriteSource("manual"))
    gone = remember(session, "Anna drives an old automobile.", source=WriteSource("manual"))
    assert kept.record_id is not None and gone.record_id is not None
    _search(session, "car")  # the vectors are made
    path = vectors_path(canonical_workspace(root))
    assert path is not None
    assert {f"r:{kept.record_id}", f"r:{gone.record_id}"} <= set(VectorCache(path).units())
    with contextlib.closing(sqlite3.connect(path)) as connection:
        (blob,) = connection.execute(
            "SELECT vector FROM vectors WHERE unit = ?", (f"r:{gone.record_id}",)
        ).fetchone()
    # Forgotten by a session without an embedder (the CLI, another host): no search follows.
    plain = MemorySession(root, "s2")
    forget(plain, gone.record_id, gone.revision, source=WriteSource("manual"))
    units = VectorCache(path).units()
    assert f"r:{gone.record_id}" not in units
    assert f"r:{kept.record_id}" in units  # only the forgotten fact's vector went
    assert blob not in path.read_bytes()  # secure_delete: its bytes are overwritten


def test_a_forget_never_creates_a_vector_file(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    session = MemorySession(root, "s1")
    outcome = remember(session, "Anna drives an old automobile.", source=WriteSource("manual"))
    assert outcome.record_id is not None
    forget(session, outcome.record_id, outcome.revision, source=WriteSource("manual"))
    path = vectors_path(canonical_workspace(root))
    assert path is not None and not path.exists()


@pytest.mark.parametrize(
    ("embedder", "line"),
    [
        (FailingEmbedder(RuntimeError("provider down")), "Memory ranking failed: request_failed."),
        (BlockingEmbedder(3.0), "Memory ranking failed: timeout."),
        (HangingEmbedder(), "Memory ranking failed: timeout."),
    ],
    ids=["raises", "blocks", "hangs"],
)
def test_a_failing_embedder_keeps_keyword_order_and_says_why(
    tmp_path: Path, embedder: TrigramEmbedder, line: str
) -> None:
    root = _workspace(tmp_path / "ws")
    plain = _search(MemorySession(root, "s1"), "tyres")
    session = _session(root, embedder, timeout=0.3)
    started = time.monotonic()
    text = _search(session, "tyres")
    assert time.monotonic() - started < 2.5
    assert text == line + " Using keyword order.\n\n" + plain
    # The same statuses as rerank: the next search is in a cooldown and calls nothing.
    again = _search(session, "tyres")
    assert again.startswith("Memory ranking cooldown: ")


def test_the_async_path_falls_back_too(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    session = _session(root, HangingEmbedder(), timeout=0.3)
    result = asyncio.run(MemoryToolset(session).acall("memory_search", {"query": "tyres"}))
    assert result.text.startswith(FALLBACK_TIMEOUT)
    assert "[tyres.md:" in result.text


def test_vectors_of_the_wrong_shape_change_nothing(tmp_path: Path) -> None:
    class Short(TrigramEmbedder):
        async def embed(self, texts: object, *, kind: object) -> list[list[float]]:
            return [[1.0, 0.0]]  # two dims, one vector, whatever was asked

    root = _workspace(tmp_path / "ws")
    session = _session(root, Short(name="short"))
    text = _search(session, "tyres")
    assert text.startswith("Memory ranking failed: invalid_response. Using keyword order.")
    ranker = session.ranker
    assert isinstance(ranker, SemanticRanker) and ranker.cache.units() == {}


def test_filters_hold_for_purely_similar_candidates(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    (root / "memory" / "daily").mkdir(parents=True)
    (root / "memory" / "daily" / "2026-11-30.md").write_text("Washed the automobile.\n", "utf-8")
    session = _session(root, TrigramEmbedder(aliases=PARITY_ALIASES))
    text = _search(session, "car", file_type="daily")
    assert "[memory/daily/2026-11-30.md:1]" in text and "garage.md" not in text


def test_similarity_with_and_without_numpy_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    from memquill.semantic import _hybrid as _similarity

    embedder = TrigramEmbedder()
    rows = [tuple(embedder.vector(text)) for text in ("car tyres", "bread", "tyres for bikes")]
    units = [(f"r:{n}", "d") for n in range(len(rows))]
    query = tuple(embedder.vector("tyres"))
    fast = _similarity.Similarities().cosines("s", units, rows, query)
    monkeypatch.setattr(_similarity, "_numpy", lambda: None)
    plain = _similarity.Similarities().cosines("s", units, rows, query)
    assert plain == pytest.approx(fast, abs=1e-6)
    assert plain[0] > plain[1] and plain[2] > plain[1]
    # A vector of another length scores 0 on both paths (mixed lengths: no matrix).
    mixed = _similarity.Similarities().cosines("s", [*units, ("r:x", "d")], [*rows, (1.0,)], query)
    assert mixed[-1] == 0.0 and mixed[:3] == pytest.approx(fast, abs=1e-6)


def test_a_purely_similar_hit_rounds_its_score_as_keyword_hits_do() -> None:
    # 0.125 is exact in binary: Python's round() keeps the even 0.12, while every keyword
    # hit's score rounds halves up, as JavaScript's toFixed(2) does.
    document = note_document("memory.md", "# Tea\n\nGreen tea.\n")
    unit = Unit("n:memory.md#0", "0" * 32, "# Tea\n\nGreen tea.", document, "Tea", 0)
    assert [extra_hit(document, unit, s).score for s in (0.125, 0.375, 0.5049)] == [
        0.13,
        0.38,
        0.5,
    ]
