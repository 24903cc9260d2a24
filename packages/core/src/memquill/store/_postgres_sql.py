"""The PostgreSQL side of the records store: the schema, its upgrade, the statements, connections.

:class:`~memquill.store._postgres.PostgresBackend` holds the store's logic; this module holds
what it says to the server. The schema (v3: ``memquill.workspaces``, one row per workspace,
``memquill.versions``, one row per record version, the view ``memquill.records``, the trigger
that stamps a workspace whose versions were deleted, and ``memquill.schema_version``) is
created on first use under an advisory lock, a v1 or v2 schema is upgraded (v2 → v3: a column,
the trigger and its function, in one transaction), and a newer schema than this version knows
is refused. Every connection is opened in
autocommit mode with ``idle_in_transaction_session_timeout`` set from the location, so a writer
that freezes inside a transaction is cut off by the server. libpq's messages can quote the
connection string, password included, so every driver error becomes ``StorageError`` with
memquill's own message.

Upgrading a v1 database (one ``bytea`` row per workspace): the schema step (under the advisory
lock) renames v1's table to ``memquill.records_v1``. Then every connecting client runs
:func:`upgrade_workspaces` before it uses the database: each workspace moves in a transaction
of its own that locks its v1 row, writes its workspace row and version rows (its id and record
key kept, so every revision stays valid) and deletes the v1 row. A second client waits on the
row lock and finds the row gone, so each workspace moves exactly once, and no client goes on
while one is left. Bytes that do not decode are kept as they are (``blob``), read and reported
as the file store would report them, never rewritten. Once it is empty, the upgrade's last
transaction drops ``memquill.records_v1``, unless an object of the operator's (a view, a
foreign key) depends on it or a reader holds it for more than half a second: then it stays,
empty, and a later connection drops it. Movers hold the schema lock shared and the drop holds
it alone, so no mover ever meets the table half gone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Sequence
from typing import Final, LiteralString, TypeAlias, cast

import psycopg
from psycopg import errors as pg_errors, pq

from memquill.errors import Messages, StorageError
from memquill.store._backend import Listing
from memquill.store._postgres_location import PostgresLocation
from memquill.store._postgres_rows import columns, rows_of

Connection: TypeAlias = "psycopg.Connection[tuple[object, ...]]"

SCHEMA_VERSION: Final = 3
SCHEMA_LOCK: Final = 0x6D656D7175696C6C  # "memquill": serialises creating and upgrading it

_WRITERS_KEY: Final = "hashtextextended('memquill.writers:' || {name}, 0)"
"""The key of a workspace's writers' advisory lock, from its name: one expression for the
statements sent (:data:`WRITERS_SHARED`...) and the append's function, which must take the
same lock."""
CREATE: Final = (
    "CREATE SCHEMA IF NOT EXISTS memquill",
    """CREATE TABLE IF NOT EXISTS memquill.schema_version (
        version integer PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now())""",
    # One row per workspace: its id (which seeds revisions), record key, the file's header,
    # ``seq`` (bumped by every write; each version row names the write that last set it),
    # how many versions it holds, and an optional quota. ``blob``: bytes that could not be
    # split into rows (a v1 workspace that did not decode), kept and read as they are until
    # a write replaces them.
    """CREATE TABLE IF NOT EXISTS memquill.workspaces (
        workspace text PRIMARY KEY,
        workspace_id uuid NOT NULL UNIQUE,
        record_key bytea NOT NULL CHECK (octet_length(record_key) = 32),
        header text NOT NULL DEFAULT '',
        blob bytea,
        seq bigint NOT NULL DEFAULT 0,
        versions integer NOT NULL DEFAULT 0,
        size_bytes bigint NOT NULL DEFAULT 0,
        quota_bytes bigint CHECK (quota_bytes > 0),
        updated_at timestamptz NOT NULL DEFAULT now())""",
    # ``deleted_seq`` (v3): the ``seq`` of the last write that deleted versions (set by the
    # trigger below), so an append computed on rows held since an older ``seq`` is refused
    # (:data:`APPEND`): no other change to the rows goes unseen by ``changed``. A v2 table
    # gains it here.
    """ALTER TABLE memquill.workspaces
        ADD COLUMN IF NOT EXISTS deleted_seq bigint NOT NULL DEFAULT 0""",
    # One row per record version, in file order (``position``). ``meta`` is the block's exact
    # metadata JSON and ``content`` its text; the other columns repeat fields for the indexes.
    """CREATE TABLE IF NOT EXISTS memquill.versions (
        workspace_id uuid NOT NULL
            REFERENCES memquill.workspaces (workspace_id) ON DELETE CASCADE,
        id text NOT NULL,
        position integer NOT NULL,
        root_id text NOT NULL,
        status text NOT NULL,
        key text,
        source_key bytea,
        operation_hash text,
        created_at text NOT NULL,
        updated_at text NOT NULL,
        meta text NOT NULL,
        content text NOT NULL,
        changed bigint NOT NULL CHECK (changed > 0),
        PRIMARY KEY (workspace_id, id),
        -- A key names one active fact per workspace; checked at commit, so a write may move
        -- a key from one version to another in any order.
        EXCLUDE USING btree (workspace_id WITH =, key WITH =)
            WHERE (status = 'active' AND key IS NOT NULL) DEFERRABLE INITIALLY DEFERRED)""",
    # Names in byte order, whatever the database's collation: a listing under a prefix (the
    # namespaces under a LangGraph prefix) reads its range, not every workspace's row.
    """CREATE INDEX IF NOT EXISTS workspaces_names
        ON memquill.workspaces (workspace COLLATE "C")""",
    "CREATE INDEX IF NOT EXISTS versions_position ON memquill.versions (workspace_id, position)",
    "CREATE INDEX IF NOT EXISTS versions_changed ON memquill.versions (workspace_id, changed)",
    "CREATE INDEX IF NOT EXISTS versions_root ON memquill.versions (workspace_id, root_id)",
    """CREATE INDEX IF NOT EXISTS versions_operation
        ON memquill.versions (workspace_id, operation_hash)""",
    """CREATE INDEX IF NOT EXISTS versions_source ON memquill.versions (workspace_id, source_key)
        WHERE source_key IS NOT NULL""",
    # In the server, not the client, so a write of any version's client deletes no row
    # unseen (one still running when a v2 schema is upgraded included). The workspace row is
    # locked by every writer that deletes; its ``seq`` is the one it is about to pass.
    """CREATE OR REPLACE FUNCTION memquill.versions_deleted() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE memquill.workspaces w SET deleted_seq = w.seq + 1
            WHERE w.workspace_id IN (SELECT DISTINCT g.workspace_id FROM gone g);
            RETURN NULL;
        END $$""",
    "DROP TRIGGER IF EXISTS versions_deleted ON memquill.versions",
    """CREATE TRIGGER versions_deleted AFTER DELETE ON memquill.versions
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
        EXECUTE FUNCTION memquill.versions_deleted()""",
    # An appending writer's one statement (:data:`APPEND`), kept as a function so that the
    # server keeps its plans (generic: the ones the indexes call for whatever the values). It
    # takes the writers' lock and the workspace row's itself, in its first statements, so its
    # append (a statement of its own, with a snapshot taken once the row lock is granted)
    # sees every commit before it; then, if the append was granted (the row's ``seq`` is the
    # one after the turn it locked), it marks the versions the append supersedes, by id.
    """CREATE OR REPLACE FUNCTION memquill.append_v4(text, text, uuid, text, bigint, text[],
        text[], text[], bytea[], bigint, integer, text[], json, json)
        RETURNS TABLE (granted bigint, workspace_id text, seq bigint, versions integer,
            header text, blob bytea, quota_bytes bigint, "position" integer, id text,
            meta text, content text)
        LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
        #variable_conflict use_column
        DECLARE
            turn bigint;
        BEGIN
        IF $1 IS NOT NULL THEN
            PERFORM set_config('lock_timeout', $1, true);
        END IF;
        PERFORM pg_advisory_xact_lock_shared("""  # noqa: S608 - constants alone
    + _WRITERS_KEY.format(name="$2")
    + """);
        SELECT w.seq INTO turn FROM memquill.workspaces w WHERE w.workspace_id = $3
            FOR NO KEY UPDATE;
        RETURN QUERY
        WITH granted AS (
            UPDATE memquill.workspaces SET seq = seq + 1, versions = versions + $11,
                size_bytes = size_bytes + $10, updated_at = now()
            WHERE workspace_id = $3 AND blob IS NULL AND quota_bytes IS NULL AND header = $4
                AND deleted_seq <= $5 AND NOT EXISTS (
                SELECT 1 FROM memquill.versions v
                WHERE v.workspace_id = $3 AND v.changed > $5 AND (
                    v.status NOT IN ('active', 'superseded')
                    OR v.root_id = ANY($6) OR v.key = ANY($7)
                    OR v.operation_hash = ANY($8) OR v.source_key = ANY($9)))
            RETURNING seq, versions - $11 AS base),
        added AS (
            INSERT INTO memquill.versions (workspace_id, id, position, root_id, status, key,
                source_key, operation_hash, created_at, updated_at, meta, content, changed)
            SELECT $3, a.id, g.base + a.ord, a.root_id, a.status, a.key,
                decode(a.source_key, 'hex'), a.operation_hash, a.created_at, a.updated_at, a.meta,
                a.content, g.seq
            FROM granted g, json_to_recordset($14) AS a(id text, root_id text, status text,
                key text, source_key text, operation_hash text, created_at text, updated_at text,
                meta text, content text, ord integer))
        SELECT g.seq, w.workspace_id::text, w.seq, w.versions, w.header, w.blob, w.quota_bytes,
            v.position, v.id, v.meta, v.content
        FROM memquill.workspaces w LEFT JOIN granted g ON true
            LEFT JOIN memquill.versions v ON v.workspace_id = w.workspace_id AND v.changed > $5
        WHERE w.workspace_id = $3 ORDER BY v.position;
        IF cardinality($12) > 0 THEN
            UPDATE memquill.versions v SET root_id = u.root_id, status = u.status, key = u.key,
                source_key = decode(u.source_key, 'hex'), operation_hash = u.operation_hash,
                created_at = u.created_at, updated_at = u.updated_at, meta = u.meta,
                content = u.content, changed = w.seq
            FROM memquill.workspaces w, json_to_recordset($13) AS u(id text, root_id text,
                status text, key text, source_key text, operation_hash text, created_at text,
                updated_at text, meta text, content text)
            WHERE w.workspace_id = $3 AND w.seq = turn + 1 AND v.workspace_id = $3
                AND v.id = ANY($12) AND v.id = u.id;
        END IF;
        END $$""",
    # The appending writer's function of clients before ``append_v4`` (same schema version),
    # kept so that hosts of both can share a database while they are upgraded one by one:
    # called with the writers' lock and the row's already held (taken again, at once), and
    # the versions to mark superseded in ``$10`` (empty for the clients that mark them in a
    # statement of their own).
    """CREATE OR REPLACE FUNCTION memquill.append_v3(uuid, text, bigint, text[], text[],
        text[], bytea[], bigint, integer, json, json)
        RETURNS TABLE (granted bigint, workspace_id text, seq bigint, versions integer,
            header text, blob bytea, quota_bytes bigint, "position" integer, id text,
            meta text, content text)
        LANGUAGE sql AS $$
        SELECT * FROM memquill.append_v4(NULL,
            (SELECT w.workspace FROM memquill.workspaces w WHERE w.workspace_id = $1), $1, $2,
            $3, $4, $5, $6, $7, $8, $9,
            ARRAY(SELECT u ->> 'id' FROM json_array_elements($10) u), $10, $11)
        $$""",
    # Each workspace's records.md, rebuilt from its rows: for people reading the database,
    # and in place of v1's table of the same name, so a v1 client finds the schema, reads
    # its version (2) and refuses; one connected before the upgrade cannot write through it
    # (the view is not updatable).
    # A row's block is built as ``_postgres_rows.Row.of`` builds it.
    """CREATE OR REPLACE VIEW memquill.records AS
        SELECT w.workspace, w.workspace_id, f.records, sha256(f.records) AS digest,
            w.updated_at
        FROM memquill.workspaces w, LATERAL (
            SELECT coalesce(w.blob, convert_to(w.header || coalesce(
                (SELECT string_agg('<!-- memory-record ' || v.meta || E' -->\\n' || v.content
                    || E'\\n\\n', '' ORDER BY v.position) FROM memquill.versions v
                 WHERE v.workspace_id = w.workspace_id), ''), 'UTF8')) AS records) f""",
)
VERSION: Final = "INSERT INTO memquill.schema_version (version) VALUES (%s) ON CONFLICT DO NOTHING"
UPGRADE: Final = ("ALTER TABLE memquill.records RENAME TO records_v1", *CREATE)
"""From v1 (``memquill.records``, one blob per workspace): the blobs move aside to
``memquill.records_v1``, which each workspace then leaves in a transaction of its own, and
which is dropped once empty (:func:`upgrade_workspaces`). From v2, :data:`CREATE` itself:
each of its statements leaves what it finds made."""

_WORKSPACE: Final = """
    SELECT workspace_id::text, seq, versions, header, blob, quota_bytes
    FROM memquill.workspaces WHERE workspace = %s"""
READ_FOR_WRITE: Final = _WORKSPACE + " FOR NO KEY UPDATE"
READ_FOR_WRITE_NOWAIT: Final = _WORKSPACE + " FOR NO KEY UPDATE NOWAIT"
ROWS_NAMED: Final = """
    SELECT v.position, v.id, v.meta, v.content
    FROM memquill.workspaces w JOIN memquill.versions v
        ON v.workspace_id = w.workspace_id AND v.changed > %s AND w.blob IS NULL
    WHERE w.workspace = %s ORDER BY v.position"""
"""The rows of the workspace named changed since a seq, sent with :data:`READ_FOR_WRITE` in
one script: run once the lock is granted, its snapshot holds every write committed before
(none can commit after, the lock being held). One statement that joined the rows to the
locked row would not: its snapshot is taken before the lock is waited for."""
READ_WITH_ROWS: Final = """
    SELECT w.workspace_id::text, w.seq, w.versions, w.header, w.blob, w.quota_bytes,
        v.position, v.id, v.meta, v.content
    FROM memquill.workspaces w LEFT JOIN memquill.versions v
        ON v.workspace_id = w.workspace_id AND v.changed > %s AND w.blob IS NULL
    WHERE w.workspace = %s ORDER BY v.position"""
"""A read: the workspace row and its rows changed since a seq in one statement (one
snapshot, no transaction to stay open while the client takes in thousands of rows); a row
of ``NULL`` version columns when none changed."""
_READ_MANY: Final = """
    WITH asked AS (SELECT %s::jsonb AS held),
    k AS MATERIALIZED (
        SELECT k.place, k.workspace, k.known, k.since::bigint AS since, k.quota::bigint AS quota
        FROM asked, ROWS FROM (jsonb_array_elements_text(asked.held -> 0),
                jsonb_array_elements_text(asked.held -> 1),
                jsonb_array_elements_text(asked.held -> 2),
                jsonb_array_elements_text(asked.held -> 3))
            WITH ORDINALITY AS k(workspace, known, since, quota, place)),
    w AS (
        SELECT k.place, w.workspace_id, w.seq, w.versions, w.header, w.blob, w.quota_bytes,
            CASE WHEN w.workspace_id::text = k.known THEN k.since ELSE 0 END AS since
        FROM k LEFT JOIN {workspaces} w ON {joined}
        WHERE w.workspace_id IS NULL OR k.known IS NULL OR w.workspace_id::text <> k.known
            OR w.seq <> k.since OR w.blob IS NOT NULL OR w.quota_bytes IS DISTINCT FROM k.quota)
    SELECT w.place, w.workspace_id::text, w.seq, w.versions, w.header, w.blob, w.quota_bytes,
        v.position, v.id, v.meta, v.content
    FROM w LEFT JOIN LATERAL (
        SELECT v.position, v.id, v.meta, v.content FROM memquill.versions v
        WHERE v.workspace_id = w.workspace_id AND w.blob IS NULL AND v.changed > w.since
        OFFSET 0) v ON true
    ORDER BY w.place, v.position"""
""":data:`READ_WITH_ROWS` for many workspaces in one statement (one snapshot of all), asked
as one JSON value (built and parsed in C: 10,000 names sent as arrays cost psycopg 60 ms) of
four arrays, one place each workspace: its name, the workspace id held (``null``: none, or
every row is to be read), the seq held and the quota held. For each name whose workspace is
not as held (another seq, id or quota, or a kept blob), in the order given: its workspace row
and its rows changed since the seq given, or every row when the row's id is not the one given
(another workspace under the name); a row of ``NULL`` workspace columns for a name without a
workspace row; and nothing for a workspace as held, whose versions are not looked at (a
search across 10,000 unchanged namespaces received 10,000 rows, and the server scanned every
version of the database to join none). Each workspace's rows are read by its own index scan
(a lateral subquery the planner cannot flatten): joined as a whole, the planner, which cannot
count the names sent, hashed every version of the database to find one namespace's new row
(330 ms, in a database of 132,000 versions, after a put to a namespace of ten)."""
READ_FEW: Final = _READ_MANY.format(
    workspaces="LATERAL (SELECT * FROM memquill.workspaces w "
    "WHERE w.workspace = k.workspace OFFSET 0)",
    joined="true",
)
READ_MANY: Final = _READ_MANY.format(
    workspaces="memquill.workspaces", joined="w.workspace = k.workspace"
)
MANY: Final = 1000
"""From this many workspaces on, :data:`READ_MANY` joins them with the workspaces table
whole; fewer are asked with :data:`READ_FEW`, which looks each up by name (the planner, which
cannot count the names sent, joined them with every workspace row: 3 ms for one name among
12,000 rows; 10,000 names looked up one by one took 44 ms, joined whole 20)."""
INSERT_ROWS: Final = """
    INSERT INTO memquill.versions (workspace_id, id, position, root_id, status, key,
        source_key, operation_hash, created_at, updated_at, meta, content, changed)
    VALUES """
INSERTED_ROW: Final = "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
""":data:`INSERT_ROWS` is followed by one of these per row (one statement for all)."""
UPDATE_ROW: Final = """
    UPDATE memquill.versions SET position = %s, root_id = %s, status = %s, key = %s,
        source_key = %s, operation_hash = %s, created_at = %s, updated_at = %s, meta = %s,
        content = %s, changed = %s
    WHERE workspace_id = %s AND id = %s"""
DELETE_ROWS: Final = "DELETE FROM memquill.versions WHERE workspace_id = %s AND id = ANY(%s)"
WROTE: Final = """
    UPDATE memquill.workspaces SET seq = %s, versions = %s, header = %s, blob = NULL,
        size_bytes = %s, updated_at = now()
    WHERE workspace_id = %s"""
LOCK_TIMEOUT: Final = "SELECT set_config('lock_timeout', %s, true)"
"""For the transaction: how long a lock is waited for before ``busy`` (:func:`milliseconds`)."""


def milliseconds(timeout: float) -> str:
    """:data:`LOCK_TIMEOUT`'s value for ``timeout`` seconds (at least one millisecond)."""
    return f"{max(1, round(timeout * 1000))}ms"


