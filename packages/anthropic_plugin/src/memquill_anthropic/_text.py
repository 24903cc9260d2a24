"""What each command does to a file's text, as pure functions with the reference's results.

``view`` numbers lines split on ``\\n`` (a trailing newline shows as a last, empty line) and
honours ``view_range`` the way the reference does: ``[start, end]`` with 1-based lines, ``end``
``-1`` for the last, anything else sliced as given. ``str_replace`` needs ``old_str`` exactly
once (counted without overlaps, the matching lines listed with overlaps, as the reference
does) and answers with up to five numbered lines around the change. ``insert`` puts the text
(without its trailing newlines) before line ``insert_line`` (0: at the top) and ends the file
with a newline. Line numbers are right-aligned in six columns, as in the reference.

:func:`check_text` holds memquill's limits on what a file may contain.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Final

from anthropic.lib.tools import ToolError

from memquill.store import MAX_CONTENT_UNITS
from memquill_anthropic._messages import Texts

_WIDTH: Final = 6  # len(str(999999)): the reference's widest line number


def numbered(given: str, content: str, view_range: Sequence[int] | None) -> str:
    """The ``view`` answer for a file: its lines, numbered, within ``view_range``."""
    lines = content.split("\n")
    shown, first = lines, 1
    if view_range and len(view_range) == 2:
        start = max(1, view_range[0]) - 1
        end = len(lines) if view_range[1] == -1 else view_range[1]
        shown, first = lines[start:end], start + 1
    body = "\n".join(f"{index + first:>{_WIDTH}}\t{line}" for index, line in enumerate(shown))
    return f"{Texts.NUMBERED.format(path=given)}\n{body}"


def replace_once(given: str, content: str, old: str, new: str) -> tuple[str, str]:
    """The text with ``old`` replaced by ``new``, and the answer showing the change.

    Raises:
        ToolError: ``old`` does not occur, or occurs more than once (the lines are listed).
    """
    count = content.count(old)
    if count == 0:
        raise ToolError(Texts.NO_MATCH.format(old=old, path=given))
    if count > 1:
        lines: list[int] = []
        start = content.find(old)
        while start != -1:
            lines.append(content[:start].count("\n") + 1)
            start = content.find(old, start + 1)
        listed = ", ".join(map(str, lines))
        raise ToolError(Texts.MANY_MATCHES.format(old=old, lines=listed))
    changed = content[: content.find(old)].count("\n")
    replaced = content.replace(old, new)
    new_lines = replaced.split("\n")
    window = range(max(0, changed - 2) + 1, min(len(new_lines), changed + 3) + 1)
    snippet = "\n".join(f"{number:>{_WIDTH}}\t{new_lines[number - 1]}" for number in window)
    return replaced, f"{Texts.REPLACED}\n{snippet}"


def insert_text(content: str, line: int, text: str) -> str:
    """The text with ``text`` inserted before line ``line`` (0-based among its lines).

    Raises:
        ToolError: ``line`` is outside ``[0, number of lines]``.
    """
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    if line < 0 or line > len(lines):
        raise ToolError(Texts.INSERT_LINE.format(line=line, count=len(lines)))
    lines.insert(line, text.rstrip("\n"))
    joined = "\n".join(lines)
    return joined if joined.endswith("\n") else f"{joined}\n"


def check_text(given: str, text: str) -> None:
    """Refuse text memquill cannot keep as a file, before anything is written.

    A file is 1–16,000 UTF-16 code units (a fact's limit) with at least one visible character,
    and has ``\\n`` line endings: memquill refuses carriage returns (and other control
    characters; the store answers for those).

    Raises:
        ToolError: with the limit or the rule, and the path.
    """
    if "\r" in text:
        raise ToolError(Texts.CARRIAGE_RETURN.format(path=given))
    units = len(text.encode("utf-16-le")) // 2
    if units > MAX_CONTENT_UNITS:
        raise ToolError(Texts.TOO_LONG.format(path=given, units=units, limit=MAX_CONTENT_UNITS))
    if all(char.isspace() or unicodedata.category(char) == "Cf" for char in text):
        raise ToolError(Texts.EMPTY.format(path=given))


def file_size(content: str) -> int:
    """A file's size in bytes: its text in UTF-8, as the reference's file would hold it."""
    return len(content.encode("utf-8"))


def size_label(size: int) -> str:
    """A size as the reference's listing shows it: ``0B``, ``812B``, ``1.5K``, ``2M``."""
    if size == 0:
        return "0B"
    units = ("B", "K", "M", "G")
    power = min((size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / 1024**power
    if scaled == int(scaled):
        return f"{int(scaled)}{units[power]}"
    return f"{scaled:.1f}{units[power]}"
