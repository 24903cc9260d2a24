"""Schema v1 of the PostgreSQL store, as memquill 0.x wrote it (one ``bytea`` row per
workspace): the statements and the first-use check copied verbatim from that version's
``_postgres_sql.py``, so the migration tests can build a v1 database and act as a v1 client."""

from __future__ import annotations

from typing import Final

import psycopg

SCHEMA_VERSION: Final = 1
SCHEMA_LOCK: Final = 0x6D656D7175696C6C

CREATE: Final = (
    "CREATE SCHEMA IF NOT EXISTS memquill",
    """CREATE TABLE IF NOT EXISTS memquill.schema_version (
        version integer PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now())""",
    """CREATE TABLE IF NOT EXISTS memquill.records (
        workspace text PRIMARY KEY,
        workspace_id uuid NOT NULL UNIQUE,
        record_key bytea NOT NULL CHECK (octet_length(record_key) = 32),
        records bytea NOT NULL DEFAULT ''::bytea CHECK (octet_length(records) <= 2097152),
        digest bytea GENERATED ALWAYS AS (sha256(records)) STORED,
        updated_at timestamptz NOT NULL DEFAULT now())""",
    "ALTER TABLE memquill.records ALTER COLUMN records SET STORAGE EXTERNAL",
)
VERSION: Final = "INSERT INTO memquill.schema_version (version) VALUES (%s) ON CONFLICT DO NOTHING"
READ: Final = """
    SELECT workspace_id::text, digest, CASE WHEN digest = %(known)s THEN NULL ELSE records END
    FROM memquill.records WHERE workspace = %(name)s"""
READ_FOR_WRITE: Final = READ + " FOR NO KEY UPDATE"
REPLACE: Final = (
    "UPDATE memquill.records SET records = %s, updated_at = now() "
    "WHERE workspace = %s RETURNING digest"
)


class NewerSchemaError(Exception):
    """What v1 raised (as ``StorageError(DATABASE_SCHEMA)``) for a newer schema."""


def ensure_schema(connection: psycopg.Connection[tuple[object, ...]]) -> None:
    """v1's first-use check: create the schema when missing; refuse a newer one."""
    found = connection.execute(
        "SELECT to_regclass('memquill.records') IS NOT NULL "
        "AND to_regclass('memquill.schema_version') IS NOT NULL"
    ).fetchone()
    if not (found and found[0]):
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            for statement in CREATE:
                connection.execute(statement)  # pyright: ignore[reportArgumentType]
            connection.execute(VERSION, (SCHEMA_VERSION,))
    version = connection.execute("SELECT max(version) FROM memquill.schema_version").fetchone()
    if version is None or not isinstance(version[0], int) or version[0] > SCHEMA_VERSION:
        raise NewerSchemaError


def create_workspace(
    connection: psycopg.Connection[tuple[object, ...]],
    name: str,
    workspace_id: str,
    key: bytes,
    records: bytes,
) -> None:
    """A v1 workspace row holding ``records`` (as v1's first use and writes left it)."""
    connection.execute(
        "INSERT INTO memquill.records (workspace, workspace_id, record_key) VALUES (%s, %s, %s)",
        (name, workspace_id, key),
    )
    with connection.transaction():
        connection.execute(READ_FOR_WRITE, {"known": b"", "name": name})
        connection.execute(REPLACE, (records, name))
