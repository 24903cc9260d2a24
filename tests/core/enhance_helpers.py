"""Shared pieces of the model-assistance tests: a clock, a runner in a private state folder."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from memquill.enhance import AuxiliaryRequest, AuxiliaryResult, ModelIdentity, Prompt, TextModel
from memquill.enhance._model import Scene
from memquill.enhance._runner import AuxiliaryRunner
from memquill.enhance._telemetry import Telemetry


class Signal:
    """A flag one side sets and the other awaits, from any thread: a model runs on memquill's
    call loop (its own thread), not on the test's loop, so an ``asyncio.Event`` cannot be
    shared between them."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not self._event.is_set():
            if time.monotonic() > deadline:
                raise TimeoutError("the signal never came")
            await asyncio.sleep(0.005)


@dataclass
class Clock:
    """A wall clock tests move by hand."""

    now: float = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_runner(
    state: Path, clock: Clock | None = None, telemetry: Telemetry | None = None, **options: int
) -> AuxiliaryRunner:
    return AuxiliaryRunner(state_dir=state, clock=clock or Clock(), telemetry=telemetry, **options)


async def ask(
    runner: AuxiliaryRunner,
    model: TextModel,
    scope: str = "scope-a",
    scene: Scene = "memory_rerank",
) -> AuxiliaryResult:
    return await runner.run(AuxiliaryRequest(scene, scope, model, Prompt("sys", "user"), 300))


@dataclass
class FailingModel:
    """A model that raises what the test gives it, counting calls."""

    error: BaseException | None
    key: str = "key-1"
    answer: str = "[1, 0]"
    calls: int = 0
    seen: list[Prompt] = field(default_factory=list[Prompt])

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity("custom", "failing", self.key.encode())

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        self.calls += 1
        self.seen.append(prompt)
        if self.error is not None:
            raise self.error
        return self.answer
