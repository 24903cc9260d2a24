"""MemquillStore on PostgreSQL beside LangGraph's own PostgresStore, on one cluster, in one run.

Usage::

    export MEMQUILL_TEST_POSTGRES=postgresql://USER:PASSWORD@HOST:PORT/DB   # or --url URL
    uv run python benchmarks/postgres_store.py [--url URL] [--sizes 1000 10000]
        [--namespaces 1 10000] [--ops 100] [--budget 20] [--writers 16] [--per-writer 20]
        [--seed 7] [--profile]

Three LangGraph stores, each fresh for every size and namespace count: ``MemquillStore`` on
PostgreSQL (``store=URL#workspace=bench``: a row per record version, one workspace row per
namespace), LangGraph's ``PostgresStore`` (``langgraph-checkpoint-postgres``: a row per item,
one connection, its defaults, no index) and ``MemquillStore`` on files (each namespace's
``records.md``, its bound raised to 64 MiB so that 10,000 items fit in one), beside them as
the single-machine baseline. For each size S in ``--sizes`` and namespace count N in
``--namespaces``, a database of its own is created on the cluster (both PostgreSQL stores in
it; the role needs ``CREATEDB``) and dropped afterwards; the file store lives in a temporary
folder. MemquillStore keeps a connection per open namespace (up to 64 per store), so the
writers across many namespaces need a few hundred connections: the server's
``max_connections`` is printed, and the peak seen during the writers is reported.

Setup (not timed, printed for scale): S items ``{"content": TEXT, "topic": T}`` from
``--seed``, round-robin across min(N, S) namespaces ``("memories", "u<i>")``, through each
store's batch path (PostgresStore: ``batch`` of 500 ``PutOp``; memquill: ``batch`` calls of
10,000 puts per namespace, each writing a namespace's puts in one transaction: round-robin, a
call of 500 would hold a few puts per namespace at most), then one search across every
namespace, timed apart and printed as the first search (memquill in a process builds its
index of the items there; on PostgreSQL, past ``DATABASE_SEARCH`` records, the database's
search terms are brought up to date, once for every process). Then, each call timed on its own,
namespaces and keys drawn from the same seeded sequence for every store:

- ``put``: a new key into a random namespace;
- ``get``: an existing item;
- ``search 1 ns``: ``search(("memories", "u<i>"), query=TWO WORDS, limit=10)`` in one
  namespace; ``search all``: the same over the prefix ``("memories",)``, across every
  namespace (only with N > 1). Only memquill ranks by the query: PostgresStore without an
  ``index`` ignores it and lists the namespace's items newest first (the output says so);
- ``search after put``: a put of a new key into a random namespace (not timed), then the
  search of ``search 1 ns`` in that namespace (timed): what a search costs when the namespace
  changed since the last one (an agent saves, then recalls);
- ``--writers`` processes, each opening its own store (its own connections, as separate
  application processes would), released together behind a barrier, each putting
  ``--per-writer`` new keys (with N = 1 all into the one namespace; else spread over them):
  each writer first puts a warm-up item into its first namespace before the barrier (a
  process's first write decodes the whole namespace: a process start's cost, left out, as a
  long-lived application pays it once), and a writer done with its puts keeps its store open
  until every writer is done (a process's exit, freeing a namespace it decoded whole, is not
  one of the puts' costs, and would take the cores from the writers still putting: a process
  end's cost, left out as the start's is);
  throughput (acknowledged puts per second of wall time), each put's latency, errors, and
  lost writes: every acknowledged put read back afterwards by a fresh store, one whose value
  differs or is missing is lost.

Every measurement stops early after ``--budget`` seconds (at least one call): the ``n`` column
says how many calls a figure stands on. ``--profile`` then profiles ``--ops`` memquill puts
on PostgreSQL in every configuration (cProfile, the top 15 by cumulative time).

It prints p50 / p95 in milliseconds and the ratios of memquill's p50 to PostgresStore's
(``pg/PG``: MemquillStore on PostgreSQL; ``file/PG``: on files), with the command line, the
versions and the machine's load before and after: compare runs on one machine only. The URL
is never printed. A measurement, never a test.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.metadata
import io
import multiprocessing
import os
import pstats
import random
import shlex
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier, Event
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.postgres import PostgresStore
from psycopg import sql

from memquill_langchain.store import MemquillStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from langgraph_store import TOPICS, WORDS, sentence

STORES = ("memquill pg", "PostgresStore", "memquill file")
"""The stores, in the table's column order."""
PG_BATCH = 500
MEMQUILL_BATCH = 10_000
FILE_CAPACITY = 64 * 1024 * 1024
Value = dict[str, Any]
Namespace = tuple[str, ...]


