"""Semantic recall where keyword search is not confident: the nearest documents join.

A session with an embedder finds a paraphrase that shares no word with the query and ranks it
first when it is the nearest, while a confident keyword order is kept exactly. The embedder is
a deterministic function of topic words (no model): real workspaces, sessions, runner and
vector file.
"""

from __future__ import annotations

import re
from pathlib import Path

from memquill import MemorySession, MemoryToolset, WriteSource, remember
from memquill.enhance._runner import AuxiliaryRunner
from memquill.semantic import SemanticRanker
from memquill.semantic._embedder import FunctionEmbedder
from memquill.semantic._hybrid import joined_order, keyword_confident

SEMANTIC = "Memory ranking semantic: keyword results re-ordered by similarity"
_TOPICS = (
    {"dog", "puppy", "pet"},
    {"coffee", "oat", "flat", "whites", "drinks"},
    {"tv", "bowl", "eight", "watch", "show"},
)


def topic_vectors(texts: list[str]) -> list[list[float]]:
    """One axis per topic, counted by its words; a text without any is on a fourth axis."""
    vectors: list[list[float]] = []
    for text in texts:
        words = re.findall(r"\w+", text.casefold())
        counts = [float(sum(word in topic for word in words)) for topic in _TOPICS]
        vectors.append([*counts, 0.0 if any(counts) else 1.0])
    return vectors


def _session(root: Path) -> MemorySession:
    session = MemorySession(root, "s1")
    runner = AuxiliaryRunner(state_dir=root.with_name(root.name + "-state"))
    embedder = FunctionEmbedder(topic_vectors, dims=4)
    return session.with_ranker(SemanticRanker(embedder, session.query, runner=runner))


def _search(session: MemorySession, query: str) -> str:
    return MemoryToolset(session).call("memory_search", {"query": query}).text


def _workspace(root: Path) -> Path:
    root.mkdir()
    plain = MemorySession(root, "s0")
    for fact in ("User's dog is called Biscuit.", "Ana drinks oat flat whites."):
        remember(plain, fact, source=WriteSource("manual"))
    return root


def _first_hit(text: str) -> str:
    """The first hit's block: from ``1. [`` to the next numbered hit."""
    start = text.index("1. [")
    end = text.find("\n\n2. [", start)
    return text[start:] if end < 0 else text[start:end]


def test_the_rule_of_confidence() -> None:
    assert not keyword_confident([])
    assert not keyword_confident([9.0])  # one hit: nothing to tell it from
    assert not keyword_confident([2.0, 2.0, 1.9, 1.9, 1.8, 0.5])  # the fifth is near the best
    assert keyword_confident([3.78, 1.12, 1.08])  # the best is 3.5 times the last of three
    assert keyword_confident([3.0, 2.9, 2.5, 2.1, 2.0, 1.0])  # exactly 1.5 times the fifth


def test_the_join_merges_without_reordering_keyword_hits() -> None:
    # One weak hit (similarity 0.2) and a joining document at 1.0: the document goes first.
    assert joined_order([1.96], [0.2], [1.0]) == (1, 0)
    # Keyword hits keep their order among themselves; a joining document goes before the first
    # hit whose join score it beats (0.65 * 1 > 0.35 * 0.5 + 0.65 * 0), not before the best.
    assert joined_order([2.0, 1.0], [0.5, 0.0], [0.5]) == (0, 2, 1)
    # No keyword hit: the joining documents in their (most similar first) order.
    assert joined_order([], [], [0.9, 0.8]) == (0, 1)


def test_a_paraphrase_is_found_when_keyword_finds_nothing(tmp_path: Path) -> None:
    session = _session(_workspace(tmp_path / "ws"))
    for query, expected in (
        ("which puppy", "User's dog is called Biscuit."),
        ("pet", "User's dog is called Biscuit."),
        ("coffee", "Ana drinks oat flat whites."),
    ):
        text = _search(session, query)
        assert expected in _first_hit(text), (query, text)


def test_the_nearest_is_first_over_one_weak_keyword_hit(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    (root / "tv.md").write_text("# TV\n\nThe Puppy Bowl is on at eight, watch the show.\n")
    assert "[tv.md:3]" in _search(MemorySession(root, "s0"), "which puppy")
    text = _search(_session(root), "which puppy")
    assert "User's dog is called Biscuit." in _first_hit(text), text
    assert "[tv.md:3]" in text  # the keyword hit is still shown
    assert "Ana" not in text  # not near enough to join
    assert _search(_session(root), "which puppy") == text  # the same bytes, another session


def test_the_nearest_joins_many_weak_keyword_hits(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    for number in range(6):
        (root / f"bowl-{number}.md").write_text(f"Puppy Bowl rerun {number} on TV tonight.\n")
    text = _search(_session(root), "which puppy")
    assert "Biscuit" in text, text
    assert "User's dog is called Biscuit." in _first_hit(text), text


def test_a_confident_keyword_order_is_kept_exactly(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    (root / "bowl.md").write_text("# Puppy Bowl\n\nThe Puppy Bowl: a bowl of puppies.\n")
    for number in range(5):
        (root / f"training-{number}.md").write_text(f"Puppy training, week {number}.\n")
    plain = _search(MemorySession(root, "s0"), "puppy bowl")
    assert plain.startswith("1. [bowl.md:")
    text = _search(_session(root), "puppy bowl")
    # Biscuit is near ("puppy" is a pet word) but keyword search is confident: nothing joins,
    # and the hits (as similar as each other) keep keyword order, byte for byte.
    assert text == SEMANTIC + ".\n\n" + plain
