"""UTF-16 code units: the unit of every memquill length, limit and page.

``records.md`` stores ``contentLength`` in UTF-16 code units (what JavaScript's ``length``
counts), so files are interchangeable with the original system. Python strings index code points;
these helpers convert, and never split a surrogate pair.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from typing import Final

__all__ = [
    "LONE_SURROGATE",
    "path_key",
    "point_at",
    "point_of",
    "unit_starts",
    "utf16_cut",
    "utf16_len",
    "utf16_prefix",
    "utf16_slice",
    "utf16_take",
]

LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
"""A surrogate code point on its own (a JSON ``\\ud800`` escape makes one): it has no UTF-8
form, so text holding one can be neither hashed nor written, and is refused up front."""


def path_key(path: str) -> bytes:
    """Sort key ordering paths by UTF-16 code units, as JavaScript compares strings."""
    return path.encode("utf-16-be", "surrogatepass")


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (astral characters count two)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_take(text: str, start: int, units: int) -> int | None:
    """Code points of ``text[start:]`` that span exactly ``units`` UTF-16 units.

    Returns ``None`` when the text is too short or the boundary would split a surrogate pair.
    """
    count = min(units, len(text) - start)
    while True:
        have = utf16_len(text[start : start + count])
        if have == units:
            return count
        if have < units:
            return None
        # Each code point is 1 or 2 units, so dropping ceil(excess / 2) never overshoots.
        count -= (have - units + 1) // 2


def utf16_prefix(text: str, units: int) -> str:
    """The longest prefix of ``text`` of at most ``units`` units (a pair is never split)."""
    if text.isascii():
        return text[:units]
    return utf16_slice(text, 0, units)


def utf16_cut(text: str, units: int) -> tuple[str, bool]:
    """``text`` cut to at most ``units`` UTF-16 units, and whether anything was cut."""
    if utf16_len(text) <= units:
        return text, False
    return utf16_prefix(text, units), True


def utf16_slice(text: str, start: int, end: int | None = None) -> str:
    """``text[start:end]`` measured in UTF-16 units.

    A boundary inside a surrogate pair moves back to the pair's start, so a character is never
    torn and consecutive pages (``end`` of one = ``start`` of the next) cover the text exactly.
    """
    if text.isascii():
        return text[start:end]
    points = unit_starts(text)
    return text[point_at(points, start) : None if end is None else point_at(points, end)]


def unit_starts(text: str) -> list[int]:
    """For each code point, the UTF-16 offset where it starts (plus the total at the end).

    Build it once to map many UTF-16 offsets of one text with :func:`point_at`.
    """
    if not text or max(text) <= "\uffff":
        # No character needs a surrogate pair: units and code points coincide.
        return list(range(len(text) + 1))
    starts = [0] * (len(text) + 1)
    offset = 0
    for index, char in enumerate(text):
        starts[index] = offset
        offset += 2 if ord(char) > 0xFFFF else 1
    starts[len(text)] = offset
    return starts


_ASTRAL: Final = re.compile("[\U00010000-\U0010ffff]")


def point_of(text: str) -> Callable[[int], int]:
    """Maps a UTF-16 offset of ``text`` to the index of the code point containing it, as
    :func:`point_at` does, without a table of every character: for the few offsets a caller
    asks about (chunk windows), finding the astral characters once is enough."""
    astral = [] if text.isascii() else [match.start() for match in _ASTRAL.finditer(text)]
    size = len(text)
    if not astral:
        return lambda unit: min(max(unit, 0), size)
    # The k-th astral character starts at unit (its index + k).
    starts = [index + k for k, index in enumerate(astral)]
    total = size + len(astral)

    def point(unit: int) -> int:
        if unit <= 0:
            return 0
        if unit >= total:
            return size
        before = bisect_right(starts, unit - 2)  # astral characters that end by ``unit``
        if before < len(starts) and starts[before] == unit - 1:
            return astral[before]  # inside that pair: its start
        return unit - before

    return point


def point_at(starts: list[int], unit: int) -> int:
    """Index of the code point containing UTF-16 offset ``unit`` (clamped to the text).

    Inside a surrogate pair that is the pair's start. ``starts`` comes from :func:`unit_starts`.
    """
    if unit <= 0:
        return 0
    if unit >= starts[-1]:
        return len(starts) - 1
    return bisect_right(starts, unit) - 1
