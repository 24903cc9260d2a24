"""What the read tools return, as data: search hits, a page of a source, recent memory.

The engine (:mod:`memquill.query._engine`) returns them; :mod:`memquill.query._render` turns
them into the exact text a model or a person sees (spec 6.5–6.7). At the tool boundary a
failure becomes the same model with ``error`` (the message) and ``error_code`` set. Each
model is built on its first use, never at import.
"""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

HitKind = Literal["note", "record"]
SectionKind = Literal["longterm", "daily", "record"]


class _Frozen(BaseModel):
    # Built on first use: a process that searches once never builds a page or recent memory.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class SearchHit(_Frozen):
    """One search result.

    Attributes:
        rank: 1-based position.
        path: workspace path (``memory/records/<id>.md`` for a record).
        line: 1-based line of the first shown line that holds a query term.
        score: the score as shown (two decimals).
        heading: the heading of that line's section (may be empty).
        snippet: the excerpt around the best-matching line, at most 300 UTF-16 units
            (``docs/ranking.md``).
        source: ``workspace-file`` or the record's provenance line.
        kind: ``note`` or ``record``.
        record_id: the record's id, for a record.
        record_revision: the record revision (what ``update``/``forget`` take), for a record.
        key: the fact's key, for a record that has one.
    """

    rank: int
    path: str
    line: int
    score: float
    heading: str
    snippet: str
    source: str
    kind: HitKind
    record_id: str | None = None
    record_revision: str | None = None
    key: str | None = None


class SearchResult(_Frozen):
    """The hits shown (at most ``limit``), warnings, and failure details.

    Attributes:
        hits: the results, best first.
        warnings: partial-scan, skipped-file and managed-memory warnings, in order.
        error: the failure message (``None`` on success).
        error_code: a stable code for the failure (``invalid``, ``access_denied``, ...).
        reranked: the hits are in a model's order (optional model assistance), not keyword
            order.
        ranking_notice: why a model's order was not used (``Memory ranking <status>:
            <reason>. Using keyword order.``), shown as the text's first line.
    """

    hits: tuple[SearchHit, ...] = ()
    warnings: tuple[str, ...] = ()
    error: str | None = None
    error_code: str | None = None
    reranked: bool = False
    ranking_notice: str | None = None


class GetResult(_Frozen):
    """One page of a source.

    Attributes:
        path: the normalised workspace path.
        line_start: first line of the selection (1-based).
        line_end: last line of the selection (inclusive), ``None`` for the end of the file.
        char_start: offset of this page within the selection, in UTF-16 units.
        content: the page (at most 3000 units).
        next_char_start: where the next page starts, or ``None`` when this is the last one.
        links: wiki-link targets on this page (at most 20).
        line_count: the lines of the whole source as an editor counts them (a final newline
            ends the last line; ``None`` on failure), so a caller can tell an empty page past
            the end from an empty file.
        source: ``workspace-file`` or the record's provenance line.
        kind: ``note`` or ``record``.
        record_id: the record's id, for a record.
        record_revision: the record revision, for a record.
        key: the fact's key, for a record that has one.
        error: the failure message (``None`` on success).
        error_code: a stable code for the failure.
    """

    path: str | None = None
    line_start: int = 1
    line_end: int | None = None
    char_start: int = 0
    content: str = ""
    next_char_start: int | None = None
    links: tuple[str, ...] = ()
    line_count: int | None = None
    source: str | None = None
    kind: HitKind | None = None
    record_id: str | None = None
    record_revision: str | None = None
    key: str | None = None
    error: str | None = None
    error_code: str | None = None


class RecentSection(_Frozen):
    """One part of the recent-memory review.

    Attributes:
        kind: ``longterm``, ``daily`` or ``record``.
        path: workspace path of the source.
        content: the text shown (trimmed, cut to 500 or 800 units).
        truncated: ``content`` was cut.
        source: ``workspace-file`` or the record's provenance line.
        record_id: the record's id, for a record.
        record_revision: the record revision, for a record.
        key: the fact's key, for a record that has one.
    """

    kind: SectionKind
    path: str
    content: str
    truncated: bool = False
    source: str = "workspace-file"
    record_id: str | None = None
    record_revision: str | None = None
    key: str | None = None


class RecentResult(_Frozen):
    """Long-term memory, the newest daily files and the active records (newest first).

    Attributes:
        sections: in display order.
        warnings: files or folders that were skipped, with why.
        managed_unavailable: why managed records could not be read, if so.
        error: the failure message (``None`` on success).
        error_code: a stable code for the failure.
    """

    sections: tuple[RecentSection, ...] = ()
    warnings: tuple[str, ...] = ()
    managed_unavailable: str | None = None
    error: str | None = None
    error_code: str | None = None


ResultT = TypeVar("ResultT", SearchResult, GetResult, RecentResult)
"""Any read tool's result model."""
