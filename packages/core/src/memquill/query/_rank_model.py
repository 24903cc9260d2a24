"""What ranking works with: its constants, the shape of a document set, and a ranked hit.

:func:`memquill.query._rank.rank` reads any :class:`RankCorpus`: the in-memory
:class:`~memquill.query._rank.Corpus` of a full scan, or a search index serving the same
figures from disk, so the two always rank alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol

from memquill.query._dates import MonthKey
from memquill.query._documents import DocumentKind, SearchDocument
from memquill.query._markdown import Chunk

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
