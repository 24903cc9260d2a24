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
tokenization sees them. The body's words are every part's, so a chunk's whole words are a run
of the body's. A note of ASCII text with no camelCase boundary (most notes) is folded and
separated once, whole (:func:`memquill.query._tokens.ascii_word_bytes`): every byte of that
stands for the character at its offset, so each part is a slice of it.

Counting is done at C speed over one *key* per body word (its term, or a compound key for a
word with no term or several: :func:`memquill.query._tokens.word_keys`), mapped once: the
body counts them all, and each chunk counts its run of them into a copy of a dict that holds
every column at zero, in column order, so its counts are the matrix's row as they stand.
Compound keys sort before every term, and are replaced by their terms' counts.

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
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice, pairwise
from typing import Final, NamedTuple

from memquill.foundation.text import utf16_len
from memquill.index._codec import FieldCounts
from memquill.query import (
    CHUNK_SIZE,
    COMPOUND,
    Identity,
    NoteMeta,
    ascii_word_bytes,
    camel_free,
    compound_terms,
    count_keys,
    count_words,
    fold,
    heading_text,
    note_meta,
    path_day,
    split_words,
    window_bounds,
    word_keys,
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
    # One key a body word, counted at C speed: the body's counts, then each chunk's from the
    # same keys (a chunk's whole words are a run of the body's).
    keys = word_keys(words.body)
    body: dict[str, int] = {}
    count_keys(body, keys)
    fields = _field_counts(meta, path)
    terms = sorted(body)
    compounds = bisect_left(terms, _AFTER_COMPOUNDS)
    added: list[str] = []  # terms that compound keys and fields add: few, each put in place
    if compounds:  # keys of words with no term or several sort first: count their terms
        for key in terms[:compounds]:
            count = body.pop(key)
            for term in compound_terms(key):
                have = body.get(term)
                if have is None:
                    added.append(term)
                body[term] = count if have is None else have + count
        del terms[:compounds]
    added.extend(term for term in fields if term not in body)
    for term in added:
        insort(terms, term)
    # A row starts as a copy of the note's zeros, so it holds the columns in order and its
    # counts become the matrix's row as they are, at C speed.
    zeros = dict.fromkeys(terms, 0)
    width = len(terms)
    extras: dict[str, list[str]] = {}
    rows: list[dict[str, int]] = []
    for chunk in words.chunks:
        row = zeros.copy()
        count_keys(row, keys[chunk.start : chunk.stop])
        if len(row) != width:  # compound keys came after the columns
            for key in list(islice(row, width, None)):
                count = row.pop(key)
                for term in compound_terms(key):
                    row[term] += count  # the body holds the word: a column
        if chunk.heading:
            # A chunk counts its heading's terms too (windows of one section share it).
            extra = extras.get(chunk.heading)
            if extra is None:
                extra = extras[chunk.heading] = _column_terms(
                    split_words(fold(chunk.heading)), zeros
                )
            count_keys(row, extra)
        if chunk.head:
            count_keys(row, _column_terms(chunk.head, zeros))
        if chunk.tail:
            count_keys(row, _column_terms(chunk.tail, zeros))
        rows.append(row)
    day = path_day(path)
    return NoteFigures(
        path=path,
        identity=identity,
        byte_size=len(content.encode("utf-8", "surrogatepass")),
        length=words.length,
        tags=tuple(sorted({tag.lower() for tag in meta.tags})),
        day=0 if day is None else day.toordinal(),
        body=body,
        fields=fields,
        terms=tuple(terms),
        chunks=len(rows),
        matrix=chunk_matrix(rows),
    )


_AFTER_COMPOUNDS: Final = chr(ord(COMPOUND) + 1)
"""Every compound key sorts before this, every term after."""


def _column_terms(found: Iterable[bytes], columns: Mapping[str, int]) -> list[str]:
    """The terms of ``found`` (a few words) that are among ``columns``, one per occurrence."""
    terms: list[str] = []
    for key in word_keys(found):
        if key in columns:
            terms.append(key)
        elif key.startswith(COMPOUND):
            terms.extend(term for term in compound_terms(key) if term in columns)
    return terms


def _field_counts(meta: NoteMeta, path: str) -> dict[str, FieldCounts]:
    """Per term of a metadata field, its counts in the five fields."""
    found: dict[str, list[int]] = {}
    for position, value in enumerate(
        (meta.title, "\n".join(meta.tags), "\n".join(meta.aliases), "\n".join(meta.headings), path)
    ):
        if not value:
            continue
        for term, count in count_words(split_words(fold(value))).items():
            counts = found.get(term)
            if counts is None:
                counts = found[term] = [0, 0, 0, 0, 0]
            counts[position] = count
    return {term: (c[0], c[1], c[2], c[3], c[4]) for term, c in found.items()}


def chunk_matrix(rows: Sequence[Mapping[str, int]]) -> array[int]:
    """The rows' counts, row after row, in one compact array (every row holds the same
    columns in the same order)."""
    try:  # nearly always: every count fits a byte, and bytes are built fastest
        return array("B", b"".join([bytes(row.values()) for row in rows]))
    except ValueError:
        pass
    top = max((max(row.values(), default=0) for row in rows), default=0)
    values = array("H" if top < 1 << 16 else "I")
    for row in rows:
        values.extend(row.values())
    return values


_SPACE: Final = (" ", "\n")
_HEADING_FIRST: Final = re.compile(r"#{1,6}[^\S\n]")
"""A heading line's start (``heading_text``'s test; a line never holds a line break)."""
_HEADING_START: Final = re.compile(r"\n#{1,6}[^\S\n]")
"""The line break before a heading line."""


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """One chunk: its section's heading, its first line, and ``content[begin:end]``."""

    heading: str
    start_line: int
    begin: int
    end: int


class ChunkWords(NamedTuple):
    """One chunk's words: ``head``, then the body's words ``start`` to ``stop``, then ``tail``.

    Attributes:
        heading: the chunk's section's heading.
        head: the words of a window's cut start (up to its first safe place), as cut.
        start: the first of the body's words the chunk holds whole.
        stop: one past the last.
        tail: the words of a window's cut end (from its last safe place), as cut.
    """

    heading: str
    head: Sequence[bytes]
    start: int
    stop: int
    tail: Sequence[bytes]


@dataclass(frozen=True, slots=True)
class NoteWords:
    """A note's words: the body's, and each chunk's (with the chunk's heading).

    Attributes:
        body: the words of the folded note, in order.
        length: the length of the folded note.
        chunks: per chunk, where its words are.
    """

    body: list[bytes]
    length: int
    chunks: list[ChunkWords]

    def chunk_words(self, chunk: ChunkWords) -> list[bytes]:
        """The words of ``chunk``, in order."""
        return [*chunk.head, *self.body[chunk.start : chunk.stop], *chunk.tail]


def chunk_spans(content: str) -> list[ChunkSpan]:
    """The chunks of ``content`` (heading sections, long ones cut into overlapping windows)."""
    return [span for section in _sections(content) for span in _section_chunks(content, section)]


_NO_WORDS: Final[tuple[bytes, ...]] = ()


def note_words(content: str) -> NoteWords:
    """The words of ``content`` and of each of its chunks (see the module)."""
    body: list[bytes] = []
    length = -1  # sections are joined by line breaks: one fewer than there are sections
    chunks: list[ChunkWords] = []
    # ASCII with no camelCase boundary anywhere (the usual note) folds by lowering alone, and
    # a part of it cannot hold a boundary the whole lacks: the note is folded and separated
    # once, and any slice of that splits into the words of the same slice, folded.
    ascii_only = content.isascii() and camel_free(content)
    mask = ascii_word_bytes(content) if ascii_only else b""

    def words_of(begin: int, end: int) -> tuple[list[bytes], int]:
        """The words of ``content[begin:end]``, folded, and the folded length."""
        if ascii_only:
            return mask[begin:end].split(), end - begin
        text = fold(content[begin:end])
        return split_words(text), len(text)

    for heading, line, begin, end in _sections(content):
        if (end - begin if ascii_only else utf16_len(content[begin:end])) > CHUNK_SIZE:
            length += _windowed(content, heading, line, (begin, end), words_of, body, chunks) + 1
            continue
        found, folded = words_of(begin, end)
        length += folded + 1
        chunks.append(ChunkWords(heading, _NO_WORDS, len(body), len(body) + len(found), _NO_WORDS))
        body.extend(found)
    return NoteWords(body, length, chunks)


def _windowed(
    content: str,
    heading: str,
    line: int,
    section: tuple[int, int],
    words_of: Callable[[int, int], tuple[list[bytes], int]],
    body: list[bytes],
    chunks: list[ChunkWords],
) -> int:
    """Add the words of a long section to ``body`` and its windows to ``chunks``; returns its
    folded length. Its parts lie between every window's safe places, each split once."""
    begin, end = section
    windows = [
        (begin + first, begin + last) for _, first, last in window_bounds(content[begin:end], line)
    ]
    inners = [_inner(content, window, section) for window in windows]
    cuts = {begin, end}
    for inner in inners:
        if inner is not None:
            cuts.update(inner)
    starts: dict[int, int] = {}  # where each part starts: the place of its first word
    length = 0
    for first, last in pairwise(sorted(cuts)):
        found, folded = words_of(first, last)
        length += folded
        starts[first] = len(body)
        body.extend(found)
    starts[end] = len(body)
    for (first, last), inner in zip(windows, inners, strict=True):
        if inner is None:
            chunks.append(ChunkWords(heading, words_of(first, last)[0], 0, 0, _NO_WORDS))
            continue
        safe_first, safe_last = inner
        head = words_of(first, safe_first)[0] if safe_first > first else _NO_WORDS
        tail = words_of(safe_last, last)[0] if safe_last < last else _NO_WORDS
        chunks.append(ChunkWords(heading, head, starts[safe_first], starts[safe_last], tail))
    return length


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


def _inner(
    content: str, window: tuple[int, int], section: tuple[int, int]
) -> tuple[int, int] | None:
    """The safe places nearest inside the window's two edges (``None``: none apart)."""
    begin, end = window
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


def _sections(content: str) -> list[tuple[str, int, int, int]]:
    """(heading, first line, begin, end) of each heading section, as the reference splits
    (a section starts at each heading line; found by one search for the line break before a
    heading line, which the search finds fast by its two literal characters)."""
    sections: list[tuple[str, int, int, int]] = []
    heading, line, begin = "", 0, 0
    starts = [match.start() + 1 for match in _HEADING_START.finditer(content)]
    if _HEADING_FIRST.match(content):
        starts.insert(0, 0)
    for start in starts:
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
