"""A database workspace's records, searched with candidates from the database itself.

A workspace whose records are rows in PostgreSQL can hold more of them than a process should
read and analyse to answer one search: 100,000 records decoded and analysed in every new
process before its first hit. Past :data:`DATABASE_RECORDS` record versions, a search asks
the server instead (:mod:`memquill.store._postgres_search`, the tables the LangGraph store's
search keeps too; brought up to date by the searches that find them behind): the figures of
every active record (how many, how many hold each query term), then the few records that can
reach the re-scored set, which are all this process reads. Notes stay the process's own.

Exact: a search answers what ranking every record would, byte for byte. Ranking re-scores by
chunk the best ``max(rerank_depth, limit)`` documents by their score before chunks (notes and
records together, ties by path), and a record among those is among the same number of best
records alone (records have no day, so no decay, and no month), scored with the idf of notes
and records together, which the server is given. So the server is asked for the records whose
score before chunks can reach that depth among records (``chunk_weight`` 0 to the bounds:
that score, exactly), and of records holding the query's terms alike (the same score) the
first in path order. Records are not length-normalised (``RankParams.record_b`` is 0), so no
record's score needs the others' lengths; a search with other constants ranks every record
in the process. A tag filter is the server's too: a record's document holds each of its tags as a
term no analysis makes (:func:`tag_term`), and the candidates are the best of the records
holding one of the tags asked for (ranking filters before it picks its best, and keeps the
idf of every document).

What the server keeps of a record is what :func:`analysed_record` makes of its version: the
terms of its projection ``memory/records/<id>.md``, analysed as a full scan analyses it. A
``memory_get`` of a record reads it by its id alone (:func:`database_record`), and a
``memory_recent`` only the newest records it can show (:func:`database_newest`).

What both database searches need is here too (the LangGraph store's,
:mod:`memquill.items._database_search`, imports it): bringing the tables up to date
(:func:`current_figures`), the terms a candidate must hold (:func:`needed_terms`) and the
order of ties the server keeps (:func:`tie_text`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Final, Literal, Protocol, cast

from memquill.jsondoc import parse_json
from memquill.query._documents import SearchDocument
from memquill.query._inverted import document_postings, single_chunk
from memquill.query._markdown import CHUNK_OVERLAP, CHUNK_SIZE
from memquill.query._rank import Corpus, RankParams, idf
from memquill.query._tokens import STEMMER_VERSION, TOKENIZER_VERSION, query_terms
from memquill.store import JSONValue, Record, provenance_line, record_revision

if TYPE_CHECKING:
    from memquill.store import (
        ChangedVersion,
        FoundVersion,
        IndexedDocument,
        PostgresLocation,
        SearchFigures,
    )

DATABASE_RECORDS: Final = 20_000
"""Record versions past which a database workspace's search asks the server for candidates
(below, the process's own projection, once read, is faster; the LangGraph store's bound)."""
RECORDS_ANALYSIS: Final = (
    f"records 2; tokens {TOKENIZER_VERSION}, {STEMMER_VERSION}; chunks {CHUNK_SIZE}/{CHUNK_OVERLAP}"
)
"""What :func:`analysed_record` makes of a version depends on (the server counts a workspace
again whose documents another analysis made: the LangGraph store's names its own). 2: the
documents hold their tags."""
ENUMERATED: Final = 10
"""Query terms up to which the smallest sets of terms a document must hold are looked for
(all 2 ** n sets of them)."""
ROUNDS: Final = 3
"""Searches asked before giving up on a workspace whose writers outpace catching up (the
caller then ranks in the process)."""
RECORDS_FOLDER: Final = "memory/records/"
"""Where active records' projections are."""
_NOTHING: Final = ""
"""A term no document holds (analysis makes no empty term): what the figures are asked about
for a query of no terms (the number of records still weighs a month the query names)."""


class RecordSource(Protocol):
    """The records a search ranks, as a corpus, given what it needs of the notes: how many
    there are and how many hold a term (the idf of the whole set decides which records can
    rank)."""

    def __call__(self, notes: int, holding: Callable[[str], int]) -> Corpus:
        """The records as ranking reads them beside ``notes`` notes."""
        ...


class CandidateRecords(Corpus):
    """The records that can reach the re-scored set, as a :class:`Corpus` that says the size
    and term frequencies of every record (which :class:`~memquill.query.RankCorpus` allows)."""

    def __init__(
        self, documents: Sequence[SearchDocument], total: int, holding: Mapping[str, int]
    ) -> None:
        super().__init__(documents)
        self._total = total
        self._holding = dict(holding)

    @property
    def size(self) -> int:
        """How many active records the workspace holds."""
        return self._total

    def frequency(self, term: str) -> int:
        """How many of every record hold ``term`` (a query term: no other was asked for)."""
        return self._holding[term]


def analysed_record(version: ChangedVersion) -> IndexedDocument | None:
    """What the server keeps of ``version`` to search it (``None``: not active)."""
    if version.status != "active":
        return None
    record = record_of(version.meta, version.content)
    return server_document(record, tie_text((record.projection_path,)), None, tagged=True)


def server_document(
    record: Record, tie: str, expires: datetime | None, *, tagged: bool = False
) -> IndexedDocument:
    """What the server keeps of ``record`` (an active version) to search it: the terms of
    its projection with their counts in the body and each field, whether it is one chunk,
    its place among documents that score alike (``tie``) and when it expires; ``tagged``:
    each of its tags too, as :func:`tag_term` (counted 0: no query term is one)."""
    projection = analysed_projection(record)
    body, fields = document_postings(projection)
    counts: dict[str, int | list[int]] = dict(body)
    for term, per_field in fields.items():
        counts[term] = [body.get(term, 0), *per_field]
    if tagged:
        counts.update((tag_term(tag), 0) for tag in sorted(projection.tag_keys))
    return _indexed()(record.id, tie, counts, single_chunk(record.content), expires)


def tag_term(tag: str) -> str:
    """The term a record's document holds for the tag ``tag`` (lowercased, without ``#``).
    It starts with a space, which no analysed term holds, so no query's term is one."""
    return f" #{tag}"


def analysed_projection(record: Record) -> SearchDocument:
    """``record``'s projection as analysis sees it: its path and text decide the terms (the
    provenance and revision a hit shows are not analysed)."""
    return SearchDocument(
        record.projection_path, record.content, kind="record", record_id=record.id, key=record.key
    )


@functools.cache
def _indexed() -> type[IndexedDocument]:
    # The database's alone (it needs its driver); looked up once, not once a version (the
    # facade's lookup took 1.2 s of a catch-up of 100,000 versions).
    from memquill.store import IndexedDocument

    return IndexedDocument


def searched_in_database(location: PostgresLocation) -> bytes | None:
    """The identity of ``location``'s workspace (the id that seeds its revisions) when its
    searches ask the server for candidates (past :data:`DATABASE_RECORDS` versions, kept as
    rows); ``None``: its records are ranked in the process.

    Raises:
        StorageError: the database cannot be reached or read.
    """
    from memquill.store import workspace_rows

    row = workspace_rows(location, location.workspace)
    if row is None or row[1] <= DATABASE_RECORDS:
        return None
    return row[0].encode()


def database_records(
    location: PostgresLocation,
    identity: bytes,
    query: str,
    *,
    depth: int,
    now: datetime,
    params: RankParams,
    notes: int,
    holding: Callable[[str], int],
    tags: frozenset[str] = frozenset(),
    admitted: bool = True,
) -> CandidateRecords | None:
    """The records of ``location``'s workspace (whose identity is ``identity``) that can be
    among the best ``depth`` for ``query`` before chunks, beside ``notes`` notes of which
    ``holding(term)`` hold a term; with ``tags`` (lowercased, without ``#``), of those that
    have one of them; none when the search's ``file_type`` does not admit records
    (``admitted``), whose figures still weigh the notes' terms. ``None``: rank every record
    in the process (a kept blob, other ranking constants, or writers kept the workspace's
    terms behind for every round).

    Raises:
        StorageError: the database cannot be reached or read.
    """
    from memquill.store import SearchBounds, search_candidates

    if params.record_b:
        return None
    workspace = location.workspace
    terms = query_terms(query)
    asked = terms or [_NOTHING]
    names = (workspace, workspace, workspace)  # that row alone (the range is empty)
    figures = current_figures(
        location, names, asked, now, depth, (RECORDS_ANALYSIS, analysed_record, lambda _: "")
    )
    if figures is None:
        return None
    if not terms:
        return CandidateRecords((), figures.total, {})
    holders = dict(zip(terms, figures.frequencies, strict=True))
    if not admitted:
        return CandidateRecords((), figures.total, holders)
    whole = notes + figures.total
    weights = tuple(idf(whole, holding(term) + holders[term]) for term in terms)
    before_chunks = replace(params, chunk_weight=0.0)
    # The figures count every record: what ``depth`` holders of a term are sure to score
    # says nothing of the tagged ones, so with tags every term is one a candidate may hold
    # (the server still keeps only the tagged records that can reach the best).
    essential, required = (
        needed_terms(terms, weights, figures, before_chunks, depth) if not tags else (terms, ())
    )
    bounds = SearchBounds(
        params.k1, five(params.field_weights), 0.0, weights, essential, depth, required
    )
    tagged = [tag_term(tag) for tag in sorted(tags)]
    found = (
        search_candidates(location, names, terms, bounds, now, RECORDS_ANALYSIS, tagged)
        if essential
        else []
    )
    documents = sorted(
        (_found_document(identity, version) for version in found),
        key=lambda document: document.path,
    )
    return CandidateRecords(documents, figures.total, holders)


def database_record(
    location: PostgresLocation, identity: bytes, path: str
) -> SearchDocument | Literal[False] | None:
    """The active record of ``location``'s workspace (whose identity is ``identity``) whose
    projection is ``path``, read by its id alone (one statement: a workspace of 100,000
    records is not read whole for one). ``None``: none; ``False``: ask the projection (the
    records are a kept blob).

    Raises:
        StorageError: the database cannot be reached or read.
    """
    from memquill.store import read_active

    record_id = path.removeprefix(RECORDS_FOLDER).removesuffix(".md")
    found = read_active(location, location.workspace, record_id)
    if found is None or isinstance(found, bool):
        return None if found is None else False
    document = _found_document(identity, found)
    return document if document.path == path else None


def database_newest(
    location: PostgresLocation, identity: bytes, count: int
) -> list[tuple[Record, str]] | Literal[False]:
    """The ``count`` active records of ``location``'s workspace (whose identity is
    ``identity``) created last, newest first, each with its record revision: what ``recent``
    shows, read without the others. ``False``: ask the projection (the records are a kept
    blob).

    Raises:
        StorageError: the database cannot be reached or read.
    """
    from memquill.store import read_newest

    found = read_newest(location, location.workspace, count)
    if isinstance(found, bool):
        return False
    records = [record_of(version.meta, version.content) for version in found]
    return [(record, record_revision(identity, record)) for record in records]


def current_figures(
    location: str | PostgresLocation,
    names: tuple[str | None, str, str],
    terms: Sequence[str],
    now: datetime,
    depth: int,
    analysis: tuple[str, Callable[[ChangedVersion], IndexedDocument | None], Callable[[str], str]],
) -> SearchFigures | None:
    """The figures of the documents under ``names`` for ``terms``, once the workspaces
    standing behind are caught up (``analysis``: its name, what it makes of a version, and a
    workspace's tie by its name). ``None``: rank in the process (a workspace is a kept blob,
    or writers kept one behind for :data:`ROUNDS` searches).

    Raises:
        StorageError: the database cannot be reached or read.
    """
    from memquill.store import catch_up_searches, search_figures

    name, analyse, tie = analysis
    for _ in range(ROUNDS):
        figures = search_figures(location, names, terms, now, depth, name)
        if figures.blobs:
            return None
        if not figures.stale:
            return figures
        catch_up_searches(location, [(n, tie(n)) for n in figures.stale], analyse, name)
    return None


def needed_terms(
    terms: Sequence[str],
    weights: Sequence[float],
    figures: SearchFigures,
    params: RankParams,
    depth: int,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The query terms a document must hold one of (``essential``), and those it must hold all
    of (``required``: none, or the one smallest set every document among the best holds), to
    be among the best ``depth``; ties included.

    Per term, what a holder gains is bounded: at most ``idf * (g(most) + chunk_weight *
    g(most_body))`` (``most``: the most body count plus the heaviest field weight times the
    most field counts any holder has; ``g``: BM25's saturation) and at least ``idf *
    g(least)`` (``least``: 1 in the body or one field's weight, or the least body count any
    holder has, if more). So ``depth`` documents are sure to score at least the least one
    term's ``depth`` holders gain from it; or, where ``depth`` one-chunk documents hold every
    term, the least they gain from all of them, chunk included. A document whose terms' most
    adds up to less scores strictly less than that: never among the best. So the weakest
    terms whose most together stays below it are not needed (MaxScore's essential terms: a
    term every document holds then makes no document a candidate: counting 100,000 holders
    of "thing" took 1.7 s of 1.8); and where every set of terms whose most reaches it holds
    one smallest set, a document must hold all of that set (two words in a tenth of 100,000
    documents each: those holding both, not the 19,000 holding either)."""
    k1, chunk = params.k1, params.chunk_weight

    def gain(count: float) -> float:
        return count * (k1 + 1.0) / (count + k1)

    least = min(1.0, *params.field_weights)
    heaviest = max(params.field_weights)
    bounds = figures.bounds
    most = [
        weight * (gain(body + heaviest * fields) + chunk * gain(body))
        for weight, (body, fields, _) in zip(weights, bounds, strict=True)
    ]
    sure = max(
        (
            weight * gain(max(least, lowest))
            for weight, holding, (_, _, lowest) in zip(
                weights, figures.frequencies, bounds, strict=True
            )
            if holding >= depth
        ),
        default=0.0,
    )
    if figures.alike >= depth:
        alike = sum(
            weight * (gain(max(least, lowest)) + chunk * gain(lowest))
            for weight, (_, _, lowest) in zip(weights, bounds, strict=True)
        )
        sure = max(sure, alike)
    sure *= 1.0 - 1e-9  # what the server and ranking add up may differ in the last bits
    weak: set[int] = set()
    gained = 0.0
    for place in sorted(range(len(terms)), key=lambda place: most[place]):
        if gained + most[place] >= sure:
            break
        gained += most[place]
        weak.add(place)
    essential = tuple(
        term
        for place, term in enumerate(terms)
        if place not in weak and figures.frequencies[place] > 0
    )
    required: tuple[str, ...] = ()
    if sure > 0 and len(terms) <= ENUMERATED:
        reaching = [
            held
            for held in range(1, 1 << len(terms))
            if sum(most[place] for place in range(len(terms)) if held >> place & 1) >= sure
        ]
        smallest = [
            held
            for held in reaching
            if not any(other != held and other & held == other for other in reaching)
        ]
        if len(smallest) == 1:
            required = tuple(term for place, term in enumerate(terms) if smallest[0] >> place & 1)
    return essential, required


def tie_text(parts: Sequence[str]) -> str:
    """A text of ``parts`` that the database's byte order ("C": UTF-8, which is code point
    order) puts where Python puts the tuple: the order of documents that score alike, so the
    database can keep the first of them. Each part ends with ``\\x01\\x02``, the whole with
    ``\\x01\\x01``, and ``\\x00`` and ``\\x01`` are written ``\\x01\\x03`` and ``\\x01\\x04``:
    every mark sorts below every other character, a part's end below its going on, and the
    end of the whole below another part. (A record's path is ASCII, its id's letters: code
    point order is ranking's UTF-16 order there.)"""
    escaped = (
        part.replace("\x01", "\x01\x04").replace("\x00", "\x01\x03") + "\x01\x02" for part in parts
    )
    return "".join(escaped) + "\x01\x01"


def five(weights: tuple[float, ...]) -> tuple[float, float, float, float, float]:
    """Ranking's field weights (title, tags, aliases, headings, path) as the server takes them."""
    title, tags, aliases, headings, path = weights
    return title, tags, aliases, headings, path


def record_of(meta: str, content: str) -> Record:
    """The record of a version's metadata JSON (as the store wrote and checked it) and text."""
    fields = cast("dict[str, JSONValue]", parse_json(meta))
    fields.pop("contentLength", None)
    return Record(fields, content)


def _found_document(identity: bytes, version: FoundVersion) -> SearchDocument:
    """A candidate as a full scan sees the record: its projection, with its provenance."""
    record = record_of(version.meta, version.content)
    revision = record_revision(identity, record)
    return SearchDocument(
        record.projection_path,
        record.content,
        source=provenance_line(record.id, record.key, record.source, revision),
        kind="record",
        record_id=record.id,
        record_revision=revision,
        key=record.key,
    )
