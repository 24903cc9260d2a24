"""Which documents of an :class:`~memquill.query._inverted.IndexCorpus` can be among the best
``depth`` of a ranking in which every document is re-scored: exact pruning.

A caller that ranks with ``candidates`` covering the whole set (``ItemStore``: every item that
matches, then sorted by score with ties in its own order and cut to ``offset + limit``) has
:func:`~memquill.query._rank.rank` score and re-score every document holding a query term.
:func:`narrow` first finds the few that can be among the best ``depth`` and gives ``rank`` a
view of the corpus (:class:`KeptCorpus`) listing only those, with the whole set's figures (the
number of documents, each term's frequency, the mean lengths), so each is scored exactly as in
the whole set: the same documents, scores and order come out, at the cost of the few.

Bounds. A document's final score is ``f * (S + w * C)``: ``f`` its recency factor, ``S`` the
sum of its terms' BM25F gains (and a month's), ``C`` the score of its best chunk on the query
terms its body holds, ``w`` the chunk weight. A term's chunk score is saturated and never
reaches ``idf * (k1 + 1)``, so ``0 <= C < `` the sum of that over the terms its body holds. A
document that is one chunk of its whole text (:func:`~memquill.query._inverted.single_chunk`:
most items) has its body's counts as its chunk's, so its ``C``, and its score, is known. A
document of several chunks that still reaches the cut-off then has its ``C`` worked out by
ranking's own :func:`~memquill.query._rank.best_chunk` (what ranking would do for it anyway),
and the cut-off is taken again. Every bound holds with a relative margin (:data:`MARGIN`) far
above floating-point error (sums here may round differently from ranking's own in the last
bits).

Ties. Ranking is deterministic: two one-chunk documents with the same inputs (kind, length where
its kind's ``b`` normalises by length, the day their path names, and each query term's body and
field counts) get the same score, bit for bit; so do two of several chunks with the same inputs
and the same best chunk score. Of such a group, at most ``depth`` can be among the best
``depth``: the first ones in the caller's tie ``order``.

A document is dropped when ``depth`` others provably rank before it: their lower bounds are
above its upper bound, or they are of its group and come first in ``order``, or some of each.
Nothing is dropped when no more than ``depth`` documents match.
"""

from __future__ import annotations

import typing
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime
from itertools import compress, repeat
from operator import add, ge, itemgetter
from typing import Final

from memquill.query._dates import MonthKey, query_months
from memquill.query._documents import SearchDocument
from memquill.query._inverted import IndexCorpus
from memquill.query._plain import FileType
from memquill.query._rank import (
    Posting,
    RankDocument,
    RankParams,
    best_chunk,
    day_factor,
    idf,
    matches_filters,
    month_gain,
)
from memquill.query._tokens import query_terms

if typing.TYPE_CHECKING:
    from _typeshed import SupportsRichComparison

MARGIN: Final = 1e-9
"""Relative slack of every bound: many orders above the rounding of a sum of gains."""

_Shape = tuple[float, int, tuple[int, ...] | None, bool]
"""What a term's gain depends on: the length norm, the body and field counts, one chunk."""


def narrow(
    corpus: IndexCorpus,
    query: str,
    *,
    depth: int,
    order: Callable[[int], SupportsRichComparison],
    now: datetime,
    tags: Iterable[str] = (),
    file_type: FileType = "all",
    params: RankParams | None = None,
) -> IndexCorpus | KeptCorpus:
    """``corpus`` as :func:`~memquill.query._rank.rank` (with ``candidates`` of at least
    ``corpus.size``) reads it for the best ``depth`` of ``query``: a :class:`KeptCorpus` of the
    documents that may be among them, or ``corpus`` itself when nothing is dropped.

    Args:
        corpus: the documents.
        query: the raw query text.
        depth: how many of the best (by final score, then ``order``) the caller keeps.
        order: the caller's tie order of document indexes (the first come first).
        now: the moment decay is measured from (UTC), as ``rank`` gets it.
        tags: the tag filter, as ``rank`` gets it.
        file_type: the file type filter, as ``rank`` gets it.
        params: ranking constants, as ``rank`` gets them.
    """
    params = params or RankParams()
    wanted = frozenset(tag.lower().removeprefix("#") for tag in tags)
    terms = query_terms(query)
    low, high = _bounds(corpus, terms, query, now, file_type, wanted, params)
    if depth <= 0 or len(high) <= depth:
        return corpus
    kept = _reaching(low, high, depth)
    chunks: dict[int, float] = {}
    several = [index for index in kept if not corpus.by_index().singles[index]]
    if len(kept) > depth and several:
        chunks = _complete(corpus, terms, several, (low, high), now, params)
        kept = _reaching({i: low[i] for i in kept}, {i: high[i] for i in kept}, depth)
    if len(kept) > depth:
        kept = _first_of_groups(corpus, terms, kept, (low, high), chunks, depth, order, params)
    return KeptCorpus(corpus, set(kept))


