"""Dates for ranking: month mentions in a query, and the day a dated path names.

A daily note is named for its day (``memory/daily/2026-07-14.md``), so "what did we decide in
July 2026?" should prefer July's notes even though their text never says "July". A query's
month mentions (an English month name, with an optional day and year) are matched against the
month of each dated path; ranking scores such a match as one more term.

``may`` counts as a month only next to a day or a year ("1 May, 2022", "May 2022"), since on
its own it is far more often the verb.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Final

MONTHS: Final = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)

MonthKey = tuple[int | None, int]
"""A month mention: (year or ``None`` for any year, month 1–12)."""

_DATED: Final = re.compile(r"(?:^|/)([0-9]{4})-([0-9]{2})-([0-9]{2})\.md$")
_ORDINAL: Final = r"(?:st|nd|rd|th)?"
_MENTION: Final = re.compile(
    rf"(?:\b([0-9]{{1,2}}){_ORDINAL}\s+(?:of\s+)?)?"
    rf"\b({'|'.join(MONTHS)})\b"
    rf"(?:\s+([0-9]{{1,2}}){_ORDINAL}\b)?"
    r"(?:,?\s+([0-9]{4})\b)?",
    re.IGNORECASE,
)


def path_day(path: str) -> date | None:
    """The day a path ending in a valid ``YYYY-MM-DD.md`` names (at its start or after ``/``)."""
    match = _DATED.search(path)
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def query_months(query: str) -> tuple[MonthKey, ...]:
    """The distinct month mentions of ``query``, in order of first mention.

    Examples: "July 2022" gives ``(2022, 7)``; "in March" gives ``(None, 3)``; "on 1 May, 2022"
    gives ``(2022, 5)``; "you may go" gives nothing.
    """
    found: dict[MonthKey, None] = {}
    for match in _MENTION.finditer(query):
        month = MONTHS.index(match[2].lower()) + 1
        has_day = match[1] is not None or match[3] is not None
        year = int(match[4]) if match[4] is not None else None
        if month == 5 and not has_day and year is None:
            continue
        found[(year, month)] = None
    return tuple(found)


def month_matches(key: MonthKey, year: int, month: int) -> bool:
    """Whether the dated (``year``, ``month``) falls within the mention ``key``."""
    return key[1] == month and (key[0] is None or key[0] == year)