_WRITERS: Final = _WRITERS_KEY.format(name="%s")
WRITERS_SHARED: Final = "SELECT pg_advisory_xact_lock_shared(" + _WRITERS + ")"
"""Taken by a writer whose operation may only append: many hold it at once."""
WRITERS_SHARED_NOWAIT: Final = "SELECT pg_try_advisory_xact_lock_shared(" + _WRITERS + ")"
WRITERS_ALONE: Final = "SELECT pg_advisory_xact_lock(" + _WRITERS + ")"
"""Taken by any other writer (a forget, a rewrite, one that read the store revision), with
the workspace row: it waits for every appending writer to finish, and they for it."""
WRITERS_ALONE_NOWAIT: Final = "SELECT pg_try_advisory_xact_lock(" + _WRITERS + ")"
VERSION_FIELDS: Final[tuple[str, ...]] = (
    "id",
    "root_id",
    "status",
    "key",
    "source_key",
    "operation_hash",
    "created_at",
    "updated_at",
    "meta",
    "content",
)
""":data:`APPEND`'s versions are a JSON array of objects with these fields (``source_key`` in
hex; an added one also ``ord``, its place among them from 0): one value for any number of
versions, which the client writes with ``json`` rather than quoting each as an array."""
APPEND: Final = """
    SELECT * FROM memquill.append_v4(%s, %s, %s, %s, %s, %s::text[], %s::text[], %s::text[],
        %s::bytea[], %s, %s, %s::text[], %s::json, %s::json)"""
