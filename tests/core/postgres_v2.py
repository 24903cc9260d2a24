"""Schema v2 of the PostgreSQL store (a row per record version), as memquill wrote it before
v3: the statements copied verbatim from that version's ``_postgres_sql.py``, so the migration
tests can build a v2 database and act as a v2 client (its first-use check, and the
statements a v2 writer alone used to delete versions and stamp the workspace row)."""

from __future__ import annotations

from typing import Final

import psycopg

SCHEMA_VERSION: Final = 2
SCHEMA_LOCK: Final = 0x6D656D7175696C6C

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
    "CREATE INDEX IF NOT EXISTS versions_position ON memquill.versions (workspace_id, position)",
    "CREATE INDEX IF NOT EXISTS versions_changed ON memquill.versions (workspace_id, changed)",
    "CREATE INDEX IF NOT EXISTS versions_root ON memquill.versions (workspace_id, root_id)",
    """CREATE INDEX IF NOT EXISTS versions_operation
        ON memquill.versions (workspace_id, operation_hash)""",
    """CREATE INDEX IF NOT EXISTS versions_source ON memquill.versions (workspace_id, source_key)
        WHERE source_key IS NOT NULL""",
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
DELETE_ROWS: Final = "DELETE FROM memquill.versions WHERE workspace_id = %s AND id = ANY(%s)"
WROTE: Final = """
    UPDATE memquill.workspaces SET seq = %s, versions = %s, header = %s, blob = NULL,
        size_bytes = %s, updated_at = now()
    WHERE workspace_id = %s"""


class NewerSchemaError(Exception):
    """What v2 raised (as ``StorageError(DATABASE_SCHEMA)``) for a newer schema."""


def ensure_schema(connection: psycopg.Connection[tuple[object, ...]]) -> None:
    """v2's first use of a database with no v1 table: make the schema, refuse a newer one."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        for statement in CREATE:
            connection.execute(statement)  # pyright: ignore[reportArgumentType]
        connection.execute(VERSION, (SCHEMA_VERSION,))
    version = connection.execute("SELECT max(version) FROM memquill.schema_version").fetchone()
    if version is None or not isinstance(version[0], int) or version[0] > SCHEMA_VERSION:
        raise NewerSchemaError
