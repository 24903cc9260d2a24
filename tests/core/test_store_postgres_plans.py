"""What the server reads for memquill's reads, whatever else the database holds.

A database shared by many workspaces holds far more versions than any one read needs, and
one workspace may hold many more than a read of its changes needs. These tests fill a
database with one large workspace, have the server count it (``ANALYZE``), and run the reads
that name workspaces the planner cannot count in advance (sent as an array or a JSON value)
under ``EXPLAIN ANALYZE``, in the plan made for the values and in the generic plan a
prepared statement comes to (psycopg prepares a statement run five times): the versions the
server reads must be about the rows the read returns, never every version of a workspace or
of the database. All of it in a transaction that is rolled back: the shared test database
keeps nothing.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, LiteralString, cast

import psycopg
import pytest
from psycopg import sql
from tests.conftest import Server
from tests.core.store_helpers import manual

from memquill import RecordStore
from memquill.store import _postgres_search
from memquill.store._postgres_location import parse_location
from memquill.store._postgres_search import ensure_tables
from memquill.store._postgres_sql import READ_FEW, READ_MANY, connect

LARGE = 20_000
"""Versions of the large workspace: enough that reading them all shows at once."""
READ_AT_MOST = 10
"""Versions a read of one or two changed rows may look at (an index's neighbours)."""


@dataclass(frozen=True)
class Crowded:
    connection: psycopg.Connection
    small: str
    """A workspace of one fact."""
    large: str
    """A workspace of :data:`LARGE` versions, its search documents one version behind."""


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", ()):
        yield from _nodes(child)


def _versions_read(
    connection: psycopg.Connection, statement: str, types: str, values: Sequence[object]
) -> dict[str, int]:
    """How many versions ``statement`` (its parameters ``$1``… of ``types``) read for
    ``values``, by plan: rows its scans of the versions table returned or filtered out."""
    connection.execute(
        sql.SQL("PREPARE plan_probe ({}) AS {}").format(
            sql.SQL(cast(LiteralString, types)), sql.SQL(cast(LiteralString, statement))
        )
    )
    run = sql.SQL("EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE plan_probe ({})").format(
        sql.SQL(", ").join(sql.Literal(value) for value in values)
    )
    read: dict[str, int] = {}
    try:
        for mode in ("force_custom_plan", "force_generic_plan"):
            connection.execute(sql.SQL("SET LOCAL plan_cache_mode = {}").format(sql.SQL(mode)))
            row = connection.execute(run).fetchone()
            assert row is not None
            plan = cast(list[dict[str, Any]], row[0])[0]["Plan"]
            read[mode] = round(
                sum(
                    (node["Actual Rows"] + node.get("Rows Removed by Filter", 0))
                    * node["Actual Loops"]
                    for node in _nodes(plan)
                    if node.get("Relation Name") == "versions"
                )
            )
    finally:
        connection.execute("DEALLOCATE plan_probe")
    return read


@pytest.fixture
def crowded(tmp_path: Path, postgres_server: Server) -> Iterator[Crowded]:
    small = f"plans-{uuid.uuid4().hex[:12]}"
    store = RecordStore(tmp_path, location=f"{postgres_server.url}#workspace={small}")
    assert store.save([manual("the one fact of a small workspace")]).status == "saved"
    connection = connect(parse_location(postgres_server.url))
    try:
        ensure_tables(connection)
        connection.execute("BEGIN")
        large, large_id = f"plans-large-{uuid.uuid4().hex[:12]}", str(uuid.uuid4())
        connection.execute(
            "INSERT INTO memquill.workspaces (workspace, workspace_id, record_key, seq) "
            "VALUES (%s, %s, %s, %s)",
            (large, large_id, bytes(32), LARGE),
        )
        connection.execute(
            "INSERT INTO memquill.versions (workspace_id, id, position, root_id, status,"
            " created_at, updated_at, meta, content, changed)"
            " SELECT %s, 'v' || n, n, 'v' || n, 'active', '', '', '{}', 'a fact', n"
            " FROM generate_series(1, %s) AS n",
            (large_id, LARGE),
        )
        connection.execute(
            "INSERT INTO memquill.search_state (workspace_id, seq, documents, tie, analysis)"
            " VALUES (%s, %s, %s, '', 'this analysis')",
            (large_id, LARGE - 1, LARGE - 1),
        )
        connection.execute("ANALYZE memquill.workspaces")
        connection.execute("ANALYZE memquill.versions")
        yield Crowded(connection, small, large)
    finally:
        connection.rollback()
        connection.close()
        store.close()


def test_connections_compile_no_statement(postgres_server: Server) -> None:
    # A read of one new row was compiled (JIT) for 380 ms: the planner, which cannot count
    # the names a read sends, overestimated it past jit_above_cost.
    connection = connect(parse_location(postgres_server.url))
    try:
        found = connection.execute("SHOW jit").fetchone()
    finally:
        connection.close()
    assert found == ("off",)


@pytest.mark.parametrize("statement", [READ_FEW, READ_MANY], ids=["few", "many"])
def test_a_read_of_a_small_workspace_reads_its_rows_only(crowded: Crowded, statement: str) -> None:
    # Joined whole, the server hashed every version of the database to send one namespace's
    # new row (330 ms at 132,000 versions, after a put to a namespace of ten).
    asked = json.dumps([[crowded.small], [None], [0], [None]])
    read = _versions_read(crowded.connection, statement.replace("%s", "$1"), "text", [asked])
    assert all(count <= READ_AT_MOST for count in read.values()), read


def test_a_search_catching_up_reads_the_changed_rows_only(crowded: Crowded) -> None:
    # The large workspace's documents stand one version behind: the catch-up read all its
    # versions to find that one (54 ms a search after a put, at 100,000).
    changed = _postgres_search._CHANGED  # pyright: ignore[reportPrivateUsage]
    statement = changed.replace("%(analysis)s", "$1").replace("%(names)s", "$2")
    read = _versions_read(
        crowded.connection, statement, "text, text[]", ["this analysis", [crowded.large]]
    )
    assert all(1 <= count <= READ_AT_MOST for count in read.values()), read


def test_search_tables_made_before_gain_the_index_of_terms(
    tmp_path: Path, postgres_server: Server
) -> None:
    # A search across many namespaces sums a term's holders by the term; tables made by an
    # earlier version have no such index, and read search_terms whole for each term. In a
    # database of its own: dropping the shared one's index deadlocked with other tests.
    name = f"memquill_terms_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_server.url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = f"{postgres_server.url.rsplit('/', 1)[0]}/{name}"
    store = RecordStore(tmp_path, location=f"{url}#workspace=terms")
    connection = connect(parse_location(url))
    try:
        assert store.save([manual("a fact, so the schema is made")]).status == "saved"
        assert ensure_tables(connection)
        connection.execute("DROP INDEX memquill.search_terms_term")  # as an earlier version
        _postgres_search._MADE.discard(connection.info.dsn)  # pyright: ignore[reportPrivateUsage]
        assert ensure_tables(connection)
        found = connection.execute("SELECT to_regclass('memquill.search_terms_term')").fetchone()
        assert found is not None and found[0] is not None
    finally:
        connection.close()
        store.close()
        with psycopg.connect(postgres_server.url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
