"""What a Markdown note says about itself: frontmatter, headings, tags, wiki links, chunks.

The rules follow the spec (6.2) exactly, so a vault indexed here and by the original system
yields the same titles, tags and chunk start lines:

- YAML frontmatter only when the first line is ``---`` and a closing ``---`` line exists;
  ``tags:`` and ``aliases:`` take ``[a, b]``, a scalar, or a block list of ``- item`` lines.
- Headings are lines ``#{1,6} text``; the title is the first ``#`` heading.
- Inline tags (``#tag``, ASCII, after a line start or whitespace) are read outside fenced code
  blocks and never from heading lines.
- Chunks: sections start at heading lines; a section longer than 1200 UTF-16 units is cut into
  1200-unit windows advancing 1050 units, each with its 0-based start line.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from memquill.foundation.text import point_of, utf16_len

CHUNK_SIZE: Final = 1200
"""Chunk window, in UTF-16 units."""
CHUNK_OVERLAP: Final = 150
"""Units shared by consecutive windows of one long section."""
MAX_LINKS: Final = 20
"""Wiki links reported per ``get`` page."""

_HEADING_LINE: Final = re.compile(r"#{1,6}\s")
_HEADING: Final = re.compile(r"(#{1,6})\s+(.+)")
_HEADING_PREFIX: Final = re.compile(r"#{1,6}\s+")
_INLINE_TAG: Final = re.compile(r"#([a-zA-Z][a-zA-Z0-9_-]*)")
_FRONT_KEY: Final = re.compile(r"(\w+)\s*:\s*(.*)")
_FRONT_ITEM: Final = re.compile(r"\s*-\s+(.+)")
_INLINE_LIST: Final = re.compile(r"\[(.+)\]")
_WIKI_LINK: Final = re.compile(r"\[\[([^\]|]+)(?:\|[^\]]+)?\]\]")


@dataclass(frozen=True, slots=True)
class NoteMeta:
    """A note's metadata fields (each in document order, as written)."""

    title: str
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    headings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrieval unit of a note.

    Attributes:
        heading: the text of the section's heading ("" before the first heading).
        text: the chunk text (a section includes its heading line).
        start_line: 0-based line of the chunk's first character.
    """

    heading: str
    text: str
    start_line: int


def note_meta(content: str, path: str) -> NoteMeta:
    """Frontmatter tags and aliases, headings, title and inline tags of a note.

    Args:
        content: the note text.
        path: its workspace path; the title falls back to the file name (with extension).
    """
    tags, aliases = _frontmatter(content)
    headings: list[str] = []
    title = ""
    for start in _line_starts(content, "#"):
        end = content.find("\n", start)
        heading = _HEADING.fullmatch(content, start, len(content) if end < 0 else end)
        if heading is not None:
            text = heading.group(2).strip()
            headings.append(text)
            if not title and heading.group(1) == "#":
                title = text
    seen = set(tags)
    for tag in _inline_tags(content):
        if tag not in seen:
            seen.add(tag)
            tags.append(tag)
    return NoteMeta(title or path.rsplit("/", 1)[-1], tuple(tags), tuple(aliases), tuple(headings))


def chunk_markdown(content: str) -> tuple[Chunk, ...]:
    """Split a note into heading sections and 1200-unit windows (at least one chunk)."""
    chunks: list[Chunk] = []
    for heading, start, lines in _sections(content.split("\n")):
        text = "\n".join(lines)
        if utf16_len(text) <= CHUNK_SIZE:
            chunks.append(Chunk(heading, text, start))
        else:
            chunks.extend(_windows(heading, text, start))
    return tuple(chunks)


def heading_text(line: str) -> str | None:
    """The heading a line starts, as sections (and chunks) name it, or ``None``."""
    if line.startswith("#") and _HEADING_LINE.match(line):
        return _HEADING_PREFIX.sub("", line, count=1).strip()
    return None


def frontmatter_lines(lines: list[str]) -> int:
    """How many of a note's lines its YAML frontmatter takes (0 without one), as read above."""
    if len(lines) < 2 or lines[0].strip() != "---":
        return 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), -1)
    return end + 1 if end > 0 else 0


def wiki_links(text: str, limit: int = MAX_LINKS) -> tuple[str, ...]:
    """Targets of ``[[target]]`` and ``[[target|alias]]`` links (distinct, at most ``limit``)."""
    found = dict.fromkeys(match.group(1) for match in _WIKI_LINK.finditer(text))
    return tuple(found)[:limit]


