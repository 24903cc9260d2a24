"""Search candidates from PostgreSQL: the terms of every searchable version, kept beside its row.

A database workspace can hold more records than a process should read and analyse to answer
one search (100,000 items took 13 s before the first hit). So the server keeps, per version
that the layer above makes searchable, the terms of its search document with their counts
(:class:`IndexedDocument`: analysed by that layer, which owns analysis; this module only
stores and asks), and answers a search with the few versions that can rank among the best,
their text, and the figures ranking needs about the whole set.

The tables are a cache, never the truth, made on first use (:func:`ensure_tables`) beside the
store's schema, which does not change for them (a client that knows nothing of them keeps
writing as before):

- ``memquill.search_documents``: one row per searchable version: ``terms`` (a GIN index
  finds the holders of a query's terms), ``counts`` (term → body count, or
  ``[body, title, tags, aliases, headings, path]`` when a field holds it), whether its text is
  one chunk, when it expires, and its place among documents that score alike (``tie``). Its
  key references the version's row, so a version deleted (compacted, rewritten, its
  workspace removed) takes its document with it.
- ``memquill.search_terms``: per workspace and term, how many documents hold it, and bounds
  of their counts (the most in the body and in the fields, the least in the body).
- ``memquill.search_state``: per workspace, the ``seq`` its documents stand at, how many it
  holds, its place among workspaces whose documents score alike, and the analysis that made
  them (named by the layer above: its tokenizer, stemmer and chunking). Documents another
  analysis made (another version of memquill or of its stemmer) stand behind: the next
  search counts the workspace again, so a search never mixes two analyses' terms.

**Kept current by readers** (:func:`catch_up_searches`): a search names every workspace whose
``seq`` moved past its documents', and the reader catches them up together, up to
:data:`_CHUNK` at a time: it reads the versions changed since in all of them (``changed``)
in one statement, has them analysed outside any transaction, and writes their documents and
those ``seq`` in one transaction holding their state rows (locked in one order), each
statement for all of them at once, leaving out a workspace another reader moved meanwhile.
So a search that finds 10,000 namespaces behind sends a few dozen statements, not eleven per
namespace. Writers pay nothing, and the versions read are those of one snapshot, so each
workspace's documents always stand at one ``seq``. Written with ``synchronous_commit`` off:
a cache, lost whole or not.

**Figures** (:func:`search_figures`): the documents under a prefix (the ``N`` of idf) and
how many hold each query term, from ``memquill.search_terms`` (each workspace's count of
holders per term, kept by the catch-up with its documents; a write that deleted versions
makes the next catch-up count the workspace again), less the expired documents; and which
workspaces stand behind.

**Candidates** (:func:`search_candidates`): given each term's idf and the *essential* terms
(the caller leaves out the weakest terms, whose most together stays below what the best
``depth`` are sure to score), or the *required* ones (the one smallest set of terms whose
most reaches it), one statement finds the documents holding an essential term, or all the
required ones,
bounds each one's final score (its BM25F part exactly; its best chunk's part between the
body's part, for a one-chunk text whose chunk is its body, and nothing, for a longer one
the caller re-scores from its text), keeps those whose upper bound reaches the ``depth``-th
best lower bound (a slack of a millionth covers the server's order of additions), and of
the one-chunk documents holding the query's terms alike (the same counts: the same score,
to the last bit) the first ``depth`` in the order of ties, so a query every item matches
alike sends ``depth`` of them, not all. It returns those versions with their text, and the
caller ranks them with memquill's own ranking: exactly what ranking every document would
have put first.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, TypeVar, cast

import psycopg
from psycopg import errors as pg_errors

from memquill.errors import Messages, StorageError
from memquill.store._postgres_location import PostgresLocation, parse_location
from memquill.store._postgres_pool import pool_for
from memquill.store._postgres_reads import FoundVersion
from memquill.store._postgres_sql import SCHEMA_LOCK, Connection, ensure_schema

_T = TypeVar("_T")

Counts = int | list[int]
"""A term's counts in a document: its body count, or the body's and each field's."""

