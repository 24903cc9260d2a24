"""Ranking: filters, a BM25F score over whole-word terms, best chunk, decay, ties by path.

Pure: no I/O and no clock of its own. Given the same documents, query and ``now`` it returns
the same hits in the same order on every run and platform.

1. Filters (``file_type``, ``tags``) choose the documents that may match, before any scoring or
limiting. 2. Every matching document gets a BM25F score: per term, the body count (normalised by
body length) plus weighted counts in the title, tags, aliases, headings and path, saturated by
``k1`` and weighted by the term's idf over the whole document set. A month the query names ("in
July 2026") counts as one more term, held by the documents whose path is dated in that month
(:mod:`memquill.query._dates`). 3. Recency is a bounded prior on paths ending in
``YYYY-MM-DD.md``: the score is multiplied by ``1 - w * (1 - 2 ** (-age / half_life))`` (``w`` =
``recency_weight``, 0.2; half-life 30 days), between 1 (today) and ``1 - w`` (long ago). It
reorders hits within that margin and never buries a clearly better older match
(``docs/ranking.md``). 4. The best documents (``rerank_depth``) are re-scored with their best
chunk: the chunk whose terms score highest (ties: the earliest) adds ``chunk_weight`` times its
score. Adding never lowers a score, so no document outside that set could have ranked inside it.
The hit keeps the query terms its body holds, with their idf, for its excerpt
(:mod:`memquill.query._excerpt`). 5. Ties break by path in UTF-16 code-unit order.

What ranking works with is here too: its constants (:class:`RankParams`), the shape of a
document set (:class:`RankCorpus`) and a ranked hit (:class:`RankedHit`). :func:`rank` reads
any :class:`RankCorpus`: the in-memory :class:`Corpus` of a full scan, or a search index
serving the same figures from disk, so the two always rank alike.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Final, Protocol

from memquill.foundation.text import path_key
from memquill.query._dates import MonthKey, month_matches, path_day, query_months
from memquill.query._documents import DocumentKind, SearchDocument
from memquill.query._markdown import Chunk
from memquill.query._plain import FileType
from memquill.query._tokens import count_term, query_terms, search_prefixes

Posting = tuple[int, int, tuple[int, ...] | None]
"""Document index, body count, per-field counts (``None`` when no field holds the term)."""


@dataclass(frozen=True, slots=True)
class RankParams:
    """Ranking constants (chosen on LoCoMo conversations 1–5; see ``benchmarks/``).

    Attributes:
        k1: term-frequency saturation.
        b: strength of body-length normalisation among notes.
        record_b: the same among records (short facts: length says little about relevance).
        field_weights: weights of title, tags, aliases, headings and path against the body's 1.
        date_weight: weight of a dated path in the month the query names, as a field count.
        chunk_weight: weight of the best chunk's score in the final score.
        rerank_depth: how many top documents are re-scored with their best chunk.
        half_life_days: half-life of a dated path's recency; ``None`` turns recency off.
        recency_weight: the most recency can take off a score (an old dated note keeps at
            least ``1 - recency_weight`` of it; see :func:`recency_factor`).
    """

    k1: float = 0.6
    b: float = 0.75
    record_b: float = 0.0
    field_weights: tuple[float, ...] = (3.0, 3.0, 3.0, 2.0, 1.0)
    date_weight: float = 3.0
    chunk_weight: float = 1.0
    rerank_depth: int = 50
    half_life_days: float | None = 30.0
    recency_weight: float = 0.2


@dataclass(frozen=True, slots=True)
class RankedHit:
    """A ranked document, its final score, its best chunk (``None``: none matched), and the
    query terms its body holds with their idf (what an excerpt looks for)."""

    document: SearchDocument
    score: float
    chunk: Chunk | None
    terms: tuple[tuple[str, float], ...] = ()


class RankDocument(Protocol):
    """What ranking reads of every candidate document (a :class:`SearchDocument` is one)."""

    @property
    def path(self) -> str: ...
    @property
    def kind(self) -> DocumentKind: ...
    @property
    def length(self) -> int: ...
    @property
    def tag_keys(self) -> frozenset[str]: ...


class RankCorpus(Protocol):
    """A document set as :func:`rank` reads it.

    :class:`Corpus` holds every document in memory; a search index (:mod:`memquill.index`)
    serves the same figures from disk and may list, in ``postings``, only the documents that
    can still reach the re-scored set, as long as ``size``, ``frequency`` and
    ``average_length`` describe the whole set.
    """

    @property
    def size(self) -> int:
        """How many documents the set holds (the ``N`` of idf)."""
        ...

    @property
    def average_length(self) -> Mapping[str, float]:
        """Mean body length per document kind."""
        ...

    def postings(self, term: str) -> Sequence[Posting]:
        """Documents holding ``term``, with their counts."""
        ...

    def frequency(self, term: str) -> int:
        """How many documents of the whole set hold ``term``."""
        ...

    def stats(self, index: int) -> RankDocument:
        """Document ``index`` as ranking scores it."""
        ...

    def day(self, index: int) -> date | None:
        """The day document ``index``'s path names, if any."""
        ...

    def path_key(self, index: int) -> bytes:
        """The tie-break key of document ``index``."""
        ...

    def month_holders(self, key: MonthKey) -> tuple[int, Sequence[int]]:
        """How many documents of the whole set are dated in ``key``, and those to score."""
        ...

    def rescoring(self, indexes: Sequence[int]) -> None:
        """Told which documents :meth:`chunk_counts` is about to be asked about (a corpus
        may fetch their figures at once)."""
        ...

    def chunk_counts(self, index: int, term: str) -> tuple[int, ...]:
        """How often ``term`` occurs in each chunk of document ``index``."""
        ...

    def document(self, index: int) -> SearchDocument:
        """Document ``index`` in full (only hits are asked for)."""
        ...