def _frontmatter_block(content: str) -> list[str]:
    """The lines between a note's frontmatter fences (none without frontmatter): the lines
    :func:`frontmatter_lines` delimits, found without splitting the note into lines."""
    first_end = content.find("\n")
    if first_end < 0 or content[:first_end].strip() != "---":
        return []
    closing = _closing_line(content, first_end + 1)
    return content[first_end + 1 : closing - 1].split("\n") if closing > first_end + 1 else []


def _frontmatter(content: str) -> tuple[list[str], list[str]]:
    tags: list[str] = []
    aliases: list[str] = []
    key = ""
    for line in _frontmatter_block(content):
        pair = _FRONT_KEY.fullmatch(line)
        if pair is not None:
            key = pair.group(1)
            value = pair.group(2).strip()
            target = tags if key == "tags" else aliases if key == "aliases" else None
            if target is None:
                key = ""
                continue
            listed = _INLINE_LIST.fullmatch(value)
            if listed is not None:
                target.extend(_unquote(item.strip()) for item in listed.group(1).split(","))
                key = ""
            elif value:
                target.append(_unquote(value))
                key = ""
        elif key:
            item = _FRONT_ITEM.fullmatch(line)
            if item is None:
                key = ""
            else:
                (tags if key == "tags" else aliases).append(_unquote(item.group(1).strip()))
    return tags, aliases


def _closing_line(content: str, start: int) -> int:
    """Where the first line from offset ``start`` (a line's start) on that is ``---`` once
    stripped starts, or -1: only a line holding ``---`` can be one, so the note is not split
    into lines to find it."""
    at = start
    while (hit := content.find("---", at)) >= 0:
        begin = content.rfind("\n", 0, hit) + 1
        end = content.find("\n", hit)
        if content[begin : len(content) if end < 0 else end].strip() == "---":
            return begin
        if end < 0:
            break
        at = end + 1
    return -1


def _unquote(value: str) -> str:
    # One leading and one trailing quote go, as in the original reader.
    if value[:1] in ("'", '"'):
        value = value[1:]
    if value[-1:] in ("'", '"'):
        value = value[:-1]
    return value


def _inline_tags(content: str) -> list[str]:
    if "#" not in content:
        return []
    fences = list(_line_starts(content, "```"))
    tags: list[str] = []
    # A literal "#" lets the regex engine skip ahead fast; the "start of line or whitespace"
    # condition is checked by hand.
    for match in _INLINE_TAG.finditer(content):
        hash_at = match.start()
        if hash_at and not content[hash_at - 1].isspace():
            continue
        line_start = content.rfind("\n", 0, hash_at) + 1
        # A fence line toggles code and holds no tags; lines inside a fence hold none either.
        before = bisect_left(fences, line_start)
        if before % 2 == 1 or (before < len(fences) and fences[before] == line_start):
            continue
        line_end = content.find("\n", hash_at)
        line = content[line_start : None if line_end < 0 else line_end]
        if _HEADING_LINE.match(line):
            continue
        tags.append(match.group(1))
    return tags


def _line_starts(content: str, prefix: str) -> Iterator[int]:
    """Offsets of the lines that start with ``prefix``."""
    if content.startswith(prefix):
        yield 0
    marker = "\n" + prefix
    index = content.find(marker)
    while index >= 0:
        yield index + 1
        index = content.find(marker, index + 1)


def _sections(lines: list[str]) -> list[tuple[str, int, list[str]]]:
    sections: list[tuple[str, int, list[str]]] = []
    heading, start, current = "", 0, []
    for index, line in enumerate(lines):
        text = heading_text(line)
        if text is not None:
            if current:
                sections.append((heading, start, current))
            heading = text
            current, start = [line], index
        else:
            current.append(line)
    if current:
        sections.append((heading, start, current))
    return sections


def _windows(heading: str, text: str, first_line: int) -> list[Chunk]:
    return [
        Chunk(heading, text[begin:end], line)
        for line, begin, end in window_bounds(text, first_line)
    ]


def window_bounds(text: str, first_line: int) -> list[tuple[int, int, int]]:
    """The overlapping windows of a long section ``text`` that starts at line ``first_line``:
    each window's first line, and its start and end as indexes of ``text``."""
    # Window offsets are UTF-16 units; code points differ only after an astral character.
    point = point_of(text)
    total = utf16_len(text)
    bounds: list[tuple[int, int, int]] = []
    position, line = 0, first_line
    advance = CHUNK_SIZE - CHUNK_OVERLAP
    while position < total:
        end = min(position + CHUNK_SIZE, total)
        begin_point = point(position)
        bounds.append((line, begin_point, point(end)))
        if end >= total:
            break
        step_point = point(position + advance)
        line += text.count("\n", begin_point, step_point)
        position += advance
    return bounds