TABLES: Final = (
    """CREATE TABLE IF NOT EXISTS memquill.search_state (
        workspace_id uuid PRIMARY KEY
            REFERENCES memquill.workspaces (workspace_id) ON DELETE CASCADE,
        seq bigint NOT NULL,
        documents integer NOT NULL,
        tie text NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS memquill.search_documents (
        workspace_id uuid NOT NULL,
        id text NOT NULL,
        tie text NOT NULL,
        terms text[] NOT NULL,
        counts jsonb NOT NULL,
        single boolean NOT NULL,
        expires timestamptz,
        PRIMARY KEY (workspace_id, id),
        FOREIGN KEY (workspace_id, id)
            REFERENCES memquill.versions (workspace_id, id) ON DELETE CASCADE)""",
    "CREATE INDEX IF NOT EXISTS search_holders ON memquill.search_documents USING gin (terms)",
    """CREATE TABLE IF NOT EXISTS memquill.search_terms (
        workspace_id uuid NOT NULL
            REFERENCES memquill.workspaces (workspace_id) ON DELETE CASCADE,
        term text NOT NULL,
        holders integer NOT NULL,
        PRIMARY KEY (workspace_id, term))""",
    # Bounds of a term's counts among its holders, for a search to leave out the items that
    # cannot reach the best: the most in the body and in the fields (added up), the least in
    # the body. Widened by every document written, never narrowed by one removed (still
    # bounds); a workspace counted again starts them afresh.
    """ALTER TABLE memquill.search_terms
        ADD COLUMN IF NOT EXISTS most_body integer NOT NULL DEFAULT 1000000,
        ADD COLUMN IF NOT EXISTS most_fields integer NOT NULL DEFAULT 1000000,
        ADD COLUMN IF NOT EXISTS least_body integer NOT NULL DEFAULT 0""",
    # A search across many namespaces sums a term's holders over all of theirs: found by the
    # term, not by reading the whole table for each term (370 ms a search across 10,000
    # namespaces of ten items).
    """CREATE INDEX IF NOT EXISTS search_terms_term
        ON memquill.search_terms (term, workspace_id)""",
    """CREATE INDEX IF NOT EXISTS search_expires ON memquill.search_documents
        (workspace_id, expires) WHERE expires IS NOT NULL""",
    # What analysed a workspace's documents (the layer above names it: its tokenizer, stemmer
    # and chunking): documents another analysis made are counted again, never searched.
    """ALTER TABLE memquill.search_state
        ADD COLUMN IF NOT EXISTS analysis text NOT NULL DEFAULT ''""",
)


_SPACES: Final = """
    spaces AS MATERIALIZED (
        SELECT w.workspace, w.workspace_id, w.seq, w.deleted_seq, w.blob IS NOT NULL AS blob,
            s.seq AS indexed, coalesce(s.documents, 0) AS documents, s.tie,
            s.analysis IS NOT DISTINCT FROM %(analysis)s AS analysed
        FROM memquill.workspaces w
            LEFT JOIN memquill.search_state s ON s.workspace_id = w.workspace_id
        WHERE w.workspace = %(exact)s
            OR (w.workspace COLLATE "C" >= %(low)s AND w.workspace COLLATE "C" < %(high)s))"""
"""The workspaces under the prefix, with their documents' state."""


def _each(count: int, template: str, joiner: str = ", ") -> str:
    return joiner.join(template.format(i=i) for i in range(1, count + 1))


@functools.cache
def _figures(count: int) -> str:
    """:func:`search_candidates`' first statement, for a query of ``count`` terms: the
    documents under the prefix, how many hold each term (from ``search_terms``: counting a
    term every document holds through the GIN index took 126 ms at 100,000), less the
    expired ones, and the workspaces to catch up, kept whole or expired."""
    held = (
        "(SELECT coalesce(sum(t.holders), 0) FROM spaces s JOIN memquill.search_terms t "
        "ON t.workspace_id = s.workspace_id AND t.term = %(t{i})s) - (SELECT count(*) "
        "FROM spaces s JOIN memquill.search_documents d ON d.workspace_id = s.workspace_id "
        "WHERE d.expires <= %(now)s AND d.terms @> ARRAY[%(t{i})s::text])"
    )
    bounds = (
        "(SELECT ARRAY[coalesce(max(t.most_body), 0), coalesce(max(t.most_fields), 0), "
        "coalesce(min(t.least_body), 0)] FROM spaces s JOIN memquill.search_terms t "
        "ON t.workspace_id = s.workspace_id AND t.term = %(t{i})s)"
    )
    return f"""
    WITH {_SPACES}
    SELECT (SELECT coalesce(sum(s.documents), 0) FROM spaces s) - (
            SELECT count(*) FROM spaces s JOIN memquill.search_documents d
                ON d.workspace_id = s.workspace_id
            WHERE d.expires <= %(now)s),
        ARRAY[{_each(count, held)}],
        (SELECT array_agg(s.workspace ORDER BY s.workspace COLLATE "C") FROM spaces s
         WHERE NOT s.blob AND (s.indexed IS DISTINCT FROM s.seq OR NOT s.analysed)),
        coalesce((SELECT bool_or(s.blob) FROM spaces s), false),
        (SELECT array_agg(s.workspace ORDER BY s.workspace COLLATE "C") FROM spaces s
         WHERE EXISTS (SELECT 1 FROM memquill.search_documents d
            WHERE d.workspace_id = s.workspace_id AND d.expires <= %(now)s)),
        ARRAY[{_each(count, bounds)}],
        (SELECT count(*) FROM (SELECT 1 FROM spaces s JOIN memquill.search_documents d
            ON d.workspace_id = s.workspace_id
         WHERE d.terms @> %(terms)s::text[] AND d.single
            AND (d.expires IS NULL OR d.expires > %(now)s) LIMIT %(depth)s) x)
"""  # noqa: S608 - built of numbered placeholders alone


