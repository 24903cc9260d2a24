"""The cost of optional re-ranking: the enhanced ``memory_search`` path beside the plain one.

Usage::

    .venv/bin/python benchmarks/rerank.py [--notes 300] [--runs 200] [--timeouts 3] [--dir DIR]

What it does:

* builds a workspace of ``--notes`` generated notes that all mention the query's words, so
  every search has the full 20 keyword candidates a model may reorder;
* baseline: ``memory_search`` through the core's tools with no model, ``--runs`` times after a
  warm-up (the document cache is warm, as in a long-lived server);
* enhanced: the same searches with an instant model (it answers a valid permutation of the 20
  candidates at once), so the figure is memquill's own overhead: identity and install-key
  read, receipt check, the prompt, the hop to the call loop and back, the 3-second budget,
  validation, reordering. Measured for the synchronous path (the blocking bridge a LangChain
  ``tool.invoke`` takes) and the async path (``ainvoke`` on the caller's loop; the model call
  runs on memquill's call loop either way);
* timeout path: a model that never answers, ``--timeouts`` times with the real 3-second
  timeout; the worst wall time is the figure (the search must answer right after 3 s).

Targets (issue 15): enhanced overhead <= 1 ms over plain search at 20 candidates; timeout path
<= 3.05 s worst case. Timings depend on the machine; compare runs on one machine only. This is
a measurement, never a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memquill import MemorySession, MemoryToolset
from memquill.enhance import ModelIdentity, ModelRanker, Prompt
from memquill.enhance._runner import AuxiliaryRunner

QUERY = {"query": "saffron paella harbour", "limit": 5}
Pairs = tuple[list[float], list[float]]
_WORDS = ("tide", "lantern", "copper", "meadow", "ledger", "violet", "anchor", "pepper", "orbit")


class InstantModel:
    """Answers every rerank at once with the candidates reversed (a valid permutation)."""

    def __init__(self) -> None:
        self.identity = ModelIdentity("custom", "instant", b"bench-key")

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        count = len(json.loads(prompt.user)["candidates"])
        return json.dumps(list(range(count - 1, -1, -1)))


class HangingModel:
    """Never answers (until cancelled)."""

    def __init__(self) -> None:
        self.identity = ModelIdentity("custom", "hanging", b"bench-key")

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        await asyncio.Event().wait()
        return ""


def build(root: Path, notes: int, seed: int) -> None:
    rng = random.Random(seed)
    for index in range(notes):
        filler = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 120)))
        text = f"# Note {index}\n\nsaffron paella by the harbour. {filler}\n"
        (root / f"note-{index:04d}.md").write_text(text, encoding="utf-8")


def paired(plain: Callable[[], object], ranked: Callable[[], object], runs: int) -> Pairs:
    """Alternate the two calls, so machine noise and drift fall on both alike."""
    plain()  # warm-up: caches, the bridge loop, the install key
    ranked()
    pairs: Pairs = ([], [])
    for _ in range(runs):
        for samples, call in zip(pairs, (plain, ranked), strict=True):
            started = time.perf_counter()
            call()
            samples.append(time.perf_counter() - started)
    return pairs


def paired_async(plain: MemoryToolset, ranked: MemoryToolset, runs: int) -> Pairs:
    """:func:`paired` for ``ainvoke`` on one event loop (the baseline is plain ``ainvoke``)."""

    async def main() -> Pairs:
        tools = (plain["memory_search"], ranked["memory_search"])
        for tool in tools:
            await tool.ainvoke(QUERY)
        pairs: Pairs = ([], [])
        for _ in range(runs):
            for samples, tool in zip(pairs, tools, strict=True):
                started = time.perf_counter()
                await tool.ainvoke(QUERY)
                samples.append(time.perf_counter() - started)
        return pairs

    return asyncio.run(main())


def report(title: str, pairs: Pairs) -> None:
    plain, ranked = pairs
    overhead = statistics.median(r - p for p, r in zip(plain, ranked, strict=True)) * 1000
    print(f"  {title}")
    print(f"    plain search (baseline)   median {statistics.median(plain) * 1000:8.3f} ms")
    print(f"    with an instant model     median {statistics.median(ranked) * 1000:8.3f} ms")
    print(f"    overhead (median of pairs)       {overhead:8.3f} ms   (target <= 1 ms)")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--timeouts", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", type=Path)
    args = parser.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="memquill-rerank-bench-"))
    root = base / "workspace"
    root.mkdir(parents=True, exist_ok=True)
    build(root, args.notes, args.seed)
    runner = AuxiliaryRunner(state_dir=base / "model-state")

    plain_session = MemorySession(root, "bench", "read")
    plain = MemoryToolset(plain_session)
    wide = plain.call("memory_search", {**QUERY, "limit": 20}).structured
    assert wide is not None and len(wide["hits"]) == 20, "the workspace needs 20 candidates"
    ranked = MemoryToolset(plain_session.with_ranker(ModelRanker(InstantModel(), runner=runner)))
    shown = ranked.call("memory_search", QUERY)
    assert shown.structured is not None and shown.structured["reranked"], shown.text[:200]

    print(f"memquill rerank benchmark: {args.notes} notes, 20 candidates, limit 5")
    print(f"  python {platform.python_version()} on {platform.platform()}")
    sync = paired(
        lambda: plain.call("memory_search", QUERY),
        lambda: ranked.call("memory_search", QUERY),
        args.runs,
    )
    report("sync: tool.invoke (the blocking bridge for the model call)", sync)
    asynchronous = paired_async(plain, ranked, args.runs)
    report("async: ainvoke (the caller's loop; the model on the call loop)", asynchronous)

    hanging = MemoryToolset(plain_session.with_ranker(ModelRanker(HangingModel(), runner=runner)))
    walls: list[float] = []
    for attempt in range(args.timeouts):
        # A new scope per attempt: the previous timed-out call may still be cancelling.
        scoped = MemoryToolset(hanging.session.with_session_id(f"bench-timeout-{attempt}"))
        started = time.perf_counter()
        result = scoped.call("memory_search", QUERY)
        walls.append(time.perf_counter() - started)
        assert result.text.startswith("Memory ranking failed: timeout."), result.text[:120]
    print(
        f"  {'timeout path (model never answers)':<34} worst {max(walls):.3f} s   "
        f"best {min(walls):.3f} s over {len(walls)} runs (target <= 3.05 s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
