"""The one renderer of the read tools' text (spec 6.5–6.7).

The CLI prints it, every adapter returns it, and the structured results it is made from are
the same answer as data, so what a person sees is what the model sees.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Final

from memquill.foundation.text import utf16_cut

if TYPE_CHECKING:
    from memquill.query._models import GetResult, RecentResult, RecentSection, SearchResult
    from memquill.query._plain import SearchAnswer

RESPONSE_UNITS: Final = 12_000
"""Search and recent text is cut here (UTF-16 units)."""
TRUNCATED: Final = "\n[...truncated...]"
NO_MATCHES: Final = "No matching memories found."
NO_RECENT: Final = "No recent memories found."
ACTIVE_HEADING: Final = "## Active Memory"
"""The one heading over every remembered fact in ``recent``."""
_CENTS: Final = Decimal("0.01")
SHORT_REVISION: Final = 16
"""Hex digits of a record revision shown in text (the write tools accept that prefix)."""


def truncate(text: str, units: int) -> str:
    """``text`` cut to ``units`` UTF-16 units, with the marker when anything was cut."""
    kept, cut = utf16_cut(text, units)
    return kept + TRUNCATED if cut else kept


def score_value(score: float) -> float:
    """``score`` rounded to two decimals as JavaScript's ``toFixed(2)`` does (halves up)."""
    return float(Decimal(score).quantize(_CENTS, rounding=ROUND_HALF_UP))


def shown_source(source: str, record_id: str | None, record_revision: str | None) -> str:
    """``source`` as text shows it: a record's provenance without its id (its path holds it)
    and with its revision cut to 16 hex digits. Structured results keep both in full."""
    if record_id is None or record_revision is None:
        return source
    head, tail = f"memory-record:{record_id}", f"revision:{record_revision}"
    if source.startswith(head):
        source = "memory-record" + source[len(head) :]
    if source.endswith(tail):
        source = source[: -len(tail)] + f"revision:{record_revision[:SHORT_REVISION]}"
    return source


def continuation_marker(next_char_start: int) -> str:
    """The line that tells a reader how to fetch the rest of a source."""
    return (
        f"\n[...truncated; next_char_start={next_char_start}; keep the same file_path and line "
        "range...]"
    )


def render_search(result: SearchResult | SearchAnswer) -> str:
    """Spec 6.5: warnings, then one three-line block per hit (or the no-match line).

    The result model and the plain answer (:mod:`memquill.query._plain`) read the same.

    A ranking notice (spec 7.3) comes first and a blank line, then the plain text: keyword
    results are always shown.
    """
    if result.error is not None:
        return f"Memory search failed: {result.error}"
    notice = result.ranking_notice + "\n\n" if result.ranking_notice else ""
    prefix = notice + ("\n".join(result.warnings) + "\n\n" if result.warnings else "")
    if not result.hits:
        return prefix + NO_MATCHES
    blocks = [
        f"{hit.rank}. [{hit.path}:{hit.line}] (score: {hit.score:.2f}; source: "
        f"{shown_source(hit.source, hit.record_id, hit.record_revision)})\n"
        f"{hit.heading}\n{hit.snippet}"
        for hit in result.hits
    ]
    return prefix + truncate("\n\n".join(blocks), RESPONSE_UNITS)


def render_get(result: GetResult) -> str:
    """Spec 6.6: the source line, the page (or ``(empty file)``), then the wiki links."""
    if result.error is not None:
        return f"Memory read failed: {result.error}"
    page = result.content
    if result.next_char_start is not None:
        page += continuation_marker(result.next_char_start)
    source = result.source
    if source is not None:
        source = shown_source(source, result.record_id, result.record_revision)
    text = f"Source: {result.path}:{result.line_start} ({source})\n{page or '(empty file)'}"
    if result.links:
        text += "\nLinked files: " + ", ".join(f"[[{link}]]" for link in result.links)
    return text


def render_recent(result: RecentResult) -> str:
    """Spec 6.7: one H2 section per source file; cut at 12,000 units.

    **(change)** Warnings come first, as in search: after the sections, the cut could drop
    the very line saying that ``memory.md`` or the remembered facts were skipped.

    **(change)** The remembered facts share one ``## Active Memory`` heading, each fact its
    own ``Source:`` line and text (the spec repeats the heading before every fact, which reads
    as that many sections and costs a model tokens for nothing).
    """
    if result.error is not None:
        return f"Memory recent failed: {result.error}"
    parts: list[str] = []
    if result.managed_unavailable is not None:
        parts.append(f"Managed memory unavailable: {result.managed_unavailable}")
    if result.warnings:
        parts.append("Partial recent memory: " + "\n".join(result.warnings))
    headed = False
    for section in result.sections:
        text = _section(section)
        if section.kind == "record" and not headed:
            text, headed = f"{ACTIVE_HEADING}\n{text}", True
        parts.append(text)
    if not parts:
        return NO_RECENT
    return truncate("\n\n".join(parts), RESPONSE_UNITS)


def _section(section: RecentSection) -> str:
    body = section.content + (TRUNCATED if section.truncated else "")
    if section.kind == "longterm":
        return f"## Long-term Memory\nSource: {section.path}\n{body}"
    if section.kind == "daily":
        name = section.path.rsplit("/", 1)[-1]
        return f"## Daily Memory: {name}\nSource: {section.path}\n{body}"
    source = shown_source(section.source, section.record_id, section.record_revision)
    return f"Source: {section.path} ({source})\n{body}"
