"""UTF-16 code units: the unit of every memquill length, limit and page.

``records.md`` stores ``contentLength`` in UTF-16 code units (what JavaScript's ``length``
counts), so files are interchangeable with the original system. Python strings index code points;
these helpers convert, and never split a surrogate pair.
"""

from __future__ import annotations

from bisect import bisect_right

__all__ = [
    "point_at",
    "unit_starts",
    "utf16_cut",
    "utf16_len",
    "utf16_prefix",
    "utf16_slice",
    "utf16_take",
]


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


def point_at(starts: list[int], unit: int) -> int:
    """Index of the code point containing UTF-16 offset ``unit`` (clamped to the text).

    Inside a surrogate pair that is the pair's start. ``starts`` comes from :func:`unit_starts`.
    """
    if unit <= 0:
        return 0
    if unit >= starts[-1]:
        return len(starts) - 1
    return bisect_right(starts, unit) - 1
