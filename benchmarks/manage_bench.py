"""Management page speed: what a person waits for, by store size, beside the store's own work.

Usage::

    uv run python benchmarks/manage_bench.py [--seed 7] [--repeat 30] [--dir DIR]

For a store of 10 records, 1,000 records, and 120 records of 16,000 characters (about 93 % of
the 2 MiB bound), through the ASGI app in process (Starlette's test client; no sockets):

* ``GET /api/memory`` (every record with provenance, the doctor's report, the jobs status) and
  ``GET /`` (the same, rendered as the page), beside the baseline: ``RecordStore.snapshot()``
  plus ``RecordStore.doctor()`` called directly, which is the file work both must do;
* ``GET /?q=…`` (the page with a search through the tools' query engine; the first search
  pays for analysing the records and is reported apart);
* ``POST remember`` (a full store transaction), beside ``snapshot()`` + ``RecordStore.save``
  called directly;
* ``snapshot()`` and ``doctor()`` alone, to show where the time of a ``GET`` goes.

Median and 95th percentile in milliseconds. Timings depend on the disk (fsync) and the
machine: compare runs on one machine only. This is a measurement, never a test.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from starlette.testclient import TestClient

from memquill import open_session
from memquill.manage import Backend, create_app
from memquill.store._results import Candidate
from memquill.store._store import RecordStore

_VOCABULARY = (
    "memory project deadline prefers tabs spaces python release review meeting tuesday coffee "
    "design store record lock revision window editor keyboard layout theme deploy staging"
)
WORDS = tuple(_VOCABULARY.split())
ORIGIN = "http://127.0.0.1:8765"


def _fact(rng: random.Random, units: int) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < units:
        words.append(rng.choice(WORDS))
    return " ".join(words)[:units]


def _fill(workspace: Path, count: int, units: int, rng: random.Random) -> None:
    store = RecordStore(workspace)
    for start in range(0, count, 40):
        batch = [
            Candidate(_fact(rng, units), {"kind": "manual"}, f"k{i}")
            for i in range(start, min(count, start + 40))
        ]
        store.save(batch)


def _times(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    samples: list[float] = []
    for _ in range(repeat):
        began = time.perf_counter()
        call()
        samples.append((time.perf_counter() - began) * 1000)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.95))]


def _row(name: str, figures: tuple[float, float], baseline: tuple[float, float] | None) -> str:
    base = f"{baseline[0]:9.2f} {baseline[1]:9.2f}" if baseline else f"{'':>19}"
    return f"  {name:<22} {figures[0]:9.2f} {figures[1]:9.2f}   {base}"


def _scenario(label: str, workspace: Path, repeat: int) -> None:
    store = RecordStore(workspace)
    client = TestClient(
        create_app(Backend.open(open_session(workspace)), token=None), base_url=ORIGIN
    )
    print(f"{label} ({store.snapshot().size_bytes:,} bytes)")
    base = _times(lambda: (store.snapshot(), store.doctor()), repeat)
    print(_row("snapshot() alone", _times(store.snapshot, repeat), None))
    print(_row("doctor() alone", _times(store.doctor, repeat), None))
    print(_row("GET /api/memory", _times(lambda: client.get("/api/memory"), repeat), base))
    print(_row("GET / (page)", _times(lambda: client.get("/"), repeat), base))
    print(_row("GET /?q= (first)", _times(lambda: client.get("/?q=deploy+staging"), 1), None))
    print(_row("GET /?q= (warm)", _times(lambda: client.get("/?q=deploy+staging"), repeat), None))

    def post() -> None:
        body = {
            "action": "remember",
            "content": "bench fact " + uuid.uuid4().hex,
            "expectedRevision": store.snapshot().revision,
            "idempotencyKey": uuid.uuid4().hex,
        }
        response = client.post("/api/memory", json=body, headers={"Origin": ORIGIN})
        assert response.status_code == 200, response.text

    def direct() -> None:
        store.snapshot()  # the page's caller reads the revision first too
        fact = "bench fact " + uuid.uuid4().hex
        store.save([Candidate(fact, {"kind": "manual"}, uuid.uuid4().hex)])

    print(_row("POST remember", _times(post, repeat), _times(direct, repeat)))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    root = Path(args.dir or tempfile.mkdtemp(prefix="memquill-manage-bench-"))
    print(f"{'scenario':<24} {'median':>9} {'p95':>9}   {'base med':>9} {'base p95':>9}  (ms)")
    for label, count, units in (
        ("10 records", 10, 80),
        ("1,000 records", 1000, 80),
        ("120 x 16,000 chars", 120, 16_000),
    ):
        workspace = root / f"ws-{count}-{units}"
        workspace.mkdir(parents=True)
        _fill(workspace, count, units, rng)
        _scenario(label, workspace, args.repeat)


if __name__ == "__main__":
    main()
