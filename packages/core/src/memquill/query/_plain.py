"""A search without the validation models: its request checked by hand, its answer as data.

A shell's ``memquill search`` runs once and exits; building pydantic's validators would cost
it more than the search itself (issue 36). :func:`search_request` accepts exactly what
:class:`~memquill.query.SearchArgs` accepts when each value already has its type (a string,
a list of strings, an integer), and answers ``None`` for anything else, so the caller
validates that with the model, which words every refusal. :class:`SearchAnswer` holds the
same fields as :class:`~memquill.query.SearchResult` and :meth:`SearchAnswer.as_data` is its
``model_dump(mode="json")``: the text and the JSON shown are the tool's, byte for byte.

:data:`FileType` (the ``file_type`` of ``memory_search``: which sources a search considers)
is here too, so that the shell's search, the argument models and the ranking name it without
loading pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeGuard, cast

from memquill.foundation.text import LONE_SURROGATE, utf16_len

FileType = Literal["all", "daily", "longterm", "notes"]
"""Which sources a search considers: every one, daily notes, long-term memory, other notes."""

FILE_TYPES: Final[tuple[FileType, ...]] = ("all", "daily", "longterm", "notes")
"""Every :data:`FileType`, in the order the tool's schema lists them."""


MAX_SEARCH_LIMIT: Final = 20
"""The most hits one search returns (``memory_search``'s ``limit`` is 1–20). A retriever asked
for more gets these (:func:`memquill.tools.retrieve` clamps); the tool refuses more."""

MAX_QUERY_UNITS: Final = 2000
"""The longest query, in UTF-16 units."""
MAX_TAG_UNITS: Final = 100
"""The longest tag, in UTF-16 units."""
MAX_TAGS: Final = 20
"""The most tags one search filters by."""


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A search's arguments, already checked (the fields of ``SearchArgs``)."""

    query: str
    tags: tuple[str, ...] | None = None
    file_type: FileType = "all"
    limit: int = 5


def _text(value: object, most: int) -> TypeGuard[str]:
    return (
        type(value) is str
        and 1 <= utf16_len(value) <= most
        and LONE_SURROGATE.search(value) is None
    )


def search_request(
    query: object, tags: object = None, file_type: object = "all", limit: object = 5
) -> SearchRequest | None:
    """The request, when ``SearchArgs`` would accept these values as they are; else ``None``.

    Accepted: a query of 1–2000 UTF-16 units; no tags or a list of at most 20, each of
    1–100 units; one of the four file types; an integer limit (never a boolean) of 1–20.
    Every string is well-formed text (no lone surrogate).
    """
    if not _text(query, MAX_QUERY_UNITS):
        return None
    kept: tuple[str, ...] | None = None
    if tags is not None:
        if type(tags) is not list:
            return None
        items = cast("list[object]", tags)
        if len(items) > MAX_TAGS or not all(_text(tag, MAX_TAG_UNITS) for tag in items):
            return None
        kept = tuple(cast("list[str]", items))
    chosen: FileType | None = next((kind for kind in FILE_TYPES if kind == file_type), None)
    if chosen is None or type(file_type) is not str:
        return None
    if type(limit) is not int or not 1 <= limit <= MAX_SEARCH_LIMIT:
        return None
    return SearchRequest(query, kept, chosen, limit)


@dataclass(frozen=True, slots=True)
class FoundHit:
    """One search result: the fields of :class:`~memquill.query.SearchHit`, in its order."""

    rank: int
    path: str
    line: int
    score: float
    heading: str
    snippet: str
    source: str
    kind: Literal["note", "record"]
    record_id: str | None = None
    record_revision: str | None = None
    key: str | None = None

    def as_data(self) -> dict[str, object]:
        """The hit as ``SearchHit.model_dump(mode="json")`` gives it."""
        return {
            "rank": self.rank,
            "path": self.path,
            "line": self.line,
            "score": self.score,
            "heading": self.heading,
            "snippet": self.snippet,
            "source": self.source,
            "kind": self.kind,
            "record_id": self.record_id,
            "record_revision": self.record_revision,
            "key": self.key,
        }


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """A search's hits and warnings: the fields of :class:`~memquill.query.SearchResult`."""

    hits: tuple[FoundHit, ...] = ()
    warnings: tuple[str, ...] = ()
    error: str | None = None
    error_code: str | None = None
    reranked: bool = False
    ranking_notice: str | None = None

    def as_data(self) -> dict[str, object]:
        """The answer as ``SearchResult.model_dump(mode="json")`` gives it."""
        return {
            "hits": [hit.as_data() for hit in self.hits],
            "warnings": list(self.warnings),
            "error": self.error,
            "error_code": self.error_code,
            "reranked": self.reranked,
            "ranking_notice": self.ranking_notice,
        }
