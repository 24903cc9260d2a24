"""Records-store speed and memory: save latency by store size, concurrent writers, memory.

Usage::

    uv run python benchmarks/store_bench.py [--seed 7] [--saves 200] [--workers 8]
        [--per-worker 50] [--dir DIR]
    MEMQUILL_STORE=postgresql://… uv run python benchmarks/store_bench.py --backend postgres
    uv run python benchmarks/store_bench.py --write-cost [--writes 60] [--sizes 100,1000]

``--backend postgres`` measures the database beside the file, the same way for both: saves
into a store seeded with 10 and 1,000 records (steady state: each save adds one record), and
``--workers`` processes saving at once (throughput, latency, the wait for the row lock or the
writer lock, p99, and fairness). The URL is never printed.

Scenarios (each in a fresh workspace under ``--dir``, default a temporary folder):

* ``save`` of one small fact into a store holding 10 records, 1,000 records, and 120 records
  of 16,000 characters (about 93 % of the 2 MiB bound); the store is reset after each timed
  save, so every call sees that size. Every save is a full
  transaction: lock, read (and decode what the store has not seen), encode, staged write,
  fsync, rename, directory fsync. Beside the wall time: the CPU time of the same saves (the
  part that is not waiting for the disk), ``snapshot`` latency, and two baselines measured in
  the same run: the same save through a fresh ``RecordStore`` each time (nothing remembered:
  the whole file is decoded and re-encoded, as every save did before the store kept its last
  file), and the naive writer many peers use: read the file, append the new entry, write it
  back in place, with no lock, no validation, no fsync and no atomic rename (it can lose or
  tear data; it is here only to show what the guarantees cost).
* ``--workers`` processes, each saving ``--per-worker`` facts into one empty store at once,
  started together behind a barrier: wall time, saves per second, each call's latency, the
  time each call waited for the writer lock (p50, p99, max) and fairness: Jain's index of the
  writers' mean latencies (1.0 when every writer waited alike) and when the first and the
  last writer finished. Run twice, side by side: waiting in the kernel (memquill's lock) and
  the baseline of polling with back-off (1 ms doubling to 50 ms, how the lock waited before).
* ``--write-cost``: the cost of one write as the store grows. Stores of 100, 1,000, 3,500,
  10,000 and 50,000 records of chat-sized facts (about 100 characters; the file is written
  directly, untimed; capacity raised to the smallest whole MiB that holds twice the file, at
  least 2 MiB), then ``--writes`` timed ``remember`` (``save`` of one new fact) and ``update``
  (``correct`` of a random active fact) each: CPU (``time.process_time``) and wall p50/p95.
  In the same run, LangGraph's ``SqliteStore.put`` (a file database, WAL) and
  ``InMemoryStore.put`` at the same sizes: a new key (remember) and an existing key
  (update). Ratios printed: each size's CPU p50 over the 100-record one, and memquill's over
  ``SqliteStore``'s.
* Peak memory: Python allocations (``tracemalloc``) during one ``save`` and one ``snapshot`` on
  the near-2 MiB store, and the peak resident set size of this process and of the largest
  worker (``VmHWM``; ``ru_maxrss`` where there is no ``/proc``).

Content is generated from ``--seed``, so two runs write the same facts; ids and timestamps
differ, which does not change any size. Timings depend on the disk (fsync), the machine and
its load (printed before and after): compare runs on one machine only. This is a
measurement, never a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memquill.store._codec import MAX_STORE_BYTES
from memquill.store._record import JSONValue
from memquill.store._results import Candidate
from memquill.store._store import RecordStore

_VOCABULARY = (
    "memory project deadline prefers tabs spaces python release review meeting tuesday coffee "
    "design store record lock revision window editor keyboard layout theme dark light backup "
    "deploy staging server database schema migration index query cache latency budget"
)
WORDS = tuple(_VOCABULARY.split())

WORKER = textwrap.dedent(
    """
    import json, sys, time
    from memquill.store import _lock
    from memquill.store._results import Candidate
    from memquill.store._store import RecordStore

    workspace, worker, count, seed, waiting, location = sys.argv[1:7]
    worker, count = int(worker), int(count)
    if waiting == "polled":
        from memquill.foundation import kernel_lock

        def polled(fd, timeout):  # the baseline: how the lock waited before
            kernel_lock._poll(fd, time.monotonic() + timeout)

        _lock.wait_for_lock = polled
    waits = []
    acquire = _lock.WriterLock._wait_for

    def timed_acquire(self, fd):
        start = time.perf_counter()
        try:
            acquire(self, fd)
        finally:
            waits.append(time.perf_counter() - start)

    _lock.WriterLock._wait_for = timed_acquire
    if location != "file":
        from memquill.store import _postgres

        fetch = _postgres.PostgresBackend._fetch

        def timed_fetch(self, connection, lock):  # the wait for the row lock
            start = time.perf_counter()
            try:
                return fetch(self, connection, lock)
            finally:
                if lock is not None:
                    waits.append(time.perf_counter() - start)

        _postgres.PostgresBackend._fetch = timed_fetch
    store = RecordStore(workspace, lock_timeout=300, location=location)
    facts = [f"worker {worker} fact {i} (seed {seed})" for i in range(count)]
    print("ready", flush=True)
    sys.stdin.readline()
    latencies = []
    for i, fact in enumerate(facts):
        start = time.perf_counter()
        store.save([Candidate(fact, {"kind": "tool", "sessionId": f"w{worker}"}, f"{worker}:{i}")])
        latencies.append(time.perf_counter() - start)
    finished = time.time()
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    report = {"latencies": latencies, "waits": waits, "finished": finished, "peak_rss": peak}
    print(json.dumps(report), flush=True)
    """
)


@dataclass(frozen=True)
class Row:
    name: str
    records: int
    size_bytes: int
    calls: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    cpu_p50_ms: float
    read_p50_ms: float
    first_p50_ms: float
    fresh_p50_ms: float
    naive_p50_ms: float


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def fill(store: RecordStore, rng: random.Random, count: int, length: int, tag: str) -> None:
    """Save ``count`` facts of about ``length`` characters, 40 per transaction."""
    for start in range(0, count, 40):
        batch: list[Candidate] = []
        for i in range(start, min(count, start + 40)):
            text = f"{tag} {i}: " + sentence(rng, max(1, length // 7))
            batch.append(Candidate(text[:length], {"kind": "manual"}, f"{tag}-{i}"))
        store.save(batch)


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def timed(call: Callable[[], object], times: int) -> list[float]:
    latencies: list[float] = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        latencies.append(time.perf_counter() - start)
    return latencies


def save_scenario(
    root: Path, name: str, rng: random.Random, count: int, length: int, saves: int
) -> tuple[Row, RecordStore]:
    """Time ``saves`` one-fact saves into a store of ``count`` records.

    Each round puts the file back as it was (untimed), lets the store save one fact (the first
    save after the store read that file: untimed, but reported as ``first``), then times a
    second save: the steady state of a long-lived store, which has seen the file it writes
    (its own last write, or another writer's append). So every timed call sees ``count + 1``
    records.
    """
    workspace = root / name.replace(" ", "-").replace(",", "")
    workspace.mkdir()
    store = RecordStore(workspace)
    fill(store, rng, count, length, "seed")
    file = workspace / "memory" / "records.md"
    original = file.read_bytes()
    spare = workspace / "memory" / "bench-restore"

    def reset() -> None:
        spare.write_bytes(original)
        os.replace(spare, file)

    def fact(label: str) -> Candidate:
        return Candidate(sentence(rng, 12), {"kind": "manual"}, f"{label}-{rng.random()}")

    latencies: list[float] = []
    cpu: list[float] = []
    first: list[float] = []
    for _ in range(saves):
        reset()
        start = time.perf_counter()
        store.save([fact("first")])
        first.append(time.perf_counter() - start)
        start, start_cpu = time.perf_counter(), time.process_time()
        store.save([fact("bench")])
        latencies.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    reads = timed(store.snapshot, max(10, saves // 4))
    fresh: list[float] = []
    for _ in range(max(10, saves // 4)):
        reset()
        start = time.perf_counter()
        RecordStore(workspace).save([fact("fresh")])
        fresh.append(time.perf_counter() - start)
    reset()
    naive: list[float] = []
    for _ in range(saves):
        entry = f"\n- {sentence(rng, 12)}\n".encode()
        start = time.perf_counter()
        _naive_save(file, entry)
        naive.append(time.perf_counter() - start)
        file.write_bytes(original)
    row = Row(
        name,
        count,
        len(original),
        saves,
        1000 * statistics.median(latencies),
        1000 * percentile(latencies, 0.95),
        1000 * max(latencies),
        1000 * statistics.median(cpu),
        1000 * statistics.median(reads),
        1000 * statistics.median(first),
        1000 * statistics.median(fresh),
        1000 * statistics.median(naive),
    )
    return row, store


def _naive_save(file: Path, entry: bytes) -> None:
    """The baseline: append by rewriting the whole file in place, unlocked and unsynced."""
    file.write_bytes(file.read_bytes() + entry)


def concurrent(
    root: Path, workers: int, per_worker: int, seed: int, waiting: str, location: str = "file"
) -> dict[str, float]:
    """``workers`` processes saving ``per_worker`` facts each into one store at once."""
    workspace = root / f"concurrent-{waiting}-{len(list(root.iterdir()))}"
    workspace.mkdir()
    location = row_of(location, workspace.name)
    argv = [str(workspace), "", str(per_worker), str(seed), waiting, location]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, *argv[:1], str(n), *argv[2:]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(workers)
    ]
    for process in processes:
        assert process.stdout is not None
        if process.stdout.readline().strip() != "ready":
            raise SystemExit("a worker failed to start")
    start_wall, start = time.time(), time.perf_counter()
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    latencies: list[float] = []
    waits: list[float] = []
    means: list[float] = []
    finished: list[float] = []
    peaks: list[int] = []
    for process in processes:
        out, _ = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"a worker failed with status {process.returncode}")
        report = json.loads(out.strip().splitlines()[-1])
        latencies.extend(report["latencies"])
        waits.extend(report["waits"])
        means.append(statistics.mean(report["latencies"]))
        finished.append(report["finished"] - start_wall)
        peaks.append(report["peak_rss"])
    wall = time.perf_counter() - start
    records = len(RecordStore(workspace, location=location).snapshot().records)
    if records != workers * per_worker:
        raise SystemExit(f"expected {workers * per_worker} records, found {records}")
    return {
        "saves": float(len(latencies)),
        "wall_s": wall,
        "per_s": len(latencies) / wall,
        "p50_ms": 1000 * statistics.median(latencies),
        "p95_ms": 1000 * percentile(latencies, 0.95),
        "max_ms": 1000 * max(latencies),
        "wait_p50_ms": 1000 * statistics.median(waits),
        "wait_p99_ms": 1000 * percentile(waits, 0.99),
        "wait_max_ms": 1000 * max(waits),
        "jain": jain(means),
        "first_done_s": min(finished),
        "last_done_s": max(finished),
        "worker_peak_rss": float(max(peaks)),
    }


def row_of(location: str, name: str) -> str:
    """``location`` with its own row (a fresh workspace name) when it is a database."""
    if location == "file":
        return location
    return f"{location.partition('#')[0]}#workspace=bench-{name}-{time.time_ns()}"


def backend_row(
    root: Path, location: str, rng: random.Random, count: int, saves: int
) -> dict[str, float]:
    """Steady-state saves into a store seeded with ``count`` records (it grows by one per
    save), the same way on either backend."""
    workspace = root / f"{'file' if location == 'file' else 'db'}-{count}-{time.time_ns()}"
    workspace.mkdir()
    location = row_of(location, workspace.name)
    store = RecordStore(workspace, location=location)
    fill(store, rng, count, 120, "seed")
    store.snapshot()
    latencies: list[float] = []
    for i in range(saves):
        candidate = Candidate(sentence(rng, 12), {"kind": "manual"}, f"steady-{i}")
        start = time.perf_counter()
        store.save([candidate])
        latencies.append(time.perf_counter() - start)
    reads = timed(store.snapshot, max(10, saves // 4))
    store.close()
    return {
        "p50_ms": 1000 * statistics.median(latencies),
        "p95_ms": 1000 * percentile(latencies, 0.95),
        "read_p50_ms": 1000 * statistics.median(reads),
    }


def compare_backends(args: argparse.Namespace, location: str) -> int:
    """``--backend postgres``: the database beside the file, measured the same way."""
    load_before = load()
    with tempfile.TemporaryDirectory(prefix="memquill-bench-", dir=args.dir) as temp:
        root = Path(temp)
        rng = random.Random(args.seed)
        sizes = (10, 1000)
        rows = {
            (kind, count): backend_row(root, where, rng, count, args.saves)
            for count in sizes
            for kind, where in (("file", "file"), ("postgres", location))
        }
        runs = {
            kind: concurrent(root, args.workers, args.per_worker, args.seed, "kernel", where)
            for kind, where in (("file", "file"), ("postgres", location))
        }
    print("memquill records-store benchmark: PostgreSQL beside the file")
    print(f"command: {shlex.join([Path(sys.executable).name, *sys.argv])} (store URL not shown)")
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, server on loopback; "
        f"seed {args.seed}; load average {load_before} before, {load()} after"
    )
    print()
    header = f"{'save (steady state)':<26}{'backend':>10}{'p50 ms':>9}{'p95 ms':>9}{'read p50':>10}"
    print(header)
    print("-" * len(header))
    for (kind, count), row in rows.items():
        label = f"{count:,} -> {count + args.saves:,} records"
        print(
            f"{label:<26}{kind:>10}{row['p50_ms']:>9.2f}{row['p95_ms']:>9.2f}"
            f"{row['read_p50_ms']:>10.2f}"
        )
    print()
    print(
        f"concurrent: {args.workers} processes x {args.per_worker} saves into one store "
        "(ms; wait: time to get the writer lock or the row lock)"
    )
    header = (
        f"{'backend':<10}{'saves/s':>8}{'wall s':>8}{'p50':>8}{'p95':>8}{'max':>9}"
        f"{'wait p50':>9}{'wait p99':>9}{'wait max':>9}{'Jain':>6}{'done first..last s':>20}"
    )
    print(header)
    print("-" * len(header))
    for kind, run in runs.items():
        print(
            f"{kind:<10}{run['per_s']:>8.0f}{run['wall_s']:>8.2f}{run['p50_ms']:>8.2f}"
            f"{run['p95_ms']:>8.2f}{run['max_ms']:>9.2f}{run['wait_p50_ms']:>9.2f}"
            f"{run['wait_p99_ms']:>9.2f}{run['wait_max_ms']:>9.2f}{run['jain']:>6.3f}"
            f"{run['first_done_s']:>12.2f}..{run['last_done_s']:<6.2f}"
        )
    return 0


def jain(values: Sequence[float]) -> float:
    """Jain's fairness index: 1.0 when all values are equal, 1/n when one takes everything."""
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values))


