"""``memory_search`` over a PostgreSQL workspace of many records, beside another memquill.

    uv run python benchmarks/postgres_search.py --data ../shared/bench-data/locomo10.json \\
        --sizes 10000 100000 --before OTHER/packages/core/src
    MEMQUILL_BENCH_POSTGRES=postgresql://... uv run python benchmarks/postgres_search.py ...

Fills one database workspace per size with LoCoMo turns as records (``Speaker: text``, saves
of 40; the conversations' turns repeated to reach the size, each copy ending in its round,
`` (round 3)``), leaves the workspace folder without notes, and measures, each figure in its
own process, this tree's memquill and the one in ``--before`` (its ``memquill`` package
folder first on ``PYTHONPATH``; without it, only this tree), run alternately:

- **first search ever**: each tree's first search of its workspace (each tree has its own,
  filled alike), which has the database analyse every record once (its search tables; later
  searches catch up what changed);
- **cold**: a new process that imports memquill, opens a session and answers one LoCoMo
  question (wall time from the process's start, CPU time, peak RSS); one that reads a
  record by its path (``memory_get``); and one that reviews recent memory
  (``memory_recent``); with ``--tags``, one that searches with a tag filter (each record
  ends with its conversation's tag, ``#conversation-<n>``; the filter asks for the fourth's);
- **warm**: one process's searches of ``--queries`` questions after a first one (p50, p95,
  CPU, peak RSS), ten ``memory_recent`` calls, then searches after a put by another store in
  the process each time (the search sees the put; that store reads every record for its
  first put, so the peak is taken before it).

``before ÷ after`` above 1: this tree is faster. Without ``MEMQUILL_BENCH_POSTGRES`` a
throwaway cluster is started (the server binaries must be installed).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_CHILD = "--child"
_TAG = "conversation-3"
"""The tag a ``tagged`` run filters by (``--tags``: a tenth of LoCoMo's turns have it)."""


def _peak_mib() -> float:
    """This process's peak resident size (``VmHWM``: ``ru_maxrss`` would count the parent's
    pages at the fork that started it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _child(mode: str, workspace: str, location: str, queries: list[str]) -> None:
    """One measured process (``mode``: ``cold``, ``get``, ``recent`` or ``warm``), printing
    its figures as JSON."""
    started = time.perf_counter()
    from memquill import MemorySession, MemoryToolset

    tools = MemoryToolset(MemorySession(workspace, "bench", store=location))
    if mode == "get":
        answer = tools.call("memory_get", {"file_path": queries[0]})
    elif mode == "tagged":
        answer = tools.call("memory_search", {"query": queries[0], "limit": 5, "tags": [_TAG]})
    elif mode == "recent":
        answer = tools.call("memory_recent", {"days": 3})
    else:
        answer = tools.call("memory_search", {"query": queries[0], "limit": 5})
    first = time.perf_counter() - started
    figures: dict[str, object] = {
        "first_ms": first * 1000,
        "hits": answer.text.count("\n\n") + 1,
        "error": answer.is_error or "memory unavailable:" in answer.text,
    }
    if mode == "warm":
        from memquill import RecordStore
        from memquill.store._results import Candidate

        times: list[float] = []
        cpu = time.process_time()
        for query in queries[1:]:
            begun = time.perf_counter()
            tools.call("memory_search", {"query": query, "limit": 5})
            times.append((time.perf_counter() - begun) * 1000)
        figures["cpu_ms"] = (time.process_time() - cpu) * 1000 / max(1, len(times))
        figures["warm"] = times
        figures["searches_rss_mib"] = _peak_mib()  # before the writer below reads the records
        reviews: list[float] = []
        for _ in range(10):
            begun = time.perf_counter()
            tools.call("memory_recent", {"days": 3})
            reviews.append((time.perf_counter() - begun) * 1000)
        figures["recent"] = reviews
        writer = RecordStore(workspace, location=location)
        after: list[float] = []
        for number, query in enumerate(queries[1:21]):
            tag = uuid.uuid4().hex
            writer.save([Candidate(f"Bench: a new fact {number}", {"kind": "manual"}, tag)])
            begun = time.perf_counter()
            tools.call("memory_search", {"query": query, "limit": 5})
            after.append((time.perf_counter() - begun) * 1000)
        figures["after_put"] = after
    figures["cpu_total_ms"] = time.process_time() * 1000
    figures["rss_mib"] = _peak_mib()
    print(json.dumps(figures))


def _run(
    mode: str, workspace: Path, location: str, queries: list[str], path: str | None
) -> dict[str, Any]:
    environment = dict(os.environ)
    if path:
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [path, environment.get("PYTHONPATH")])
        )
    arguments = [sys.executable, __file__, _CHILD, mode, str(workspace), location]
    begun = time.perf_counter()
    done = subprocess.run(
        arguments,
        input=json.dumps(queries),
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    wall = (time.perf_counter() - begun) * 1000
    if done.returncode:
        raise SystemExit(f"a {mode} run failed:\n{done.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["error"]:
        raise SystemExit(f"a {mode} run's search failed (records unavailable)")
    figures["wall_ms"] = wall
    return figures


def _fill(
    url: str, size: int, turns: list[str], root: Path, name: str
) -> tuple[Path, str, str, float]:
    from memquill import RecordStore
    from memquill.store._results import Candidate

    workspace = root / f"records-{size}-{name}"
    workspace.mkdir()
    location = f"{url}#workspace=search-bench-{size}-{uuid.uuid4().hex[:8]}"
    store = RecordStore(workspace, location=location)
    begun = time.perf_counter()
    texts = [
        f"{turns[n % len(turns)]} (round {n // len(turns) + 1})" if n >= len(turns) else turns[n]
        for n in range(size)
    ]
    for start in range(0, size, 40):
        batch = texts[start : start + 40]
        store.save([Candidate(t, {"kind": "manual"}, uuid.uuid4().hex) for t in batch])
    filled = time.perf_counter() - begun
    # A record from the middle, to read by its path.
    middle = store.snapshot().records[size // 2].projection_path
    return workspace, location, middle, filled


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)] if ordered else float("nan")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == _CHILD:
        _child(sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.stdin.read()))
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo's locomo10.json")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=100, help="questions per warm run")
    parser.add_argument("--cold-runs", type=int, default=5, help="cold processes per tree")
    parser.add_argument("--before", type=str, default=None, help="another memquill's src")
    parser.add_argument(
        "--tags", action="store_true", help="tag records by conversation; time a tag filter"
    )
    args = parser.parse_args()

    from benchmarks.locomo_data import load
    from tests import postgres_cluster

    conversations = load(args.data)
    turns = [
        f"{turn.line} #conversation-{number}" if args.tags else turn.line
        for number, conversation in enumerate(conversations)
        for turn in conversation.turns
    ]
    questions = [q.text for conversation in conversations for q in conversation.questions]
    questions = questions[:: max(1, len(questions) // (args.queries + 1))][: args.queries + 1]
    root = Path(tempfile.mkdtemp(prefix="memquill-search-bench-"))
    os.environ["MEMQUILL_INDEX_DIR"] = str(root / "indexes")
    url = os.environ.get("MEMQUILL_BENCH_POSTGRES")
    cluster = None
    if not url:
        cluster = postgres_cluster.start(root / "cluster")
        url = cluster.url
    trees = [("after", None)] + ([("before", args.before)] if args.before else [])
    # Bytecode cached as in an installed package, for both trees (a cold process compiling
    # every module would measure the compiler).
    import memquill

    for folder in [Path(memquill.__file__).parent, *([Path(args.before)] if args.before else [])]:
        compileall.compile_dir(folder, quiet=1)
    print(f"load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    try:
        for size in args.sizes:
            print(f"\n{size:,} records", flush=True)
            # A workspace for each tree: two trees whose analyses of a record differ would
            # have the server count one workspace again at every switch.
            spaces: dict[str, tuple[Path, str, str]] = {}
            for name, path in trees:
                workspace, location, middle, filled = _fill(url, size, turns, root, name)
                spaces[name] = (workspace, location, middle)
                first = _run("cold", workspace, location, questions[:1], path)
                print(
                    f"  {name}: filled in {filled:.1f} s; first search ever (the database "
                    f"analyses every record, if it searches): {first['wall_ms']:.0f} ms",
                    flush=True,
                )
            cold: dict[str, list[dict[str, Any]]] = {n: [] for n, _ in trees}
            got: dict[str, list[dict[str, Any]]] = {n: [] for n, _ in trees}
            reviewed: dict[str, list[dict[str, Any]]] = {n: [] for n, _ in trees}
            tagged: dict[str, list[dict[str, Any]]] = {n: [] for n, _ in trees}
            for run in range(args.cold_runs):
                question = questions[run % len(questions) : run % len(questions) + 1]
                for name, path in trees:
                    workspace, location, middle = spaces[name]
                    cold[name].append(_run("cold", workspace, location, question, path))
                    got[name].append(_run("get", workspace, location, [middle], path))
                    reviewed[name].append(_run("recent", workspace, location, [""], path))
                    if args.tags:
                        tagged[name].append(_run("tagged", workspace, location, question, path))
            warm = {name: _run("warm", *spaces[name][:2], questions, path) for name, path in trees}
            rows: list[tuple[str, dict[str, float]]] = []
            for name, _ in trees:
                runs, figures = cold[name], warm[name]
                rows.append(
                    (
                        name,
                        {
                            "cold wall p50, ms": _median([r["wall_ms"] for r in runs]),
                            "cold CPU p50, ms": _median([r["cpu_total_ms"] for r in runs]),
                            "cold peak RSS, MiB": _median([r["rss_mib"] for r in runs]),
                            "cold get wall p50, ms": _median([r["wall_ms"] for r in got[name]]),
                            "cold get peak RSS, MiB": _median([r["rss_mib"] for r in got[name]]),
                            "cold recent wall p50, ms": _median(
                                [r["wall_ms"] for r in reviewed[name]]
                            ),
                            "cold recent peak RSS, MiB": _median(
                                [r["rss_mib"] for r in reviewed[name]]
                            ),
                            **(
                                {
                                    "cold tagged wall p50, ms": _median(
                                        [r["wall_ms"] for r in tagged[name]]
                                    ),
                                    "cold tagged peak RSS, MiB": _median(
                                        [r["rss_mib"] for r in tagged[name]]
                                    ),
                                }
                                if args.tags
                                else {}
                            ),
                            "warm p50, ms": _median(figures["warm"]),
                            "warm p95, ms": _p95(figures["warm"]),
                            "warm CPU per search, ms": figures["cpu_ms"],
                            "warm recent p50, ms": _median(figures["recent"]),
                            "search after a put p50, ms": _median(figures["after_put"]),
                            "warm peak RSS (searches), MiB": figures["searches_rss_mib"],
                        },
                    )
                )
            names = [name for name, _ in rows]
            header = f"  {'figure':<30}" + "".join(f"{n:>12}" for n in names)
            if len(rows) == 2:
                header += f"{'before ÷ after':>16}"
            print(header)
            for figure in rows[0][1]:
                values = [row[1][figure] for row in rows]
                line = f"  {figure:<30}" + "".join(f"{v:>12.1f}" for v in values)
                if len(values) == 2:
                    line += f"{values[1] / values[0]:>15.2f}x"
                print(line, flush=True)
        print(f"\nload average at end: {os.getloadavg()[0]:.1f}")
    finally:
        if cluster is not None:
            postgres_cluster.stop(cluster.data, cluster.bindir)


if __name__ == "__main__":
    main()