@dataclass(frozen=True)
class Target:
    """Where one configuration's stores live: picklable, so a writer process opens its own."""

    database_url: str
    folder: Path


@dataclass
class Figures:
    """One configuration's timings (ms) by operation and store, and the writers' results."""

    times: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    first: dict[str, float] = field(default_factory=dict)
    """Each store's first search (s), after its setup: not among the timed calls."""
    writers: dict[str, dict[str, float]] = field(default_factory=dict)
    setup: dict[str, float] = field(default_factory=dict)


@contextmanager
def opened(kind: str, target: Target) -> Iterator[BaseStore]:
    """A store of ``kind`` at ``target``, closed afterwards."""
    if kind == "PostgresStore":
        with PostgresStore.from_conn_string(target.database_url) as store:
            yield store
        return
    location = f"{target.database_url}#workspace=bench" if kind == "memquill pg" else "file"
    folder = target.folder / kind.replace(" ", "-")
    folder.mkdir(parents=True, exist_ok=True)
    # The file store's bound is raised to its largest (64 MiB) so that 10,000 items fit in one
    # namespace's records.md; a database workspace has no bound by default.
    capacity = FILE_CAPACITY if kind == "memquill file" else None
    store = MemquillStore(folder, store=location, capacity=capacity)
    try:
        yield store
    finally:
        store.close()


def namespace(index: int) -> Namespace:
    return ("memories", f"u{index:05d}")


def items(size: int, used: int, seed: int) -> list[tuple[Namespace, str, Value]]:
    rng = random.Random(seed)
    return [
        (
            namespace(index % used),
            f"m{index:06d}",
            {"content": sentence(rng), "topic": TOPICS[index % len(TOPICS)]},
        )
        for index in range(size)
    ]


def fill(kind: str, store: BaseStore, data: list[tuple[Namespace, str, Value]], used: int) -> None:
    """``data`` into ``store`` through its batch path (see the module docstring)."""
    ops = [PutOp(ns, key, value) for ns, key, value in data]
    if isinstance(store, PostgresStore):
        for start in range(0, len(ops), PG_BATCH):
            store.batch(ops[start : start + PG_BATCH])
        return
    assert isinstance(store, MemquillStore), kind
    # Each namespace's puts one write, at most MEMQUILL_BATCH of them: a write's transaction
    # holds its lock while memquill checks and encodes the batch, and the server ends one idle
    # for idle_timeout (5 s; 10,000 puts take about 1.4 s of it here).
    step = used * MEMQUILL_BATCH  # round-robin: a slice holds MEMQUILL_BATCH per namespace
    for start in range(0, len(ops), step):
        store.batch(ops[start : start + step])


@dataclass(frozen=True)
class Timed:
    """What a call returns when only a part of it is timed: that part's time in ms."""

    ms: float


def after_put(store: BaseStore, put: tuple[Namespace, str, Value], query: str) -> Timed:
    """``put`` (not timed), then a search in its namespace (timed)."""
    store.put(*put)
    start = time.perf_counter()
    store.search(put[0], query=query, limit=10)
    return Timed((time.perf_counter() - start) * 1000.0)


