"""Where a warm search and a build spend their CPU time, and the least each part costs.

Usage::

    uv run python benchmarks/search_floor.py [--sizes 1000,20000]
        [--data ../shared/bench-data/locomo10.json] [--work DIR] [--queries 200] [--repeats 12]

Issue 36 asks for a warm ``memory_search`` (the whole call, up to the text the model sees) at
or under 8x a raw tantivy query at 20,000 notes, and a build at or under 3x the CPU time of an
SQLite FTS5 build of the same notes. This benchmark shows how far each part of memquill's own
work stands from those budgets, on the vaults of ``vault_scale.py`` (the same generator, seed,
questions and clock):

- **warm**, in a fresh process of its own, twice: memquill alone, and a host that has numpy
  loaded (where pruning is done in bulk; memquill never imports numpy itself). The questions
  are asked once each, as ``vault_scale.py`` asks them (``MemoryQuery`` with the index, as
  ``memquill serve`` asks), CPU time per call, and peak RSS after; split into the pruning
  (``IndexedCorpus.narrow``), reading the re-scored notes' term lists, the rest of ranking,
  and the hits' excerpts and fields (the rest of the call is "other");
- **every cache warm**: each of the first ``--repeats`` x 5 questions asked again until its
  postings, gain factors, term lists and documents are all held, the best of ``--repeats``
  calls. No storage format or cache can make a call cheaper than this: it is the Python work
  of pruning, scoring and excerpts alone;
- **raw tantivy**: the same questions' words (stop words dropped) OR-ed, top 5 by tantivy's
  BM25 with no match count, and the top hit's path (``vault_scale.py``'s warm query);
- **build**: ``memquill index`` and an FTS5 build in their own processes (CPU time, workers
  included), and ``analyse_note`` alone over every note in this process: the analysis that
  any storage of memquill's figures needs.

The vaults and indexes are kept in ``--work`` and reused when present.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import vault_scale  # the benchmark beside this one: its vaults, questions and peers

_Stages = dict[str, float]
STAGES = ("pruning", "term lists", "ranking", "hit documents", "excerpts", "other")


@contextlib.contextmanager
def timing(stages: _Stages) -> Iterator[None]:
    """While inside, each stage's CPU time adds to ``stages`` (the wrapped functions are put
    back after)."""
    import memquill.index._corpus as corpus_module
    import memquill.index._search_index as search_module
    import memquill.query._engine as engine_module

    corpus = corpus_module.IndexedCorpus
    places = (
        (corpus, "narrow", "pruning"),
        (corpus, "rescoring", "term lists"),
        (search_module, "rank", "ranking"),
        (corpus, "document", "hit documents"),
        (engine_module, "build_excerpt", "excerpts"),
    )
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in places]
    for owner, name, stage in places:
        timed(owner, name, stage, stages)
    try:
        yield
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)


def timed(owner: Any, name: str, stage: str, stages: _Stages) -> None:
    """Wrap ``owner.name`` so that its CPU time adds to ``stages[stage]``."""
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            stages[stage] += time.process_time() - began

    setattr(owner, name, wrapper)


def prepare(size: int, args: argparse.Namespace) -> tuple[Path, Path, Path, Path, dict[str, Any]]:
    """The vault, memquill's, FTS5's and tantivy's indexes (built if missing), and the builds'
    figures (empty when reused)."""
    work: Path = args.work
    root = work / f"vault-{size}"
    index, fts, tantivy = (
        work / f"index-{size}",
        work / f"fts-{size}.sqlite3",
        work / f"tantivy-{size}",
    )
    built: dict[str, Any] = {}
    if not root.exists() or not next(index.glob("*.sqlite3"), None) or not fts.exists():
        vault_scale.generate(root, size, args.data)
        time.sleep(2.1)  # a note changed in the last 2 s is read again
        env = {
            **os.environ,
            "MEMQUILL_INDEX_DIR": str(index),
            "MEMQUILL_SERVER": "0",
        }
        for stale in work.glob(fts.name + "*"):
            stale.unlink()
        built["memquill"] = vault_scale.spawn("memquill-build", root, index, [], 0, env)
        built["fts"] = vault_scale.spawn("fts-build", root, fts, [], 0, env)
    if not tantivy.exists():
        vault_scale.spawn("tantivy-build", root, tantivy, [], 0, dict(os.environ))
    return root, index, fts, tantivy, built


def warm(root: Path, index: Path, questions: Sequence[str], repeats: int) -> dict[str, Any]:
    """memquill's warm calls, split by stage, and the floor with every cache warm."""
    from memquill.index._search_index import IndexSearcher
    from memquill.query import MemoryQuery
    from memquill.query._plain import search_request

    stages: _Stages = dict.fromkeys(STAGES, 0.0)
    engine = MemoryQuery(
        root, now=lambda: vault_scale.NOW, searcher=IndexSearcher(index, notice=None)
    )

    def ask(question: str) -> float:
        request = search_request(query=question[:2000], limit=5)
        assert request is not None
        began = time.process_time()
        engine.answer(request)
        return time.process_time() - began

    with timing(stages):
        return measure(ask, stages, questions, repeats)