"""An appending writer's turn to commit, in one statement (``memquill.append_v4``). With a
lock timeout (``$1``; ``NULL``: the transaction's own), it takes the workspace's writers'
lock shared (named by ``$2``, waiting for a writer alone) and the workspace row's lock (held
to ``COMMIT``, in the server alone: the client is not waited for, and writers commit in the
order of their ``seq``, so a reader's snapshot holds a prefix of them). Then, in a statement
whose snapshot holds every commit before it, it writes an append computed on the rows as of a
``seq`` (``$5``) only if no version written since touched what its operation read
(:class:`~memquill.store._transaction.Reads`: roots ``$6``, keys ``$7``, operation hashes
``$8``, source keys ``$9``; a tombstone touches everything), none was deleted since
(``deleted_seq``), and the workspace has the header held (``$4``) and no quota (counted
against the whole workspace, so written alone). ``$10``: the bytes it adds, ``$11``: the
versions; the new ones (``$14``, as :data:`VERSION_FIELDS`) are numbered after the versions
written since. Granted, it updates in place the versions the append supersedes (ids ``$12``,
fields ``$13``), each looked up by key. A function made with the schema, so the server plans
its statements once per connection (planned from a statement's literals at each call, the
append took longer to plan than to run), and one statement where there were five: each
statement of a message is parsed, planned and answered on its own.

It answers the seq it was granted (``NULL``: refused), then, as :data:`READ_WITH_ROWS` sends
them, the workspace and the versions written by others since ``$5`` (the append's snapshot,
which its own changes are not part of)."""
CREATE_WORKSPACE: Final = """
    INSERT INTO memquill.workspaces (workspace, workspace_id, record_key)
    VALUES (%s, %s, %s) ON CONFLICT (workspace) DO NOTHING"""
