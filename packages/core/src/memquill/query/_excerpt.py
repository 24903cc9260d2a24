"""Excerpts: each search hit shows the lines that match the query best, within its budget.

1. A line holds a query term when the tokenizer would find the term in it; each term weighs
   its idf (what ranking computed), once per line however often it occurs.
2. The line holding the most weight is the excerpt's anchor (ties: the earliest). A line too
   long for the budget is cut around the stretch of its matches worth the most.
3. A line that fits grows with its neighbours, the next line first, then the previous,
   alternately (blank lines only on the way to a line that fits, and never back over the
   heading the hit already shows); if at least 40 units are left, the start of the following
   line fills them.
4. Text is cut only next to a space (or a CJK character, a word of its own), never inside a
   word, and ``…`` marks each cut. Only a word longer than the whole budget is cut where the
   budget ends.

(Windows covering the most distinct terms over several lines were measured too: on LoCoMo
they showed fewer evidence turns than the best single line grown with its neighbours.)

The excerpt's line is the first shown line that holds a term, so ``memory_get`` from there
reads on through the evidence. A hit that matched no line (only a title, tag or path) shows the
document's start. Pure: no I/O, no clock; the same document and terms give the same excerpt.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Final

from memquill.foundation.text import unit_starts, utf16_len
from memquill.query._markdown import frontmatter_lines, heading_text
from memquill.query._tokens import (
    count_term,
    fold,
    is_cjk,
    plain,
    search_prefixes,
    term_spans,
)

ELLIPSIS: Final = "\u2026"
"""Marks text left out at a cut (one UTF-16 unit)."""
MIN_TAIL: Final = 40
"""Units a partial next line must have room for to be shown at all."""


@dataclass(frozen=True, slots=True)
class Excerpt:
    """What a hit shows: its first matching line (0-based), its section heading, the text."""

    line: int
    heading: str
    text: str


class LineIndex:
    """A document's lines, folded, to find the lines that hold a term (built once per text).

    Args:
        content: the document text, verbatim.
        folded: ``fold(content)``, if already known.
    """

    __slots__ = ("_joined", "_starts", "body", "cumulative", "folded", "lines", "sizes")

    def __init__(self, content: str, folded: str | None = None) -> None:
        self.lines = content.split("\n")
        self.body = frontmatter_lines(self.lines)
        """The first line after the frontmatter (whose tags and aliases are fields)."""
        # Folding never makes or removes a line break and works line by line (a line break
        # ends every camelCase and normalisation context), so the folded text's lines are
        # the lines folded (a tested invariant).
        self.folded = (fold(content) if folded is None else folded).split("\n")
        self.sizes = (
            list(map(len, self.lines)) if content.isascii() else list(map(utf16_len, self.lines))
        )
        self.cumulative = [0, *accumulate(self.sizes)]
        # Prefixes are looked up in the text without camelCase marks (see ``plain``).
        self._joined = plain("\n".join(self.folded))
        self._starts = [0, *accumulate(len(line) + 1 for line in self._joined.split("\n"))][:-1]

    def holding(self, term: str) -> list[int]:
        """The lines that hold ``term``, in order."""
        joined, starts = self._joined, self._starts
        candidates: set[int] = set()
        for prefix in search_prefixes(term):
            index = joined.find(prefix)
            while index >= 0:
                line = bisect_right(starts, index) - 1
                candidates.add(line)
                after = starts[line + 1] if line + 1 < len(starts) else len(joined)
                index = joined.find(prefix, after)
        lines = sorted(line for line in candidates if line >= self.body)
        return [line for line in lines if count_term(self.folded[line], term)]

    def span(self, first: int, last: int) -> int:
        """Units of lines ``first`` to ``last`` joined by newlines."""
        return self.cumulative[last + 1] - self.cumulative[first] + last - first


def build_excerpt(index: LineIndex, terms: Iterable[tuple[str, float]], units: int) -> Excerpt:
    """The excerpt of the indexed document for the matched ``terms`` (term, weight)."""
    weights = dict(terms)
    held: dict[int, set[str]] = {}
    for term in sorted(weights):
        for line in index.holding(term):
            held.setdefault(line, set()).add(term)
    if not held:
        return _document_start(index, units)
    best, cut = _best_line(index, held, weights, units)
    if cut is not None:
        return Excerpt(best, _heading_at(index.lines, best), cut)
    first, last, used = _grow(index, best, best, units, _heading_line(index.lines, best))
    shown = index.lines[first : last + 1]
    tail = _tail(index, last, units - used)
    text = "\n".join(shown) + (tail or "")
    line = next(i for i in range(first, last + 1) if i in held)
    return Excerpt(line, _heading_at(index.lines, line), text)


def _weight(terms: Iterable[str], weights: dict[str, float]) -> float:
    return sum(weights[term] for term in sorted(terms))


def _best_line(
    index: LineIndex, held: dict[int, set[str]], weights: dict[str, float], units: int
) -> tuple[int, str | None]:
    """The line holding the most weight (ties: a body line before a heading the hit shows
    anyway, then the earliest), and its cut text if too long."""

    def key(line: int) -> tuple[float, bool, int]:
        heading = heading_text(index.lines[line]) is not None
        return (_weight(held[line], weights), not heading, -line)

    best = max(sorted(held), key=key)
    if index.sizes[best] <= units:
        return best, None
    text, _ = _cut_line(index.lines[best], held[best], weights, units)
    return best, text


def _grow(
    index: LineIndex, first: int, last: int, units: int, heading_line: int | None
) -> tuple[int, int, int]:
    """Add whole neighbouring lines (next first, then previous) while they fit."""
    lines = index.lines
    floor = index.body if heading_line is None else max(index.body, heading_line + 1)
    grown = True
    while grown:
        grown = False
        after = _next_content(lines, last, 1)
        if after is not None and index.span(first, after) <= units:
            last, grown = after, True
        before = _next_content(lines, first, -1)
        if before is not None and before >= floor and index.span(before, last) <= units:
            first, grown = before, True
    return first, last, index.span(first, last)


def _tail(index: LineIndex, last: int, room: int) -> str | None:
    """The start of the next line, cut at a word, in ``room`` units (with its newlines)."""
    after = _next_content(index.lines, last, 1)
    if after is None:
        return None
    room -= after - last + 1  # the newlines before it and the ellipsis after it
    if room < MIN_TAIL:
        return None
    line = index.lines[after]
    end = _end_boundary(line, _units(line), 0, room)
    if end is None:
        return None
    gap = "\n" * (after - last)
    return gap + line[:end] + ELLIPSIS


def _cut_line(
    line: str, held: set[str], weights: dict[str, float], units: int
) -> tuple[str, set[str]]:
    """A line longer than ``units``, cut around the matches worth the most."""
    spans = term_spans(line, frozenset(held))
    offsets = _units(line)
    avail = units - 2  # an ellipsis at each end, at worst
    if not spans:
        return line[: _end_cut(line, offsets, 0, units - 1)] + ELLIPSIS, set()
    best_key: tuple[float, int] | None = None
    anchor, reach, covered = 0, 0, set[str]()
    for position, (start, _, _) in enumerate(spans):
        found: set[str] = set()
        end = start
        for _, other_end, terms in spans[position:]:
            if offsets[other_end] - offsets[start] > avail:
                break
            found |= terms
            end = other_end
        key = (_weight(found, weights), -position)
        if best_key is None or key > best_key:
            best_key, anchor, reach, covered = key, start, end, found
    total = offsets[-1]
    if offsets[reach] <= units - 1:
        begin = 0
    else:
        # A third of the room left over goes before the matches, the rest after them; a
        # window near the line's end starts earlier rather than leave room unused.
        slack = avail - (offsets[reach] - offsets[anchor])
        target = min(offsets[anchor] - slack // 3, total - (units - 1))
        begin = _start_boundary(line, offsets, anchor, target)
    prefix = ELLIPSIS if begin > 0 else ""
    if total - offsets[begin] <= units - len(prefix):
        return prefix + line[begin:], covered
    end = _end_cut(line, offsets, begin, offsets[begin] + units - len(prefix) - 1)
    return prefix + line[begin:end] + ELLIPSIS, covered


def _units(line: str) -> list[int]:
    """UTF-16 offset of each code point of ``line`` (and of its end)."""
    return list(range(len(line) + 1)) if line.isascii() else unit_starts(line)


def _start_boundary(line: str, offsets: list[int], anchor: int, target: int) -> int:
    """The first word start at or after ``target`` units and not after ``anchor``.

    Without one (the word holding the match starts earlier), the last word start before.
    """
    chosen: int | None = None
    for position in range(anchor, -1, -1):
        if _starts_word(line, position):
            if offsets[position] < target:
                return position if chosen is None else chosen
            chosen = position
    return 0 if chosen is None else chosen


def _end_boundary(line: str, offsets: list[int], begin: int, limit: int) -> int | None:
    """The last word end after ``begin`` and at most ``limit`` units into the line, if any."""
    last = bisect_right(offsets, limit) - 1
    for position in range(last, begin, -1):
        if _ends_word(line, position):
            return position
    return None


def _end_cut(line: str, offsets: list[int], begin: int, limit: int) -> int:
    """:func:`_end_boundary`, or a hard cut at ``limit`` inside a word longer than the room."""
    end = _end_boundary(line, offsets, begin, limit)
    return end if end is not None else max(bisect_right(offsets, limit) - 1, begin)


def _starts_word(line: str, position: int) -> bool:
    if position == 0:
        return True
    before, char = line[position - 1], line[position]
    if char.isspace():
        return False
    return before.isspace() or is_cjk(before) or is_cjk(char)


def _ends_word(line: str, position: int) -> bool:
    if position >= len(line):
        return True
    before, char = line[position - 1], line[position]
    if before.isspace():
        return False
    return char.isspace() or is_cjk(before) or is_cjk(char)


def _next_content(lines: Sequence[str], start: int, step: int) -> int | None:
    """The nearest non-blank line from ``start`` in direction ``step``."""
    position = start + step
    while 0 <= position < len(lines):
        if lines[position].strip():
            return position
        position += step
    return None


def _heading_line(lines: Sequence[str], line: int) -> int | None:
    for position in range(line, -1, -1):
        if heading_text(lines[position]) is not None:
            return position
    return None


def _heading_at(lines: Sequence[str], line: int) -> str:
    """The heading of the section holding ``line`` ("" before the first heading)."""
    position = _heading_line(lines, line)
    return "" if position is None else heading_text(lines[position]) or ""


def _document_start(index: LineIndex, units: int) -> Excerpt:
    """The document's first lines after its frontmatter, for a hit that matched no line."""
    lines = index.lines
    headings = [text for line in lines if (text := heading_text(line)) is not None]
    heading = headings[0] if headings else ""
    first = index.body
    if index.body and (after := _next_content(lines, index.body - 1, 1)) is not None:
        first = after
    if first >= len(lines):
        return Excerpt(0, heading, "")
    if index.sizes[first] > units:
        text, _ = _cut_line(lines[first], set(), {}, units)
        return Excerpt(first, heading, text)
    last = first
    while last + 1 < len(lines) and index.span(first, last + 1) <= units:
        last += 1
    tail = _tail(index, last, units - index.span(first, last)) or ""
    return Excerpt(first, heading, "\n".join(lines[first : last + 1]) + tail)