def measure(
    ask: Callable[[str], float], stages: _Stages, questions: Sequence[str], repeats: int
) -> dict[str, Any]:
    """The calls of :func:`warm`, with the stages timed."""
    ask(questions[0])
    ask(questions[1])
    for stage in stages:
        stages[stage] = 0.0
    calls = [ask(question) for question in questions[1:]]
    split = split_stages(stages, sum(calls), len(calls))
    floors: list[float] = []
    floor_stages: _Stages = dict.fromkeys(STAGES, 0.0)
    for question in questions[1 : 1 + 5 * repeats]:
        for _ in range(3):
            ask(question)
        best = None
        for _ in range(repeats):
            for stage in stages:
                stages[stage] = 0.0
            took = ask(question)
            if best is None or took < best[0]:
                best = (took, dict(stages))
        assert best is not None
        floors.append(best[0])
        for stage, value in best[1].items():
            floor_stages[stage] += value
    return {
        "p50": statistics.median(calls),
        "split": split,
        "floor": statistics.median(floors),
        "floor_split": split_stages(floor_stages, sum(floors), len(floors)),
    }


def split_stages(stages: _Stages, total: float, calls: int) -> _Stages:
    """Mean CPU seconds per call of each stage (ranking without the term lists and the hits'
    documents it reads, other = the rest of the call)."""
    mean = {stage: value / calls for stage, value in stages.items() if stage != "other"}
    mean["ranking"] -= mean["term lists"] + mean["hit documents"]
    mean["other"] = total / calls - sum(mean[stage] for stage in STAGES if stage != "other")
    return mean


def raw_tantivy(root: Path, store: Path, questions: Sequence[str]) -> float:
    """tantivy's warm p50 CPU time on the same questions (``vault_scale.py``'s query)."""
    search, _ = vault_scale.searcher("tantivy", root, store)
    search(questions[0])
    timings: list[float] = []
    for question in questions[1:]:
        began = time.process_time()
        search(question)
        timings.append(time.process_time() - began)
    return statistics.median(timings)


def analysis_cpu(root: Path) -> float:
    """CPU seconds of ``analyse_note`` over every note (reading the files included)."""
    from memquill.index._analysis import analyse_note

    began = time.process_time()
    for path in vault_scale.note_files(root):
        text = path.read_text("utf-8")
        analyse_note(path.relative_to(root).as_posix(), text, (0, 0, 0, 0, 0))
    return time.process_time() - began


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def report(
    size: int,
    tantivy: float,
    modes: dict[str, dict[str, Any]],
    built: dict[str, Any],
    analysis: float,
) -> None:
    names = list(modes)
    print(f"\n{size:,} notes (load average {os.getloadavg()[0]:.1f})\n")
    print("| warm call, CPU | " + " | ".join(f"{name} | ÷ tantivy" for name in names) + " |")
    print("|---|" + "---:|---:|" * len(names))

    def line(label: str, values: list[float]) -> None:
        cells = " | ".join(f"{ms(value)} | {value / tantivy:.1f}x" for value in values)
        print(f"| {label} | {cells} |")

    line("raw tantivy p50", [tantivy] * len(names))
    line("issue 36's budget (8x)", [8 * tantivy] * len(names))
    line("memquill p50, the whole call", [modes[name]["p50"] for name in names])
    for stage in STAGES:
        line(f"- {stage} (mean)", [modes[name]["split"][stage] for name in names])
    line("every cache warm (median of best)", [modes[name]["floor"] for name in names])
    for stage in STAGES:
        line(f"- {stage} (mean)", [modes[name]["floor_split"][stage] for name in names])
    print("| peak RSS | " + " | ".join(f"{modes[name]['rss']:.1f} MiB | " for name in names) + " |")
    if built:
        fts = built["fts"]["cpu"]
        whole = built["memquill"]["cpu"]
        print("\n| build, CPU | seconds | ÷ FTS5 build |")
        print("|---|---:|---:|")
        print(f"| FTS5 build | {fts:.2f} s | 1.0x |")
        print(f"| issue 36's budget (3x) | {3 * fts:.2f} s | 3.0x |")
        print(f"| memquill build (workers included) | {whole:.2f} s | {whole / fts:.1f}x |")
        print(f"| `analyse_note` alone, one process | {analysis:.2f} s | {analysis / fts:.1f}x |")
    else:
        print(f"\n`analyse_note` alone over every note: {analysis:.2f} s CPU (builds reused)")


MODES = {"memquill": "", "numpy loaded": "numpy"}
"""Each warm measurement's process: memquill alone, and a host that has numpy loaded (pruning
in bulk)."""


def child(root: Path, index: Path, questions: list[str], repeats: int, preload: str) -> None:
    """One warm measurement in this fresh process, printed as JSON."""
    if preload:
        import_module(preload)
    found = warm(root, index, questions, repeats)
    found["rss"] = vault_scale.rss_mib()
    print(json.dumps(found))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,20000")
    parser.add_argument("--data", type=Path, default=Path("../shared/bench-data/locomo10.json"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/memquill-search-floor"))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=12)
    parser.add_argument("--child", nargs=3, metavar=("ROOT", "INDEX", "PRELOAD"))
    args = parser.parse_args(argv)
    questions = vault_scale.questions(args.data, args.queries)
    if args.child:
        root, index, preload = args.child
        child(Path(root), Path(index), questions, args.repeats, preload)
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    for size in (int(value) for value in args.sizes.split(",")):
        root, index, _, tantivy_store, built = prepare(size, args)
        tantivy = raw_tantivy(root, tantivy_store, questions)
        modes: dict[str, dict[str, Any]] = {}
        for name, preload in MODES.items():
            command = [sys.executable, __file__, "--child", str(root), str(index), preload]
            command += ["--data", str(args.data), "--queries", str(args.queries)]
            command += ["--repeats", str(args.repeats)]
            out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            modes[name] = json.loads(out.strip().splitlines()[-1])
        report(size, tantivy, modes, built, analysis_cpu(root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