RECORD_KEY: Final = "SELECT record_key FROM memquill.workspaces WHERE workspace = %s"


class Script:
    """Statements sent to the server in one message, their parameters bound on the client
    (psycopg quotes each as a literal): one round trip for all of them, their results in
    order in the cursor :meth:`send` returns (``nextset()`` moves to the next). One message,
    not a pipeline of several: the server reads a message whole while the transaction's
    ``idle_in_transaction_session_timeout`` runs, so a client that freezes halfway through
    sending is cut off as one that freezes between statements is. A statement that fails ends
    the script there, its transaction aborted."""

    def __init__(self, connection: Connection) -> None:
        self._cursor = psycopg.ClientCursor(connection)
        self._parts: list[str] = []

    def add(self, query: LiteralString, params: Sequence[object] = ()) -> None:
        self._parts.append(self._cursor.mogrify(query, params) if params else query)

    def add_rows(
        self, head: LiteralString, row: LiteralString, rows: Sequence[Sequence[object]]
    ) -> None:
        """One statement: ``head`` followed by ``row`` for each of ``rows`` (``VALUES`` lists)."""
        if rows:
            self._parts.append(head + ", ".join(self._cursor.mogrify(row, p) for p in rows))

    @property
    def count(self) -> int:
        """How many statements were added (the next one's result is that many sets on)."""
        return len(self._parts)

    def send(self) -> psycopg.ClientCursor[tuple[object, ...]]:
        """Send the statements and wait for every result (the first one current)."""
        self._cursor.execute("; ".join(self._parts).encode())
        return self._cursor


