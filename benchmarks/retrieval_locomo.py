"""Retrieval quality on LoCoMo: memquill's search next to BM25 and the spec's substring scorer.

Usage::

    uv run python benchmarks/retrieval_locomo.py PATH/locomo10.json [--grid] [--detail]

Each conversation becomes three workspaces (``locomo_data.py``): one record per turn, one
daily note per session date (``YYYY-MM-DD.md``, one ``Speaker: text`` line per turn), and the
same daily notes with each line tagged ``- [<dia_id>] **<speaker>:** <text>``. Every question is
asked as written, with the clock at the day after the conversation's last session. Measures
(answerable questions, categories 1–4, unless ``--detail`` shows every category):

- ``records R@k``: recall@k of turns among record hits; recall@k = mean |gold ∩ top-k| / |gold|.
- ``files R@k``: recall@k of the daily notes holding a gold turn, with decay on (memquill's
  defaults) and off, next to BM25 and the substring scorer over whole files.
- ``evidence-visible@5``: on the tagged notes, the fraction of a question's gold turns whose
  ``[<dia_id>]`` tag appears in the text the search tool returns for 5 hits (excerpts
  included, as a model reads them); ``whole turn`` counts a turn only when its whole line
  is shown. Side by side: the plain reference excerpt
  (``locomo_baselines.reference_excerpt``) with the same budget on memquill's five files and on
  BM25's five files, and the ceiling (the gold turn's file is among the five).
- ``tokens/5 hits``: characters / 4 of the text of a 5-hit search, mean over questions.

Figures are printed for conversations 1–5 (where parameters were chosen), 6–10 (held out) and
all. Record ids are seeded (``--seed``) so every figure repeats exactly. ``--grid`` scores the
parameter grids used for tuning, on conversations 1–5 only.

The data set is CC BY-NC 4.0: it is read from where it lies and never copied into the repo.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from locomo_baselines import bm25_ranker, reference_excerpt, substring_ranker
from locomo_data import Prepared, load, prepare, seed_record_ids
from memquill.query import MemoryQuery, SearchArgs
from memquill.query._engine import SNIPPET_UNITS
from memquill.query._models import SearchResult
from memquill.query._rank import RankParams
from memquill.query._render import render_search
from recency_cases import recency_summary, run_recency_cases

KS = (1, 5, 10)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
GROUPS = (*CATEGORIES.values(), "answerable", "all")


@dataclass
class Mean:
    """Per-group means of one figure."""

    sums: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, category: int, value: float) -> None:
        for group in (CATEGORIES[category], "answerable" if category <= 4 else "", "all"):
            if group:
                self.sums[group] += value
                self.counts[group] += 1

    def merge(self, other: Mean) -> None:
        for group, value in other.sums.items():
            self.sums[group] += value
        for group, count in other.counts.items():
            self.counts[group] += count

    def value(self, group: str = "answerable") -> float:
        count = self.counts[group]
        return self.sums[group] / count if count else float("nan")


Figures = dict[str, Mean]


def _recall(figures: Figures, name: str, category: int, gold: frozenset[str], ranked: list[str]):
    for k in KS:
        figures[f"{name} R@{k}"].add(category, len(gold.intersection(ranked[:k])) / len(gold))


def _visible(gold: frozenset[str], text: str) -> float:
    return sum(f"[{dia}]" in text for dia in gold) / len(gold)


def _whole(gold: frozenset[str], text: str, lines: dict[str, str]) -> float:
    return sum(lines[dia] in text for dia in gold) / len(gold)


def search(engine: MemoryQuery, query: str, limit: int = 5) -> SearchResult:
    return engine.search(SearchArgs(query=query, limit=limit))


def evaluate(item: Prepared, params: RankParams, *, baselines: bool) -> Figures:
    """Every figure for one conversation."""
    figures: Figures = defaultdict(Mean)
    conversation = item.conversation
    clock = conversation.clock

    def engine(root: Path, chosen: RankParams) -> MemoryQuery:
        return MemoryQuery(root, params=chosen, now=lambda: clock)

    records = engine(item.records_root, params)
    files = engine(item.files_root, params)
    flat = engine(item.files_root, replace(params, half_life_days=None))
    evidence = engine(item.evidence_root, params)
    rankers: dict[str, Callable[[str], list[str]]] = {}
    evidence_texts: dict[str, str] = {}
    tagged = {turn.dia_id: turn.tagged for turn in conversation.turns}
    if baselines:
        turn_docs = [(turn.dia_id, turn.line) for turn in conversation.turns]
        rankers = {
            "records bm25": bm25_ranker(turn_docs),
            "records substring": substring_ranker(turn_docs),
            "files bm25": bm25_ranker(_docs(item.files_root)),
            "files substring": substring_ranker(_docs(item.files_root)),
        }
        evidence_texts = dict(_docs(item.evidence_root))
        rankers["evidence bm25"] = bm25_ranker(list(evidence_texts.items()))
    for question in conversation.questions:
        category, text = question.category, question.text
        hits = search(records, text, limit=10).hits
        turns = [item.record_ids.get(hit.record_id or "", "") for hit in hits]
        _recall(figures, "records memquill", category, question.gold_turns, turns)
        shown_records = render_search(search(records, text))
        figures["tokens/5 hits records"].add(category, len(shown_records) / 4)
        for name, chosen in (("decay", files), ("no decay", flat)):
            found = [hit.path for hit in search(chosen, text, limit=10).hits]
            _recall(figures, f"files memquill ({name})", category, question.gold_files, found)
        shown = search(evidence, text)
        shown_text = render_search(shown)
        figures["tokens/5 hits files"].add(category, len(shown_text) / 4)
        visible = _visible(question.gold_turns, shown_text)
        figures["evidence-visible@5 memquill"].add(category, visible)
        whole = _whole(question.gold_turns, shown_text, tagged)
        figures["evidence-visible@5 memquill, whole turn"].add(category, whole)
        top = [hit.path for hit in shown.hits]
        holding = [dia for dia in question.gold_turns if conversation.file_of[dia] in top]
        figures["evidence-visible@5 ceiling"].add(category, len(holding) / len(question.gold_turns))
        for name, ranker in rankers.items():
            ranked = ranker(text)
            if name.startswith("evidence"):
                continue
            gold = question.gold_turns if name.startswith("records") else question.gold_files
            _recall(figures, name, category, gold, ranked)
        if baselines:
            for label, paths in (("memquill", top), ("bm25", rankers["evidence bm25"](text)[:5])):
                excerpts = "\n".join(
                    reference_excerpt(evidence_texts[p], text, SNIPPET_UNITS) for p in paths
                )
                name = f"evidence-visible@5 reference excerpt on {label} files"
                figures[name].add(category, _visible(question.gold_turns, excerpts))
                whole = _whole(question.gold_turns, excerpts, tagged)
                figures[f"{name}, whole turn"].add(category, whole)
    return figures


def _docs(root: Path) -> list[tuple[str, str]]:
    return [(p.name, p.read_text(encoding="utf-8")) for p in sorted(root.glob("*.md"))]


def merged(parts: Iterable[Figures]) -> Figures:
    total: Figures = defaultdict(Mean)
    for figures in parts:
        for name, mean in figures.items():
            total[name].merge(mean)
    return total


def report(scopes: dict[str, Figures], detail: bool) -> None:
    names = sorted({name for figures in scopes.values() for name in figures})
    print(f"\n## answerable questions (categories 1-4); {', '.join(scopes)}")
    width = max(len(name) for name in names) + 2
    print(f"{'measure':{width}}" + "".join(f"{scope:>12}" for scope in scopes))
    for name in names:
        values = "".join(f"{scopes[scope][name].value():12.3f}" for scope in scopes)
        print(f"{name:{width}}{values}")
    if not detail:
        return
    for scope, figures in scopes.items():
        print(f"\n## by category, {scope}")
        print(f"{'measure':{width}}" + "".join(f"{g[:11]:>12}" for g in GROUPS))
        for name in names:
            values = "".join(f"{figures[name].value(g):12.3f}" for g in GROUPS)
            print(f"{name:{width}}{values}")
        counts = "".join(f"{figures[names[0]].counts[g]:12d}" for g in GROUPS)
        print(f"{'questions':{width}}{counts}")


def scoped(prepared: Sequence[Prepared], params: RankParams, baselines: bool) -> dict[str, Figures]:
    per = [evaluate(item, params, baselines=baselines) for item in prepared]
    return {"conv 1-5": merged(per[:5]), "conv 6-10": merged(per[5:]), "all": merged(per)}


GRIDS: dict[str, Callable[[], list[RankParams]]] = {
    "bm25": lambda: [RankParams(k1=k1, b=b) for k1 in (0.6, 0.9, 1.2) for b in (0.5, 0.75)],
    "recency": lambda: [
        RankParams(half_life_days=h, recency_weight=w)
        for h in (30.0, 90.0)
        for w in (0.05, 0.1, 0.15, 0.2, 0.3, 0.5)
    ],
}


def grid(prepared: Sequence[Prepared], name: str) -> None:
    """Score one tuning grid on conversations 1-5 only (and the recency case set)."""
    keys = ("records memquill R@5", "files memquill (decay) R@5", "evidence-visible@5 memquill")
    print(f"\n## grid {name!r} on conversations 1-5: " + ", ".join(keys) + ", recency cases")
    for params in GRIDS[name]():
        figures = merged(evaluate(item, params, baselines=False) for item in prepared[:5])
        values = " ".join(f"{figures[key].value():.3f}" for key in keys)
        print(f"{values} {recency_summary(params)}  {params}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("data", type=Path, help="path to locomo10.json")
    parser.add_argument("--grid", choices=sorted(GRIDS), help="score a grid on conversations 1-5")
    parser.add_argument("--detail", action="store_true", help="figures by question category")
    parser.add_argument("--seed", type=int, default=7, help="seed of the record ids (default 7)")
    args = parser.parse_args(argv)
    seed_record_ids(args.seed)
    started = time.perf_counter()
    conversations = load(args.data)
    with tempfile.TemporaryDirectory(prefix="memquill-locomo-") as scratch:
        prepared = prepare(conversations, Path(scratch))
        print(f"prepared {len(prepared)} conversations in {time.perf_counter() - started:.1f}s")
        if args.grid:
            grid(prepared, args.grid)
            return 0
        params = RankParams()
        print(f"memquill parameters: {params}")
        report(scoped(prepared, params, True), args.detail)
    run_recency_cases(sys.stdout)
    print(f"\ntotal {time.perf_counter() - started:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