class KeptCorpus:
    """An :class:`~memquill.query._inverted.IndexCorpus` whose postings and month holders list
    only the documents kept; every other figure is the whole corpus's."""

    def __init__(self, corpus: IndexCorpus, kept: set[int]) -> None:
        self.corpus = corpus
        self.kept = kept

    @property
    def size(self) -> int:
        """How many documents the whole corpus takes."""
        return self.corpus.size

    @property
    def average_length(self) -> Mapping[str, float]:
        """The whole corpus's mean body length per kind."""
        return self.corpus.average_length

    def postings(self, term: str) -> list[Posting]:
        """The postings of ``term`` of the documents kept."""
        postings = self.corpus.postings(term)
        return list(compress(postings, map(self.kept.__contains__, map(_INDEX, postings))))

    def frequency(self, term: str) -> int:
        """How many documents of the whole corpus hold ``term``."""
        return self.corpus.frequency(term)

    def month_holders(self, key: MonthKey) -> tuple[int, list[int]]:
        """How many documents of the whole corpus are dated in ``key``, and those kept."""
        holding, indexes = self.corpus.month_holders(key)
        return holding, [index for index in indexes if index in self.kept]

    def stats(self, index: int) -> RankDocument:
        """Document ``index``, as ranking scores it."""
        return self.corpus.stats(index)

    def day(self, index: int) -> date | None:
        """The day document ``index``'s path names."""
        return self.corpus.day(index)

    def path_key(self, index: int) -> bytes:
        """The tie-break key of document ``index``."""
        return self.corpus.path_key(index)

    def rescoring(self, indexes: Sequence[int]) -> None:
        """Nothing to fetch: every document is in memory."""

    def chunk_counts(self, index: int, term: str) -> tuple[int, ...]:
        """How often ``term`` occurs in each chunk of document ``index``."""
        return self.corpus.chunk_counts(index, term)

    def document(self, index: int) -> SearchDocument:
        """Document ``index`` (the whole corpus's ``origin`` then names it)."""
        return self.corpus.document(index)


_INDEX: Final = itemgetter(0)
_BODY: Final = itemgetter(1)
_FIELDS: Final = itemgetter(2)


class _Gains(dict[_Shape, tuple[float, float]]):
    """A term's lower and upper bound on a document's final score before decay, by the shape
    of its posting (worked out once per shape: most documents share a few)."""

    def __init__(self, weight: float, params: RankParams) -> None:
        super().__init__()
        self.weight = weight
        self.params = params

    def __missing__(self, shape: _Shape) -> tuple[float, float]:
        norm, body, fields, single = shape
        params, weight = self.params, self.weight
        k1 = params.k1
        frequency = body / norm
        if fields is not None:
            for field_weight, count in zip(params.field_weights, fields, strict=False):
                frequency += field_weight * count
        gain = weight * frequency * (k1 + 1.0) / (frequency + k1)
        chunk_low = chunk_high = 0.0
        if body:
            # One chunk: its count is the body's. Several: each saturates below k1 + 1.
            chunk_high = weight * (body * (k1 + 1.0) / (body + k1) if single else k1 + 1.0)
            chunk_low = chunk_high if single else 0.0
        bounds = (
            gain + params.chunk_weight * chunk_low,
            gain + params.chunk_weight * chunk_high,
        )
        self[shape] = bounds
        return bounds


def _bounds(
    corpus: IndexCorpus,
    terms: Sequence[str],
    query: str,
    now: datetime,
    file_type: FileType,
    wanted: frozenset[str],
    params: RankParams,
) -> tuple[dict[int, float], dict[int, float]]:
    """Every document ``rank`` scores, with a lower and an upper bound of its final score
    (before :data:`MARGIN`)."""
    by_index = corpus.by_index()
    documents, singles = by_index.documents, by_index.singles
    filtered = file_type != "all" or bool(wanted)
    passing: dict[int, bool] = {}

    def passes(index: int) -> bool:
        found = passing.get(index)
        if found is None:
            document = documents[index]
            assert document is not None
            found = passing[index] = matches_filters(document, file_type, wanted)
        return found

    averages = corpus.average_length
    by_kind = {"note": params.b, "record": params.record_b}

    def norm(index: int) -> float:
        document = documents[index]
        assert document is not None
        b, average = by_kind[document.kind], averages[document.kind]
        return 1.0 - b + (b * document.length / average if average else b)

    # No kind normalised by length (a kind without documents has a mean of 0): every norm
    # is 1 (within a rounding, far inside the margin).
    flat = not any(b and averages[kind] for kind, b in by_kind.items())
    low: dict[int, float] = {}
    high: dict[int, float] = {}
    size = corpus.size
    for term in terms:
        postings: Sequence[Posting] = corpus.postings(term)
        if not postings:
            continue
        gains = _Gains(idf(size, corpus.frequency(term)), params)
        if filtered:
            postings = list(compress(postings, map(passes, map(_INDEX, postings))))
        indexes = list(map(_INDEX, postings))
        norms = [1.0] * len(indexes) if flat else list(map(norm, indexes))
        bodies, fields = map(_BODY, postings), map(_FIELDS, postings)
        shapes = zip(norms, bodies, fields, map(singles.__getitem__, indexes), strict=True)
        found = list(map(gains.__getitem__, shapes))
        for bounds, position in ((low, 0), (high, 1)):
            added = map(
                add, map(bounds.get, indexes, repeat(0.0)), map(itemgetter(position), found)
            )
            bounds.update(zip(indexes, added, strict=True))
    if params.date_weight:
        for key in query_months(query):
            holding, indexes = corpus.month_holders(key)
            if not holding:
                continue
            gain = month_gain(size, holding, params)
            for index in indexes:
                if not filtered or passes(index):
                    low[index] = low.get(index, 0.0) + gain
                    high[index] = high.get(index, 0.0) + gain
    days = by_index.days
    factors: dict[date, float] = {}
    for index in compress(list(low), map(days.__getitem__, low)):
        day = days[index]
        assert day is not None
        factor = factors.get(day)
        if factor is None:
            factor = factors[day] = day_factor(day, now, params)
        low[index] *= factor
        high[index] *= factor
    return low, high