@contextlib.contextmanager
def transaction_of_scripts(connection: Connection) -> Generator[None]:
    """A transaction that the block's scripts begin (``BEGIN`` first in the first) and end
    (``COMMIT`` last in the last). One the block leaves open (it wrote nothing) is committed;
    on failure it is rolled back, so the connection is idle again (the pool keeps it)."""
    try:
        yield
    except BaseException:
        if (
            not connection.closed
            and connection.info.transaction_status != pq.TransactionStatus.IDLE
        ):
            with contextlib.suppress(psycopg.Error):
                connection.rollback()
        raise
    if connection.info.transaction_status != pq.TransactionStatus.IDLE:
        connection.execute("COMMIT")


def connect(location: PostgresLocation) -> Connection:
    """A new connection to ``location``, its idle timeout set and JIT compilation off (the
    schema is not looked at: :func:`ensure_schema` does, once per backend).

    Raises:
        StorageError: the database cannot be reached.
    """
    try:
        connection = psycopg.connect(
            location.conninfo, autocommit=True, connect_timeout=10, application_name="memquill"
        )
    except psycopg.Error:
        # libpq's message can quote the connection string, password included.
        raise StorageError(Messages.DATABASE_UNAVAILABLE) from None
    try:
        idle = f"{round(location.idle_timeout * 1000)}ms"
        # No JIT: memquill's statements are short, and a planner's overestimate (it cannot
        # count the names a read sends) had one compiled for 380 ms to return one row.
        connection.execute(
            "SELECT set_config('idle_in_transaction_session_timeout', %s, false),"
            " set_config('jit', 'off', false)",
            (idle,),
        )
    except psycopg.Error:
        connection.close()
        raise StorageError(Messages.DATABASE_UNAVAILABLE) from None
    except BaseException:
        connection.close()
        raise
    return connection


