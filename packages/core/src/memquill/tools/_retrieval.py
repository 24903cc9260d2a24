"""Search hits as retrieval results, and the memory context an agent reads before it answers.

Framework retrievers (LangChain's ``BaseRetriever``, LlamaIndex's) and memory blocks all need
the same two things from the core: search hits as documents with one metadata mapping, and the
text that puts relevant memory into a prompt. Both live here, so an adapter only marshals them
into its framework's types.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from memquill.query import (
    MAX_SEARCH_LIMIT,
    FileType,
    MemoryQuery,
    SearchArgs,
    SearchHit,
    parse_args,
)
from memquill.tools._ranking import CandidateRanker, arrange
from memquill.tools._toolset import MemoryToolset, widened

PRIVATE_METADATA: Final = ("rank", "score", "provenance", "record_id", "record_revision")
"""Metadata no model needs to read: the ordering, the provenance line, a record's id and
revision (noise to a model, and they change on every edit)."""

_CONTEXT_QUERY_CHARS: Final = 1000
"""The start of the user message searched for: search takes 1–2000 UTF-16 units, and 1000
characters never exceed that (a character is one or two units)."""

HITS_HEADING: Final = "## Memory matching the latest message"
"""The heading over the search hits in a memory context, so a model reading the context
tells the review of recent memory from what matched the user's message."""

_log = logging.getLogger("memquill.retrieval")


@dataclass(frozen=True, slots=True)
class RetrievedMemory:
    """One search hit as a framework document.

    Attributes:
        id: the record id for a remembered fact, ``<path>#<line>`` for a note.
        text: the hit's excerpt (read the whole source with ``memory_get``).
        score: the hit's score.
        metadata: ``source`` (workspace path), ``line``, ``rank``, ``score``, ``heading``,
            ``kind`` (``note``/``record``), ``provenance``, ``record_id``, ``record_revision``
            and ``key`` (``None`` for notes, and for a fact without a key).
        private_keys: metadata keys to keep out of what a model or an embedding reads.
    """

    id: str
    text: str
    score: float
    metadata: Mapping[str, Any]
    private_keys: tuple[str, ...]


def retrieve(
    query: MemoryQuery,
    text: str,
    *,
    limit: int = 5,
    tags: Sequence[str] = (),
    file_type: FileType = "all",
    ranker: CandidateRanker | None = None,
    scope: str | None = None,
) -> list[RetrievedMemory]:
    """The search hits for ``text``, best first, as :class:`RetrievedMemory` objects.

    ``limit`` above :data:`~memquill.query.MAX_SEARCH_LIMIT` (20) gives that many at most: a
    framework's ``top_k`` is a wish for "up to k", and memquill never returns more than 20
    hits (excerpts a model reads, not a bulk export). Below 1 it is refused. Search
    warnings (skipped files, unreadable records) are logged on ``memquill.retrieval``, and so
    is the ranking line of a ``ranker`` (semantic recall, a model): how the hits were ordered,
    or why keyword order stayed. ``scope`` is whose search it is (default: the workspace).

    Raises:
        InvalidInputError: an argument is out of bounds (the tool's own message).
        MemquillError: the search failed.
    """
    limit = min(limit, MAX_SEARCH_LIMIT) if type(limit) is int else limit  # a bool stays refused
    args = parse_args(
        SearchArgs, {"query": text, "tags": list(tags), "file_type": file_type, "limit": limit}
    )
    if ranker is None:
        result = query.search(args)
    else:
        candidates = query.search(widened(args))
        decision = ranker.rank_blocking(
            text, candidates.hits, scope=scope or query.workspace, search=args
        )
        result = arrange(candidates, decision, limit)
        if result.ranking_notice:
            _log.info("memquill search: %s", result.ranking_notice)
    for warning in result.warnings:
        _log.warning("memquill search: %s", warning)
    return [_retrieved(hit) for hit in result.hits]


def memory_context(
    toolset: MemoryToolset, question: str, *, days: int = 3, limit: int = 5
) -> list[str]:
    """What an agent should read before answering ``question``: recent memory, then hits.

    The first text is the ``memory_recent`` tool's answer; the second, present only when a
    search for the question's start succeeds with hits, is the ``memory_search`` tool's under
    :data:`HITS_HEADING`. Both are the tools' own texts, so a memory block and a tool call show
    a model the same words; the heading keeps the two apart however a framework joins them.
    """
    texts = [toolset.call("memory_recent", {"days": days}).text]
    question = question.strip()
    if question and limit:
        found = toolset.call(
            "memory_search", {"query": question[:_CONTEXT_QUERY_CHARS], "limit": limit}
        )
        hits = (found.structured or {}).get("hits")
        if not found.is_error and hits:
            texts.append(f"{HITS_HEADING}\n{found.text}")
    return texts


def _retrieved(hit: SearchHit) -> RetrievedMemory:
    record = hit.kind == "record"
    private = PRIVATE_METADATA + (("source",) if record else ())  # a record's path is its id
    if hit.key is None:
        private += ("key",)  # shown to a model only when there is one: the name it can use
    return RetrievedMemory(
        id=hit.record_id if hit.record_id is not None else f"{hit.path}#{hit.line}",
        text=hit.snippet,
        score=hit.score,
        metadata={
            "source": hit.path,
            "line": hit.line,
            "rank": hit.rank,
            "score": hit.score,
            "heading": hit.heading,
            "kind": hit.kind,
            "provenance": hit.source,
            "record_id": hit.record_id,
            "record_revision": hit.record_revision,
            "key": hit.key,
        },
        private_keys=private,
    )
