"""Search latency on a seeded synthetic workspace of 512 Markdown files (8 MiB).

Usage::

    uv run python benchmarks/search_speed.py [--runs 15] [--queries 40] [--keep DIR]

Measures, in one run:

- first query in a fresh process (a read session's tools built, one ``memory_search``; import
  time apart),
  median and p95 over ``--runs`` processes;
- repeated queries in a warm process (the document cache filled), median and p95;
- the same figures for a naive full scan (walk, read, lowercase, tokenise and score every file
  on every query, as the original system did), so the ratio is measured on this machine;
- peak resident memory of each process kind.

Targets (issue 3): warm median <= 5 ms, first query <= 150 ms.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

FILES = 512
TOTAL_BYTES = 8 * 1024 * 1024 - 64 * 1024  # just inside the scan's 8 MiB budget
SEED = 20260921


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


def build_workspace(root: Path) -> list[str]:
    """Write the synthetic notes; return the query set (seeded)."""
    rng = random.Random(SEED)
    words = vocabulary(rng)
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    per_file = TOTAL_BYTES // FILES
    for index in range(FILES):
        folder = root / f"area-{index % 16:02d}" / f"topic-{index % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        parts = [f"---\ntags: [{rng.choice(words)}, {rng.choice(words)}]\n---\n"]
        parts.append(f"# {' '.join(rng.choices(words, weights, k=4)).title()}\n\n")
        size = sum(len(part) for part in parts)
        while size < per_file - 200:
            if rng.random() < 0.08:
                chunk = f"\n## {' '.join(rng.choices(words, weights, k=3))}\n\n"
            else:
                sentence = " ".join(rng.choices(words, weights, k=rng.randint(8, 20)))
                chunk = (
                    sentence.capitalize()
                    + (f" #{rng.choice(words)}" if rng.random() < 0.05 else "")
                    + ".\n"
                )
            parts.append(chunk)
            size += len(chunk)
        (folder / f"note-{index:03d}.md").write_text("".join(parts)[:per_file], encoding="utf-8")
    mid = words[50:3000]
    return [" ".join(rng.sample(mid, rng.randint(2, 4))) for _ in range(200)]


# -- the naive baseline: a full scan per query, no cache --------------------------------------


def naive_search(root: Path, query: str) -> list[tuple[float, str]]:
    """Walk, read and tokenise every note, then score it (BM25), on every call."""
    documents: list[tuple[str, Counter[str], int]] = []
    for folder, names, files in os.walk(root):
        names.sort()
        for name in sorted(files):
            if name.endswith(".md"):
                path = Path(folder, name)
                tokens = re.findall(r"\w+", path.read_text(encoding="utf-8").lower())
                documents.append((str(path.relative_to(root)), Counter(tokens), len(tokens)))
    terms = re.findall(r"\w+", query.lower())
    average = sum(length for _, _, length in documents) / max(1, len(documents))
    scores: list[tuple[float, str]] = []
    for path, counts, length in documents:
        score = 0.0
        for term in terms:
            tf = counts.get(term, 0)
            if tf:
                df = sum(1 for _, other, _ in documents if term in other)
                idf = math.log(1 + (len(documents) - df + 0.5) / (df + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))
        if score:
            scores.append((score, path))
    scores.sort(key=lambda item: (-item[0], item[1]))
    return scores[:20]


# -- measurement ------------------------------------------------------------------------------


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1)]


def child(root: Path, query: str, kind: str) -> None:
    """Run in a fresh process: time imports and the first query; print JSON."""
    started = time.perf_counter()
    if kind == "memquill":
        from memquill import MemorySession, MemoryToolset

        imported = time.perf_counter()
        tools = MemoryToolset(MemorySession(root, access="read"))
        response = tools.call("memory_search", {"query": query})
        assert not response.is_error, response.text
    else:
        imported = time.perf_counter()
        naive_search(root, query)
    finished = time.perf_counter()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"import": imported - started, "first": finished - imported, "rss": peak_kib}))


def fresh(root: Path, queries: Sequence[str], runs: int, kind: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"import": [], "first": [], "rss": []}
    for run in range(runs):
        line = subprocess.run(
            [sys.executable, __file__, "--child", kind, str(root), queries[run % len(queries)]],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for key, value in json.loads(line).items():
            out[key].append(float(value))
    return out


def warm(call: Callable[[str], object], queries: Sequence[str], rounds: int) -> list[float]:
    call(queries[0])
    timings: list[float] = []
    for _ in range(rounds):
        for query in queries:
            started = time.perf_counter()
            call(query)
            timings.append(time.perf_counter() - started)
    return timings


def ms(values: Sequence[float]) -> str:
    median = statistics.median(values) * 1000
    return f"median {median:8.2f} ms   p95 {percentile(values, 0.95) * 1000:8.2f} ms"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per kind")
    parser.add_argument("--queries", type=int, default=40, help="queries in the warm loop")
    parser.add_argument("--keep", type=Path, help="build the workspace here and keep it")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, root, query = args.child
        child(Path(root), query, kind)
        return 0
    with tempfile.TemporaryDirectory(prefix="memquill-speed-") as scratch:
        root = args.keep or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        queries = build_workspace(root)[: args.queries]
        time.sleep(2.1)  # let the new files settle: the cache skips files changed in the last 2 s
        size = sum(path.stat().st_size for path in root.rglob("*.md"))
        print(
            f"workspace: {len(list(root.rglob('*.md')))} files, {size / 2**20:.2f} MiB, seed {SEED}"
        )
        from memquill import MemorySession, MemoryToolset

        tools = MemoryToolset(MemorySession(root, access="read"))
        first = tools.call("memory_search", {"query": queries[0]})
        assert not first.is_error and not (first.structured or {})["warnings"], first.text
        mq_warm = warm(lambda q: tools.call("memory_search", {"query": q}), queries, rounds=3)
        naive_warm = warm(lambda q: naive_search(root, q), queries[:10], rounds=1)
        mq_fresh = fresh(root, queries, args.runs, "memquill")
        naive_fresh = fresh(root, queries, max(3, args.runs // 3), "naive")
        print(f"\nmemquill first query, fresh process  {ms(mq_fresh['first'])}")
        print(f"memquill import                      {ms(mq_fresh['import'])}")
        print(f"memquill warm repeated queries       {ms(mq_warm)}")
        print(f"naive first query, fresh process     {ms(naive_fresh['first'])}")
        print(f"naive per query (no cache)           {ms(naive_warm)}")
        ratio_first = statistics.median(naive_fresh["first"]) / statistics.median(mq_fresh["first"])
        ratio_warm = statistics.median(naive_warm) / statistics.median(mq_warm)
        print(f"\nspeed-up vs naive: first query x{ratio_first:.1f}, warm x{ratio_warm:.1f}")
        print(
            f"peak RSS: memquill fresh {max(mq_fresh['rss']) / 1024:.0f} MiB, "
            f"naive fresh {max(naive_fresh['rss']) / 1024:.0f} MiB, "
            f"this warm process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