def workspace_listing(connection: Connection, prefix: str, held: str | None) -> Listing:
    """The mark of the workspace rows that start with ``prefix``, and their names, sorted,
    each with its row's hash; the names are ``None`` when the mark is ``held`` (nothing there
    changed since the caller took it). No schema yet: no mark and no names; nothing is
    created.

    A row's hash is a 64-bit hash of its name and ``seq`` and of its id and quota (two
    hashes: one of the text a row would make took twice as long): every write bumps its
    workspace's ``seq``, so a write, an operator's quota, a workspace made again under its
    name or renamed changes it. The mark is the count of the rows and the sum of their
    hashes, so a row made or removed changes it too. With it comes how many record versions
    the rows hold (what reading them all would decode). A ``blob`` row (read whole every time,
    as :data:`READ_MANY` does) has no hash, and there is no mark while one is in the range,
    nor in a database still v1's.
    """
    # The names' range in byte order (``workspaces_names``), so the work is the names found,
    # not every workspace's (a search in one namespace of 11,000 spent 5 ms scanning them),
    # asked at once: the schema is looked for only when there is no table to ask.
    end = _after(prefix)
    try:
        rows = connection.execute(
            _LISTING_FROM if end is None else _LISTING_BETWEEN,
            {"start": prefix, "end": end, "held": held},
        ).fetchall()
    except pg_errors.UndefinedTable:
        # v1's table, before the first connection upgrades it, or no schema yet.
        found = connection.execute("SELECT to_regclass('memquill.records')").fetchone()
        if found is None or found[0] is None:
            return Listing(None, (), ())
        rows = connection.execute(
            "SELECT NULL, workspace, NULL, 0 FROM memquill.records "
            'WHERE left(workspace, length(%s)) = %s ORDER BY workspace COLLATE "C"',
            (prefix, prefix),
        ).fetchall()
    mark = None if not rows or rows[0][0] is None else str(rows[0][0])
    versions = 0 if not rows else int(cast(int, rows[0][3]))
    if mark is not None and mark == held:
        return Listing(mark, None, (), versions)
    # The range holds only such names; without an end (a prefix of U+10FFFF) it runs on.
    listed = [row for row in rows if row[1] is not None and str(row[1]).startswith(prefix)]
    return Listing(
        mark,
        tuple(str(row[1]) for row in listed),
        tuple(None if row[2] is None else cast(int, row[2]) for row in listed),
        versions,
    )