def _reaching(low: dict[int, float], high: dict[int, float], depth: int) -> list[int]:
    """The documents whose upper bound reaches the ``depth``-th best lower bound."""
    theta = sorted(low.values(), reverse=True)[depth - 1]
    cut = theta * (1.0 - MARGIN) / (1.0 + MARGIN)
    return list(compress(high, map(ge, high.values(), repeat(cut))))


def _complete(
    corpus: IndexCorpus,
    terms: Sequence[str],
    several: list[int],
    bounds: tuple[dict[int, float], dict[int, float]],
    now: datetime,
    params: RankParams,
) -> dict[int, float]:
    """Bring the bounds of ``several`` (documents of several chunks) together: each one's best
    chunk scored as ranking scores it (:func:`~memquill.query._rank.best_chunk`, with the
    arguments ranking gives it; each document remembers its chunk counts for ranking's own
    pass). Returns those chunk scores."""
    low, high = bounds
    wanted = set(several)
    held: dict[int, list[tuple[str, float]]] = {}
    size = corpus.size
    for term in terms:
        postings = corpus.postings(term)
        if not postings:
            continue
        weight = idf(size, corpus.frequency(term))
        for index, body, _ in compress(postings, map(wanted.__contains__, map(_INDEX, postings))):
            if body:
                held.setdefault(index, []).append((term, weight))
    days = corpus.by_index().days
    chunks: dict[int, float] = {}
    for index in several:
        _, chunk = best_chunk(corpus, index, held.get(index, ()), params.k1)
        day = days[index]
        factor = 1.0 if day is None else day_factor(day, now, params)
        low[index] += params.chunk_weight * chunk * factor
        high[index] = low[index]
        chunks[index] = chunk
    return chunks


def _first_of_groups(
    corpus: IndexCorpus,
    terms: Sequence[str],
    kept: list[int],
    bounds: tuple[dict[int, float], dict[int, float]],
    chunks: dict[int, float],
    depth: int,
    order: Callable[[int], SupportsRichComparison],
    params: RankParams,
) -> list[int]:
    """``kept`` without the documents that ``depth`` others provably rank before: those of
    their group that come first in ``order``, and those whose lower bound is above theirs
    (none outside ``kept`` is). A group is the one-chunk documents with the same ranking
    inputs, or those of several chunks with the same inputs and best chunk score (``chunks``:
    what ranking's own :func:`~memquill.query._rank.best_chunk` gave): the same score."""
    by_index = corpus.by_index()
    documents, days, singles = by_index.documents, by_index.days, by_index.singles
    grouped = [index for index in kept if singles[index] or index in chunks]
    wanted = set(grouped)
    counts: list[dict[int, tuple[int, tuple[int, ...] | None]]] = []
    for term in terms:
        postings = corpus.postings(term)
        held = compress(postings, map(wanted.__contains__, map(_INDEX, postings)))
        counts.append({index: (body, fields) for index, body, fields in held})
    by_kind = {"note": params.b, "record": params.record_b}
    groups: dict[tuple[object, ...], list[int]] = {}
    for index in grouped:
        document = documents[index]
        assert document is not None
        length = document.length if by_kind[document.kind] else None
        inputs = (
            document.kind,
            length,
            days[index],
            chunks.get(index),
            *(held.get(index) for held in counts),
        )
        groups.setdefault(inputs, []).append(index)
    low, high = bounds
    floors = sorted(low[index] * (1.0 - MARGIN) for index in kept)
    dropped: list[int] = []
    for members in groups.values():
        # Every member has the same bounds (the same inputs, worked out alike).
        above = len(floors) - bisect_right(floors, high[members[0]] * (1.0 + MARGIN))
        room = max(depth - above, 0)
        if len(members) > room:
            members.sort(key=order)
            dropped.extend(members[room:])
    if not dropped:
        return kept
    gone = set(dropped)
    return [index for index in kept if index not in gone]
