"""The PostgreSQL side of the records row: the schema, the statements and connections.

:class:`~memquill.store._postgres.PostgresBackend` holds the store's logic; this module holds
what it says to the server. The schema (``memquill.records``, one row per workspace, and
``memquill.schema_version``) is created on first use under an advisory lock, and a newer
schema than this version knows is refused. Every connection is opened in autocommit mode with
``idle_in_transaction_session_timeout`` set from the location, so a writer that freezes inside
a transaction is cut off by the server. libpq's messages can quote the connection string,
password included, so every driver error becomes ``StorageError`` with memquill's own message.
"""

from __future__ import annotations

import contextlib
from typing import Final, TypeAlias, cast

import psycopg

from memquill.errors import Messages, StorageError
from memquill.store._postgres_location import PostgresLocation

__all__ = [
    "APPEND",
    "CREATE",
    "READ",
    "READ_FOR_WRITE",
    "READ_FOR_WRITE_NOWAIT",
    "REPLACE",
    "SCHEMA_VERSION",
    "VERSION",
    "Connection",
    "as_bytes",
    "close_quietly",
    "connect",
    "ensure_schema",
    "list_workspaces",
]

Connection: TypeAlias = "psycopg.Connection[tuple[object, ...]]"

SCHEMA_VERSION: Final = 1
_SCHEMA_LOCK: Final = 0x6D656D7175696C6C  # "memquill": serialises first-use schema creation

CREATE: Final = (
    "CREATE SCHEMA IF NOT EXISTS memquill",
    """CREATE TABLE IF NOT EXISTS memquill.schema_version (
        version integer PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now())""",
    # 2097152 is MAX_STORE_BYTES (2 MiB); a test keeps the two equal.
    """CREATE TABLE IF NOT EXISTS memquill.records (
        workspace text PRIMARY KEY,
        workspace_id uuid NOT NULL UNIQUE,
        record_key bytea NOT NULL CHECK (octet_length(record_key) = 32),
        records bytea NOT NULL DEFAULT ''::bytea CHECK (octet_length(records) <= 2097152),
        digest bytea GENERATED ALWAYS AS (sha256(records)) STORED,
        updated_at timestamptz NOT NULL DEFAULT now())""",
    # Stored out of line but not compressed: every write rewrites the value, and compressing
    # up to 2 MiB of text at each write costs more than the space it saves.
    "ALTER TABLE memquill.records ALTER COLUMN records SET STORAGE EXTERNAL",
)
VERSION: Final = "INSERT INTO memquill.schema_version (version) VALUES (%s) ON CONFLICT DO NOTHING"
# The bytes come back only when they differ from the ones this backend already holds.
# ``digest`` is sha256 of the bytes, computed by the server at each write.
READ: Final = """
    SELECT workspace_id::text, digest, CASE WHEN digest = %(known)s THEN NULL ELSE records END
    FROM memquill.records WHERE workspace = %(name)s"""
READ_FOR_WRITE: Final = READ + " FOR NO KEY UPDATE"
READ_FOR_WRITE_NOWAIT: Final = READ + " FOR NO KEY UPDATE NOWAIT"
APPEND: Final = (
    "UPDATE memquill.records SET records = records || %s, updated_at = now() "
    "WHERE workspace = %s RETURNING digest"
)
REPLACE: Final = (
    "UPDATE memquill.records SET records = %s, updated_at = now() "
    "WHERE workspace = %s RETURNING digest"
)


def connect(location: PostgresLocation) -> Connection:
    """A new connection to ``location``, its idle timeout set and the schema ensured.

    Raises:
        StorageError: the database cannot be reached, or its schema is newer than this one.
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
        connection.execute(
            "SELECT set_config('idle_in_transaction_session_timeout', %s, false)", (idle,)
        )
        ensure_schema(connection)
    except psycopg.Error:
        connection.close()
        raise StorageError(Messages.DATABASE_UNAVAILABLE) from None
    except BaseException:
        connection.close()
        raise
    return connection


def list_workspaces(location: PostgresLocation, prefix: str) -> tuple[str, ...]:
    """The names of the workspace rows that start with ``prefix``, sorted (none before the
    schema exists; nothing is created).

    Raises:
        StorageError: the database cannot be reached or read.
    """
    try:
        with psycopg.connect(
            location.conninfo, autocommit=True, connect_timeout=10, application_name="memquill"
        ) as connection:
            found = connection.execute("SELECT to_regclass('memquill.records')").fetchone()
            if found is None or found[0] is None:
                return ()
            rows = connection.execute(
                "SELECT workspace FROM memquill.records "
                'WHERE left(workspace, length(%s)) = %s ORDER BY workspace COLLATE "C"',
                (prefix, prefix),
            ).fetchall()
    except psycopg.Error:
        # libpq's message can quote the connection string, password included.
        raise StorageError(Messages.DATABASE_UNAVAILABLE) from None
    return tuple(str(row[0]) for row in rows)


def close_quietly(connection: Connection) -> None:
    with contextlib.suppress(psycopg.Error):
        connection.close()


def as_bytes(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(cast("bytearray", value))
    raise StorageError(Messages.DATABASE_UNAVAILABLE)


def ensure_schema(connection: Connection) -> None:
    """Create the schema on first use (serialised by an advisory lock); refuse a newer one."""
    found = connection.execute(
        "SELECT to_regclass('memquill.records') IS NOT NULL "
        "AND to_regclass('memquill.schema_version') IS NOT NULL"
    ).fetchone()
    if not (found and found[0]):
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in CREATE:
                connection.execute(statement)
            connection.execute(VERSION, (SCHEMA_VERSION,))
    version = connection.execute("SELECT max(version) FROM memquill.schema_version").fetchone()
    if version is None or not isinstance(version[0], int) or version[0] > SCHEMA_VERSION:
        raise StorageError(Messages.DATABASE_SCHEMA)