# The rows are read once (``MATERIALIZED``); their names are sent only when the mark is not
# the one held (a search across 10,000 namespaces that changed nothing receives one row).
_LISTING: Final = """
    WITH found AS MATERIALIZED (
        SELECT workspace, blob IS NOT NULL AS blob, versions,
            hashtextextended(workspace, seq)
                # uuid_hash_extended(workspace_id, coalesce(quota_bytes, 0)) AS hash
        FROM memquill.workspaces WHERE workspace COLLATE "C" >= %(start)s {end}),
    marked AS (
        SELECT CASE WHEN bool_or(blob) THEN NULL
            ELSE count(*) || ' ' || coalesce(sum(hash), 0) END AS mark,
            coalesce(sum(versions), 0) AS versions
        FROM found)
    SELECT marked.mark, listed.workspace, listed.hash, marked.versions
    FROM marked LEFT JOIN LATERAL (
        SELECT workspace, CASE WHEN blob THEN NULL ELSE hash END AS hash FROM found
        WHERE marked.mark IS NULL OR marked.mark IS DISTINCT FROM %(held)s::text) listed ON true
    ORDER BY listed.workspace COLLATE "C"
"""
_LISTING_FROM: Final = _LISTING.format(end="")
_LISTING_BETWEEN: Final = _LISTING.format(end='AND workspace COLLATE "C" < %(end)s')


def _after(prefix: str) -> str | None:
    """The first text after every text that starts with ``prefix``, in code point order (the
    byte order of UTF-8: collation ``"C"``); ``None``: there is none (no prefix, or only
    the last code point)."""
    kept = prefix.rstrip(chr(0x10FFFF))
    if not kept:
        return None
    following = ord(kept[-1]) + 1
    if 0xD800 <= following <= 0xDFFF:  # surrogates are no text's code points
        following = 0xE000
    return kept[:-1] + chr(following)


def close_quietly(connection: Connection) -> None:
    with contextlib.suppress(psycopg.Error):
        connection.close()


