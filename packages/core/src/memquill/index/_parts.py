"""A note's chunks and the words of each, from one pass over the note.

The reference (:class:`memquill.query._documents.SearchDocument`) folds and tokenizes the whole
body, and every chunk again on its own; the windows of a long section overlap by 150 units and
may cut a word anywhere. Here each section is cut once into *parts* at safe places, each part
is folded and split into words (:mod:`memquill.query._tokens`) once, and a chunk's words are
its parts' words plus those of its two cut ends (the few characters between a window's edge
and the nearest safe place), which are folded and split on their own, as the chunk's own
tokenization sees them. The body's words are every part's.

A place is *safe* next to a space or a line break (and at a section's bounds): no term spans
one, and folding commutes with cutting there (a space or line break is never changed,
reordered or composed by normalisation or case folding, and ends every camelCase context).
So the words of a text cut at safe places are the words of its parts, in order; a property
test checks every chunk's words and the body's against the reference's own folding.

:func:`chunk_spans` gives the chunks of :func:`memquill.query._markdown.chunk_markdown` as
offsets into the note (the same chunks, a tested invariant).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from memquill.foundation.text import utf16_len
from memquill.query import CHUNK_SIZE, camel_free, fold, heading_text, split_words, window_bounds

_SPACE: Final = (" ", "\n")
_HEADING_START: Final = re.compile(r"^#{1,6}[^\S\n]", re.MULTILINE)
"""Where a heading line starts (``heading_text``'s test; a line never holds a line break)."""


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """One chunk: its section's heading, its first line, and ``content[begin:end]``."""

    heading: str
    start_line: int
    begin: int
    end: int


@dataclass(frozen=True, slots=True)
class NoteWords:
    """A note's words: the body's, and each chunk's (with the chunk's heading).

    Attributes:
        body: the words of the folded note, in order.
        length: the length of the folded note.
        chunks: per chunk, its heading and its words.
    """

    body: list[bytes]
    length: int
    chunks: list[tuple[str, list[bytes]]]


def chunk_spans(content: str) -> list[ChunkSpan]:
    """The chunks of ``content`` (heading sections, long ones cut into overlapping windows)."""
    return [span for section in _sections(content) for span in _section_chunks(content, section)]


def note_words(content: str) -> NoteWords:
    """The words of ``content`` and of each of its chunks (see the module)."""
    body: list[bytes] = []
    length = -1  # sections are joined by line breaks: one fewer than there are sections
    chunks: list[tuple[str, list[bytes]]] = []
    # ASCII with no camelCase boundary anywhere (the usual note) folds by lowering alone;
    # a part of it cannot hold a boundary the whole lacks.
    folding: Callable[[str], str] = str.lower if content.isascii() and camel_free(content) else fold
    for section in _sections(content):
        bounds = (section[2], section[3])
        group = _section_chunks(content, section)
        if len(group) == 1:
            text = folding(content[bounds[0] : bounds[1]])
            found = split_words(text)
            length += len(text) + 1
            body.extend(found)
            chunks.append((group[0].heading, found))
            continue
        inners = [_inner(content, span, bounds) for span in group]
        parts, folded = _parts(content, inners, bounds, folding)
        length += folded + 1
        for _, words in parts.values():
            body.extend(words)
        for span, inner in zip(group, inners, strict=True):
            chunks.append((span.heading, _chunk_words(content, span, inner, parts, folding)))
    return NoteWords(body, length, chunks)


def _section_chunks(content: str, section: tuple[str, int, int, int]) -> list[ChunkSpan]:
    heading, line, begin, end = section
    text = content[begin:end]
    if utf16_len(text) <= CHUNK_SIZE:
        return [ChunkSpan(heading, line, begin, end)]
    return _windows(heading, line, text, begin)


def _safe(content: str, at: int, section: tuple[int, int]) -> bool:
    return (
        at in section
        or (at < section[1] and content[at] in _SPACE)
        or (at > section[0] and content[at - 1] in _SPACE)
    )


def _inner(content: str, span: ChunkSpan, section: tuple[int, int]) -> tuple[int, int] | None:
    """The safe places nearest inside the window's two edges (``None``: none apart)."""
    begin, end = span.begin, span.end
    if _safe(content, begin, section):
        first = begin
    else:
        spaces = (content.find(" ", begin, end), content.find("\n", begin, end))
        found = [at for at in spaces if at >= 0]
        if not found:
            return None
        first = min(found)  # a space or line break: safe
    if _safe(content, end, section):
        last = end
    else:  # just after the last space or line break: safe
        last = max(content.rfind(" ", begin, end), content.rfind("\n", begin, end)) + 1
    return (first, last) if first < last else None


def _parts(
    content: str,
    inners: list[tuple[int, int] | None],
    section: tuple[int, int],
    folding: Callable[[str], str],
) -> tuple[dict[int, tuple[int, list[bytes]]], int]:
    """The section's parts by start (each with its end and words), and its folded length."""
    cuts = {section[0], section[1]}
    for inner in inners:
        if inner is not None:
            cuts.update(inner)
    ordered = sorted(cuts)
    parts: dict[int, tuple[int, list[bytes]]] = {}
    folded = 0
    for start, stop in pairwise(ordered):
        text = folding(content[start:stop])
        folded += len(text)
        parts[start] = (stop, split_words(text))
    return parts, folded


def _chunk_words(
    content: str,
    span: ChunkSpan,
    inner: tuple[int, int] | None,
    parts: dict[int, tuple[int, list[bytes]]],
    folding: Callable[[str], str],
) -> list[bytes]:
    """A window's words: its cut ends' own, and those of the parts between them."""
    if inner is None:
        return split_words(folding(content[span.begin : span.end]))
    first, last = inner
    found = split_words(folding(content[span.begin : first])) if first > span.begin else []
    at = first
    while at < last:
        stop, words = parts[at]
        found.extend(words)
        at = stop
    if last < span.end:
        found.extend(split_words(folding(content[last : span.end])))
    return found


def _sections(content: str) -> list[tuple[str, int, int, int]]:
    """(heading, first line, begin, end) of each heading section, as the reference splits
    (a section starts at each heading line; found by one search, not line by line)."""
    sections: list[tuple[str, int, int, int]] = []
    heading, line, begin = "", 0, 0
    for match in _HEADING_START.finditer(content):
        start = match.start()
        end = content.find("\n", start)
        title = heading_text(content[start : len(content) if end < 0 else end])
        if title is None:  # pragma: no cover - the search finds exactly the heading lines
            continue
        number = line + content.count("\n", begin, start)
        if start > 0:  # the lines before it form a section (the first line always counts)
            sections.append((heading, line, begin, start - 1))
        heading, line, begin = title, number, start
    sections.append((heading, line, begin, len(content)))
    return sections


def _windows(heading: str, first_line: int, text: str, base: int) -> list[ChunkSpan]:
    """The overlapping windows of a long section, as the reference cuts them."""
    return [
        ChunkSpan(heading, line, base + begin, base + end)
        for line, begin, end in window_bounds(text, first_line)
    ]
