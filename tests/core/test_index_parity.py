"""The indexed search answers exactly as the full scan does, byte for byte.

Generated workspaces (notes with frontmatter, headings, tags, dated names, CJK text, long
sections, managed records) go through edits, deletions, renames and additions; after each
round every query is answered by the reference full scan, by a warm index (the same process
object, with and without a change watcher) and by a cold one (a new object on the same file),
and the rendered outputs must be identical. A small re-scoring depth makes the candidate
pruning do real work on small workspaces.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Any

import numpy
import pytest
from hypothesis import given, settings, strategies as st
from tests.core.index_helpers import age, indexed, mutate, populate, queries, reference
from tests.core.query_helpers import make_unreadable, write

from memquill.index import _corpus, _search_index
from memquill.index._codec import Postings
from memquill.index._prune import MARGIN, GainFactors, Norms, select_dense
from memquill.index._search_index import IndexSearcher
from memquill.index._view import (
    NoteTable,
    _join,  # pyright: ignore[reportPrivateUsage]
)
from memquill.query._rank import RankParams

PARAMS = (None, RankParams(rerank_depth=3), RankParams(rerank_depth=1, half_life_days=None))


def assert_same_answers(
    root: Path, searchers: list[IndexSearcher], rng: random.Random, rounds: int = 6
) -> None:
    for _ in range(rounds):
        for arguments in queries(rng, rounds):
            params = rng.choice(PARAMS)
            expected = reference(root, params).search(**arguments)
            for searcher in searchers:
                got = indexed(root, searcher, params).search(**arguments)
                assert got.text == expected.text, arguments
                assert got.result == expected.result


# Both ways of keeping the index current, every run: with the change watcher (Linux, a
# long-lived process) and without it (macOS, network file systems: a walk before each answer).
@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "walk"])
@settings(max_examples=6)
@given(seed=st.integers(0, 2**32 - 1), racy=st.sampled_from([0.0, 2.0]))
def test_indexed_search_equals_the_full_scan_through_edits(
    watch: bool, seed: int, racy: float
) -> None:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as workspace, tempfile.TemporaryDirectory() as folder:
        root = Path(workspace).resolve()
        populate(root, rng, rng.randint(5, 60))
        warm = IndexSearcher(folder, notice=None, watch=watch, racy_seconds=racy)
        try:
            for step in range(4):
                cold = IndexSearcher(folder, notice=None, watch=False, racy_seconds=racy)
                try:
                    assert_same_answers(root, [warm, cold], rng, rounds=3)
                finally:
                    cold.close()
                mutate(root, rng, step)
                if rng.random() < 0.5:
                    age(root)
        finally:
            warm.close()


@pytest.fixture
def bulk_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per search pruned in bulk."""
    calls: list[int] = []

    def counted(*args: Any) -> set[int] | None:
        calls.append(1)
        return select_dense(*args)

    monkeypatch.setattr(_corpus, "select_dense", counted)
    return calls


# A process that has numpy loaded prunes in bulk: forced here either way, and the bulk path
# must have run when asked for.
@pytest.mark.parametrize("bulk", [True, False], ids=["numpy", "loop"])
def test_many_candidates_are_pruned_to_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk_calls: list[int], bulk: bool
) -> None:
    monkeypatch.setattr(_search_index, "bulk_module", lambda: numpy if bulk else None)
    rng = random.Random(7)
    populate(tmp_path, rng, 300)
    searcher = IndexSearcher(tmp_path / "index", notice=None, racy_seconds=0)
    try:
        assert_same_answers(tmp_path, [searcher], rng, rounds=8)
    finally:
        searcher.close()
    assert bool(bulk_calls) == bulk


def test_an_unreadable_note_is_skipped_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "a.md", "alpha")
    write(tmp_path, "b.md", "alpha bravo")
    make_unreadable(monkeypatch, "a.md")
    searcher = IndexSearcher(tmp_path / "index", notice=None)
    try:
        got = indexed(tmp_path, searcher).search(query="alpha")
        assert got.text == reference(tmp_path).search(query="alpha").text
        assert got.text.startswith("Skipped a.md: Memory source is not readable.\n\n1. [b.md:1]")
    finally:
        searcher.close()


@settings(max_examples=100)
@given(
    notes=st.lists(
        st.tuples(
            st.integers(0, 600_000),
            st.integers(0, 5_000),
            st.none() | st.tuples(*(st.integers(0, 300) for _ in range(5))),
        ),
        min_size=1,
        max_size=60,
    )
)
def test_kept_gain_factors_lie_far_inside_the_pruning_margin(
    notes: list[tuple[int, int, tuple[int, int, int, int, int] | None]],
) -> None:
    # Pruning keeps each term's gain factors as 32-bit floats: every bound it draws from them
    # holds only while each kept factor is within a small part of MARGIN of the exact one.
    table = NoteTable()
    table.lengths.extend(length for length, _, _ in notes)
    fields = {doc: counts for doc, (_, _, counts) in enumerate(notes) if counts is not None}
    bodies = array("I", [body for _, body, _ in notes])
    postings = _join([Postings(array("I", range(len(notes))), bodies, fields)])
    average = max(1.0, sum(table.lengths) / len(notes))
    norms = Norms(0.25, 0.75 / average, table.lengths, {})
    params = RankParams()
    factors = GainFactors()
    factors.prepare(table, norms, params)
    kept = factors.of("term", postings, params)
    exact = factors.at(postings, None, postings.ids, params)
    # Worked out in bulk (numpy), the sums round their own way: as far inside the margin.
    bulk = GainFactors()
    bulk.prepare(table, norms, params)
    in_bulk = bulk.of("term", postings, params, numpy)
    assert len(kept) == len(exact) == len(in_bulk) == len(notes)
    for held, value, other in zip(kept, exact, in_bulk, strict=True):
        assert abs(held - value) <= value * MARGIN / 16
        assert abs(other - value) <= value * MARGIN / 16


def test_searching_never_imports_numpy(tmp_path: Path) -> None:
    # Pruning in bulk saves less than importing numpy costs most processes: only a process
    # that has it loaded already prunes in bulk.
    populate(tmp_path, random.Random(3), 40)
    ask = (
        f"searcher.search(Path({str(tmp_path)!r}), 'alpha bravo', records=(), now=now, tags=(),"
        " file_type='all', params=RankParams(), candidates=5)\n"
    )
    script = (
        "import sys\n"
        "from datetime import UTC, datetime\n"
        "from pathlib import Path\n"
        "from memquill.index._search_index import IndexSearcher\n"
        "from memquill.query._rank import RankParams\n"
        "now = datetime.now(UTC)\n"
        f"searcher = IndexSearcher({str(tmp_path / 'index')!r}, notice=None)\n"
        f"{ask * 20}"
        "print('numpy' in sys.modules)\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert found.split() == ["False"]


def test_numpy_imported_already_prunes_in_bulk_from_the_first_search(
    tmp_path: Path, bulk_calls: list[int]
) -> None:
    populate(tmp_path, random.Random(5), 80)
    searcher = IndexSearcher(tmp_path / "index", notice=None, racy_seconds=0)
    try:
        got = indexed(tmp_path, searcher).search(query="alpha bravo charlie")
    finally:
        searcher.close()
    assert "numpy" in sys.modules and bulk_calls == [1]
    assert got.text == reference(tmp_path).search(query="alpha bravo charlie").text