def load() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def traced_peak(call: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def peak_rss_bytes() -> int:
    """This process's peak resident set size.

    ``/proc/self/status`` (VmHWM) where it exists: ``ru_maxrss`` also counts the parent's memory
    a child had between fork and exec, which would make every worker look as big as this one.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    value = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return value if sys.platform == "darwin" else value * 1024  # Linux reports KiB


def kib(size: float) -> str:
    return f"{size / 1024:,.1f} KiB" if size < 1024 * 1024 else f"{size / 1024 / 1024:,.2f} MiB"


def filesystem_of(path: Path) -> str:
    try:
        out = subprocess.run(
            ["df", "-T", str(path)], capture_output=True, text=True, check=True
        ).stdout
        return out.splitlines()[1].split()[1]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=7, help="content seed (default 7)")
    parser.add_argument("--saves", type=int, default=200, help="saves per size scenario")
    parser.add_argument("--workers", type=int, default=8, help="concurrent processes")
    parser.add_argument("--per-worker", type=int, default=50, help="saves per process")
    parser.add_argument("--dir", type=Path, help="where to create workspaces (default: temp)")
    parser.add_argument(
        "--backend",
        choices=("file", "postgres"),
        default="file",
        help="postgres: the database beside the file (URL from --store or $MEMQUILL_STORE)",
    )
    parser.add_argument("--store", metavar="URL", help="the postgresql:// URL (never printed)")
    parser.add_argument(
        "--write-cost", action="store_true", help="write CPU/wall by store size beside LangGraph"
    )
    parser.add_argument(
        "--writes", type=int, default=60, help="timed writes per size (--write-cost)"
    )
    parser.add_argument("--sizes", help="comma-separated record counts (--write-cost)")
    args = parser.parse_args(argv)
    if args.write_cost:
        return write_cost(args)
    if args.backend == "postgres":
        location = args.store or os.environ.get("MEMQUILL_STORE", "")
        if not location.startswith(("postgresql://", "postgres://")):
            parser.error("--backend postgres needs --store URL or $MEMQUILL_STORE")
        return compare_backends(args, location)

    load_before = load()
    with tempfile.TemporaryDirectory(prefix="memquill-bench-", dir=args.dir) as temp:
        root = Path(temp)
        rng = random.Random(args.seed)
        scenarios = [
            ("save, 10 records", 10, 120),
            ("save, 1,000 records", 1000, 120),
            ("save, near 2 MiB", 120, 16_000),
        ]
        rows: list[Row] = []
        big_store: RecordStore | None = None
        for name, count, length in scenarios:
            saves = args.saves if length < 16_000 else max(20, args.saves // 4)
            row, store = save_scenario(root, name, rng, count, length, saves)
            rows.append(row)
            big_store = store
        assert big_store is not None
        runs = {
            waiting: concurrent(root, args.workers, args.per_worker, args.seed, waiting)
            for waiting in ("kernel", "polled")
        }

        def one_big_save() -> None:
            fact = sentence(rng, 12)
            big_store.save([Candidate(fact, {"kind": "manual"}, f"traced-{rng.random()}")])

        save_peak = traced_peak(one_big_save)
        read_peak = traced_peak(big_store.snapshot)
        big_size = big_store.snapshot().size_bytes
        fs = filesystem_of(root)

    interpreter = Path(sys.executable)
    if interpreter.is_relative_to(Path.cwd()):
        interpreter = interpreter.relative_to(Path.cwd())
    command = shlex.join([str(interpreter), *sys.argv])
    print("memquill records-store benchmark")
    print(f"command: {command}")
    print(
        f"python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, workspaces on {fs}; seed {args.seed}; "
        f"load average {load_before} before, {load()} after"
    )
    print()
    header = (
        f"{'scenario':<22}{'records':>9}{'file size':>12}{'saves':>6}"
        f"{'p50':>7}{'p95':>7}{'max':>7}{'cpu p50':>8}{'read p50':>9}"
        f"{'first p50':>10}{'fresh p50':>10}{'naive p50':>10}{'x naive':>8}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.name:<22}{row.records:>9,}{kib(row.size_bytes):>12}{row.calls:>6}"
            f"{row.p50_ms:>7.2f}{row.p95_ms:>7.2f}{row.max_ms:>7.2f}{row.cpu_p50_ms:>8.2f}"
            f"{row.read_p50_ms:>9.2f}{row.first_p50_ms:>10.2f}{row.fresh_p50_ms:>10.2f}"
            f"{row.naive_p50_ms:>10.2f}"
            f"{row.p50_ms / row.naive_p50_ms:>8.1f}"
        )
    print(
        "(ms. p50..cpu p50: a long-lived store saving into a file it has seen; first: its first "
        "save after reading the file (every block encoded); fresh: a new RecordStore per save, "
        "decoding and encoding the whole file, as every save did before the store kept its "
        "last file; naive: unlocked, unsynced in-place rewrite)"
    )
    print()
    print(
        f"concurrent: {args.workers} processes x {args.per_worker} saves into one store "
        "(ms; wait: time to get the writer lock)"
    )
    header = (
        f"{'lock wait':<10}{'saves/s':>8}{'wall s':>8}{'p50':>8}{'p95':>8}{'max':>9}"
        f"{'wait p50':>9}{'wait p99':>9}{'wait max':>9}{'Jain':>6}{'done first..last s':>20}"
    )
    print(header)
    print("-" * len(header))
    for waiting, run in runs.items():
        print(
            f"{waiting:<10}{run['per_s']:>8.0f}{run['wall_s']:>8.2f}{run['p50_ms']:>8.2f}"
            f"{run['p95_ms']:>8.2f}{run['max_ms']:>9.2f}{run['wait_p50_ms']:>9.2f}"
            f"{run['wait_p99_ms']:>9.2f}{run['wait_max_ms']:>9.2f}{run['jain']:>6.3f}"
            f"{run['first_done_s']:>12.2f}..{run['last_done_s']:<6.2f}"
        )
    print(
        "(kernel: memquill's lock, a blocking request the kernel grants on release; polled: "
        "the baseline, back-off from 1 ms to 50 ms, how the lock waited before)"
    )
    print()
    print(
        f"memory, store of {kib(big_size)} ({100 * big_size / MAX_STORE_BYTES:.0f}% of 2 MiB): "
        f"tracemalloc peak {kib(save_peak)} per save, {kib(read_peak)} per snapshot"
    )
    worker_peak = max(run["worker_peak_rss"] for run in runs.values())
    print(f"peak RSS: this process {kib(peak_rss_bytes())}, largest worker {kib(worker_peak)}")
    return 0


WRITE_SIZES = (100, 1_000, 3_500, 10_000, 50_000)
_MIB = 1024 * 1024


@dataclass(frozen=True)
class Cost:
    """CPU and wall p50/p95 of one kind of write at one store size, in milliseconds."""

    cpu_p50: float
    cpu_p95: float
    wall_p50: float
    wall_p95: float


def measured(calls: Sequence[Callable[[], object]]) -> Cost:
    cpu: list[float] = []
    wall: list[float] = []
    for call in calls:
        c0, w0 = time.process_time(), time.perf_counter()
        call()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    ms = 1000.0
    return Cost(
        percentile(cpu, 0.5) * ms,
        percentile(cpu, 0.95) * ms,
        percentile(wall, 0.5) * ms,
        percentile(wall, 0.95) * ms,
    )


def chat_fact(rng: random.Random, label: str) -> str:
    return f"{label}: " + sentence(rng, 14)


def seeded_store(root: Path, rng: random.Random, count: int) -> tuple[RecordStore, list[str]]:
    """A workspace whose ``records.md`` holds ``count`` active facts, written directly (one
    encode, one file write: building it through ``count`` saves would time the old store)."""
    from memquill.store._codec import HEADER, encode_block, iso_timestamp
    from memquill.store._record import Record
    from memquill.store._record_key import keyed_fields

    workspace = root / f"memquill-{count}"
    workspace.mkdir()
    first = RecordStore(workspace)
    first.save([Candidate("first fact", {"kind": "manual"}, "seed-first")])
    key = first.record_key.load()
    now = iso_timestamp(datetime.now(UTC))
    records: list[Record] = []
    for i in range(count - 1):
        record_id = str(uuid.uuid4())
        meta: dict[str, JSONValue] = {
            "id": record_id,
            "rootId": record_id,
            "source": {"kind": "manual"},
            "status": "active",
            "createdAt": now,
            "updatedAt": now,
            **keyed_fields(key, f"seed-{i}"),
        }
        records.append(Record(meta, chat_fact(rng, f"seed {i}")))
    file = workspace / "memory" / "records.md"
    data = file.read_bytes() + "".join(encode_block(r) for r in records).encode()
    assert data.startswith(HEADER.encode())
    needed = max(2, -(-2 * len(data) // _MIB))
    file.write_bytes(data)
    store = RecordStore(workspace, capacity=needed * _MIB)
    ids = [r.id for r in records]
    store.snapshot()  # the store has read its file once, as a long-lived one has
    return store, ids


def memquill_costs(root: Path, rng: random.Random, count: int, writes: int) -> dict[str, Cost]:
    store, ids = seeded_store(root, rng, count)
    n = iter(range(10**9))

    def remember() -> None:
        i = next(n)
        store.save([Candidate(chat_fact(rng, f"new {i}"), {"kind": "manual"}, f"bench-{i}")])

    targets = rng.sample(ids, writes + 1)
    revision = store.snapshot().revision
    state = {"revision": revision}

    def update(target: str) -> Callable[[], None]:
        def call() -> None:
            result = store.correct(target, chat_fact(rng, "corrected"), state["revision"])
            state["revision"] = result.revision

        return call

    remember()  # the first write after a read: untimed
    costs = {"remember": measured([remember] * writes)}
    state["revision"] = store.snapshot().revision
    update(targets[-1])()
    costs["update"] = measured([update(t) for t in targets[:writes]])
    costs["size"] = Cost(store.snapshot().size_bytes / _MIB, 0, 0, 0)
    return costs


def langgraph_costs(root: Path, rng: random.Random, count: int, writes: int) -> dict[str, Cost]:
    from langgraph.store.memory import InMemoryStore
    from langgraph.store.sqlite import SqliteStore

    costs: dict[str, Cost] = {}
    path = root / f"langgraph-{count}.sqlite"
    with SqliteStore.from_conn_string(str(path)) as sqlite:
        sqlite.setup()
        memory = InMemoryStore()
        for name, store in (("sqlite", sqlite), ("memory", memory)):
            items = [(f"seed-{i}", {"text": chat_fact(rng, f"seed {i}")}) for i in range(count)]
            for start in range(0, count, 500):
                store.batch([PutOp(("bench",), k, v) for k, v in items[start : start + 500]])
            counter = iter(range(10**9))

            def new(store: BaseStore = store, counter: Iterator[int] = counter) -> None:
                store.put(("bench",), f"new-{next(counter)}", {"text": chat_fact(rng, "new")})

            def old(store: BaseStore = store, key: str = "") -> None:
                store.put(("bench",), key, {"text": chat_fact(rng, "corrected")})

            keys = rng.sample([k for k, _ in items], writes)
            costs[f"{name} remember"] = measured([new] * writes)
            costs[f"{name} update"] = measured(
                [lambda key=key, store=store: old(store, key) for key in keys]
            )
    return costs


def write_cost(args: argparse.Namespace) -> int:
    """The ``--write-cost`` scenario (module docstring)."""
    global PutOp, BaseStore
    from langgraph.store.base import BaseStore, PutOp

    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(WRITE_SIZES)
    load_before = load()
    results: dict[int, dict[str, Cost]] = {}
    with tempfile.TemporaryDirectory(prefix="memquill-bench-", dir=args.dir) as temp:
        root = Path(temp)
        fs = filesystem_of(root)
        for count in sizes:
            rng = random.Random(args.seed + count)
            results[count] = {
                **memquill_costs(root, rng, count, args.writes),
                **langgraph_costs(root, rng, count, args.writes),
            }
            print(f"  measured {count:,} records", file=sys.stderr, flush=True)
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(
        f"python {platform.python_version()}, {platform.system()} {platform.release()}, "
        f"{os.cpu_count()} CPUs, files on {fs}; seed {args.seed}; {args.writes} writes each; "
        f"load average {load_before} before, {load()} after"
    )
    print()
    kinds = ("remember", "update")
    header = f"{'records':>8} {'MiB':>6} {'write':<10}" + "".join(
        f"{label:>14}" for label in ("cpu p50", "cpu p95", "wall p50", "wall p95")
    )
    for kind in kinds:
        print(header)
        base = results[sizes[0]][kind].cpu_p50
        for count in sizes:
            row = results[count]
            for name in (kind, f"sqlite {kind}", f"memory {kind}"):
                cost = row[name]
                label = "memquill" if name == kind else name.split()[0]
                print(
                    f"{count:>8,} {row['size'].cpu_p50:>6.2f} {label:<10}"
                    f"{cost.cpu_p50:>14.3f}{cost.cpu_p95:>14.3f}"
                    f"{cost.wall_p50:>14.3f}{cost.wall_p95:>14.3f}"
                )
            own = row[kind].cpu_p50
            print(
                f"{'':>8} {'':>6} ratios    cpu p50 vs {sizes[0]:,} records {own / base:.2f}x; "
                f"vs SqliteStore.put {own / max(row[f'sqlite {kind}'].cpu_p50, 1e-9):.2f}x"
            )
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
