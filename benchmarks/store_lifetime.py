"""Lifetime runs (issue 33): a workspace's store never fills at the default 2 MiB capacity.

Runs, each in a fresh workspace, each write through the public store:

- ``update``: one keyed fact updated 100,000 times (~500-character values);
- ``facts``: 3,000 facts × 30 updates (chat-sized, ~100 characters);
- ``forget``: 10,000 remember→forget cycles with distinct texts;
- ``churn``: LangGraph ``MemquillStore``, 100 keys put and deleted in turn in one namespace,
  values differing per cycle, 50,000 cycles.

A step is one write (an update, a save) or, for ``forget`` and ``churn``, one cycle of two
writes (remember then forget, put then delete). Each run prints: steps done, final file size,
the compact tombstones' bytes (the ledger block) and what they hold, and wall/CPU per step
over the first and the last ``--window`` steps. ``--scale 0.1`` runs a tenth of every
count. A ``CapacityError`` stops the run and is reported (exit status 1).

    uv run python benchmarks/store_lifetime.py [--scale 1] [--only update,facts,forget,churn]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from memquill import RecordStore
from memquill.errors import CapacityError
from memquill.store._codec import encode_block
from memquill.store._results import Candidate
from memquill.store._tombstones import is_ledger, ledger_of

Write = Callable[[], None]


def _update(workspace: Path, count: int) -> Iterator[Write]:
    store = RecordStore(workspace)
    first = store.save([Candidate("profile 0 ".ljust(500, "p"), {"kind": "manual"}, "p0", "me")])
    current = [first.record_id or ""]

    def write(turn: int) -> Write:
        def run() -> None:
            text = f"profile {turn} ".ljust(500, "p")
            result = store.correct(current[0], text, store.snapshot().revision)
            current[0] = result.record_id or current[0]

        return run

    for turn in range(1, count):
        yield write(turn)


def _facts(workspace: Path, facts: int, updates: int) -> Iterator[Write]:
    store = RecordStore(workspace)
    ids: list[str] = []

    def save(n: int) -> Write:
        def run() -> None:
            text = f"fact {n}: the user mentioned item {n} ".ljust(100, ".")
            ids.append(store.save([Candidate(text, {"kind": "manual"}, f"f{n}")]).record_id or "")

        return run

    def correct(n: int, turn: int) -> Write:
        def run() -> None:
            text = f"fact {n} v{turn}: the user mentioned item {n} ".ljust(100, ".")
            result = store.correct(ids[n], text, store.snapshot().revision)
            ids[n] = result.record_id or ids[n]

        return run

    for n in range(facts):
        yield save(n)
    for turn in range(1, updates):
        for n in range(facts):
            yield correct(n, turn)


def _forget(workspace: Path, cycles: int) -> Iterator[Write]:
    store = RecordStore(workspace)

    def cycle(n: int) -> Write:
        def run() -> None:
            text = f"passing fact number {n}: remembered, then forgotten"
            saved = store.save([Candidate(text, {"kind": "tool", "sessionId": "s"}, f"k{n}")])
            store.revoke(saved.record_id or "", store.snapshot().revision)

        return run

    for n in range(cycles):
        yield cycle(n)


def _churn(workspace: Path, cycles: int) -> Iterator[Write]:
    from memquill_langchain import MemquillStore  # only this run needs the adapter

    store = MemquillStore(workspace)

    def cycle(n: int) -> Write:
        def run() -> None:
            key = f"key-{n % 100}"
            store.put(("churn",), key, {"text": f"value {n} for {key}"})
            store.delete(("churn",), key)

        return run

    for n in range(cycles):
        yield cycle(n)


def _records_file(workspace: Path) -> Path:
    found = sorted(workspace.rglob("records.md"))
    return found[0]


def _report(name: str, workspace: Path, writes: Iterator[Write], window: int) -> bool:
    timings: list[tuple[float, float]] = []
    failed = ""
    for write in writes:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            write()
        except CapacityError as error:
            failed = error.message
            break
        timings.append((time.perf_counter() - wall, time.process_time() - cpu))
    path = _records_file(workspace)
    records = RecordStore(path.parent.parent).snapshot().records
    ledger_bytes = sum(len(encode_block(r).encode()) for r in records if is_ledger(r))
    ledger = ledger_of(records)

    def per_write(part: list[tuple[float, float]]) -> str:
        if not part:
            return "-"
        wall = sum(t[0] for t in part) / len(part) * 1000
        cpu = sum(t[1] for t in part) / len(part) * 1000
        return f"{wall:.2f} ms wall / {cpu:.2f} ms CPU"

    print(f"== {name}")
    print(f"steps done        {len(timings):,}" + (f"  STOPPED: {failed}" if failed else ""))
    print(f"final file size   {path.stat().st_size:,} bytes, {len(records):,} records")
    print(
        f"compact ledger    {ledger_bytes:,} bytes: {len(ledger.roots):,} forgotten families, "
        f"{len(ledger.ops):,} op hashes, {len(ledger.sources):,} source keys, "
        f"{len(ledger.texts):,} text fingerprints"
    )
    print(f"first {window:,} steps   {per_write(timings[:window])}")
    print(f"last {window:,} steps    {per_write(timings[-window:])}")
    sys.stdout.flush()
    return not failed


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--only", default="update,facts,forget,churn")
    parser.add_argument("--window", type=int, default=500)
    args = parser.parse_args()

    def n(count: int) -> int:
        return max(1, int(count * args.scale))

    runs: dict[str, Callable[[Path], Iterator[Write]]] = {
        "update": lambda w: _update(w, n(100_000)),
        "facts": lambda w: _facts(w, n(3_000), 30),
        "forget": lambda w: _forget(w, n(10_000)),
        "churn": lambda w: _churn(w, n(50_000)),
    }
    ok = True
    for name in args.only.split(","):
        with tempfile.TemporaryDirectory() as folder:
            ok = (
                _report(
                    f"{name} (scale {args.scale})",
                    Path(folder),
                    runs[name](Path(folder)),
                    args.window,
                )
                and ok
            )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