CANDIDATES: Final = 20
"""Hits ranked per search; ``limit`` shows a prefix of them."""

_LONGTERM: Final = re.compile(r"memory\.md", re.IGNORECASE)
_DAY_SECONDS: Final = 86_400.0
_POSTINGS_MEMO: Final = 4096


class Corpus:
    """A fixed document set in memory, with per-term postings computed on first use.

    Args:
        documents: every searchable document, in a deterministic order.
    """

    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        self.documents = tuple(documents)
        # Notes and records are normalised among their own kind: a record is a short fact,
        # and one long note must not make every record look short.
        lengths: dict[str, list[int]] = {"note": [], "record": []}
        for document in self.documents:
            lengths[document.kind].append(document.length)
        self.average_length = {
            kind: sum(values) / len(values) if values else 0.0 for kind, values in lengths.items()
        }
        # Per document, computed once: the dated path's day and the tie-break key.
        self.days = tuple(path_day(document.path) for document in self.documents)
        self.months = tuple(None if day is None else (day.year, day.month) for day in self.days)
        self.path_keys = tuple(path_key(document.path) for document in self.documents)
        self._postings: dict[str, tuple[Posting, ...]] = {}

    @property
    def size(self) -> int:
        """How many documents the set holds."""
        return len(self.documents)

    def postings(self, term: str) -> tuple[Posting, ...]:
        """Every document that holds ``term``, with its counts."""
        cached = self._postings.get(term)
        if cached is not None:
            return cached
        found: list[Posting] = []
        prefixes = search_prefixes(term)
        for index, document in enumerate(self.documents):
            # The substring test rules most documents out at C speed before counting words
            # (in the text without camelCase marks, which holds every prefix a term has).
            folded, field_text = document.folded, document.field_text
            body = count_term(folded, term) if any(p in document.plain for p in prefixes) else 0
            fields: tuple[int, ...] | None = None
            field_plain = document.field_plain
            if any(p in field_plain for p in prefixes) and count_term(field_text, term):
                fields = tuple(count_term(field, term) for field in document.fields)
            if body or fields:
                found.append((index, body, fields))
        if len(self._postings) >= _POSTINGS_MEMO:
            self._postings.clear()
        result = tuple(found)
        self._postings[term] = result
        return result

    def frequency(self, term: str) -> int:
        """How many documents hold ``term``."""
        return len(self.postings(term))

    def document(self, index: int) -> SearchDocument:
        """Document ``index`` (every one is in memory, in full)."""
        return self.documents[index]

    # Ranking's cheap view and the full document are one here (a persistent corpus keeps
    # figures apart from the text, hence two names in :class:`RankCorpus`).
    stats = document

    def day(self, index: int) -> date | None:
        """The day document ``index``'s path names."""
        return self.days[index]

    def path_key(self, index: int) -> bytes:
        """The tie-break key of document ``index``."""
        return self.path_keys[index]

    def month_holders(self, key: MonthKey) -> tuple[int, tuple[int, ...]]:
        """The documents dated in the month ``key`` (all of them are scored)."""
        holding = tuple(
            index
            for index, month in enumerate(self.months)
            if month is not None and month_matches(key, *month)
        )
        return len(holding), holding

    def rescoring(self, indexes: Sequence[int]) -> None:
        """Nothing to fetch: every document is in memory."""

    def chunk_counts(self, index: int, term: str) -> tuple[int, ...]:
        """How often ``term`` occurs in each chunk of document ``index``."""
        return self.documents[index].chunk_counts(term)