def as_bytes(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(cast("bytearray", value))
    raise StorageError(Messages.DATABASE_UNAVAILABLE)


_NEWEST: Final = (
    "to_regprocedure('memquill.append_v4(text, text, uuid, text, bigint, text[], text[],"
    " text[], bytea[], bigint, integer, text[], json, json)') IS NOT NULL"
)
"""Whether the newest object :data:`CREATE` makes is there (move it when one is added): a
schema of this version that an earlier client made lacks it, and :data:`CREATE`, each
statement of which leaves what it finds made, brings it up to date."""
SCHEMA_PROBE: Final = (
    """SELECT to_regclass('memquill.workspaces') IS NOT NULL
        AND to_regclass('memquill.schema_version') IS NOT NULL
        AND to_regclass('memquill.records_v1') IS NULL AND """
    + _NEWEST,
    "SELECT max(version) FROM memquill.schema_version",
)
"""Whether the schema is there to use as it is (made, up to date, no v1 workspace waiting),
and its version: two statements for one script (the second fails where there is no schema
yet), so a backend's first use checks the schema in the round trip of its first statements."""


def schema_in_use(probed: Sequence[object] | None, version: Sequence[object] | None) -> bool:
    """Whether :data:`SCHEMA_PROBE`'s rows found a schema to use as it is (``False``:
    :func:`ensure_schema` makes it, upgrades it or moves what waits, and says what is wrong).

    Raises:
        StorageError: a newer schema than this version knows.
    """
    number = version[0] if version else None
    if isinstance(number, int) and number > SCHEMA_VERSION:
        raise StorageError(Messages.DATABASE_SCHEMA)
    return bool(probed and probed[0] is True) and number == SCHEMA_VERSION


def ensure_schema(connection: Connection) -> None:
    """Create the schema on first use, or upgrade a v1 one (both serialised by an advisory
    lock), then move any v1 workspace still waiting; refuse a newer schema. A schema in use
    as it is costs one round trip (:data:`SCHEMA_PROBE`)."""
    script = Script(connection)
    for statement in SCHEMA_PROBE:
        script.add(statement)
    with contextlib.suppress(pg_errors.UndefinedTable):  # no schema yet: made below
        cursor = script.send()
        probed = cursor.fetchone()
        cursor.nextset()
        if schema_in_use(probed, cursor.fetchone()):
            return
    found = connection.execute(
        "SELECT to_regclass('memquill.workspaces') IS NOT NULL "
        "AND to_regclass('memquill.schema_version') IS NOT NULL AND " + _NEWEST
    ).fetchone()
    if not (found and found[0]) or _version(connection) < SCHEMA_VERSION:
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            v1 = connection.execute(
                "SELECT to_regclass('memquill.workspaces') IS NULL AND EXISTS (SELECT 1 "
                "FROM pg_class WHERE oid = to_regclass('memquill.records') AND relkind = 'r')"
            ).fetchone()
            for statement in UPGRADE if v1 and v1[0] else CREATE:
                connection.execute(statement)  # pyright: ignore[reportArgumentType]
            connection.execute(VERSION, (SCHEMA_VERSION,))
    if _version(connection) != SCHEMA_VERSION:
        raise StorageError(Messages.DATABASE_SCHEMA)
    waiting = connection.execute("SELECT to_regclass('memquill.records_v1') IS NOT NULL").fetchone()
    if waiting and waiting[0]:
        upgrade_workspaces(connection, SCHEMA_LOCK)


def _version(connection: Connection) -> int:
    """The schema's version (0: none recorded, or not a number)."""
    found = connection.execute("SELECT max(version) FROM memquill.schema_version").fetchone()
    return found[0] if found is not None and isinstance(found[0], int) else 0


_NEXT: Final = """
    SELECT workspace, workspace_id, record_key, records FROM memquill.records_v1
    ORDER BY workspace LIMIT 1 FOR UPDATE"""
_LEFT: Final = "SELECT EXISTS (SELECT 1 FROM memquill.records_v1)"
# pg_class read with the statement's snapshot, not to_regclass: a backend that has just been
# granted an advisory lock has not yet taken in the catalog changes of the drop it waited for.
_EXISTS: Final = """
    SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'memquill' AND c.relname = 'records_v1')"""
_DROP_PATIENCE: Final = "500ms"
"""How long dropping the emptied v1 table waits for a reader of it to let go."""
_MOVED_WORKSPACE: Final = """
    INSERT INTO memquill.workspaces (workspace, workspace_id, record_key, header, blob, seq,
        versions, size_bytes)
    VALUES (%s, %s, %s, %s, %s, 1, %s, %s)"""
_MOVED_ROW: Final = """
    INSERT INTO memquill.versions (workspace_id, id, position, root_id, status, key,
        source_key, operation_hash, created_at, updated_at, meta, content, changed)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 1)"""


def upgrade_workspaces(connection: Connection, schema_lock: int) -> int:
    """Move every workspace left in ``memquill.records_v1`` to rows, then drop the emptied
    table (see the module docstring); how many workspaces this call moved. ``schema_lock``:
    the advisory lock that serialises changes to the schema."""
    moved = 0
    while True:
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock_shared(%s)", (schema_lock,))
            if not _exists(connection):
                return moved  # another client finished the upgrade and dropped the table
            found = connection.execute(_NEXT).fetchone()
            if found is None:
                left = connection.execute(_LEFT).fetchone()
                if not (left and left[0]):
                    break
                continue  # the row this client waited for was moved by another: the next
            name, workspace_id, key, records = found
            raw = bytes(cast("bytes", records))
            parsed = rows_of(raw)
            header, rows = parsed if parsed is not None else ("", [])
            blob = raw if parsed is None else None
            connection.execute(
                _MOVED_WORKSPACE, (name, workspace_id, key, header, blob, len(rows), len(raw))
            )
            with connection.cursor() as cursor:
                cursor.executemany(
                    _MOVED_ROW,
                    [
                        (workspace_id, row.id, position, *columns(row, record))
                        for position, (row, record) in enumerate(rows)
                    ],
                )
            connection.execute("DELETE FROM memquill.records_v1 WHERE workspace = %s", (name,))
            moved += 1
    _drop_emptied(connection, schema_lock)
    return moved


def _exists(connection: Connection) -> bool:
    found = connection.execute(_EXISTS).fetchone()
    return bool(found and found[0])


def _drop_emptied(connection: Connection, schema_lock: int) -> None:
    """Drop ``memquill.records_v1`` if it is still there, empty, and nothing depends on it."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (schema_lock,))
        if not _exists(connection):
            return
        left = connection.execute(_LEFT).fetchone()
        if left and left[0]:
            return  # not emptied: the next connection moves what is left
        # RESTRICT: an object of the operator's that depends on the table keeps it. A reader
        # holding the table would hold up every connection: not waiting, the next one drops it.
        connection.execute("SELECT set_config('lock_timeout', %s, true)", (_DROP_PATIENCE,))
        with (
            contextlib.suppress(pg_errors.DependentObjectsStillExist, pg_errors.LockNotAvailable),
            connection.transaction(),
        ):
            connection.execute("DROP TABLE memquill.records_v1 RESTRICT")
