"""The recency-sensitive case set (``recency_cases.toml``): does recency decide when it should?

``recent`` cases: a newer daily note corrects an older one that matches about as well, and the
newer must rank first. ``evidence`` cases: an older note answers clearly better than a newer
one that only mentions the topic, and must not be buried. ``beyond`` cases: a correction that
shares too few of the question's words for a bounded prior to lift it (expected not to hold).
Printed by ``retrieval_locomo.py``; ``tests/core/test_recency_prior.py`` asserts that every
``recent`` and ``evidence`` case holds with the default parameters.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TextIO

from memquill.query._documents import note_document
from memquill.query._rank import Corpus, RankParams, rank

CASES_FILE = Path(__file__).with_name("recency_cases.toml")


@dataclass(frozen=True)
class RecencyCase:
    kind: str
    query: str
    first: str
    second: str
    notes: dict[str, str]


def load_cases(path: Path = CASES_FILE) -> tuple[datetime, dict[str, str], list[RecencyCase]]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    cases = [
        RecencyCase(raw["kind"], raw["query"], raw["first"], raw["second"], dict(raw["notes"]))
        for raw in data["case"]
    ]
    return datetime.fromisoformat(data["now"]), dict(data["background"]), cases


def ranking(case: RecencyCase, now: datetime, background: dict[str, str], params: RankParams):
    """The paths ``rank`` returns for the case's query, best first."""
    notes = {**background, **case.notes}
    corpus = Corpus([note_document(path, text) for path, text in sorted(notes.items())])
    return [hit.document.path for hit in rank(corpus, case.query, now=now, params=params)]


def holds(case: RecencyCase, paths: list[str]) -> bool:
    """``first`` is found and ranks above ``second`` (or ``second`` is not found)."""
    if case.first not in paths:
        return False
    return case.second not in paths or paths.index(case.first) < paths.index(case.second)


def recency_summary(params: RankParams) -> str:
    """How many cases of each kind hold, e.g. ``recent 8/8, evidence 6/6``."""
    now, background, cases = load_cases()
    tally: dict[str, list[bool]] = {"recent": [], "evidence": [], "beyond": []}
    for case in cases:
        tally[case.kind].append(holds(case, ranking(case, now, background, params)))
    return ", ".join(f"{kind} {sum(ok)}/{len(ok)}" for kind, ok in tally.items())


def run_recency_cases(out: TextIO, params: RankParams | None = None) -> None:
    params = params or RankParams()
    settings = {"default": params, "no recency": replace(params, half_life_days=None)}
    print("\n## recency case set (benchmarks/recency_cases.toml): cases that hold", file=out)
    for label, chosen in settings.items():
        print(f"{label:10} {recency_summary(chosen)}", file=out)
