"""The fenced code blocks of the repository's Markdown, for tests that run what the docs show.

A block is named by its file, the heading it sits under and how it begins (60 characters, white
space collapsed: ``README.md § In Python: from memquill import MemoryToolset, open_session
session =``), with ``#2``, ``#3``, … when one section holds several blocks that begin alike.
That name survives edits elsewhere in the file, and says in a failure message which snippet is
meant.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_FENCE = re.compile(
    r"^(?P<indent>[ ]*)(?P<fence>`{3,})(?P<lang>[\w+-]*)[^\n]*\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_HEADING = re.compile(r"^#{1,6} (?P<title>.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block.

    Attributes:
        path: the file, relative to the repository root (POSIX form).
        line: the line of the opening fence (1-based).
        heading: the nearest heading above it (``""`` before the first).
        lang: the fence's info word (``python``, ``sh``, ``json``; ``""`` for none).
        text: the block's content, its list indentation removed, ending in a newline.
        key: the block's stable name (see the module docstring).
    """

    path: str
    line: int
    heading: str
    lang: str
    text: str
    key: str

    @property
    def first_line(self) -> str:
        return _first_line(self.text)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _opening(text: str, size: int = 60) -> str:
    """The block's first ``size`` characters, white space collapsed: enough to tell it apart."""
    return " ".join(text.split())[:size]


def blocks(path: str | Path) -> list[Block]:
    """Every fenced block of ``path`` (absolute, or relative to the repository root)."""
    file = path if isinstance(path, Path) and path.is_absolute() else ROOT / path
    text = file.read_text("utf-8")
    relative = file.relative_to(ROOT).as_posix()
    fences = list(_FENCE.finditer(text))
    inside = [(m.start(), m.end()) for m in fences]
    headings = [
        (m.start(), m.group("title"))
        for m in _HEADING.finditer(text)
        if not any(start <= m.start() < end for start, end in inside)
    ]
    found: list[Block] = []
    seen: Counter[str] = Counter()
    for match in fences:
        heading = next((t for at, t in reversed(headings) if at < match.start()), "")
        body = (
            textwrap.dedent(match.group("body")) if match.group("indent") else match.group("body")
        )
        key = f"{relative} § {heading}: {_opening(body)}"
        seen[key] += 1
        if seen[key] > 1:
            key = f"{key} #{seen[key]}"
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(relative, line, heading, match.group("lang"), body, key))
    return found


def documentation() -> Iterator[Path]:
    """The files whose snippets must run: the README and every page under ``docs/``."""
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").rglob("*.md"))


def find(path: str | Path, predicate: Callable[[Block], bool], what: str) -> Block:
    """The one block of ``path`` that ``predicate`` picks (``what`` describes it for errors)."""
    picked = [block for block in blocks(path) if predicate(block)]
    assert len(picked) == 1, f"{path}: expected one block ({what}), found {len(picked)}"
    return picked[0]
