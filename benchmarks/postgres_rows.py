"""A put on the PostgreSQL store at 1,000 and 10,000 records, or --sizes (schema v2: rows).

    uv run python benchmarks/postgres_rows.py            # starts a throwaway cluster
    uv run python benchmarks/postgres_rows.py --sizes 1000 50000
    PYTHONPATH=/path/to/older/src uv run python benchmarks/postgres_rows.py   # an older memquill

Fills a fresh workspace to each size (saves of 40 facts), then times 30 single saves from a
warm store (p50 and p95, ms), and one snapshot by a second store that catches up on one write.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from memquill import RecordStore
from memquill.store._results import Candidate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import postgres_cluster


def fact(tag: str) -> Candidate:
    return Candidate(f"the deploy window for service {tag} is Tuesday", {"kind": "manual"}, tag)


def measure(url: str, size: int) -> str:
    workspace = Path(tempfile.mkdtemp())
    location = f"{url}#workspace=bench-{uuid.uuid4().hex[:8]}"
    store = RecordStore(workspace, location=location)
    try:
        for start in range(0, size, 40):
            store.save([fact(f"fill-{n}") for n in range(start, min(size, start + 40))])
    except Exception as error:  # an older store refuses past its bound
        return f"{size:>6} records: refused while filling ({type(error).__name__})"
    other = RecordStore(workspace, location=location)
    other.snapshot()
    times: list[float] = []
    for n in range(30):
        started = time.perf_counter()
        store.save([fact(f"put-{n}")])
        times.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    other.snapshot()
    catch_up = (time.perf_counter() - started) * 1000
    times.sort()
    return (
        f"{size:>6} records: put p50 {statistics.median(times):.1f} ms, "
        f"p95 {times[int(len(times) * 0.95) - 1]:.1f} ms; "
        f"another host's read after 30 puts {catch_up:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="A put on the PostgreSQL store at each size.")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[1_000, 10_000], help="records per workspace"
    )
    sizes: list[int] = parser.parse_args().sizes
    cluster = postgres_cluster.start(Path(tempfile.mkdtemp(prefix="memquill-bench-")))
    try:
        for size in sizes:
            print(measure(cluster.url, size), flush=True)
    finally:
        postgres_cluster.stop(cluster.data, cluster.bindir)


if __name__ == "__main__":
    main()