def budgeted(calls: Sequence[Callable[[], object]], budget: float) -> list[float]:
    """Each call's time in ms (or the part it timed: :class:`Timed`), stopping once
    ``budget`` seconds have passed (one call at least)."""
    times: list[float] = []
    started = time.perf_counter()
    for call in calls:
        start = time.perf_counter()
        result = call()
        elapsed = (time.perf_counter() - start) * 1000.0
        times.append(result.ms if isinstance(result, Timed) else elapsed)
        if time.perf_counter() - started > budget:
            break
    return times


def plan(
    data: list[tuple[Namespace, str, Value]], used: int, args: argparse.Namespace
) -> dict[str, list[Callable[[BaseStore], object]]]:
    """The timed calls, the same sequence for every store."""
    rng = random.Random(args.seed + 1)
    puts = [
        (
            namespace(rng.randrange(used)),
            f"p{index:06d}",
            {"content": sentence(rng), "topic": "new"},
        )
        for index in range(args.ops)
    ]
    gets = [rng.choice(data)[:2] for _ in range(args.ops)]
    queries = [
        (namespace(rng.randrange(used)), " ".join(rng.sample(WORDS, 2))) for _ in range(args.ops)
    ]
    chosen: dict[str, list[Callable[[BaseStore], object]]] = {
        "put": [lambda s, p=p: s.put(*p) for p in puts],
        "get": [lambda s, g=g: s.get(*g) for g in gets],
        "search 1 ns": [lambda s, q=q: s.search(q[0], query=q[1], limit=10) for q in queries],
    }
    if used > 1:
        chosen["search all"] = [
            lambda s, q=q: s.search(("memories",), query=q[1], limit=10) for q in queries
        ]
    later = [
        (
            (
                namespace(rng.randrange(used)),
                f"a{index:06d}",
                {"content": sentence(rng), "topic": "after"},
            ),
            " ".join(rng.sample(WORDS, 2)),
        )
        for index in range(args.ops)
    ]
    chosen["search after put"] = [lambda s, a=a: after_put(s, *a) for a in later]
    return chosen


def writer(
    kind: str,
    target: Target,
    index: int,
    per_writer: int,
    used: int,
    barrier: Barrier,
    results: Queue[tuple[list[tuple[Namespace, str, Value, float]], int]],
    measured: Event,
) -> None:
    """One writer process: its own store, ``per_writer`` puts after the barrier; it closes
    its store and exits only once every writer is done (``measured``)."""
    acknowledged: list[tuple[Namespace, str, Value, float]] = []
    errors = 0
    with opened(kind, target) as store:
        # A long-lived application has written to its namespace before: a process's first
        # write decodes the namespace whole (a process start's cost), so it happens before the
        # clock starts. A write, not a read: on PostgreSQL a get reads its one item by its key
        # and a search past DATABASE_SEARCH asks the database, so neither decodes it.
        try:
            store.put(namespace(index * per_writer % used), f"warm-up-{index:02d}", {"x": 1})
        except Exception as error:  # its puts read the namespace then, and count their errors
            print(f"writer {index}: warm-up write failed: {causes(error)}", file=sys.stderr)
        barrier.wait()
        for n in range(per_writer):
            ns = namespace((index * per_writer + n) % used)
            key = f"w{index:02d}-{n:04d}"
            value: Value = {"content": f"writer {index} put {n} about the deploy", "topic": "w"}
            start = time.perf_counter()
            try:
                store.put(ns, key, value)
            except Exception:  # counted: an error is not acknowledged, so never lost
                errors += 1
                continue
            acknowledged.append((ns, key, value, (time.perf_counter() - start) * 1000.0))
        results.put((acknowledged, errors))
        # A writer done early must not tear down while others still put: freeing a decoded
        # namespace of 100,000 items took a process about 0.25 s of CPU, five times its 20
        # puts, and on two cores that cut the others' throughput by three quarters (105
        # against 435 puts/s).
        measured.wait(timeout=900)