def rank(
    corpus: RankCorpus,
    query: str,
    *,
    now: datetime,
    tags: Iterable[str] = (),
    file_type: FileType = "all",
    params: RankParams | None = None,
    candidates: int = CANDIDATES,
) -> list[RankedHit]:
    """The best ``candidates`` documents for ``query``, best first.

    Args:
        corpus: the documents.
        query: the raw query text.
        now: the moment decay is measured from (UTC).
        tags: keep only documents with one of these tags (``#`` and case ignored).
        file_type: keep only ``daily``, ``longterm`` or ``notes`` documents (``all``: every one).
        params: ranking constants.
        candidates: how many hits to return at most.
    """
    params = params or RankParams()
    terms = query_terms(query)
    wanted = frozenset(tag.lower().removeprefix("#") for tag in tags)
    size = corpus.size
    matched: dict[int, list[tuple[str, float]]] = {}
    scores: dict[int, float] = {}
    for term in terms:
        postings = corpus.postings(term)
        if not postings:
            continue
        weight = idf(size, corpus.frequency(term))
        for index, body, fields in postings:
            document = corpus.stats(index)
            if not matches_filters(document, file_type, wanted):
                continue
            frequency = _frequency(params, corpus.average_length, document, body, fields)
            gain = weight * frequency * (params.k1 + 1.0) / (frequency + params.k1)
            scores[index] = scores.get(index, 0.0) + gain
            if body:
                matched.setdefault(index, []).append((term, weight))
    _score_months(corpus, query, params, file_type, wanted, scores)
    factors = {index: day_factor(corpus.day(index), now, params) for index in scores}
    decayed = [
        (-score * factors[index], corpus.path_key(index), index) for index, score in scores.items()
    ]
    decayed.sort()
    hits: list[tuple[float, bytes, int, int | None, tuple[tuple[str, float], ...]]] = []
    rescored = decayed[: max(params.rerank_depth, candidates)]
    corpus.rescoring([index for _, _, index in rescored])
    for negative, key, index in rescored:
        terms = tuple(matched.get(index, ()))
        position, chunk_score = best_chunk(corpus, index, terms, params.k1)
        score = -negative + params.chunk_weight * chunk_score * factors[index]
        hits.append((-score, key, index, position, terms))
    hits.sort(key=lambda item: item[:2])
    ranked: list[RankedHit] = []
    for negative, _, index, position, terms in hits[:candidates]:
        document = corpus.document(index)
        chunk = None if position is None else document.chunk_list()[position]
        ranked.append(RankedHit(document, -negative, chunk, terms))
    return ranked


def records_admitted(file_type: FileType) -> bool:
    """Whether remembered facts pass the ``file_type`` filter: they are long-term memory
    (:func:`matches_filters` on a record's path says the same)."""
    return file_type in ("all", "longterm")


