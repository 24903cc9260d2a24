"""Where a workspace's vector cache lies, and how a forget reaches it at the same write.

Semantic recall (:mod:`memquill.semantic`) keeps embeddings in a file of their own beside the
search index: ``<index digest>.vectors.sqlite3`` in the index folder (none with
``$MEMQUILL_INDEX_DIR=:memory:``). Its layout is the semantic layer's; this module knows only
what the write path needs, so that a forgotten fact's vector is gone when ``forget`` returns,
not at the next semantic search: the ``vectors`` table's ``unit`` column (``r:<record id>``).

:func:`forget_vectors` never creates the file (a workspace that never used semantic recall has
none) and deletes with SQLite's ``secure_delete`` on, so the vector's bytes are overwritten.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from memquill.index._location import index_dir, index_path

__all__ = ["forget_vectors", "vectors_path"]

_BUSY_SECONDS: Final = 5.0


def vectors_path(root: Path) -> Path | None:
    """The vector cache file of the canonical workspace ``root`` (``None``: in memory)."""
    folder = index_dir()
    if os.fspath(folder) == ":memory:":
        return None
    return index_path(root, folder).with_suffix(".vectors.sqlite3")


def forget_vectors(root: Path, record_ids: Iterable[str]) -> int:
    """Delete the vectors of ``record_ids`` from ``root``'s vector cache, if it has one; how
    many rows went.

    Raises:
        sqlite3.Error, OSError: the file cannot be changed (the caller decides; the rows are
            also deleted by the next semantic search, which never returns them meanwhile).
    """
    path = vectors_path(root)
    units = sorted({f"r:{record_id}" for record_id in record_ids})
    if path is None or not units or not path.is_file():
        return 0
    connection = sqlite3.connect(os.fspath(path), timeout=_BUSY_SECONDS, isolation_level=None)
    try:
        if (
            connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors'"
            ).fetchone()
            is None
        ):
            return 0
        connection.execute("PRAGMA secure_delete = ON")
        connection.execute("BEGIN IMMEDIATE")
        try:
            before = connection.total_changes
            connection.executemany("DELETE FROM vectors WHERE unit = ?", [(u,) for u in units])
            deleted = connection.total_changes - before
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
        return deleted
    finally:
        connection.close()