@functools.cache
def _candidates(count: int, containing: bool, filtered: bool) -> str:
    """:func:`search_candidates`' second statement, for a query of ``count`` terms whose
    idf the first one's figures gave (see the module docstring), its candidates holding one
    of the essential terms or (``containing``) all the required ones, and (``filtered``) one
    of the caller's terms: a column per term, so a document is one row, scored without
    grouping (grouping 200,000 rows of 100,000 documents by document took 3 of 3.3 s). Each
    candidate's version (and its first's) is read by its key (a lateral subquery): joined
    whole, the planner, which cannot count the candidates, hashed every version of the
    database to read ten (217 of 300 ms across 10,000 namespaces)."""
    body = (
        "CASE jsonb_typeof(c{i}) WHEN 'number' THEN (c{i})::float8 "
        "WHEN 'array' THEN (c{i} ->> 0)::float8 ELSE 0.0 END AS b{i}"
    )
    fielded = (
        "CASE jsonb_typeof(c{i}) WHEN 'array' THEN %(w1)s * (c{i} ->> 1)::float8 "
        "+ %(w2)s * (c{i} ->> 2)::float8 + %(w3)s * (c{i} ->> 3)::float8 "
        "+ %(w4)s * (c{i} ->> 4)::float8 + %(w5)s * (c{i} ->> 5)::float8 ELSE 0.0 END AS f{i}"
    )
    gain = "%(i{i})s * {x} * %(grown)s / ({x} + %(k1)s)"
    return f"""
    WITH {_SPACES},
    docs AS MATERIALIZED (
        SELECT d.workspace_id, d.id, d.single, d.tie, {_each(count, body)},
            {_each(count, fielded)}
        FROM spaces s JOIN memquill.search_documents d ON d.workspace_id = s.workspace_id,
            LATERAL (SELECT {_each(count, "d.counts -> %(t{i})s AS c{i}")}) c
        WHERE s.analysed AND {
        "d.terms @> %(required)s::text[]" if containing else "d.terms && %(essential)s::text[]"
    }
            {"AND d.terms && %(filter)s::text[]" if filtered else ""}
            AND (d.expires IS NULL OR d.expires > %(now)s)),
    bounded AS (
        SELECT d.workspace_id, d.id, d.single, d.tie, {_each(count, "d.b{i}, d.f{i}")},
            {_each(count, gain.format(i="{i}", x="(d.b{i} + d.f{i})"), " + ")} AS first,
            %(chunk)s * ({_each(count, gain.format(i="{i}", x="d.b{i}"), " + ")}) AS chunk
        FROM docs d),
    ranged AS MATERIALIZED (
        SELECT bounded.*, first + CASE WHEN single THEN chunk ELSE 0 END AS low,
            first + chunk AS high
        FROM bounded),
    cut AS (
        SELECT coalesce((SELECT low FROM ranged ORDER BY low DESC OFFSET %(skip)s LIMIT 1), 0)
            * 0.999999 AS low),
    reaching AS (
        SELECT b.workspace_id, b.id, b.single, row_number() OVER (
            PARTITION BY b.single, {_each(count, "b.b{i}, b.f{i}")}
            ORDER BY s.tie COLLATE "C", b.tie COLLATE "C") AS place
        FROM ranged b JOIN cut ON b.high >= cut.low
            JOIN spaces s ON s.workspace_id = b.workspace_id)
    SELECT s.workspace, v.id, v.meta, v.content, v.made
    FROM reaching c JOIN spaces s ON s.workspace_id = c.workspace_id
        CROSS JOIN LATERAL (
            SELECT v.id, v.meta, v.content, coalesce(r.created_at, v.created_at) AS made
            FROM memquill.versions v LEFT JOIN memquill.versions r
                ON r.workspace_id = v.workspace_id AND r.id = v.root_id
            WHERE v.workspace_id = c.workspace_id AND v.id = c.id OFFSET 0) v
    WHERE NOT c.single OR c.place <= %(depth)s
"""  # noqa: S608 - built of numbered placeholders alone


