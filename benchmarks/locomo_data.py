"""LoCoMo as memquill workspaces: loading, evidence normalising, and the three workspace kinds.

Used by ``retrieval_locomo.py``. The data set is CC BY-NC 4.0: it is read from where it lies
and never copied into the repository.

Each conversation becomes three workspaces:

- records: one managed record per turn (``"Speaker: text"``), saved through
  ``RecordStore.save`` in batches of at most 40; a hit is a turn.
- files: one ``YYYY-MM-DD.md`` per session date, one ``Speaker: text`` line per turn; a hit is
  a file.
- evidence: the same daily notes written one turn per line as
  ``- [<dia_id>] **<speaker>:** <text>`` (``bench-data/README.md``), so the text a search
  returns shows which turns it holds.
"""

from __future__ import annotations

import json
import random
import re
import sys
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memquill.errors import MemoryRecordError
from memquill.store._results import Candidate
from memquill.store._store import RecordStore


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    file: str  # the session's daily note name

    @property
    def line(self) -> str:
        return f"{self.speaker}: {self.text}"

    @property
    def tagged(self) -> str:
        return f"- [{self.dia_id}] **{self.speaker}:** {self.text}"


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    gold_turns: frozenset[str]
    gold_files: frozenset[str]


@dataclass
class Conversation:
    number: int
    turns: list[Turn]
    questions: list[Question]
    last_day: datetime
    file_of: dict[str, str]  # dia_id -> daily note name

    @property
    def clock(self) -> datetime:
        """The day after the last session: when a user would ask."""
        return self.last_day + timedelta(days=1)


@dataclass
class Prepared:
    conversation: Conversation
    records_root: Path
    record_ids: dict[str, str]  # record id -> dia_id
    files_root: Path
    evidence_root: Path


def load(path: Path) -> list[Conversation]:
    """Every conversation with normalised evidence (questions without evidence skipped)."""
    conversations: list[Conversation] = []
    for number, sample in enumerate(json.loads(path.read_text(encoding="utf-8")), 1):
        talk = sample["conversation"]
        turns: list[Turn] = []
        file_of: dict[str, str] = {}
        last = datetime(1970, 1, 1, tzinfo=UTC)
        session = 1
        while f"session_{session}" in talk:
            day = _session_day(talk[f"session_{session}_date_time"])
            last = max(last, day)
            name = f"{day:%Y-%m-%d}.md"
            for turn in talk[f"session_{session}"]:
                turns.append(Turn(turn["dia_id"], turn["speaker"], turn["text"], name))
                file_of[turn["dia_id"]] = name
            session += 1
        questions: list[Question] = []
        for qa in sample["qa"]:
            gold = frozenset(e for e in _evidence(qa.get("evidence", [])) if e in file_of)
            if gold:
                files = frozenset(file_of[e] for e in gold)
                questions.append(Question(qa["question"], qa["category"], gold, files))
        conversations.append(Conversation(number, turns, questions, last, file_of))
    return conversations


def _session_day(value: str) -> datetime:
    return datetime.strptime(value.split(" on ", 1)[1], "%d %B, %Y").replace(tzinfo=UTC)


def _evidence(raw: Iterable[str]) -> list[str]:
    ids: list[str] = []
    for item in raw:
        for part in re.split(r"[;\s]+", item.strip()):
            match = re.fullmatch(r"D:?(\d+):0*(\d+)", part)
            if match:
                ids.append(f"D{int(match[1])}:{int(match[2])}")
    return ids


def seed_record_ids(seed: int) -> None:
    """Make record ids (random UUIDs in the store) repeatable, so the figures are too.

    Equal scores are ordered by path, and a record's path holds its id: with random ids, ties
    among records land differently on every run (about +-0.003 of record-level recall).
    """
    ids = random.Random(seed)
    uuid.uuid4 = lambda: uuid.UUID(int=ids.getrandbits(128), version=4)


def record_workspace(root: Path, conversation: Conversation) -> dict[str, str]:
    """Save one record per turn; return record id -> dia_id."""
    store = RecordStore(root)
    ids: dict[str, str] = {}
    batch: list[tuple[str, str]] = []

    def flush() -> None:
        candidates = [Candidate(text, {"kind": "manual"}, dia) for dia, text in batch]
        try:
            result = store.save(candidates)
            ids.update(
                {rid: dia for rid, (dia, _) in zip(result.record_ids, batch, strict=True) if rid}
            )
        except MemoryRecordError:
            for dia, text in batch:  # one rejected turn must not drop its batch
                try:
                    single = store.save([Candidate(text, {"kind": "manual"}, dia)])
                except MemoryRecordError as error:
                    print(f"  skipped {dia}: {error.code}", file=sys.stderr)
                    continue
                if single.record_id:
                    ids[single.record_id] = dia
        batch.clear()

    for turn in conversation.turns:
        batch.append((turn.dia_id, turn.line))
        if len(batch) == 40:
            flush()
    if batch:
        flush()
    return ids


def daily_workspace(root: Path, conversation: Conversation, *, tagged: bool) -> None:
    """One daily note per session date, one turn per line."""
    lines: dict[str, list[str]] = defaultdict(list)
    for turn in conversation.turns:
        lines[turn.file].append(turn.tagged if tagged else turn.line)
    for name, body in lines.items():
        (root / name).write_text("\n".join(body) + "\n", encoding="utf-8")


def prepare(conversations: Sequence[Conversation], scratch: Path) -> list[Prepared]:
    prepared: list[Prepared] = []
    for conversation in conversations:
        roots = [scratch / f"{kind}-{conversation.number}" for kind in ("records", "files", "ev")]
        for root in roots:
            root.mkdir()
        ids = record_workspace(roots[0], conversation)
        daily_workspace(roots[1], conversation, tagged=False)
        daily_workspace(roots[2], conversation, tagged=True)
        prepared.append(Prepared(conversation, roots[0], ids, roots[1], roots[2]))
    return prepared
