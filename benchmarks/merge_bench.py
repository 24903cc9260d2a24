"""How long merging two 1,000-record ``records.md`` files takes, beside git's own text merge.

Usage::

    uv run python benchmarks/merge_bench.py [--records 1000] [--repeat 15] [--seed 7]

Two machines start from one store of ``--records`` minus 100 facts, then each, alone, saves
100 more, corrects 20 shared facts (5 of them the same ones, so those diverge) and forgets 5
(both sides end with about ``--records`` records). Measured on those files, every figure the
median of ``--repeat`` runs:

* ``merge_files``: the record-level three-way merge in this process (wall and CPU time), and
  with no base (what ``memquill sync resolve`` does with a file-sync tool's conflict copy);
* ``RecordStore.merge``: the same merge as a store write into a workspace's ``records.md``
  (lock, read, merge, staged write, fsync, rename, directory fsync);
* ``memquill merge %O %A %B``: the driver as git runs it, a new process each time (start-up
  and imports included), writing into a copy of "ours"; beside it, a process that only
  imports ``memquill.cli`` (what every ``memquill`` command pays before it starts);
* baselines in the same run: ``git merge-file`` of the same three files (a line merge: it
  leaves conflict markers here, which is why the driver exists) and ``git merge-file --union``
  (no markers, but a file memquill's decoder refuses).

Timings depend on the machine and its load (printed before and after); compare runs on one
machine only. This is a measurement, never a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memquill import RecordStore
from memquill.store._merge import merge_files
from memquill.store._record_key import RecordKey
from memquill.store._results import Candidate

WORDS = [
    "memory",
    "project",
    "deadline",
    "prefers",
    "tabs",
    "spaces",
    "python",
    "release",
    "review",
    "meeting",
    "tuesday",
    "coffee",
    "design",
    "store",
    "record",
    "lock",
    "revision",
    "window",
    "editor",
    "keyboard",
    "layout",
    "theme",
    "dark",
    "light",
    "backup",
    "deploy",
    "staging",
    "server",
    "database",
    "schema",
    "migration",
    "index",
    "query",
    "cache",
    "latency",
    "budget",
]
MEMQUILL = str(Path(sys.executable).parent / "memquill")


def fact(rng: random.Random, label: str) -> str:
    return f"{label}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))


def save_many(store: RecordStore, texts: list[str]) -> None:
    for start in range(0, len(texts), 40):
        batch = texts[start : start + 40]
        store.save([Candidate(text, {"kind": "manual"}, f"manual:{text}") for text in batch])


def build(root: Path, records: int, seed: int) -> tuple[bytes, bytes, bytes]:
    """The base and the two sides' files (see the module docstring)."""
    rng = random.Random(seed)
    key = RecordKey(root / "key")
    first, second = root / "laptop", root / "desktop"
    first.mkdir()
    one = RecordStore(first, record_key=key)
    save_many(one, [fact(rng, f"shared {n}") for n in range(records - 100)])
    base = (first / "memory" / "records.md").read_bytes()
    (second / "memory").mkdir(parents=True)
    (second / "memory" / "records.md").write_bytes(base)
    two = RecordStore(second, record_key=key)
    shared = [r.id for r in one.snapshot().records]
    for index, store in enumerate((one, two)):
        save_many(store, [fact(rng, f"side {index} fact {n}") for n in range(100)])
        corrected = shared[:5] + rng.sample(shared[5:200], 15)
        for record_id in corrected:
            store.correct(record_id, fact(rng, f"side {index} fix"), store.snapshot().revision)
        for record_id in rng.sample(shared[200:], 5):
            store.revoke(record_id, store.snapshot().revision)
    return (
        base,
        (first / "memory" / "records.md").read_bytes(),
        (second / "memory" / "records.md").read_bytes(),
    )


def timed(repeat: int, run: Callable[[], object], reset: Callable[[], object] | None = None):
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(repeat):
        if reset is not None:
            reset()
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def child_wall(repeat: int, command: list[str], reset: Callable[[], object]) -> float:
    walls: list[float] = []
    for _ in range(repeat):
        reset()
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, check=False)
        walls.append(time.perf_counter() - start)
        if done.returncode and command[0] != "git":  # git merge-file: the conflicts' count
            raise SystemExit(f"{command[0]} failed: {done.stderr.decode()}")
    return statistics.median(walls)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} CPUs")
    print(f"load before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        base, ours, theirs = build(root, args.records, args.seed)
        count = [data.count(b"<!-- memory-record {") for data in (base, ours, theirs)]
        merged, report = merge_files(base, ours, theirs)
        print(
            f"files: base {count[0]:,} records, ours {count[1]:,} ({len(ours):,} bytes), "
            f"theirs {count[2]:,} ({len(theirs):,} bytes) -> merged "
            f"{merged.count(b'<!-- memory-record {'):,} records ({len(merged):,} bytes); "
            f"{len(report.diverged)} diverged"
        )
        paths = {name: root / name for name in ("O", "A", "B")}
        for name, data in (("O", base), ("A", ours), ("B", theirs)):
            paths[name].write_bytes(data)
        workspace = root / "target"
        (workspace / "memory").mkdir(parents=True)
        target = RecordStore(workspace, record_key=RecordKey(root / "key"))

        def reset_ours() -> None:
            paths["A"].write_bytes(ours)

        def reset_store() -> None:
            (workspace / "memory" / "records.md").write_bytes(ours)

        rows: list[tuple[str, float, float | None]] = []
        wall, cpu = timed(args.repeat, lambda: merge_files(base, ours, theirs))
        rows.append(("merge_files (three-way, in process)", wall, cpu))
        wall, cpu = timed(args.repeat, lambda: merge_files(b"", ours, theirs))
        rows.append(("merge_files (no base: a conflict copy)", wall, cpu))
        wall, cpu = timed(args.repeat, lambda: target.merge(theirs, base), reset_store)
        rows.append(("RecordStore.merge (locked store write)", wall, cpu))
        driver = [MEMQUILL, "merge", *(str(paths[n]) for n in ("O", "A", "B"))]
        rows.append(
            (
                "memquill merge %O %A %B (new process)",
                child_wall(args.repeat, driver, reset_ours),
                None,
            )
        )
        imports = [sys.executable, "-c", "import memquill.cli"]
        rows.append(
            (
                "  of which: start-up and imports",
                child_wall(args.repeat, imports, reset_ours),
                None,
            )
        )
        noop = [sys.executable, "-c", "pass"]
        rows.append(
            (
                "  baseline: python -c pass (start-up)",
                child_wall(args.repeat, noop, reset_ours),
                None,
            )
        )
        if shutil.which("git"):
            git = ["git", "merge-file", "-p", str(paths["A"]), str(paths["O"]), str(paths["B"])]
            rows.append(
                (
                    "  baseline: git merge-file (markers)",
                    child_wall(args.repeat, git, reset_ours),
                    None,
                )
            )
            union = [*git[:2], "--union", *git[2:]]
            rows.append(
                (
                    "  baseline: git merge-file --union",
                    child_wall(args.repeat, union, reset_ours),
                    None,
                )
            )
        print(f"\n{'median of ' + str(args.repeat):<42} {'wall ms':>10} {'cpu ms':>10}")
        for name, wall, cpu in rows:
            cpu_text = f"{cpu * 1000:10.1f}" if cpu is not None else f"{'':>10}"
            print(f"{name:<42} {wall * 1000:10.1f} {cpu_text}")
    print(f"\nload after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
