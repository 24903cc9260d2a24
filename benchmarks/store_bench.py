"""Records-store speed and memory: save latency by store size, concurrent throughput, memory.

Usage::

    uv run python benchmarks/store_bench.py [--seed 7] [--saves 200] [--workers 8]
        [--per-worker 50] [--dir DIR]

Scenarios (each in a fresh workspace under ``--dir``, default a temporary folder):

* ``save`` of one small fact into a store holding 10 records, 1,000 records, and 120 records
  of 16,000 characters (about 93 % of the 2 MiB bound); the store is reset after each timed
  save, so every call sees that size. Every save is a full
  transaction: lock, read and decode, encode, staged write, fsync, rename, directory fsync.
  ``snapshot`` (read and decode) latency on the same store is shown beside it. The baseline
  beside it is the naive writer many peers use: read the file, append the new entry, write it
  back in place, with no lock, no validation, no fsync and no atomic rename (it can lose or
  tear data; it is here only to show what the guarantees cost).
* ``--workers`` processes, each saving ``--per-worker`` facts into one empty store at once,
  started together behind a barrier: wall time, saves per second, and each call's latency
  including the wait for the writer lock.
* Peak memory: Python allocations (``tracemalloc``) during one ``save`` and one ``snapshot`` on
  the near-2 MiB store, and the peak resident set size of this process and of the largest
  worker (``VmHWM``; ``ru_maxrss`` where there is no ``/proc``).

Content is generated from ``--seed``, so two runs write the same facts; ids and timestamps
differ, which does not change any size. Timings depend on the disk (fsync) and the machine:
compare runs on one machine only. This is a measurement, never a test.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memquill.store._codec import MAX_STORE_BYTES
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
    from memquill.store._results import Candidate
    from memquill.store._store import RecordStore

    workspace, worker, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    store = RecordStore(workspace, lock_timeout=300)
    facts = [f"worker {worker} fact {i} (seed {seed})" for i in range(count)]
    print("ready", flush=True)
    sys.stdin.readline()
    latencies = []
    for i, fact in enumerate(facts):
        start = time.perf_counter()
        store.save([Candidate(fact, {"kind": "tool", "sessionId": f"w{worker}"}, f"{worker}:{i}")])
        latencies.append(time.perf_counter() - start)
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    print(json.dumps({"latencies": latencies, "peak_rss": peak}), flush=True)
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
    read_p50_ms: float
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
    """Time ``saves`` one-fact saves, each into the same ``count``-record store.

    After each timed save the file is put back as it was (untimed), so every call sees exactly
    ``count`` records and the figure belongs to that size.
    """
    workspace = root / name.replace(" ", "-").replace(",", "")
    workspace.mkdir()
    store = RecordStore(workspace)
    fill(store, rng, count, length, "seed")
    file = workspace / "memory" / "records.md"
    original = file.read_bytes()
    spare = workspace / "memory" / "bench-restore"
    latencies: list[float] = []
    for i in range(saves):
        candidate = Candidate(sentence(rng, 12), {"kind": "manual"}, f"bench-{i}")
        start = time.perf_counter()
        store.save([candidate])
        latencies.append(time.perf_counter() - start)
        spare.write_bytes(original)
        os.replace(spare, file)
    reads = timed(store.snapshot, max(10, saves // 4))
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
        1000 * statistics.median(reads),
        1000 * statistics.median(naive),
    )
    return row, store


def _naive_save(file: Path, entry: bytes) -> None:
    """The baseline: append by rewriting the whole file in place, unlocked and unsynced."""
    file.write_bytes(file.read_bytes() + entry)


def concurrent(root: Path, workers: int, per_worker: int, seed: int) -> dict[str, float]:
    workspace = root / "concurrent"
    workspace.mkdir()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(workspace), str(n), str(per_worker), str(seed)],
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
    start = time.perf_counter()
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    latencies: list[float] = []
    peaks: list[int] = []
    for process in processes:
        out, _ = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"a worker failed with status {process.returncode}")
        report = json.loads(out.strip().splitlines()[-1])
        latencies.extend(report["latencies"])
        peaks.append(report["peak_rss"])
    wall = time.perf_counter() - start
    records = len(RecordStore(workspace).snapshot().records)
    if records != workers * per_worker:
        raise SystemExit(f"expected {workers * per_worker} records, found {records}")
    return {
        "saves": float(len(latencies)),
        "wall_s": wall,
        "per_s": len(latencies) / wall,
        "p50_ms": 1000 * statistics.median(latencies),
        "p95_ms": 1000 * percentile(latencies, 0.95),
        "max_ms": 1000 * max(latencies),
        "worker_peak_rss": float(max(peaks)),
    }


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
    args = parser.parse_args(argv)

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
        throughput = concurrent(root, args.workers, args.per_worker, args.seed)

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
        f"{os.cpu_count()} CPUs, workspaces on {fs}; seed {args.seed}"
    )
    print()
    header = (
        f"{'scenario':<22}{'records':>9}{'file size':>13}{'saves':>7}"
        f"{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'read p50 ms':>13}"
        f"{'naive p50 ms':>14}{'x naive':>9}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.name:<22}{row.records:>9,}{kib(row.size_bytes):>13}{row.calls:>7}"
            f"{row.p50_ms:>9.2f}{row.p95_ms:>9.2f}{row.max_ms:>9.2f}{row.read_p50_ms:>13.2f}"
            f"{row.naive_p50_ms:>14.2f}{row.p50_ms / row.naive_p50_ms:>9.1f}"
        )
    print()
    print(
        f"concurrent: {args.workers} processes x {args.per_worker} saves = "
        f"{throughput['saves']:.0f} saves in {throughput['wall_s']:.2f} s -> "
        f"{throughput['per_s']:.0f} saves/s; per call incl. lock wait: "
        f"p50 {throughput['p50_ms']:.2f} ms, p95 {throughput['p95_ms']:.2f} ms, "
        f"max {throughput['max_ms']:.2f} ms"
    )
    print()
    print(
        f"memory, store of {kib(big_size)} ({100 * big_size / MAX_STORE_BYTES:.0f}% of 2 MiB): "
        f"tracemalloc peak {kib(save_peak)} per save, {kib(read_peak)} per snapshot"
    )
    print(
        f"peak RSS: this process {kib(peak_rss_bytes())}, "
        f"largest worker {kib(throughput['worker_peak_rss'])}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
