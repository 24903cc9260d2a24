"""A search of a database's items with candidates from the database itself.

Ranking every item under a prefix in the process means reading and analysing every one of
them first: 13 s for the first search of 100,000 items, and memory for all of them in every
process. On a database, the server keeps each item's analysed terms
(:mod:`memquill.store._postgres_search`, brought up to date by the searches that find them
behind: every namespace one search finds behind together, in a few statements) and answers
with the few items that can rank among the best; only those are read and ranked here, with
memquill's own ranking and the figures of the whole set (how many items, how many hold each
term). The result is the one ranking every item gives: the same items,
order and scores (a test holds the two paths to that, on random items and queries).

What the server keeps of an item is what :func:`analysed` makes of its version, with the
analysis the in-process index uses (:func:`memquill.query.document_postings` of the item's
search document); an item is an active fact with an item key, as
:class:`~memquill.items._space.View` counts them. Items whose time to live ran out are left
out of the set, as a search in the process leaves them out (it also forgets them, which a
search here leaves to the next read or sweep).

It answers the searches of prefixes holding more records than
:data:`~memquill.items._store.DATABASE_SEARCH` (below, the process's own index, once read,
is faster). A search asks for the figures of the whole set first (how many items, how many
hold each term), then for the candidates that hold one of the terms that can decide the
result (:func:`_needed`): a term every item holds adds too little to matter once rarer
terms are there.

Records are not length-normalised (``RankParams.record_b`` is 0), so a record's score needs
no mean length; the candidates' corpus gives none (a test holds the constant to 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Final

from memquill.items._paths import Namespace, label_folder, namespace_of_row
from memquill.items._space import StoredItem, item_key, stored_item
from memquill.items._values import decode_expiry
from memquill.query import (
    CHUNK_OVERLAP,
    CHUNK_SIZE,
    STEMMER_VERSION,
    TOKENIZER_VERSION,
    MonthKey,
    Posting,
    RankParams,
    SearchDocument,
    analysed_projection,
    current_figures,
    document_postings,
    five,
    idf,
    needed_terms,
    path_key,
    query_terms,
    rank,
    record_of,
    server_document,
    tie_text,
)

if TYPE_CHECKING:
    from memquill.store import ChangedVersion, IndexedDocument

ANALYSIS: Final = (
    f"items 1; tokens {TOKENIZER_VERSION}, {STEMMER_VERSION}; chunks {CHUNK_SIZE}/{CHUNK_OVERLAP}"
)
"""What :func:`analysed` makes of a version depends on (the database keeps it beside each
workspace's documents, and counts a workspace again whose documents another analysis made):
the document's shape (its number changes with :func:`analysed` or :func:`tie_text`), the
tokenizer, the stemmer (its library's version among it) and the chunking."""
_NO_LENGTHS: Final = {"note": 0.0, "record": 0.0}


def analysed(version: ChangedVersion) -> IndexedDocument | None:
    """What the server keeps of ``version`` to search it (``None``: it is not an item)."""
    if version.status != "active":
        return None
    record = record_of(version.meta, version.content)
    key = record.key
    text = None if key is None else item_key(key)
    if text is None:
        return None
    expiry = decode_expiry(record.extra)
    return server_document(record, tie_text((text,)), None if expiry is None else expiry[1])


@dataclass(frozen=True, slots=True)
class DatabaseHits:
    """:func:`database_search`'s answer: the hits that may be among the best, with their
    scores (the caller sorts and cuts them as it would every item's), and the namespaces
    holding an item whose time ran out (left out of the hits, to be forgotten)."""

    scored: list[tuple[float, StoredItem]]
    expired: list[Namespace]


def database_search(
    location: str, base: str, labels: Namespace, query: str, depth: int, now: datetime
) -> DatabaseHits | None:
    """The items under ``labels`` that may be among the best ``depth`` for ``query``.
    ``None``: rank in the process instead (a workspace's records are a kept blob, or writers
    kept the prefix's terms behind for every round).

    Raises:
        StorageError: the database cannot be reached or read.
    """
    from memquill.store import SearchBounds, search_candidates

    terms = query_terms(query)
    if not terms:
        return DatabaseHits([], [])
    start = "/".join((base, *(label_folder(label) for label in labels)))
    names = (start if labels else None, start + "/", start + "0")  # "0" follows "/"
    namespaces: dict[str, Namespace | None] = {}

    def namespace_of(name: str) -> Namespace | None:
        if name not in namespaces:
            found = namespace_of_row(base, name)
            # Not a namespace's row, or a sibling's ("u10" beside "u1"): not searched.
            namespaces[name] = found if found and found[: len(labels)] == labels else None
        return namespaces[name]

    def tie(name: str) -> str:
        return tie_text(namespace_of(name) or ())

    figures = current_figures(location, names, terms, now, depth, (ANALYSIS, analysed, tie))
    if figures is None:
        return None
    params = RankParams()
    weights = tuple(idf(figures.total, holding) for holding in figures.frequencies)
    essential, required = needed_terms(terms, weights, figures, params, depth)
    bounds = SearchBounds(
        params.k1,
        five(params.field_weights),
        params.chunk_weight,
        weights,
        essential,
        depth,
        required,
    )
    versions = search_candidates(location, names, terms, bounds, now, ANALYSIS) if essential else []
    found: list[tuple[SearchDocument, StoredItem]] = []
    for version in versions:
        namespace = namespace_of(version.workspace)
        record = record_of(version.meta, version.content)
        key = record.key
        text = None if key is None else item_key(key)
        if namespace is None or text is None:
            continue
        found.append(
            (analysed_projection(record), stored_item(namespace, text, record, version.first))
        )
    found.sort(key=lambda pair: (pair[1].namespace, pair[1].key))  # rows come in no order
    frequencies = dict(zip(terms, figures.frequencies, strict=True))
    corpus = _Candidates(figures.total, frequencies, found)
    scored = [
        (hit.score, corpus.items[id(hit.document)])
        for hit in rank(corpus, query, now=now, params=params, candidates=len(found))
    ]
    expired = [n for n in map(namespace_of, figures.expired) if n is not None]
    return DatabaseHits(scored, expired)


def database_item(
    location: str, workspace: str, namespace: Namespace, key: str
) -> StoredItem | bool | None:
    """The item of fact key ``key`` in ``namespace`` (whose row is ``workspace``), read by its
    key alone: a namespace of 100,000 items is not read whole for one (9 s in a new process).
    ``None``: none; ``False``: ask the process (the namespace's records are a kept blob).

    Raises:
        StorageError: the database cannot be reached or read.
    """
    from memquill.store import read_keyed

    text = item_key(key)
    if text is None:
        return None
    found = read_keyed(location, workspace, key)
    if found is None or isinstance(found, bool):
        return found
    record = record_of(found.meta, found.content)
    return stored_item(namespace, text, record, found.first)


class _Candidates:
    """The candidates as a :class:`~memquill.query.RankCorpus`: their postings, and the
    size and term frequencies of the whole set (which the protocol allows: only documents
    that can reach the re-scored set need be listed)."""

    def __init__(
        self,
        total: int,
        frequencies: dict[str, int],
        found: Sequence[tuple[SearchDocument, StoredItem]],
    ) -> None:
        self.size = total
        self.average_length = _NO_LENGTHS
        self._frequencies = frequencies
        self._documents = [document for document, _ in found]
        self.items = {id(document): item for document, item in found}
        self._postings: dict[str, list[Posting]] = {}
        for index, document in enumerate(self._documents):
            body, fields = document_postings(document)
            for term in frequencies:
                counts = fields.get(term)
                count = body.get(term, 0)
                if count or counts is not None:
                    self._postings.setdefault(term, []).append((index, count, counts))

    def postings(self, term: str) -> list[Posting]:
        return self._postings.get(term, [])

    def frequency(self, term: str) -> int:
        return self._frequencies.get(term, 0)

    def stats(self, index: int) -> SearchDocument:
        return self._documents[index]

    document = stats

    def day(self, index: int) -> date | None:
        return None  # a record's path names no day

    def path_key(self, index: int) -> bytes:
        return path_key(self._documents[index].path)

    def month_holders(self, key: MonthKey) -> tuple[int, Sequence[int]]:
        return 0, ()  # nor any month

    def rescoring(self, indexes: Sequence[int]) -> None:
        """Nothing to fetch: every candidate's text is here."""

    def chunk_counts(self, index: int, term: str) -> tuple[int, ...]:
        return self._documents[index].chunk_counts(term)
