"""What the index stores of one note: its figures and, per term, the counts ranking reads.

:func:`analyse_note` computes, with the query layer's own tokenizer and Markdown rules, exactly
what :class:`~memquill.query.Corpus` would compute for the same text: the body count and the
five field counts of every term (title, tags, aliases, headings, path), and how often each term
occurs in each chunk (text plus heading). Only the figures are kept; the text stays in the
note (:mod:`._build` gathers them into batches for the writer).

A note's chunks and the words of each come from one pass over the note (:func:`note_words`).
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
from array import array
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise, repeat
from typing import Final

from memquill.foundation.text import utf16_len
from memquill.index._codec import FieldCounts
from memquill.query import (
    CHUNK_SIZE,
    Identity,
    camel_free,
    count_words,
    fold,
    heading_text,
    note_meta,
    path_day,
    split_words,
    window_bounds,
)


@dataclass(frozen=True, slots=True)
class NoteFigures:
    """One note as the index keeps it.

    Attributes:
        path: the workspace path.
        identity: the file identity the text was read at.
        byte_size: UTF-8 size of the text (the text limit counts it).
        length: length of the folded body (length normalisation).
        tags: the lowercased tags, sorted (the ``tags`` filter).
        day: the day the path names, as a proleptic ordinal, or 0.
        body: per term, its count in the body (terms the body holds).
        fields: per term that a metadata field holds, its five field counts.
        terms: every term of the body or a field, sorted (the matrix's columns).
        chunks: how many chunks the note has.
        matrix: per chunk (row), per column of ``terms``: the term's count in that chunk.
    """

    path: str
    identity: Identity
    byte_size: int
    length: int
    tags: tuple[str, ...]
    day: int
    body: dict[str, int]
    fields: dict[str, FieldCounts]
    terms: tuple[str, ...]
    chunks: int
    matrix: array[int]


def analyse_note(path: str, content: str, identity: Identity) -> NoteFigures:
    """Analyse the note ``path`` whose text (read at ``identity``) is ``content``."""
    meta = note_meta(content, path)
    words = note_words(content)
    body = count_words(words.body)
    headings: dict[str, Counter[str]] = {}
    rows: list[Counter[str]] = []
    for heading, found in words.chunks:
        counts = count_words(found)
        if heading:
            # A chunk counts its heading's terms too (windows of one section share it).
            extra = headings.get(heading)
            if extra is None:
                extra = headings[heading] = count_words(split_words(fold(heading)))
            counts.update(extra)
        rows.append(counts)
    fields: dict[str, FieldCounts] = {}
    for position, value in enumerate(
        (meta.title, "\n".join(meta.tags), "\n".join(meta.aliases), "\n".join(meta.headings), path)
    ):
        for term, count in count_words(split_words(fold(value))).items():
            current = fields.get(term)
            values = list(current) if current is not None else [0, 0, 0, 0, 0]
            values[position] = count
            fields[term] = (values[0], values[1], values[2], values[3], values[4])
    day = path_day(path)
    terms = tuple(sorted(body.keys() | fields.keys()))
    return NoteFigures(
        path=path,
        identity=identity,
        byte_size=len(content.encode("utf-8", "surrogatepass")),
        length=words.length,
        tags=tuple(sorted({tag.lower() for tag in meta.tags})),
        day=0 if day is None else day.toordinal(),
        body=body,
        fields=fields,
        terms=terms,
        chunks=len(rows),
        matrix=chunk_matrix(terms, rows),
    )


def chunk_matrix(terms: tuple[str, ...], rows: Sequence[Mapping[str, int]]) -> array[int]:
    """Per chunk (row), the count of each of ``terms`` (in that order), in one compact array."""
    width = len(terms)
    top = max((max(row.values(), default=0) for row in rows), default=0)
    if top < 1 << 8:  # nearly always: bytes are built fastest
        return array("B", b"".join(bytes(map(row.get, terms, repeat(0, width))) for row in rows))
    values = array("H" if top < 1 << 16 else "I")
    for row in rows:
        values.extend(map(row.get, terms, repeat(0, width)))
    return values


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