def causes(error: BaseException) -> str:
    """``error`` and what it was raised from or during (memquill's errors hide the driver's
    message, which may quote the URL: a benchmark's own stderr may show it)."""
    chain: list[str] = []
    current: BaseException | None = error
    while current is not None and len(chain) < 5:
        chain.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or current.__context__
    return " <- ".join(chain)


def concurrent(kind: str, target: Target, used: int, args: argparse.Namespace) -> dict[str, float]:
    """``--writers`` processes putting at once; then every acknowledged put read back."""
    context = multiprocessing.get_context("spawn")  # nothing inherited: each opens its own
    barrier = context.Barrier(args.writers + 1)
    results: Queue[tuple[list[tuple[Namespace, str, Value, float]], int]] = context.Queue()
    measured = context.Event()
    processes = [
        context.Process(
            target=writer,
            args=(kind, target, index, args.per_writer, used, barrier, results, measured),
        )
        for index in range(args.writers)
    ]
    for process in processes:
        process.start()
    with connections_watched(target.database_url) as peak:
        barrier.wait(timeout=300)
        started = time.perf_counter()
        try:
            gathered = [results.get(timeout=900) for _ in processes]
            wall = time.perf_counter() - started
        finally:
            measured.set()  # a failed run must not leave its writers waiting to exit
    for process in processes:
        process.join()
    acknowledged = [entry for found, _ in gathered for entry in found]
    errors = sum(count for _, count in gathered)
    lost = 0
    with opened(kind, target) as store:
        for ns, key, value, _ in acknowledged:
            found = store.get(ns, key)
            if found is None or found.value != value:
                lost += 1
    latencies = [entry[3] for entry in acknowledged]
    return {
        "puts/s": len(acknowledged) / wall,
        "p50": statistics.median(latencies) if latencies else float("nan"),
        "p95": percentile(latencies, 0.95) if latencies else float("nan"),
        "acknowledged": len(acknowledged),
        "errors": errors,
        "lost": lost,
        "connections": float(peak[0]),
    }


@contextmanager
def connections_watched(database_url: str) -> Iterator[list[int]]:
    """The most connections to the database seen (every 50 ms) while the block runs, besides
    the watcher's own."""
    peak = [0]
    done = threading.Event()

    def watch() -> None:
        with psycopg.connect(database_url, autocommit=True) as connection:
            while not done.wait(0.05):
                row = connection.execute(
                    "SELECT count(*) - 1 FROM pg_stat_activity WHERE datname = current_database()"
                ).fetchone()
                peak[0] = max(peak[0], int(row[0]) if row else 0)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield peak
    finally:
        done.set()
        watcher.join()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@contextmanager
