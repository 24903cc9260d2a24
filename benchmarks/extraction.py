"""Automatic extraction speed: what recording a turn costs, and a pass over 100 pending jobs.

Usage::

    uv run python benchmarks/extraction.py [--turns 1000] [--samples 300] [--jobs 100] [--dir DIR]

Scenarios (each in a fresh workspace under ``--dir``, default a temporary folder):

* ``enqueue``: the cost of recording one committed turn (``Extraction.enqueue``) when the ledger
  already holds 0, ``--turns`` (default 1,000; the target is <= 2 ms p50 there) and 4,500
  turns. Every call is a full ledger change: kernel lock, read and validate the ledger, count
  the turn (every third closes a job), encode, staged write, fsync, rename, folder fsync. The
  baseline beside it is a bare durable rewrite of the same bytes (write, fsync, rename, folder
  fsync: no lock, no read, no validation), the floor any crash-safe ledger pays.
* ``pass``: ``--jobs`` pending jobs of three turns each, processed by ``Extraction.aresume``
  with an instant scripted model that returns one fact per turn (passes make at most three
  calls each, so it takes ceil(jobs / 3) passes): total time and time per job. The baseline
  beside it is the floor of the same work without a ledger: for each job, read the transcript,
  ask the same model, validate, and save the facts through the write path.

Timings depend on the disk (fsync) and the machine: compare runs on one machine only. This is a
measurement, never a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from memquill import MemorySession, WriteSource
from memquill.enhance import ModelIdentity, Prompt
from memquill.enhance._runner import AuxiliaryRunner
from memquill.foundation.atomic import atomic_write
from memquill.lifecycle import (
    CommittedTurn,
    Extraction,
    RecordedMessages,
    TranscriptSource,
    committed_turns,
)
from memquill.lifecycle._ledger import LedgerFile, encode_ledger
from memquill.lifecycle._prompt import cut_turns, extraction_prompt, parse_facts
from memquill.store._results import Candidate
from memquill.tools._writes import save_candidates


class InstantModel:
    """Answers at once with one fact per turn, each quoting the user's first four words."""

    identity = ModelIdentity("custom", "instant", b"bench")

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        turns = json.loads(prompt.user)["turns"]
        return json.dumps(
            [
                {
                    "messageId": turn["messageId"],
                    "content": "The user said: " + turn["user"],
                    "evidence": " ".join(turn["user"].split()[:4]),
                }
                for turn in turns
            ]
        )


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _turn(session: str, number: int) -> CommittedTurn:
    return CommittedTurn(session, f"u{number}", f"a{number}", user_text="I like green tea.")


def enqueue_scenario(root: Path, existing: int, samples: int) -> dict[str, float]:
    workspace = root / f"enqueue-{existing}"
    workspace.mkdir()
    extraction = Extraction(MemorySession(workspace), RecordedMessages())
    for number in range(existing):
        extraction.enqueue(_turn(f"s{number % 50}", number))
    latencies: list[float] = []
    for number in range(existing, existing + samples):
        start = time.perf_counter()
        extraction.enqueue(_turn(f"s{number % 50}", number))
        latencies.append((time.perf_counter() - start) * 1000)
    ledger = LedgerFile.of(workspace)
    data = encode_ledger(ledger.read())
    baseline: list[float] = []
    for _ in range(samples):
        start = time.perf_counter()
        atomic_write(ledger.directory / "bench.json", data)
        baseline.append((time.perf_counter() - start) * 1000)
    return {
        "p50": statistics.median(latencies),
        "p95": percentile(latencies, 0.95),
        "bytes": len(data),
        "baseline_p50": statistics.median(baseline),
        "baseline_p95": percentile(baseline, 0.95),
    }


