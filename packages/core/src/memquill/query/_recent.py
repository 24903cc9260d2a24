"""``recent``: what to review at the start of a conversation (spec 6.7).

1. Long-term memory: the first existing of ``memory.md``, ``Memory.md``, ``MEMORY.md``,
   ``longterm/summary.md`` (trimmed, cut to 500 units).
2. The newest ``days`` daily files of ``memory/daily`` (or, when that folder does not exist,
   ``daily``), newest first (trimmed, cut to 800 units; an empty file still takes its slot).
3. Every active record, newest first (a deliberate change: the original listed them oldest
   first, so the 12,000-unit cut dropped the newest), cut to 500 units.

A file or folder that cannot be read becomes a warning; the rest is still shown.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Final

from memquill.errors import AccessDeniedError, CorruptError, MemquillError, Messages
from memquill.foundation.text import utf16_cut
from memquill.paths import read_workspace_file, relative_inside, source_error
from memquill.store import RecordStore

if TYPE_CHECKING:
    from memquill.query._models import RecentResult, RecentSection

LONGTERM_CANDIDATES: Final = ("memory.md", "Memory.md", "MEMORY.md", "longterm/summary.md")
DAILY_FOLDERS: Final = ("memory/daily", "daily")
DAILY_NAME: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\.md")
LONGTERM_UNITS: Final = 500
DAILY_UNITS: Final = 800
RECORD_UNITS: Final = 500
# JavaScript's String.prototype.trim removes these (Python's strip differs at the edges).
_JS_SPACE: Final = (
    " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def records_unavailable(error: MemquillError) -> str:
    """Why remembered facts are missing from an answer; for a corrupt file, what to run."""
    if isinstance(error, CorruptError):
        return f"{error.message} {Messages.REPAIR_HINT}"
    return error.message


def collect_recent(root: Path, store: RecordStore, days: int) -> RecentResult:
    """Build the recent-memory review of the workspace ``root``.

    Args:
        root: the canonical workspace.
        store: its records store.
        days: how many daily files (newest first).
    """
    # The models load with a review: a search never loads pydantic.
    from memquill.query._models import RecentResult, RecentSection

    sections: list[RecentSection] = []
    warnings: list[str] = []
    longterm = _longterm(root, warnings)
    if longterm is not None:
        sections.append(longterm)
    sections.extend(_daily(root, days, warnings))
    unavailable: str | None = None
    try:
        projection = store.projection()
    except MemquillError as error:
        unavailable = records_unavailable(error)
    except OSError as error:
        unavailable = source_error(error).message
    else:
        ordered = sorted(
            enumerate(projection.records),
            key=lambda item: (item[1].created_at, item[0]),
            reverse=True,
        )
        for _, record in ordered:
            content, cut = utf16_cut(record.content, RECORD_UNITS)
            sections.append(
                RecentSection(
                    kind="record",
                    path=record.path,
                    content=content,
                    truncated=cut,
                    source=record.provenance,
                    record_id=record.id,
                    record_revision=record.record_revision,
                    key=record.key,
                )
            )
    return RecentResult(
        sections=tuple(sections), warnings=tuple(warnings), managed_unavailable=unavailable
    )


def _longterm(root: Path, warnings: list[str]) -> RecentSection | None:
    from memquill.query._models import RecentSection

    for path in LONGTERM_CANDIDATES:
        # Existence follows symlinks: a broken link counts as absent, as in the original.
        if not os.path.exists(root / path):
            continue
        try:
            text = read_workspace_file(root, path).strip(_JS_SPACE)
        except MemquillError as error:
            warnings.append(f"Skipped {path}: {error.message}")
            continue
        if not text:
            return None
        content, cut = utf16_cut(text, LONGTERM_UNITS)
        return RecentSection(kind="longterm", path=path, content=content, truncated=cut)
    return None


def _daily(root: Path, days: int, warnings: list[str]) -> list[RecentSection]:
    from memquill.query._models import RecentSection

    folder = DAILY_FOLDERS[0] if os.path.exists(root / DAILY_FOLDERS[0]) else DAILY_FOLDERS[1]
    if not os.path.exists(root / folder):
        return []
    try:
        real = os.path.realpath(root / folder)
        if relative_inside(root, real) is None:
            raise AccessDeniedError(Messages.DAILY_OUTSIDE)
        names = sorted(name for name in os.listdir(real) if DAILY_NAME.fullmatch(name))
    except MemquillError as error:
        warnings.append(f"Skipped daily memory: {error.message}")
        return []
    except OSError as error:
        warnings.append(f"Skipped daily memory: {source_error(error).message}")
        return []
    sections: list[RecentSection] = []
    for name in reversed(names[-days:]):
        path = f"{folder}/{name}"
        try:
            text = read_workspace_file(root, path).strip(_JS_SPACE)
        except MemquillError as error:
            warnings.append(f"Skipped {path}: {error.message}")
            continue
        if text:
            content, cut = utf16_cut(text, DAILY_UNITS)
            sections.append(RecentSection(kind="daily", path=path, content=content, truncated=cut))
    return sections
