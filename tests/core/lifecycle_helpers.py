"""Shared pieces of the extraction tests: a scripted extractor, transcripts, a wired Extraction.

Everything is real: a workspace folder, the ledger file, the records store, a JSONL transcript
as the message source, and the auxiliary runner with a private state folder and a hand-moved
clock. Only the model is scripted.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.core.enhance_helpers import Clock

from memquill import MemorySession, Record
from memquill.enhance import ModelIdentity, Prompt
from memquill.enhance._runner import AuxiliaryRunner
from memquill.lifecycle import Extraction, TranscriptSource, committed_turns
from memquill.lifecycle._host import SessionGate, always_ready
from memquill.lifecycle._ledger import Job, LedgerFile

Answer = str | BaseException | Callable[[Prompt], "str | Awaitable[str]"]

USERS = (
    "I moved to Lisbon in March and I work as a marine biologist.",
    "My daughter Ana starts school in September.",
    "Please call me Joana, not Jo.",
)
REPLIES = ("Welcome to Lisbon!", "Good luck to Ana.", "Noted, Joana.")


@dataclass
class ExtractModel:
    """A text model answering from a list; the last answer repeats. Counts its calls."""

    answers: list[Answer]
    key: str = "key-1"
    prompts: list[Prompt] = field(default_factory=list[Prompt])

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity("custom", "extractor", self.key.encode())

    @property
    def calls(self) -> int:
        return len(self.prompts)

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        self.prompts.append(prompt)
        answer = self.answers[min(len(self.prompts), len(self.answers)) - 1]
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            result = answer(prompt)
            return await result if inspect.isawaitable(result) else result
        return answer

    def turns_seen(self, call: int = -1) -> list[dict[str, Any]]:
        return json.loads(self.prompts[call].user)["turns"]


def fact(message_id: str, content: str, evidence: str) -> dict[str, str]:
    return {"messageId": message_id, "content": content, "evidence": evidence}


def answer(*facts: dict[str, str]) -> str:
    return json.dumps(list(facts))


GOOD = answer(
    fact("u1", "The user lives in Lisbon since March.", "I moved to Lisbon in March"),
    fact("u2", "The user's daughter Ana starts school in September.", "Ana starts school"),
    fact("u3", "The user wants to be called Joana.", "call me Joana"),
)


def write_transcript(
    path: Path,
    users: Sequence[str] = USERS,
    replies: Sequence[str] = REPLIES,
    *,
    start: int = 1,
    extra: Sequence[dict[str, Any]] = (),
    append: bool = False,
) -> Path:
    lines: list[dict[str, Any]] = []
    for offset, (user, reply) in enumerate(zip(users, replies, strict=True)):
        number = start + offset
        lines.append({"id": f"u{number}", "role": "user", "content": user})
        lines.append({"id": f"a{number}", "role": "assistant", "content": reply})
    lines.extend(extra)
    with path.open("a" if append else "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)
    return path


@dataclass
class Setup:
    """A workspace, a transcript source and a clock, and Extractions built on them."""

    root: Path
    clock: Clock = field(default_factory=Clock)

    @property
    def workspace(self) -> Path:
        return self.root / "ws"

    @property
    def transcript(self) -> Path:
        return self.root / "chat.jsonl"

    @property
    def state(self) -> Path:
        return self.root / "state"

    def source(self) -> TranscriptSource:
        return TranscriptSource(self.transcript, "s1")

    def extraction(
        self,
        model: ExtractModel | None,
        *,
        gate: SessionGate = always_ready,
        runner: AuxiliaryRunner | None = None,
        source: Any = None,
    ) -> Extraction:
        runner = runner or AuxiliaryRunner(state_dir=self.state, clock=self.clock)
        return Extraction(
            MemorySession(self.workspace),
            source or self.source(),
            model=model,
            gate=gate,
            runner=runner,
            clock=self.clock,
        )

    def record_all(self, extraction: Extraction) -> int:
        source = self.source()
        turns = committed_turns(source.session_id, source.read())
        return sum(extraction.enqueue(turn) for turn in turns)

    def ledger(self) -> LedgerFile:
        return LedgerFile.of(self.workspace)

    def jobs(self) -> list[Job]:
        return self.ledger().read().jobs

    def job(self) -> Job:
        (job,) = self.jobs()
        return job

    def records(self, *, active: bool = True) -> list[Record]:
        records = MemorySession(self.workspace).store.snapshot().records
        return [r for r in records if r.status == "active" or not active]


def new_setup(tmp_path: Path) -> Setup:
    setup = Setup(tmp_path)
    setup.workspace.mkdir(parents=True)
    write_transcript(setup.transcript)
    return setup