def _transcript(path: Path, turns: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for number in range(turns):
            user = f"I keep note number {number} about my garden and my bicycle."
            handle.write(json.dumps({"id": f"u{number}", "role": "user", "content": user}) + "\n")
            reply = {"id": f"a{number}", "role": "assistant", "content": "Noted."}
            handle.write(json.dumps(reply) + "\n")


async def pass_scenario(root: Path, jobs: int) -> dict[str, float]:
    workspace = root / "pass"
    workspace.mkdir()
    transcript = root / "pass.jsonl"
    _transcript(transcript, jobs * 3)
    source = TranscriptSource(transcript, "s1")
    runner = AuxiliaryRunner(state_dir=root / "state-pass")
    extraction = Extraction(MemorySession(workspace), source, model=InstantModel(), runner=runner)
    for turn in committed_turns("s1", source.read()):
        extraction.enqueue(turn)
    start = time.perf_counter()
    passes = calls = 0
    while True:
        report = await extraction.aresume()
        passes += 1
        calls += report.calls
        if not report.calls:
            break
    total = time.perf_counter() - start
    done = sum(job.status == "completed" for job in LedgerFile.of(workspace).read().jobs)

    baseline_ws = root / "baseline"
    baseline_ws.mkdir()
    session = MemorySession(baseline_ws, "s1")
    model = InstantModel()
    start = time.perf_counter()
    for index in range(jobs):
        messages = source.read()[index * 6 : index * 6 + 6]
        turns = cut_turns(
            [(m.id, m.text, r.text) for m, r in zip(messages[::2], messages[1::2], strict=True)], 3
        )
        facts = parse_facts(await model.generate(extraction_prompt(turns), max_tokens=1000), turns)
        candidates = [
            Candidate(
                fact.content,
                WriteSource(
                    "conversation", session_id="s1", message_id=fact.message_id, role="user"
                ).metadata(),
                f"baseline-{index}:{i}",
            )
            for i, fact in enumerate(facts)
        ]
        save_candidates(session, candidates)
    baseline = time.perf_counter() - start
    return {
        "jobs": jobs,
        "completed": done,
        "passes": passes,
        "calls": calls,
        "total_s": total,
        "per_job_ms": total / jobs * 1000,
        "baseline_s": baseline,
        "baseline_per_job_ms": baseline / jobs * 1000,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000, help="turns already recorded")
    parser.add_argument("--samples", type=int, default=300, help="timed enqueues per size")
    parser.add_argument("--jobs", type=int, default=100, help="pending jobs in the pass")
    parser.add_argument("--dir", type=Path, help="where workspaces go (default: a temp folder)")
    options = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="memquill-extraction-", dir=options.dir))
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"# extraction benchmark: {python}, {platform.system()} {platform.machine()}, in {root}")
    print("\n## enqueue (ms per committed turn; baseline: bare durable rewrite of the ledger)")
    header = ("turns in ledger", "p50", "p95", "ledger KiB", "base p50", "base p95")
    print("{:>16} {:>8} {:>8} {:>11} {:>9} {:>9}".format(*header))
    for existing in sorted({0, options.turns, 4500}):
        row = enqueue_scenario(root, existing, options.samples)
        cells = (row["p50"], row["p95"], row["bytes"] / 1024, row["baseline_p50"])
        print(
            "{:>16} {:>8.3f} {:>8.3f} {:>11.1f} {:>9.3f} {:>9.3f}".format(
                existing, *cells, row["baseline_p95"]
            )
        )
    print(f"\n## a pass over {options.jobs} pending jobs (instant scripted model)")
    row = asyncio.run(pass_scenario(root, options.jobs))
    done = f"completed {row['completed']:.0f}/{row['jobs']:.0f} jobs in {row['passes']:.0f} passes"
    spent = f"{row['total_s']:.2f} s ({row['per_job_ms']:.1f} ms/job)"
    print(f"{done}, {row['calls']:.0f} model calls: {spent}")
    baseline = f"{row['baseline_s']:.2f} s ({row['baseline_per_job_ms']:.1f} ms/job)"
    print(f"baseline (no ledger: read, ask, validate, save): {baseline}")


if __name__ == "__main__":
    main()
