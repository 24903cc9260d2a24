"""``SemanticRanker``: the host's embeddings re-ranking ``memory_search`` candidates, bounded.

This module also holds what is embedded (units: a record whole, a note chunk by chunk) and the
embedding of note chunks at index time, which a session's index refresh triggers.

A :class:`~memquill.tools.CandidateRanker` for a session's search, as
:class:`~memquill.enhance.ModelRanker` is, on the same auxiliary runner (scene
``memory_embed``) with the same statuses. Per search:

1. the workspace's searchable documents (current notes, active records: nothing else can be
   compared) are cut into units, a record whole and a note per chunk, each named and digested
   (:func:`units_of`, below);
2. the units' cached vectors are looked up (:class:`~memquill.semantic._vectors.VectorCache`,
   keyed by the embedder's fingerprint); the query and every missing unit are embedded, in batches,
   through the runner, within the search's budget (3 s by default; what was embedded before it
   ran out is kept, so the next search goes on from there, and :meth:`SemanticRanker.warm` fills
   a large vault beforehand);
3. units that are no longer searchable are deleted from the cache;
4. where keyword search is confident (:func:`~memquill.semantic._hybrid.keyword_confident`), the
   keyword candidates are re-ordered by :func:`~memquill.semantic._hybrid.hybrid_order` within its
   bound, plus a few purely similar documents after them when the keyword set is thin; where
   it is not, the nearest documents join the keyword candidates, merged in by a join score
   with similarity's larger share (:func:`~memquill.semantic._hybrid.joined_order`). The output's
   first line says so: ``Memory ranking semantic: …``.

A ranker over a query engine with a search index also embeds note chunks at index time: the
index tells it of every refresh that read or removed notes (:mod:`memquill.semantic._ranker`),
so a changed note's chunks are embedded, and a deleted note's vectors dropped, by the refresh
that sees it.

Anything wrong — the embedder raises, times out, blocks its thread, never answers, answers
vectors of the wrong shape, is blocked or cooling down — keeps keyword order with the rerank
fallback line, ``Memory ranking <status>: <reason>. Using keyword order.``
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from memquill.enhance import (
    WAIT_MARGIN,
    AuxiliaryResult,
    AuxiliaryRunner,
    blocking,
    default_runner,
    fallback_line,
    run_blocking,
    within,
)
from memquill.errors import MemquillError
from memquill.foundation.text import utf16_cut
from memquill.index import IndexSearcher, SyncReport, unit_digest, vectors_path
from memquill.paths import canonical_workspace, read_text_nofollow
from memquill.query import (
    SNIPPET_UNITS,
    MemoryQuery,
    SearchArgs,
    SearchDocument,
    SearchHit,
    note_document,
    parse_args,
    score_value,
)
from memquill.semantic._embedder import (
    Embedder,
    EmbedFallback,
    EmbedKind,
    Vector,
    embed_call,
    space_of,
)
from memquill.semantic._hybrid import (
    EXTRA,
    JOIN_FULL,
    JOIN_WEIGHT,
    MARGIN,
    MIN_SIMILARITY,
    THIN,
    WEIGHT,
    Similarities,
    hybrid_order,
    joined_order,
    keyword_confident,
)
from memquill.semantic._vectors import VectorCache
from memquill.tools import RankDecision

# ----------------------------------------------------------------------------------------------
# What is embedded: a record whole, a note chunk by chunk; and a purely similar hit's excerpt.
#
# A unit is named so that its vector follows the truth: ``r:<record id>`` (a correction is a new
# id, a forgotten record's id leaves the searchable set), ``n:<path>#<chunk index>`` for a note's
# chunks as ranking cuts them (heading sections, long ones in windows). Its digest (SHA-256 of
# the text, 32 hex) tells a changed chunk from a cached one.


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
        score=score_value(similarity),  # as keyword hits round: halves up
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


# ----------------------------------------------------------------------------------------------
# Note chunks embedded at index time: a session's refresh tells its semantic ranker.
#
# A :class:`~memquill.semantic.SemanticRanker` over a query engine with a search index listens
# to that index (:meth:`memquill.index.IndexSearcher.on_refresh`). When a refresh — the change
# watcher's or the freshness walk's, before a search or from ``memquill index`` — read or removed
# notes, :func:`embed_refreshed` runs then, in the refreshing thread:
#
# 1. the read notes are read again and cut into units as search cuts them; every chunk vector
#    of a removed note, and of a read note's chunk that is no longer there or whose text
#    changed, is deleted first (whatever the embedder does next);
# 2. the chunks not cached yet (new or changed text) are embedded through the auxiliary runner
#    (scene ``memory_embed``, scope ``index``) within the ranker's search budget (3 s); what was
#    embedded before the budget ran out is kept, the rest is embedded by the next semantic search
#    (or ``memquill index --embed``).
#
# Nothing here may break indexing or keyword search: an embedder that fails, times out or is
# blocked, an unreadable note, a vector file that cannot be written are logged on
# ``memquill.semantic`` and left to the next semantic search.


SCOPE: Final = "index"
"""The runner scope of embedding at index time (its own cooldown)."""

EmbedUnits = Callable[[Sequence[Unit], str, str, float], Coroutine[Any, Any, object]]
"""``(units, space, scope, deadline)``: embed ``units`` and store their vectors."""


def embed_refreshed(
    root: Path,
    report: SyncReport,
    *,
    cache: VectorCache,
    space: Callable[[], str],
    embed_units: EmbedUnits,
    timeout: float,
) -> int:
    """Bring ``root``'s note vectors in line with what ``report`` read and removed (see the
    module doc); the number of chunks embedded (0 when anything failed)."""
    try:
        units = _note_units(root, sorted(report.read))
        named = space()
        still = {unit.key: unit.digest for unit in units}
        cache.drop_notes(named, report.read | report.gone, still)
        cached = cache.lookup(named, [(unit.key, unit.digest) for unit in units])
        missing = [unit for unit in units if unit.key not in cached]
        if not missing:
            return 0
        deadline = time.monotonic() + timeout
        run_blocking(embed_units(missing, named, SCOPE, deadline), timeout + 2 * WAIT_MARGIN)
    except EmbedFallback as failure:
        _log.warning(
            "note chunks not embedded at index time (%s: %s); the next semantic search does it",
            failure.result.status,
            failure.result.reason,
        )
        return 0
    except (TimeoutError, MemquillError, OSError, sqlite3.Error) as error:
        _log.warning("note chunks not embedded at index time: %s", error)
        return 0
    return len(missing)


def _note_units(root: Path, paths: Sequence[str]) -> list[Unit]:
    documents: list[SearchDocument] = []
    for path in paths:
        try:
            text = read_text_nofollow(root / path, note=True)
        except MemquillError:
            continue  # changed again or gone: the next refresh sees it
        documents.append(note_document(path, text))
    return units_of(documents)


_log = logging.getLogger("memquill.semantic")


SEARCH_TIMEOUT: Final = 3.0
"""Seconds a search gives the embedder (every call together) before keyword order stays."""
BATCH: Final = 64
"""Texts per embedder call."""
_WARM_TIMEOUT: Final = 120.0


_LATE: Final = RankDecision(notice=fallback_line("failed", "timeout"))


@dataclass(frozen=True, slots=True)
class Similar:
    """A document and how similar it is to the query (its best unit)."""

    document: SearchDocument
    similarity: float
    unit: Unit


class SemanticRanker:
    """Re-ranks a session's search candidates with ``embedder`` (see the module doc).

    Args:
        embedder: the host's embedding model.
        query: the session's query engine (its documents are what is compared).
        runner: the auxiliary runner (default: the process's, shared with model assistance).
        weight: the similarity's share of the hybrid score (0.2).
        extra: purely similar candidates added to a thin keyword set (3; 0: none).
        thin: a keyword set with fewer hits than this is thin (5).
        min_similarity: the cosine a purely similar candidate needs (0.35).
        margin: keyword search is confident when its best score is at least this many times
            the score of the last of its first ``thin`` hits (1.5).
        join_weight: the similarity's share of the join score where keyword search is not
            confident (0.65).
        join_full: at most this many documents join ``thin`` keyword hits or more that keyword
            search is not confident of (1).
        join: whether the nearest documents join where keyword search is not confident
            (``False``: the bounded re-rank everywhere, the earlier rule, for comparison).
        timeout: seconds a search gives the embedder (3).
        cache: where vectors are kept (default: the workspace's file in the index folder).
    """

    adds_candidates: Final = True
    """Asked even for fewer than two keyword hits: it may add candidates."""

    def __init__(
        self,
        embedder: Embedder,
        query: MemoryQuery,
        *,
        runner: AuxiliaryRunner | None = None,
        weight: float = WEIGHT,
        extra: int = EXTRA,
        thin: int = THIN,
        min_similarity: float = MIN_SIMILARITY,
        margin: float = MARGIN,
        join_weight: float = JOIN_WEIGHT,
        join_full: int = JOIN_FULL,
        join: bool = True,
        timeout: float = SEARCH_TIMEOUT,
        cache: VectorCache | None = None,
    ) -> None:
        self.embedder = embedder
        self.query = query
        self._runner = runner
        self.weight = weight
        self.extra = extra
        self.thin = thin
        self.min_similarity = min_similarity
        self.margin = margin
        self.join_weight = join_weight
        self.join_full = join_full
        self.join = join
        self.timeout = timeout
        self._cache = cache
        self._similarities_of = Similarities()
        searcher = query.searcher
        if isinstance(searcher, IndexSearcher):
            searcher.on_refresh(self._refreshed)  # note chunks are embedded at index time

    @property
    def runner(self) -> AuxiliaryRunner:
        """The runner calls go through."""
        if self._runner is None:
            self._runner = default_runner()
        return self._runner

    @property
    def cache(self) -> VectorCache:
        """The workspace's vector cache."""
        if self._cache is None:
            self._cache = VectorCache(vectors_path(canonical_workspace(self.query.workspace)))
        return self._cache

    async def rank(
        self,
        query: str,
        hits: Sequence[SearchHit],
        *,
        scope: str,
        search: SearchArgs | None = None,
    ) -> RankDecision:
        """The hybrid order of ``hits`` (and any purely similar candidates), or why not."""
        args = search or parse_args(SearchArgs, {"query": query})
        decision = self._decide(query, hits, args, scope)
        return await within(decision, self.timeout + WAIT_MARGIN, _LATE)

    def rank_blocking(
        self,
        query: str,
        hits: Sequence[SearchHit],
        *,
        scope: str,
        search: SearchArgs | None = None,
    ) -> RankDecision:
        """:meth:`rank` for synchronous callers (on the process's model-call loop)."""
        call = self.rank(query, hits, scope=scope, search=search)
        return blocking(call, self.timeout + 2 * WAIT_MARGIN, _LATE)

    async def similar(
        self, query: str, *, scope: str, search: SearchArgs | None = None
    ) -> tuple[list[Similar], AuxiliaryResult | None]:
        """Every admitted document by similarity to ``query``, most similar first (ties: path),
        or the runner's failure. Dense retrieval alone, for comparison (benchmarks)."""
        args = search or parse_args(SearchArgs, {"query": query})
        try:
            ranked, _ = await self._similarities(
                query, args, scope, time.monotonic() + self.timeout
            )
        except EmbedFallback as failure:
            return [], failure.result
        return ranked, None

    async def warm(self, *, scope: str = "warm", timeout: float = _WARM_TIMEOUT) -> int:
        """Embed every unit not cached yet (each call within ``timeout``); how many were.

        Raises:
            RuntimeError: the embedder failed (the message is its status and reason).
        """
        args = parse_args(SearchArgs, {"query": "warm"})
        documents, _ = await asyncio.to_thread(self.query.documents, args)
        units = units_of(documents)
        try:
            space = self._space()
            wanted = [(u.key, u.digest) for u in units]
            cached = await asyncio.to_thread(self.cache.lookup, space, wanted)
            missing = [unit for unit in units if unit.key not in cached]
            deadline = time.monotonic() + timeout * (1 + len(missing) // BATCH)
            await self._embed_units(missing, space, scope, deadline, per_call=timeout)
        except EmbedFallback as failure:
            raise RuntimeError(f"{failure.result.status}: {failure.result.reason}") from None
        return len(missing)

    # -- internals -------------------------------------------------------------------------

    def _refreshed(self, root: Path, report: SyncReport) -> None:
        try:
            if root != canonical_workspace(self.query.workspace):
                return
        except (MemquillError, OSError):
            return
        embed_refreshed(
            root,
            report,
            cache=self.cache,
            space=self._space,
            embed_units=self._embed_units,
            timeout=self.timeout,
        )

    async def _decide(
        self, query: str, hits: Sequence[SearchHit], args: SearchArgs, scope: str
    ) -> RankDecision:
        try:
            ranked, similarity = await self._similarities(
                query, args, scope, time.monotonic() + self.timeout
            )
        except EmbedFallback as failure:
            return RankDecision(notice=fallback_line(failure.result.status, failure.result.reason))
        scores = [hit.score for hit in hits]
        joined = self.join and not keyword_confident(scores, self.thin, self.margin)
        shown = {hit.path for hit in hits}
        extra: list[SearchHit] = []
        similar: list[float] = []
        keyword = [similarity.get(hit.path, 0.0) for hit in hits]
        # Where keyword search is not confident, a document joins only when it is nearer than
        # every keyword hit: a weak embedder then cannot push aside what keyword search found.
        floor = max(keyword) if joined and keyword else -1.0
        limit = self.extra if len(hits) < self.thin else self.join_full if joined else 0
        if limit:
            for found in ranked:
                if len(extra) >= limit or found.similarity < self.min_similarity:
                    break
                if found.similarity <= floor:
                    break
                if found.document.path not in shown:
                    extra.append(extra_hit(found.document, found.unit, found.similarity))
                    similar.append(found.similarity)
        if not extra and len(hits) < 2:
            return RankDecision()  # nothing to order: the plain search
        note = "Memory ranking semantic: keyword results re-ordered by similarity"
        if extra:
            note += f", {len(extra)} found by similarity alone"
        if joined:
            # Not confident: the nearest documents compete with the keyword hits.
            full = joined_order(scores, keyword, similar, self.weight, self.join_weight)
        else:
            order = hybrid_order(scores, keyword, self.weight)
            full = (*order, *range(len(hits), len(hits) + len(extra)))
        return RankDecision(order=full, extra=tuple(extra), note=note + ".")

    async def _similarities(
        self, query: str, args: SearchArgs, scope: str, deadline: float
    ) -> tuple[list[Similar], dict[str, float]]:
        documents, admitted = await asyncio.to_thread(self.query.documents, args)
        units = units_of(documents)
        space = self._space()
        cache = self.cache
        cached = await asyncio.to_thread(cache.lookup, space, [(u.key, u.digest) for u in units])
        (query_vector,) = await self._embed([query], "query", scope, deadline)
        missing = [unit for unit in units if unit.key not in cached]
        cached.update(await self._embed_units(missing, space, scope, deadline))
        await asyncio.to_thread(cache.prune, space, [unit.key for unit in units])
        pairs = [(unit.key, unit.digest) for unit in units]
        values = self._similarities_of.cosines(
            space, pairs, [cached[unit.key] for unit in units], query_vector
        )
        best: dict[str, Similar] = {}
        for unit, value in zip(units, values, strict=True):
            if unit.document.path not in admitted:
                continue
            held = best.get(unit.document.path)
            if held is None or value > held.similarity:
                best[unit.document.path] = Similar(unit.document, value, unit)
        ranked = sorted(best.values(), key=lambda s: (-s.similarity, s.document.path))
        return ranked, {path: found.similarity for path, found in best.items()}

    async def _embed_units(
        self,
        units: Sequence[Unit],
        space: str,
        scope: str,
        deadline: float,
        *,
        per_call: float | None = None,
    ) -> dict[str, Vector]:
        done: dict[str, Vector] = {}
        for start in range(0, len(units), BATCH):
            batch = units[start : start + BATCH]
            vectors = await self._embed(
                [unit.text for unit in batch], "document", scope, deadline, per_call
            )
            rows = [(u.key, u.digest, v) for u, v in zip(batch, vectors, strict=True)]
            await asyncio.to_thread(self.cache.store, space, rows)
            done.update((u.key, v) for u, v in zip(batch, vectors, strict=True))
        return done

    async def _embed(
        self,
        texts: list[str],
        kind: EmbedKind,
        scope: str,
        deadline: float,
        per_call: float | None = None,
    ) -> tuple[Vector, ...]:
        remaining = deadline - time.monotonic() if per_call is None else per_call
        return await embed_call(self.runner, self.embedder, texts, kind, scope, remaining)

    def _space(self) -> str:
        return space_of(self.runner, self.embedder)

    def __repr__(self) -> str:
        return f"SemanticRanker({self.embedder!r})"
