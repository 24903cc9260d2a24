"""Budgets that hold: a model that blocks its thread is cut at the budget too.

An ``async def generate`` that calls ``time.sleep(10)`` held ``memory_search`` for 10 s (one that
awaited forever was cut at 3 s): it ran on the loop whose timer was meant to cut it. Now every
model call runs on a call loop of its own, so the search answers at the budget in keyword
order, the late answer is dropped, and the call counts as a timeout. Real workspaces, the
core's tools, real threads; the model is scripted. The elapsed bounds are generous correctness
checks (the machine is shared), not speed targets.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from tests.core.enhance_helpers import Signal, make_runner
from tests.core.query_helpers import NOW, write

from memquill import MemorySession, MemoryToolset
from memquill.enhance import AuxiliaryRequest, ModelIdentity, ModelRanker, Prompt, TextModel
from memquill.enhance._rerank import RerankCandidate, rerank
from memquill.enhance._runner import GRACE, MAX_STUCK, stuck_loops
from memquill.enhance._telemetry import ProviderEvent, Telemetry

NOTES = {
    "a.md": "# Alpha\n\nThe paella needs saffron and patience.\n",
    "b.md": "# Beta\n\nPaella pans are wide; saffron goes in early.\n",
    "c.md": "# Gamma\n\nA paella story with saffron threads, saffron rice, saffron everything.\n",
}
TIMEOUT_LINE = "Memory ranking failed: timeout. Using keyword order."


class Blocking:
    """A model whose ``async generate`` blocks its thread, as a synchronous client would."""

    identity = ModelIdentity("custom", "blocking", b"key")

    def __init__(self, seconds: float = 10.0, answer: str = "[2, 1, 0]") -> None:
        self.seconds = seconds
        self.answer = answer
        self.calls = 0
        self.finished = Signal()

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        self.calls += 1
        time.sleep(self.seconds)
        self.finished.set()
        return self.answer


def _tools(
    tmp_path: Path, model: TextModel | None, telemetry: Telemetry | None = None
) -> MemoryToolset:
    root = tmp_path / "ws"
    for name, text in NOTES.items():
        write(root, name, text)
    ranker = None
    if model is not None:
        runner = make_runner(tmp_path / "state", telemetry=telemetry)
        ranker = ModelRanker(model, runner=runner)
    return MemoryToolset(MemorySession(root, "s-1", "read", now=lambda: NOW, ranker=ranker))


def _keyword(tmp_path: Path) -> str:
    return _tools(tmp_path / "plain", None).call("memory_search", {"query": "paella"}).text


def test_a_blocking_model_is_cut_at_the_budget_for_a_sync_caller(tmp_path: Path) -> None:
    events: list[ProviderEvent] = []
    telemetry = Telemetry()
    telemetry.connect("test", events.append)
    model = Blocking()
    tools = _tools(tmp_path, model, telemetry)

    started = time.monotonic()
    result = tools.call("memory_search", {"query": "paella"})
    elapsed = time.monotonic() - started

    assert elapsed < 6.0, elapsed
    assert result.text == f"{TIMEOUT_LINE}\n\n{_keyword(tmp_path)}"
    assert [(e.scene, e.root_cause) for e in events] == [("memory_rerank", "timeout")]
    ranker = tools.session.ranker
    assert isinstance(ranker, ModelRanker)
    assert ranker.runner.status("memory_rerank", model).state == "in_flight"  # still blocked
    again = tools.call("memory_search", {"query": "paella"})  # no second call is stacked
    assert again.text.startswith("Memory ranking cooldown: in_flight.") and model.calls == 1


async def test_a_blocking_model_is_cut_at_the_budget_for_an_async_caller(tmp_path: Path) -> None:
    model = Blocking()
    tools = _tools(tmp_path, model)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.05)

    ticker = asyncio.ensure_future(tick())
    try:
        started = time.monotonic()
        result = await tools["memory_search"].ainvoke({"query": "paella"})
        elapsed = time.monotonic() - started
    finally:
        ticker.cancel()

    assert elapsed < 6.0, elapsed
    assert result.text == f"{TIMEOUT_LINE}\n\n{_keyword(tmp_path)}"
    assert ticks >= 10  # the caller's loop kept running while the model blocked its own


async def test_the_late_answer_is_dropped_and_counted_as_a_timeout(tmp_path: Path) -> None:
    model = Blocking(seconds=1.0, answer="[1, 0]")
    runner = make_runner(tmp_path / "state")
    candidates = (RerankCandidate("A", "alpha"), RerankCandidate("B", "beta"))

    outcome = await rerank(runner, model, scope="s", query="q", candidates=candidates, timeout=0.2)
    assert (outcome.order, outcome.notice) == (None, TIMEOUT_LINE)
    await model.finished.wait(10)
    await asyncio.sleep(0.1)  # the worker settles the abandoned call after it returns

    status = runner.status("memory_rerank", model, "s")
    assert (status.state, status.reason) == ("cooling_down", "timeout")
    later = await rerank(runner, model, scope="s", query="q", candidates=candidates, timeout=0.2)
    assert later.order is None and model.calls == 1  # the answer that came late never counted


async def test_a_call_never_queues_behind_a_loop_another_call_blocks(tmp_path: Path) -> None:
    release = threading.Event()

    class Holding(Blocking):
        async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
            self.calls += 1
            release.wait(60)  # blocks its call loop, well within its own (long) budget
            return "[]"

    class Instant(Blocking):
        identity = ModelIdentity("custom", "instant", b"key")

        async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
            return "[1, 0]"

    runner = make_runner(tmp_path / "state")
    holding = Holding()
    long_call = asyncio.ensure_future(
        runner.run(AuxiliaryRequest("memory_extract", "w", holding, Prompt("s", "u"), 10, 30.0))
    )
    try:
        while not holding.calls:
            await asyncio.sleep(0.01)
        await asyncio.sleep(GRACE + 0.5)  # the blocked loop has missed its beats by now
        candidates = (RerankCandidate("A", "alpha"), RerankCandidate("B", "beta"))
        outcome = await rerank(
            runner, Instant(), scope="s", query="q", candidates=candidates, timeout=2.0
        )
        assert outcome.order == (1, 0), outcome.notice  # answered on a fresh call loop
    finally:
        release.set()
    assert (await long_call).completed  # and the long call, once let go, still answered


async def test_abandoned_calls_hold_a_bounded_number_of_threads(tmp_path: Path) -> None:
    release = threading.Event()

    class Stuck(Blocking):
        async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
            self.calls += 1
            release.wait(60)  # blocks its thread until the test lets it go
            return "[0, 1]"

    model = Stuck()
    runner = make_runner(tmp_path / "state")
    candidates = (RerankCandidate("A", "alpha"), RerankCandidate("B", "beta"))
    most = 0
    try:
        for scope in range(4 * (MAX_STUCK + 2)):
            outcome = await rerank(
                runner, model, scope=f"s{scope}", query="q", candidates=candidates, timeout=0.1
            )
            assert outcome.notice == TIMEOUT_LINE
            most = max(most, _call_threads())
            await asyncio.sleep(GRACE / 4)
    finally:
        release.set()
    assert model.calls >= 2  # a stuck loop got no more calls: a new one took them
    assert most <= MAX_STUCK + 1  # and never more than MAX_STUCK stuck loops at once
    deadline = time.monotonic() + 30
    while (stuck_loops() or _call_threads() > 1) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert (stuck_loops(), _call_threads()) == (0, 1)  # the stuck loops ended with their calls


def _call_threads() -> int:
    return sum(thread.name == "memquill-model-call" for thread in threading.enumerate())