_ROWS: Final = """
    SELECT workspace_id::text, versions FROM memquill.workspaces
    WHERE workspace = %s AND blob IS NULL"""
""":func:`workspace_rows`' statement."""
_STATES: Final = """
    INSERT INTO memquill.search_state (workspace_id, seq, documents, tie)
    SELECT w.workspace_id, 0, 0, n.tie
    FROM unnest(%s::text[], %s::text[]) AS n(workspace, tie)
        JOIN memquill.workspaces w ON w.workspace = n.workspace
    WHERE NOT EXISTS (
        SELECT 1 FROM memquill.search_state s WHERE s.workspace_id = w.workspace_id)
    ORDER BY w.workspace_id
    ON CONFLICT DO NOTHING"""
"""A state row (no documents yet) for each workspace named that has none; made in one order,
so readers making the same ones at once wait for one another, never deadlock."""
_CHANGED: Final = """
    SELECT w.workspace, w.workspace_id::text, s.seq, w.seq,
        w.deleted_seq > s.seq OR s.analysis <> %(analysis)s, s.analysis,
        v.id, v.status, v.meta, v.content
    FROM memquill.workspaces w JOIN memquill.search_state s ON s.workspace_id = w.workspace_id
        LEFT JOIN LATERAL (
            SELECT v.id, v.status, v.meta, v.content FROM memquill.versions v
            WHERE v.workspace_id = w.workspace_id
                AND v.changed > CASE WHEN w.deleted_seq > s.seq OR s.analysis <> %(analysis)s
                    THEN -1 ELSE s.seq END
            OFFSET 0) v ON true
    WHERE w.workspace = ANY(%(names)s) AND (w.seq <> s.seq OR s.analysis <> %(analysis)s)
        AND w.blob IS NULL"""
"""Of the workspaces named, those whose documents stand behind (a kept blob has no rows) or
were made by another analysis, with the versions changed since the documents' ``seq`` (every
version, when a write deleted some since, as their documents went with them, uncounted, or
when the documents are another analysis's), in one snapshot. One bound on ``changed``, not
either of two conditions, so the index on it finds them (an ``OR`` read all 100,000 of a
namespace's versions after one put: 45 ms, now under one), and in a subquery of each
workspace's own (lateral, not flattened), so the planner, which cannot count the names, does
not hash every version of the database instead: 54 ms a search after a put, at 132,000)."""
_LOCK_STATES: Final = """
    SELECT workspace_id::text, seq, documents, analysis FROM memquill.search_state
    WHERE workspace_id = ANY(%s::uuid[]) ORDER BY workspace_id FOR UPDATE"""
"""The state rows, locked in one order (readers locking overlapping sets never deadlock)."""
_INSERT: Final = """
    INSERT INTO memquill.search_documents (workspace_id, id, tie, terms, counts, single, expires)
    SELECT n.workspace_id, n.id, n.tie, ARRAY(SELECT jsonb_object_keys(n.counts)), n.counts,
        n.single, n.expires
    FROM jsonb_to_recordset(%s::jsonb) AS n(workspace_id uuid, id text, tie text, counts jsonb,
        single boolean, expires timestamptz)
    ORDER BY 1, 2"""
_DELETE: Final = """
    DELETE FROM memquill.search_documents d
    USING unnest(%s::uuid[], %s::text[]) AS c(workspace_id, id)
    WHERE d.workspace_id = c.workspace_id AND d.id = c.id
    RETURNING d.workspace_id::text, d.terms"""
_CLEAR: Final = (
    "DELETE FROM memquill.search_documents WHERE workspace_id = ANY(%s::uuid[])",
    "DELETE FROM memquill.search_terms WHERE workspace_id = ANY(%s::uuid[])",
)
_COUNTED: Final = """
    INSERT INTO memquill.search_terms AS t
        (workspace_id, term, holders, most_body, most_fields, least_body)
    SELECT (c ->> 0)::uuid, c ->> 1, (c ->> 2)::integer, (c ->> 3)::integer,
        (c ->> 4)::integer, (c ->> 5)::integer
    FROM jsonb_array_elements(%s::jsonb) AS c
    ORDER BY 1, 2
    ON CONFLICT (workspace_id, term) DO UPDATE SET holders = t.holders + excluded.holders,
        most_body = greatest(t.most_body, excluded.most_body),
        most_fields = greatest(t.most_fields, excluded.most_fields),
        least_body = least(t.least_body, excluded.least_body)"""
