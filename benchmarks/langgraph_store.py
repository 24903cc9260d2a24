"""LangGraph stores side by side: ``put`` and ``search`` latency for 1,000 items.

Usage::

    uv run python benchmarks/langgraph_store.py [--items 1000] [--searches 200] [--seed 7]
        [--dir DIR] [--namespaces 200 [--spread 4000] [--batch 0] [--only-namespaces]]
        [--churn 50000 [--window 500] [--interleave 3000]]

Three stores, each fresh in its own folder under ``--dir`` (default a temporary folder), in one
run: ``MemquillStore`` (each item a fact in ``ROOT/memories/ana/memory/records.md``; every put a
locked, fsynced compare-and-swap write), LangGraph's ``InMemoryStore`` (a dict) and LangGraph's
``SqliteStore`` (one SQLite file, its defaults). For each:

- ``put``: ``--items`` puts of new keys into one namespace (``{"content": TEXT, "topic": T}``
  generated from ``--seed``), each call timed;
- ``update``: 200 puts on keys already in use (memquill: a correction, one new version);
- ``search (query)``: ``--searches`` searches with a two-word query from the items'
  vocabulary, ``limit=10``, over the 1,000 items. Only memquill ranks by the query;
  ``InMemoryStore`` and ``SqliteStore`` without an embedding index ignore it and list items,
  which is all they can do without a model;
- ``search (no query)``: the same number of listings with a ``filter`` on ``topic``;
- ``get``: as many reads of one item by key.

With ``--namespaces N`` (default 0: skipped) it then measures many namespaces: ``--spread``
items (default 4,000) put round-robin across ``N`` namespaces ``("memories", "u<i>")`` into
each store, timed in total (with ``--batch B``, in ``batch`` calls of ``B`` ``PutOp`` each
instead of one ``put`` per item: memquill then writes each namespace's puts of a call in one
transaction); then, for MemquillStore, ``--searches`` ranked searches over the
prefix ``("memories",)`` across those ``N`` namespaces against the same searches over one
namespace holding the same items (a store of its own), and ``list_namespaces``.

With ``--churn N`` (default 0: skipped) it then runs ``N`` churn cycles in each store: 100
keys put and deleted in turn in one namespace (``{"text": "value <n> for key-<k>"}``, a value
differing per cycle), and prints the mean wall and CPU milliseconds per cycle over the first
and the last ``--window`` cycles, their ratio (flat: about 1) and memquill's against
``SqliteStore``'s. A first and a last window run minutes apart, so the machine's load may
differ between them; ``--interleave W`` then measures the same thing side by side: a fresh
store of the same kind, after 100 cycles, and the one just churned run ``W`` more cycles each,
in turns of 50 (fresh, churned, fresh, ...), and it prints both means and their ratio.

It prints p50 and p95 in milliseconds and the ratio of memquill's p50 to each other store's,
with the machine's load before and after (compare runs on one machine only). A measurement,
never a test.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from memquill_langchain.store import MemquillStore

NAMESPACE = ("memories", "ana")
TOPICS = ("food", "travel", "work", "family", "health")
WORDS = [
    "coffee",
    "tea",
    "breakfast",
    "train",
    "flight",
    "hotel",
    "meeting",
    "deadline",
    "project",
    "sister",
    "brother",
    "doctor",
    "running",
    "bicycle",
    "garden",
    "recipe",
    "paris",
    "lisbon",
    "kyoto",
    "monday",
    "friday",
    "budget",
    "laptop",
    "keyboard",
    "piano",
    "guitar",
    "novel",
    "museum",
    "beach",
    "mountain",
    "river",
    "winter",
    "summer",
    "birthday",
    "wedding",
    "dentist",
    "allergy",
    "vitamin",
    "salad",
    "pasta",
    "sushi",
    "market",
    "office",
    "manager",
    "client",
    "invoice",
    "report",
]


def sentence(rng: random.Random) -> str:
    words = rng.sample(WORDS, 8)
    return f"Ana mentioned {' '.join(words[:4])} and then {' '.join(words[4:])}."


@contextmanager
def memquill_store(folder: Path) -> Iterator[BaseStore]:
    store = MemquillStore(folder)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def in_memory_store(folder: Path) -> Iterator[BaseStore]:
    del folder
    yield InMemoryStore()


@contextmanager
def sqlite_store(folder: Path) -> Iterator[BaseStore]:
    with SqliteStore.from_conn_string(str(folder / "store.sqlite")) as store:
        store.setup()
        yield store


STORES: dict[str, Callable[[Path], AbstractContextManager[BaseStore]]] = {
    "MemquillStore": memquill_store,
    "InMemoryStore": in_memory_store,
    "SqliteStore": sqlite_store,
}


def timed(calls: list[Callable[[], Any]]) -> list[float]:
    times: list[float] = []
    for call in calls:
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000.0)
    return times


def p(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(store: BaseStore, args: argparse.Namespace) -> dict[str, list[float]]:
    rng = random.Random(args.seed)
    values = [
        {"content": sentence(rng), "topic": TOPICS[index % len(TOPICS)]}
        for index in range(args.items)
    ]
    keys = [f"memory-{index:05d}" for index in range(args.items)]
    results: dict[str, list[float]] = {}
    results["put"] = timed(
        [
            lambda key=key, value=value: store.put(NAMESPACE, key, value)
            for key, value in zip(keys, values, strict=True)
        ]
    )
    changed = rng.sample(range(args.items), min(200, args.items))
    results["update"] = timed(
        [
            lambda index=index: store.put(
                NAMESPACE, keys[index], {"content": sentence(rng), "topic": "changed"}
            )
            for index in changed
        ]
    )
    queries = [" ".join(rng.sample(WORDS, 2)) for _ in range(args.searches)]
    results["search (query)"] = timed(
        [lambda q=q: store.search(("memories",), query=q, limit=10) for q in queries]
    )
    topics = [TOPICS[index % len(TOPICS)] for index in range(args.searches)]
    results["search (no query)"] = timed(
        [lambda t=t: store.search(("memories",), filter={"topic": t}, limit=10) for t in topics]
    )
    results["get"] = timed(
        [lambda key=keys[i % args.items]: store.get(NAMESPACE, key) for i in range(args.searches)]
    )
    return results


def spread(store: BaseStore, args: argparse.Namespace, *, one: bool = False) -> float:
    """``--spread`` puts round-robin across ``--namespaces`` namespaces (or one), one ``put``
    each or, with ``--batch B``, ``batch`` calls of ``B`` puts: seconds."""
    rng = random.Random(args.seed)
    puts = [
        PutOp(
            ("memories", "all" if one else f"u{index % args.namespaces}"),
            f"memory-{index:05d}",
            {"content": sentence(rng)},
        )
        for index in range(args.spread)
    ]
    start = time.perf_counter()
    if args.batch > 0:
        for first in range(0, len(puts), args.batch):
            store.batch(puts[first : first + args.batch])
    else:
        for op in puts:
            assert op.value is not None
            store.put(op.namespace, op.key, op.value)
    return time.perf_counter() - start


def many_namespaces(base: Path, args: argparse.Namespace) -> None:
    how = f"batch calls of {args.batch}" if args.batch > 0 else "one put per call"
    print(f"\n{args.spread} puts across {args.namespaces} namespaces, {how} (seconds, total):")
    seconds: dict[str, float] = {}
    for name, opener in STORES.items():
        folder = base / f"{name}-spread"
        folder.mkdir(parents=True, exist_ok=True)
        with opener(folder) as store:
            seconds[name] = spread(store, args)
        print(
            f"  {name:<14} {seconds[name]:>9.2f} s  {seconds[name] / args.spread * 1000:.2f} ms/put"
        )
    ratio = seconds["MemquillStore"] / seconds["SqliteStore"]
    print(f"  memquill/sqlite: {ratio:.2f}x")
    rng = random.Random(args.seed + 1)
    queries = [" ".join(rng.sample(WORDS, 2)) for _ in range(args.searches)]
    single = base / "MemquillStore-one"
    single.mkdir(parents=True, exist_ok=True)
    with memquill_store(single) as store:
        spread(store, args, one=True)
        first_one = timed([lambda: store.search(("memories",), query=queries[0], limit=10)])
        one = timed([lambda q=q: store.search(("memories",), query=q, limit=10) for q in queries])
    with memquill_store(base / "MemquillStore-spread") as store:
        first_many = timed([lambda: store.search(("memories",), query=queries[0], limit=10)])
        many = timed([lambda q=q: store.search(("memories",), query=q, limit=10) for q in queries])
        listed = timed([lambda: store.list_namespaces(prefix=("memories",), limit=1000)] * 20)
    print(f"MemquillStore ranked search over {args.spread} items, ms (first, then p50 / p95):")
    print(
        f"  one namespace:     {first_one[0]:>8.1f}, "
        f"{statistics.median(one):>7.2f} / {p(one, 0.95):.2f}"
    )
    print(
        f"  {args.namespaces} namespaces:    {first_many[0]:>8.1f}, "
        f"{statistics.median(many):>7.2f} / {p(many, 0.95):.2f}"
    )
    print(f"  many/one p50: {statistics.median(many) / statistics.median(one):.2f}x")
    print(f"  list_namespaces p50: {statistics.median(listed):.2f} ms")


def churn(base: Path, args: argparse.Namespace) -> None:
    """``--churn`` put/delete cycles in each store: per-cycle cost, first and last windows."""
    print(f"\n{args.churn:,} churn cycles (100 keys put and deleted in turn, one namespace):")
    print(f"  {'store':<14}{'first ms wall / cpu':>24}{'last ms wall / cpu':>24}{'last/first':>12}")
    window = min(args.window, args.churn)
    last_wall: dict[str, float] = {}
    for name, opener in STORES.items():
        folder = base / f"{name}-churn"
        folder.mkdir(parents=True, exist_ok=True)
        timings: list[tuple[float, float]] = []
        with opener(folder) as store:
            for cycle in range(args.churn):
                key = f"key-{cycle % 100}"
                wall, cpu = time.perf_counter(), time.process_time()
                store.put(("churn",), key, {"text": f"value {cycle} for {key}"})
                store.delete(("churn",), key)
                timings.append((time.perf_counter() - wall, time.process_time() - cpu))
        first, last = timings[:window], timings[-window:]

        def mean(part: list[tuple[float, float]], column: int) -> float:
            return statistics.fmean(t[column] for t in part) * 1000

        last_wall[name] = mean(last, 0)
        print(
            f"  {name:<14}{mean(first, 0):>13.2f} / {mean(first, 1):>6.2f}"
            f"{mean(last, 0):>17.2f} / {mean(last, 1):>6.2f}"
            f"{mean(last, 0) / mean(first, 0):>11.2f}x"
        )
    ratio = last_wall["MemquillStore"] / last_wall["SqliteStore"]
    print(f"  memquill/sqlite, last window wall: {ratio:.2f}x")
    if args.interleave:
        interleaved(base, args)


def cycle_timed(store: BaseStore, cycle: int) -> tuple[float, float]:
    """One churn cycle (a put and a delete of the same key): its wall and CPU seconds."""
    key = f"key-{cycle % 100}"
    wall, cpu = time.perf_counter(), time.process_time()
    store.put(("churn",), key, {"text": f"value {cycle} for {key}"})
    store.delete(("churn",), key)
    return time.perf_counter() - wall, time.process_time() - cpu


def interleaved(base: Path, args: argparse.Namespace) -> None:
    """``--interleave`` cycles in a fresh store (after 100) and in the churned one, in turns."""
    turn = 50
    print(
        f"\ninterleaved, {args.interleave:,} cycles each in turns of {turn}: a fresh store "
        f"(from cycle 100) and the one churned {args.churn:,} cycles"
    )
    print(
        f"  {'store':<14}{'fresh ms wall / cpu':>24}{'churned ms wall / cpu':>26}{'cpu ratio':>11}"
    )
    for name, opener in STORES.items():
        fresh_folder = base / f"{name}-fresh"
        fresh_folder.mkdir(parents=True, exist_ok=True)
        with opener(fresh_folder) as fresh, opener(base / f"{name}-churn") as churned:
            for cycle in range(100):
                cycle_timed(fresh, cycle)
            times: dict[str, list[tuple[float, float]]] = {"fresh": [], "churned": []}
            done = 0
            while done < args.interleave:
                for _ in range(turn):
                    times["fresh"].append(cycle_timed(fresh, 100 + done + _))
                for _ in range(turn):
                    times["churned"].append(cycle_timed(churned, args.churn + done + _))
                done += turn

        (fw, fc), (cw, cc) = (
            [statistics.fmean(t[column] for t in times[label]) * 1000 for column in (0, 1)]
            for label in ("fresh", "churned")
        )
        print(f"  {name:<14}{fw:>13.2f} / {fc:>6.2f}{cw:>19.2f} / {cc:>6.2f}{cc / fc:>10.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--namespaces", type=int, default=0)
    parser.add_argument("--spread", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=0)
    parser.add_argument("--only-namespaces", action="store_true")
    parser.add_argument("--churn", type=int, default=0)
    parser.add_argument("--window", type=int, default=500)
    parser.add_argument("--interleave", type=int, default=0)
    parser.add_argument("--only-churn", action="store_true")
    args = parser.parse_args(argv)
    base = args.dir or Path(tempfile.mkdtemp(prefix="memquill-langgraph-bench-"))
    if args.only_churn:
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()}")
        churn(base, args)
        print(f"load after: {os.getloadavg()}")
        return 0
    if args.only_namespaces:
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()}")
        many_namespaces(base, args)
        return 0
    before = os.getloadavg()
    figures: dict[str, dict[str, list[float]]] = {}
    for name, opener in STORES.items():
        folder = base / name
        folder.mkdir(parents=True, exist_ok=True)
        with opener(folder) as store:
            figures[name] = measure(store, args)
    after = os.getloadavg()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {args.items} items")
    print(f"load average before: {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}")
    print(f"load average after:  {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}")
    header = f"{'operation':<18}" + "".join(f"{name + ' p50/p95 ms':>28}" for name in STORES)
    header += f"{'memquill/mem p50':>18}{'memquill/sqlite p50':>21}"
    print(header)
    for operation in figures["MemquillStore"]:
        row = f"{operation:<18}"
        medians: dict[str, float] = {}
        for name in STORES:
            times = figures[name][operation]
            medians[name] = statistics.median(times)
            row += f"{medians[name]:>19.3f} / {p(times, 0.95):>6.3f}"
        mem = medians["MemquillStore"]
        row += f"{mem / medians['InMemoryStore']:>17.0f}x{mem / medians['SqliteStore']:>20.1f}x"
        print(row)
    size = (base / "MemquillStore" / "memories" / "ana" / "memory" / "records.md").stat().st_size
    print(f"memquill records.md after the run: {size:,} bytes ({args.items} items, 200 updates)")
    if args.namespaces:
        many_namespaces(base, args)
    if args.churn:
        churn(base, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
