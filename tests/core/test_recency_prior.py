"""Recency as a bounded prior, on the recency-sensitive case set of the benchmarks.

``benchmarks/recency_cases.toml`` holds questions such as "what did I decide about X" where a
newer note corrects an older one that matches about as well (the newer must rank first), and
questions an older note answers clearly better than a newer one (it must not be buried).
"""

from __future__ import annotations

import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from memquill.query._documents import note_document
from memquill.query._rank import Corpus, RankParams, rank

CASES = Path(__file__).parents[2] / "benchmarks" / "recency_cases.toml"
DATA: dict[str, Any] = tomllib.loads(CASES.read_text(encoding="utf-8"))
NOW = datetime.fromisoformat(DATA["now"])


def ranked(case: dict[str, Any], params: RankParams) -> list[str]:
    notes = {**DATA["background"], **case["notes"]}
    corpus = Corpus([note_document(path, text) for path, text in sorted(notes.items())])
    return [hit.document.path for hit in rank(corpus, case["query"], now=NOW, params=params)]


def position(paths: list[str], path: str) -> int:
    return paths.index(path) if path in paths else len(paths)


@pytest.mark.parametrize(
    "case",
    [case for case in DATA["case"] if case["kind"] in ("recent", "evidence")],
    ids=lambda case: f"{case['kind']}: {case['query']}",
)
def test_case_holds_with_the_default_ranking(case: dict[str, Any]) -> None:
    paths = ranked(case, RankParams())
    assert case["first"] in paths
    assert position(paths, case["first"]) < position(paths, case["second"]), paths


def test_the_recent_cases_need_recency() -> None:
    """Without recency most corrections lose to the older note: the set can fail."""
    flat = RankParams(half_life_days=None)
    recent = [case for case in DATA["case"] if case["kind"] == "recent"]
    lost = [c for c in recent if position(ranked(c, flat), c["first"]) > 0]
    assert len(lost) >= len(recent) // 2