"""Each term's holders added (of ``[workspace, term, holders, most body, most fields, least
body]`` rows: JSON, which the driver sends some ten times faster than six arrays), in the
key's order (a quarter faster than scattered over the index)."""
_UNHELD: Final = """
    DELETE FROM memquill.search_terms t
    USING unnest(%s::uuid[], %s::text[]) AS c(workspace_id, term)
    WHERE t.workspace_id = c.workspace_id AND t.term = c.term AND t.holders <= 0"""
_MOVED: Final = """
    UPDATE memquill.search_state s SET seq = m.seq, documents = m.documents, analysis = %s
    FROM unnest(%s::uuid[], %s::bigint[], %s::integer[]) AS m(workspace_id, seq, documents)
    WHERE s.workspace_id = m.workspace_id"""
_UNBOUNDED: Final = 2**31 - 1
"""A least count no document set (``least`` keeps the one there)."""
_ATTEMPTS: Final = 4
_BATCH: Final = 5000
"""Documents written per statement (a statement's JSON stays a few megabytes)."""
_CHUNK: Final = 1000
"""Workspaces caught up together: read in one statement, written in one transaction."""


@dataclass(frozen=True, slots=True)
class ChangedVersion:
    """A version changed since a workspace's documents were written, as
    :func:`catch_up_searches` hands it to be analysed: its id, status, exact metadata JSON and
    content."""

    id: str
    status: str
    meta: str
    content: str


@dataclass(frozen=True, slots=True)
class IndexedDocument:
    """What the layer above analysed of one searchable version (see the module docstring):
    its id, its place among documents that score alike (``tie``: compared byte-wise, after
    its workspace's), its terms' counts, whether its text is one chunk, and when it
    expires."""

    id: str
    tie: str
    counts: dict[str, Counts]
    single: bool
    expires: datetime | None = None


@dataclass(frozen=True, slots=True)
class SearchFigures:
    """:func:`search_figures`' answer.

    Attributes:
        total: the unexpired documents under the prefix (the ``N`` of idf).
        frequencies: how many of them hold each query term, in the query's order.
        stale: workspaces whose documents stand behind their ``seq`` (the figures leave them
            out: :func:`catch_up_searches` them, then ask again).
        blobs: whether a workspace under the prefix is a kept blob (its records are not rows:
            the caller searches another way).
        expired: workspaces holding a document whose time ran out (left out of the rest).
        bounds: per term, the most any holder has of it in the body and in its fields
            (added up), and the least any has in the body (bounds, never below the most or
            above the least).
        alike: how many one-chunk documents hold every term, counted up to ``depth``.
    """

    total: int
    frequencies: tuple[int, ...]
    stale: tuple[str, ...]
    blobs: bool
    expired: tuple[str, ...]
    bounds: tuple[tuple[int, int, int], ...]
    alike: int


@dataclass(frozen=True, slots=True)
class SearchBounds:
    """What :func:`search_candidates` scores with: ranking's constants for records, each
    query term's idf, the terms a candidate must hold one of (``essential``) or hold all of
    (``required``, when not empty), and how many of the best are asked for."""

    k1: float
    field_weights: tuple[float, float, float, float, float]
    chunk_weight: float
    weights: tuple[float, ...]
    essential: tuple[str, ...]
    depth: int
    required: tuple[str, ...] = ()


def search_figures(
    location: str | PostgresLocation,
    names: tuple[str | None, str, str],
    terms: Sequence[str],
    now: datetime,
    depth: int,
    analysis: str,
) -> SearchFigures:
    """What ranking needs about the documents under ``names`` (a workspace named exactly, or
    ``None``, and the range of names from the second up to the third excluded) for the query
    ``terms``, and which workspaces stand behind (see :class:`SearchFigures`): their
    documents stand at an older ``seq``, or ``analysis`` did not make them.

    Raises:
        StorageError: the database cannot be reached or read.
    """
    params = {**_named(names, terms, now, analysis), "terms": list(terms), "depth": depth}
    statement = _figures(len(terms))

    def ask(connection: Connection) -> tuple[object, ...] | None:
        if not ensure_tables(connection):
            return None
        # Planned for its values at every run, never prepared (the candidates' too): psycopg
        # prepares a statement run five times, and the server may then plan it once for
        # any values. Its generic plan of the candidates across 10,000 namespaces, made for
        # no terms and no names, took 28 s a search where the plan for the values takes
        # 0.1 to 0.4 s. Planning takes a millisecond here; a point read's is about its
        # whole cost, so the other statements stay prepared.
        return connection.execute(statement, params, prepare=False).fetchone()  # pyright: ignore[reportArgumentType]

    row = _run(location, ask)
    if row is None:
        return SearchFigures(0, (0,) * len(terms), (), False, (), ((0, 0, 0),) * len(terms), 0)
    return SearchFigures(
        int(cast(int, row[0])),
        tuple(int(count) for count in cast("list[int]", row[1])),
        tuple(cast("list[str] | None", row[2]) or ()),
        bool(row[3]),
        tuple(cast("list[str] | None", row[4]) or ()),
        tuple((int(a), int(b), int(c)) for a, b, c in cast("list[list[int]]", row[5])),
        int(cast(int, row[6])),
    )


