"""Helpers of the search-index tests: generated workspaces, and indexed vs full-scan answers."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Final, TypedDict

from tests.core.query_helpers import NOW, ReadTools, remember, write

from memquill.index._search_index import IndexSearcher
from memquill.query import MemoryQuery
from memquill.query._rank import RankParams

WORDS: Final = (
    *("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"),
    *("juliet", "kilo", "lima", "mike", "paint", "painting", "painted", "caroline"),
    *("think", "pierogi", "farmer", "cheese", "July", "March"),
)
FOLDERS: Final = ("", "a", "b/c", "memory/daily", "daily", "deep/er/still")


def note_text(rng: random.Random) -> str:
    """A note of random words, with frontmatter, headings, tags, CJK and long sections."""
    lines: list[str] = []
    if rng.random() < 0.3:
        lines.append(f"---\ntags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]\n---")
    if rng.random() < 0.5:
        lines.append(f"# {' '.join(rng.choices(WORDS, k=2))}")
    for _ in range(rng.randint(0, 30)):
        if rng.random() < 0.1:
            lines.append(f"## {rng.choice(WORDS)} #{rng.choice(WORDS)}")
        extra = " 日本語のメモ" if rng.random() < 0.05 else ""
        lines.append(" ".join(rng.choices(WORDS, k=rng.randint(1, 60))) + extra)
    return "\n".join(lines)


def note_path(rng: random.Random, index: int) -> str:
    folder = rng.choice(FOLDERS)
    day = f"2026-0{rng.randint(1, 9)}-{rng.randint(10, 28)}.md"
    name = day if rng.random() < 0.3 else f"n{index}.md"
    return f"{folder}/{name}" if folder else name


def populate(root: Path, rng: random.Random, count: int) -> None:
    for index in range(count):
        write(root, note_path(rng, index), note_text(rng))


def mutate(root: Path, rng: random.Random, step: int) -> None:
    """Edit, delete, rename or add a few notes; every edit changes the file's size."""
    notes = sorted(path for path in root.rglob("*.md") if "memory/records" not in str(path))
    for turn in range(rng.randint(1, 4)):
        choice = rng.random()
        if not notes or choice < 0.25:
            write(root, note_path(rng, 1000 * step + turn), note_text(rng))
            continue
        path = rng.choice(notes)
        if not path.exists():
            continue
        if choice < 0.55:
            path.write_text(path.read_text("utf-8") + "\n" + " ".join(rng.choices(WORDS, k=9)))
        elif choice < 0.7:
            path.unlink()
        elif choice < 0.85:
            target = path.with_name("moved-" + path.name)
            if not target.exists():
                path.rename(target)
        else:
            remember(root, f"the {rng.choice(WORDS)} fact number {step}-{turn}")


def age(root: Path) -> None:
    """Move every note's mtime into the past (ctime stays now: identities still change)."""
    past = time.time_ns() - 10 * 10**9
    for path in root.rglob("*.md"):
        os.utime(path, ns=(past, past))


def reference(root: Path, params: RankParams | None = None) -> ReadTools:
    """The read tools over the full scan, with no cache at all."""
    return ReadTools(MemoryQuery(root, now=lambda: NOW, cache=False, params=params))


def indexed(root: Path, searcher: IndexSearcher, params: RankParams | None = None) -> ReadTools:
    """The read tools ranking through ``searcher``."""
    return ReadTools(MemoryQuery(root, now=lambda: NOW, params=params, searcher=searcher))


class SearchArguments(TypedDict):
    """The arguments of ``ReadTools.search`` a random query sets."""

    query: str
    tags: list[str]
    file_type: str
    limit: int


def queries(rng: random.Random, count: int) -> list[SearchArguments]:
    """Search arguments: words, months, filters, tags and limits."""
    found: list[SearchArguments] = []
    for _ in range(count):
        words = " ".join(rng.sample(WORDS, rng.randint(1, 4)))
        found.append(
            {
                "query": words + rng.choice(["", " in March 2026", " July", " 日本"]),
                "tags": rng.choice([[], [], [rng.choice(WORDS)]]),
                "file_type": rng.choice(["all", "all", "daily", "notes", "longterm"]),
                "limit": rng.choice([1, 5, 20]),
            }
        )
    return found
