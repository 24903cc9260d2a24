"""Upgrading a v1 database (one ``bytea`` row per workspace) to rows, one workspace at a time.

The schema step (``_postgres_sql.ensure_schema``, under the advisory lock) renames v1's table
to ``memquill.records_v1``. Then every connecting client runs :func:`upgrade_workspaces`
before it uses the database: each workspace moves in a transaction of its own that locks its
v1 row, writes its workspace row and version rows (its id and record key kept, so every
revision stays valid) and deletes the v1 row. A second client waits on the row lock and finds
the row gone, so each workspace moves exactly once, and no client goes on while one is left.
Bytes that do not decode are kept as they are (``blob``), read and reported as the file store
would report them, never rewritten.

Once it is empty, the upgrade's last transaction drops ``memquill.records_v1``, unless an
object of the operator's (a view, a foreign key) depends on it or a reader holds it for more
than half a second: then it stays, empty, and a later connection drops it. Movers hold the
schema lock shared and the drop holds it alone, so no mover ever meets the table half gone.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Final, cast

from psycopg import errors as pg_errors

from memquill.store._postgres_rows import columns, rows_of

if TYPE_CHECKING:
    from memquill.store._postgres_sql import Connection


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
_WORKSPACE: Final = """
    INSERT INTO memquill.workspaces (workspace, workspace_id, record_key, header, blob, seq,
        versions, size_bytes)
    VALUES (%s, %s, %s, %s, %s, 1, %s, %s)"""
_ROW: Final = """
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
                _WORKSPACE, (name, workspace_id, key, header, blob, len(rows), len(raw))
            )
            with connection.cursor() as cursor:
                cursor.executemany(
                    _ROW,
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