def search_candidates(
    location: str | PostgresLocation,
    names: tuple[str | None, str, str],
    terms: Sequence[str],
    bounds: SearchBounds,
    now: datetime,
    analysis: str,
    holding_one: Sequence[str] = (),
) -> list[FoundVersion]:
    """The versions under ``names`` holding one of the ``essential`` terms that may rank
    among the best ``depth`` for the query ``terms``, in no set order (see the module
    docstring); with ``holding_one``, among the documents that hold one of those terms alone
    (the caller's filter, made of terms its analysis gave the documents). The caller has
    caught up every workspace under ``names``; documents that ``analysis`` did not make
    (another reader counted them since) are not searched.

    Raises:
        StorageError: the database cannot be reached or read.
    """
    weights = bounds.field_weights
    params: dict[str, object] = {
        **_named(names, terms, now, analysis),
        "essential": list(bounds.essential),
        "required": list(bounds.required),
        "k1": bounds.k1,
        "grown": bounds.k1 + 1.0,
        "chunk": bounds.chunk_weight,
        "skip": max(bounds.depth - 1, 0),
        "depth": bounds.depth,
        "filter": list(holding_one),
        **{f"w{place}": weight for place, weight in enumerate(weights, 1)},
        **{f"i{place}": weight for place, weight in enumerate(bounds.weights, 1)},
    }
    statement = _candidates(len(terms), bool(bounds.required), bool(holding_one))

    def ask(connection: Connection) -> list[tuple[object, ...]]:
        # Never prepared: see search_figures.
        return connection.execute(statement, params, prepare=False).fetchall()  # pyright: ignore[reportArgumentType]

    return [FoundVersion(*(cast(str, value) for value in row)) for row in _run(location, ask)]


def _named(
    names: tuple[str | None, str, str], terms: Sequence[str], now: datetime, analysis: str
) -> dict[str, object]:
    exact, low, high = names
    return {
        "exact": exact,
        "low": low,
        "high": high,
        "now": now,
        "analysis": analysis,
        **{f"t{place}": term for place, term in enumerate(terms, 1)},
    }


def workspace_rows(location: str | PostgresLocation, workspace: str) -> tuple[str, int] | None:
    """The id (which seeds its revisions) and the number of record versions of the workspace
    named ``workspace``; ``None``: there is none (or no schema yet), or its records are a kept
    blob, whose records are not rows.

    Raises:
        StorageError: the database cannot be reached or read.
    """

    def ask(connection: Connection) -> tuple[object, ...] | None:
        if not ensure_tables(connection):
            return None
        return connection.execute(_ROWS, (workspace,)).fetchone()

    row = _run(location, ask)
    if row is None or row[0] is None:
        return None
    return cast(str, row[0]), int(cast(int, row[1]))


