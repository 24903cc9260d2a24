"""What is embedded: a record whole, a note chunk by chunk; and a purely similar hit's excerpt.

A unit is named so that its vector follows the truth: ``r:<record id>`` (a correction is a new
id, a forgotten record's id leaves the searchable set), ``n:<path>#<chunk index>`` for a note's
chunks as ranking cuts them (heading sections, long ones in windows). Its digest (SHA-256 of
the text, 32 hex) tells a changed chunk from a cached one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from memquill.foundation.text import utf16_cut
from memquill.index import unit_digest
from memquill.query import SNIPPET_UNITS, SearchDocument, SearchHit

_ELLIPSIS: Final = "…"


@dataclass(frozen=True, slots=True)
class Unit:
    """One embedded text.

    Attributes:
        key: ``r:<record id>`` or ``n:<path>#<chunk index>``.
        digest: 32 hex of the text's SHA-256.
        text: what is embedded.
        document: the document it belongs to.
        heading: its section heading ("" for a record or before a note's first heading).
        line: its first line (0-based).
    """

    key: str
    digest: str
    text: str
    document: SearchDocument
    heading: str = ""
    line: int = 0


def units_of(documents: Sequence[SearchDocument]) -> list[Unit]:
    """Every unit of ``documents``, in their order."""
    units: list[Unit] = []
    for document in documents:
        if document.kind == "record":
            text = document.content
            units.append(Unit(f"r:{document.record_id}", unit_digest(text), text, document))
            continue
        for index, chunk in enumerate(document.chunk_list()):
            if not chunk.text.strip():
                continue
            key = f"n:{document.path}#{index}"
            digest = unit_digest(chunk.text)
            units.append(Unit(key, digest, chunk.text, document, chunk.heading, chunk.start_line))
    return units


def extra_hit(document: SearchDocument, unit: Unit, similarity: float) -> SearchHit:
    """A purely similar candidate as a hit: its best unit's start, its similarity as score."""
    lines = unit.text.split("\n")
    skip = 0
    if unit.heading and lines[0].lstrip().startswith("#"):
        skip = 1  # the heading is shown as the hit's heading, as for keyword hits
    while skip < len(lines) - 1 and not lines[skip].strip():
        skip += 1
    return SearchHit(
        rank=0,
        path=document.path,
        line=unit.line + skip + 1,
        score=round(similarity, 2),
        heading=unit.heading,
        snippet=snippet("\n".join(lines[skip:])),
        source=document.source,
        kind=document.kind,
        record_id=document.record_id,
        record_revision=document.record_revision,
        key=document.key,
    )


def snippet(text: str, units: int = SNIPPET_UNITS) -> str:
    """``text`` cut to ``units`` UTF-16 units at a space, ``…`` where it was cut."""
    text = text.strip()
    if not utf16_cut(text, units)[1]:
        return text
    cut, _ = utf16_cut(text, units - 1)  # room for the ellipsis
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space > 0:
        cut = cut[:space]
    return cut.rstrip() + _ELLIPSIS