def database(url: str) -> Iterator[str]:
    """A new database on the cluster at ``url`` (its URL), dropped afterwards."""
    name = f"memquill_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    parts = urlsplit(url)
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def configuration(url: str, size: int, count: int, args: argparse.Namespace) -> Figures:
    used = min(count, size)
    figures = Figures()
    data = items(size, used, args.seed)
    calls = plan(data, used, args)
    with database(url) as database_url:
        folder = Path(tempfile.mkdtemp(prefix="memquill-pgstore-bench-"))
        target = Target(database_url, folder)
        try:
            with PostgresStore.from_conn_string(database_url) as store:
                store.setup()
            for kind in STORES:
                with opened(kind, target) as store:
                    started = time.perf_counter()
                    fill(kind, store, data, used)
                    figures.setup[kind] = time.perf_counter() - started
                    check = random.Random(args.seed + 2).sample(data, min(20, len(data)))
                    for ns, key, value in check:
                        found = store.get(ns, key)
                        if found is None or found.value != value:
                            raise RuntimeError(f"{kind}: the setup did not keep {ns} {key}")
                    # A first search, not timed with the others: memquill in the process
                    # builds its index of the namespace; on PostgreSQL, past DATABASE_SEARCH
                    # records, the database's search terms are brought up to date (once for
                    # every process, not once for each).
                    started = time.perf_counter()
                    store.search(("memories",), query=" ".join(WORDS[:2]), limit=10)
                    figures.first[kind] = time.perf_counter() - started
                    for operation, operation_calls in calls.items():
                        figures.times.setdefault(operation, {})[kind] = budgeted(
                            [lambda c=c, s=store: c(s) for c in operation_calls], args.budget
                        )
                print(
                    f"  {kind}: setup {figures.setup[kind]:.1f} s, "
                    f"first search {figures.first[kind]:.2f} s, measured",
                    flush=True,
                )
            for kind in STORES:
                figures.writers[kind] = concurrent(kind, target, used, args)
                print(f"  {kind}: {args.writers} writers done", flush=True)
            if args.profile:
                profile(target, calls["put"], size, count)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return figures


def profile(
    target: Target, puts: list[Callable[[BaseStore], object]], size: int, count: int
) -> None:
    """As many memquill puts of new keys on PostgreSQL as ``puts`` under cProfile, from a store
    that has written to the first one's namespace (a first write decodes it whole); the top 15
    by cumulative time."""
    with opened("memquill pg", target) as store:
        rng = random.Random(size + count)
        used = min(count, size)
        calls = [
            (
                namespace(rng.randrange(used)),
                f"x{index:06d}",
                {"content": sentence(rng), "topic": "x"},
            )
            for index in range(len(puts))
        ]
        store.put(calls[0][0], "warm-up", {"x": 1})
        profiler = cProfile.Profile()
        profiler.enable()
        for ns, key, value in calls:
            store.put(ns, key, value)
        profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(15)
    print(f"\nprofile: {len(calls)} memquill puts on PostgreSQL, {size} items, {used} namespaces")
    print(out.getvalue())


def cell(times: list[float]) -> str:
    return f"{statistics.median(times):.2f} / {percentile(times, 0.95):.2f}"


def ratio(mine: float, theirs: float) -> str:
    if theirs <= 0:
        return "-"
    value = mine / theirs
    return f"{value:.2f}x" if value < 1 else f"{value:.1f}x"