def catch_up_searches(
    location: str | PostgresLocation,
    workspaces: Sequence[tuple[str, str]],
    analyse: Callable[[ChangedVersion], IndexedDocument | None],
    analysis: str,
) -> None:
    """Bring the documents of each workspace named in ``workspaces`` (pairs of a name and its
    ``tie``: its place among workspaces whose documents score alike) up to its ``seq``, up to
    :data:`_CHUNK` workspaces at a time: the versions of the chunk's workspaces changed since
    their documents were written, read in one statement (one snapshot: one ``seq`` each), are
    ``analyse``\\ d (``None``: not searchable; ``analysis`` names what it does: documents
    another analysis made are counted again), then written with those ``seq`` in one
    transaction that holds the chunk's state rows; a workspace another reader moved meanwhile
    is left to that reader, or read again if it stands behind what was read, and a chunk
    whose versions analysed lost one (deleted before its document was written), or whose
    transaction the server chose to end to break a deadlock (with a writer deleting versions,
    as compaction does), starts again; after :data:`_ATTEMPTS`, the chunk is left behind
    (the search then asks again, or ranks in the process).
    The analysis runs outside the transaction: 100,000 versions take longer than a
    transaction may stay idle.

    Raises:
        StorageError: the database cannot be reached or written.
    """
    ties = dict(workspaces)
    names = list(ties)

    def work(connection: Connection) -> None:
        ensure_tables(connection)
        for start in range(0, len(names), _CHUNK):
            pending = names[start : start + _CHUNK]
            for _ in range(_ATTEMPTS):
                with contextlib.suppress(pg_errors.ForeignKeyViolation, pg_errors.DeadlockDetected):
                    pending = _catch_up(
                        connection, [(name, ties[name]) for name in pending], analyse, analysis
                    )
                if not pending:
                    break

    _run(location, work)


@dataclass(slots=True)
class _Behind:
    """One workspace's catch-up as read and analysed: its name, the ``seq`` its documents
    stood at and the one read, whether they are counted again (a write deleted versions
    since, or another analysis made them), the analysis that made them, the versions
    changed, and what their documents hold."""

    name: str
    since: int
    seq: int
    rebuild: bool
    analysis: str
    changed: list[str] = field(default_factory=list[str])
    documents: list[dict[str, object]] = field(default_factory=list[dict[str, object]])
    holders: Counter[str] = field(default_factory=Counter[str])
    most_body: dict[str, int] = field(default_factory=dict[str, int])
    most_fields: dict[str, int] = field(default_factory=dict[str, int])
    least_body: dict[str, int] = field(default_factory=dict[str, int])

    def add(self, workspace_id: str, document: IndexedDocument) -> None:
        self.holders.update(document.counts.keys())
        for term, counts in document.counts.items():
            body, fields = (counts, 0) if isinstance(counts, int) else (counts[0], sum(counts[1:]))
            self.most_body[term] = max(self.most_body.get(term, 0), body)
            self.most_fields[term] = max(self.most_fields.get(term, 0), fields)
            self.least_body[term] = min(self.least_body.get(term, _UNBOUNDED), body)
        expires = document.expires
        self.documents.append(
            {
                "workspace_id": workspace_id,
                "id": document.id,
                "tie": document.tie,
                "counts": document.counts,
                "single": document.single,
                "expires": None if expires is None else expires.isoformat(),
            }
        )

    def parts(self) -> list[tuple[str, int]]:
        """Its documents as JSON, up to :data:`_BATCH` a part (the list's brackets left
        out, to be joined with other workspaces'), with how many each part holds."""
        return [
            (json.dumps(self.documents[start : start + _BATCH], ensure_ascii=False)[1:-1], size)
            for start in range(0, len(self.documents), _BATCH)
            for size in (min(_BATCH, len(self.documents) - start),)
        ]