def matches_filters(document: RankDocument, file_type: FileType, tags: frozenset[str]) -> bool:
    """Whether ``document`` passes the ``file_type`` filter (spec 2.4) and the tag filter."""
    if file_type != "all":
        path = document.path
        daily = path.startswith(("memory/daily/", "daily/"))
        longterm = bool(_LONGTERM.fullmatch(path)) or path.startswith("memory/records/")
        if file_type == "daily" and not daily:
            return False
        if file_type == "longterm" and not longterm:
            return False
        if file_type == "notes" and (daily or longterm):
            return False
    return not tags or not tags.isdisjoint(document.tag_keys)


def recency_factor(
    path: str, now: datetime, half_life_days: float | None = 30.0, weight: float = 0.2
) -> float:
    """``1 - weight * (1 - 2 ** (-age / half_life))`` for a path ending in a valid
    ``YYYY-MM-DD.md`` (age in days from that day's midnight UTC to ``now``, at least 0), else 1.

    Recency is a bounded prior: a note from today keeps its whole score, a note of any age at
    least ``1 - weight`` of it. Recency so reorders hits whose scores are within that margin
    and never buries a match clearly better than a newer one.
    """
    params = RankParams(half_life_days=half_life_days, recency_weight=weight)
    return day_factor(path_day(path), now, params)


def month_gain(total: int, holding: int, params: RankParams) -> float:
    """The score a month the query names adds to each document dated in it."""
    weight = params.date_weight
    return idf(total, holding) * weight * (params.k1 + 1.0) / (weight + params.k1)


def day_factor(day: date | None, now: datetime, params: RankParams) -> float:
    """The recency factor of a document whose path names ``day`` (1 for ``None``)."""
    if day is None or params.half_life_days is None:
        return 1.0
    moment = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
    age = max(0.0, (moment - datetime.combine(day, time(), UTC)).total_seconds() / _DAY_SECONDS)
    remaining = math.exp(-math.log(2) * age / params.half_life_days)
    return 1.0 - params.recency_weight * (1.0 - remaining)


def _score_months(
    corpus: RankCorpus,
    query: str,
    params: RankParams,
    file_type: FileType,
    wanted: frozenset[str],
    scores: dict[int, float],
) -> None:
    """Add each month the query names as a term held by the documents dated in it."""
    if not params.date_weight:
        return
    for key in query_months(query):
        holding, indexes = corpus.month_holders(key)
        if not holding:
            continue
        gain = month_gain(corpus.size, holding, params)
        for index in indexes:
            if matches_filters(corpus.stats(index), file_type, wanted):
                scores[index] = scores.get(index, 0.0) + gain


def idf(total: int, holding: int) -> float:
    """The inverse document frequency of a term ``holding`` of ``total`` documents hold."""
    return math.log(1.0 + (total - holding + 0.5) / (holding + 0.5))


def _frequency(
    params: RankParams,
    averages: Mapping[str, float],
    document: RankDocument,
    body: int,
    fields: tuple[int, ...] | None,
) -> float:
    b = params.record_b if document.kind == "record" else params.b
    average = averages[document.kind]
    norm = 1.0 - b + (b * document.length / average if average else b)
    frequency = body / norm
    if fields is not None:
        for weight, count in zip(params.field_weights, fields, strict=False):
            frequency += weight * count
    return frequency


def best_chunk(
    corpus: RankCorpus, index: int, terms: Iterable[tuple[str, float]], k1: float
) -> tuple[int | None, float]:
    """The position of the chunk scoring highest on the terms the body holds (ties: the
    earliest), and its score."""
    scores: list[float] = []
    for term, idf in terms:
        counts = corpus.chunk_counts(index, term)
        if not scores:
            scores = [0.0] * len(counts)
        for position, count in enumerate(counts):
            if count:
                scores[position] += idf * count * (k1 + 1.0) / (count + k1)
    best: int | None = None
    best_score = 0.0
    for position, score in enumerate(scores):
        if score > best_score:
            best, best_score = position, score
    return best, best_score