def table(results: dict[tuple[int, int], Figures], writers: int) -> list[str]:
    """The figures as one Markdown table (pasted into docs/multi-host.md as printed)."""
    lines = [
        "| items | namespaces | operation | n | memquill pg p50 / p95 ms "
        "| PostgresStore p50 / p95 ms | memquill file p50 / p95 ms | pg/PG p50 | file/PG p50 |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (size, count), figures in results.items():
        used = min(count, size)
        for operation, by_store in figures.times.items():
            n = "/".join(str(len(by_store[kind])) for kind in STORES)
            medians = {kind: statistics.median(by_store[kind]) for kind in STORES}
            label = operation + (" (PG lists)" if operation.startswith("search") else "")
            lines.append(
                f"| {size:,} | {used:,} | {label} | {n} | "
                + " | ".join(cell(by_store[kind]) for kind in STORES)
                + f" | {ratio(medians['memquill pg'], medians['PostgresStore'])}"
                f" | {ratio(medians['memquill file'], medians['PostgresStore'])} |"
            )
        rates = {kind: figures.writers[kind]["puts/s"] for kind in STORES}
        lines.append(
            f"| {size:,} | {used:,} | {writers} writers: puts/s | "
            + "/".join(str(int(figures.writers[kind]["acknowledged"])) for kind in STORES)
            + " | "
            + " | ".join(f"{rates[kind]:.0f}" for kind in STORES)
            + f" | {ratio(rates['memquill pg'], rates['PostgresStore'])}"
            f" | {ratio(rates['memquill file'], rates['PostgresStore'])} |"
        )
        lines.append(
            f"| {size:,} | {used:,} | {writers} writers: put p50 / p95 ms | | "
            + " | ".join(
                f"{figures.writers[kind]['p50']:.1f} / {figures.writers[kind]['p95']:.1f}"
                for kind in STORES
            )
            + " | | |"
        )
        lines.append(
            f"| {size:,} | {used:,} | {writers} writers: peak connections | | "
            + " | ".join(
                f"{int(figures.writers[kind]['connections'])}" if kind != "memquill file" else "-"
                for kind in STORES
            )
            + " | | |"
        )
        lines.append(
            f"| {size:,} | {used:,} | {writers} writers: errors, lost | | "
            + " | ".join(
                f"{int(figures.writers[kind]['errors'])}, {int(figures.writers[kind]['lost'])}"
                for kind in STORES
            )
            + " | | |"
        )
    return lines


def server(url: str) -> str:
    """The server's version and connection limit."""
    with psycopg.connect(url) as connection:
        version = connection.execute("SHOW server_version").fetchone()
        limit = connection.execute("SHOW max_connections").fetchone()
    return (
        f"PostgreSQL {version[0] if version else '?'}, max_connections {limit[0] if limit else '?'}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument(
        "--url",
        help="postgresql:// URL of a role that may create databases (never printed); "
        "default $MEMQUILL_TEST_POSTGRES",
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--namespaces", type=int, nargs="+", default=[1, 10_000])
    parser.add_argument("--ops", type=int, default=100, help="timed calls per operation")
    parser.add_argument(
        "--budget", type=float, default=20.0, help="seconds per operation and store, at most"
    )
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--per-writer", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="profile memquill's puts")
    args = parser.parse_args(argv)
    url = args.url or os.environ.get("MEMQUILL_TEST_POSTGRES")
    if not url or not url.startswith(("postgresql://", "postgres://")):
        parser.error("needs --url postgresql://... or $MEMQUILL_TEST_POSTGRES")
    shown = [
        "URL" if argument.startswith(("postgresql://", "postgres://")) else argument
        for argument in sys.argv
    ]
    shown = [part.split("=", 1)[0] + "=URL" if "://" in part else part for part in shown]
    print("command:", shlex.join(["uv", "run", "python", *shown]))  # never the password
    versions = ", ".join(
        f"{name} {importlib.metadata.version(name)}"
        for name in ("memquill", "langgraph", "langgraph-checkpoint-postgres", "psycopg")
    )
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {server(url)}; {versions}")
    before = os.getloadavg()
    results: dict[tuple[int, int], Figures] = {}
    for size in args.sizes:
        for count in args.namespaces:
            print(f"{size} items across {min(count, size)} namespaces:", flush=True)
            results[(size, count)] = configuration(url, size, count, args)
            print("\n".join(table({(size, count): results[(size, count)]}, args.writers)[2:]))
    after = os.getloadavg()
    print(f"load average before: {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}")
    print(f"load average after:  {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}")
    print(
        "search: memquill ranks by the query (keyword ranking); PostgresStore without an index "
        "ignores the query and lists the items under the prefix newest first (PG lists).\n"
        "pg/PG and file/PG: memquill's p50 over PostgresStore's; for puts/s, memquill's throughput "
        "over PostgresStore's.\n"
        "n: calls measured per store (memquill pg / PostgresStore / memquill file; a measurement "
        f"stops after {args.budget:g} s); for the writers, puts acknowledged."
    )
    for (size, count), figures in results.items():
        setup = ", ".join(
            f"{kind} {figures.setup[kind]:.1f} s (first search {figures.first[kind]:.2f} s)"
            for kind in STORES
        )
        print(f"setup, {size} items across {min(count, size)} namespaces: {setup}")
    print("\n".join(table(results, args.writers)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