def _catch_up(
    connection: Connection,
    workspaces: Sequence[tuple[str, str]],
    analyse: Callable[[ChangedVersion], IndexedDocument | None],
    analysis: str,
) -> list[str]:
    """One attempt of :func:`catch_up_searches` for one chunk: the workspaces to read again
    (another reader moved their documents meanwhile, to a ``seq`` before the one read)."""
    names = [name for name, _ in workspaces]
    connection.execute(_STATES, (names, [tie for _, tie in workspaces]))
    behind: dict[str, _Behind] = {}
    changed = connection.execute(_CHANGED, {"names": names, "analysis": analysis})
    for row in changed.fetchall():
        workspace_id = cast(str, row[1])
        found = behind.get(workspace_id)
        if found is None:
            found = behind[workspace_id] = _Behind(
                cast(str, row[0]),
                cast(int, row[2]),
                cast(int, row[3]),
                bool(row[4]),
                cast(str, row[5]),
            )
        if row[6] is None:
            continue  # no version changed (a write that only deleted)
        version = ChangedVersion(*(cast(str, value) for value in row[6:10]))
        found.changed.append(version.id)
        document = analyse(version)
        if document is not None:
            found.add(workspace_id, document)
    if not behind:
        return []  # none stands behind (any more), or is there
    parts = {workspace_id: read.parts() for workspace_id, read in behind.items()}
    again: list[str] = []
    with connection.transaction():
        # A cache: a crash may lose it whole (documents and seq together), never half.
        connection.execute("SET LOCAL synchronous_commit = off")
        states = connection.execute(_LOCK_STATES, (list(behind),)).fetchall()
        counts: dict[str, int] = {}  # each kept workspace's documents, as they are written
        held = {
            cast(str, row[0]): (cast(int, row[1]), cast(int, row[2]), cast(str, row[3]))
            for row in states
        }
        for workspace_id, read in behind.items():
            seq, documents, made = held.get(workspace_id, (None, 0, ""))
            if (seq, made) == (read.since, read.analysis):
                counts[workspace_id] = 0 if read.rebuild else documents
            elif seq is None or seq < read.seq or made != analysis:
                # Gone, or moved by another reader, not as far or by another analysis.
                again.append(read.name)
        if not counts:
            return again
        kept = {workspace_id: behind[workspace_id] for workspace_id in counts}
        rebuilt = [workspace_id for workspace_id, read in kept.items() if read.rebuild]
        for statement in _CLEAR if rebuilt else ():
            connection.execute(statement, (rebuilt,))
        # The documents the changed versions had go first: each term they held loses its
        # holder (a corrected item's old terms included). A workspace that counts none
        # holds none (a version deleted takes its document, never adds one).
        owners: list[str] = []
        ids: list[str] = []
        for workspace_id, read in kept.items():
            if counts[workspace_id]:
                owners.extend(workspace_id for _ in read.changed)
                ids.extend(read.changed)
        if ids:
            for owner, terms in connection.execute(_DELETE, (owners, ids)).fetchall():
                counts[cast(str, owner)] -= 1
                kept[cast(str, owner)].holders.subtract(cast("list[str]", terms))
        batch: list[str] = []
        size = 0
        for workspace_id in kept:
            for part, held_here in parts[workspace_id]:
                batch.append(part)
                size += held_here
                if size >= _BATCH:
                    connection.execute(_INSERT, ("[" + ",".join(batch) + "]",))
                    batch, size = [], 0
        if batch:
            connection.execute(_INSERT, ("[" + ",".join(batch) + "]",))
        counted: list[tuple[str, str, int, int, int, int]] = []
        lost: tuple[list[str], list[str]] = ([], [])
        for workspace_id, read in kept.items():
            counts[workspace_id] += len(read.documents)
            for term, delta in read.holders.items():
                if delta or term in read.least_body:
                    counted.append(
                        (
                            workspace_id,
                            term,
                            delta,
                            read.most_body.get(term, 0),
                            read.most_fields.get(term, 0),
                            read.least_body.get(term, _UNBOUNDED),
                        )
                    )
                if delta < 0:  # only a term that lost holders can be left with none
                    lost[0].append(workspace_id)
                    lost[1].append(term)
        if counted:
            connection.execute(_COUNTED, (json.dumps(counted, ensure_ascii=False),))
        if lost[0]:
            connection.execute(_UNHELD, lost)
        connection.execute(
            _MOVED, (analysis, list(counts), [kept[w].seq for w in counts], list(counts.values()))
        )
    return again


_MADE: set[str] = set()
"""The databases (by connection string) whose search tables this process has seen made."""


def ensure_tables(connection: Connection) -> bool:
    """Make the search tables if they are not there (looked for once per process and
    database), under the lock that serialises changes to the store's schema, once the schema
    is there (``False``: there is none yet, and nothing is made: a search makes no schema)."""
    key = connection.info.dsn
    if key in _MADE:
        return True
    # The probe looks for the newest object TABLES makes (move it when one is added): tables
    # an earlier version made lack it, and TABLES, each statement of which leaves what it
    # finds made, brings them up to date.
    found = connection.execute(
        "SELECT to_regclass('memquill.workspaces') IS NOT NULL, "
        "to_regclass('memquill.search_terms_term') IS NOT NULL"
    ).fetchone()
    if found is None or not found[0]:
        return False
    if not found[1]:
        ensure_schema(connection)  # a v1 or v2 one is brought to the current version first
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            for statement in TABLES:
                connection.execute(statement)  # pyright: ignore[reportArgumentType]
    _MADE.add(key)
    return True


def _run(location: str | PostgresLocation, work: Callable[[Connection], _T]) -> _T:
    parsed = location if isinstance(location, PostgresLocation) else parse_location(location)
    pool = pool_for(parsed)
    try:
        try:
            return pool.run(work)
        except pg_errors.UndefinedTable:
            # The tables went since this process made them (a schema dropped and made again):
            # looked for, and made, once more.
            _MADE.clear()
            return pool.run(work)
    except psycopg.Error:
        raise StorageError(Messages.DATABASE_UNAVAILABLE) from None
