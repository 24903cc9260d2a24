"""Where a workspace's vector cache lies, and how a forget reaches it at the same write.

Semantic recall (:mod:`memquill.semantic`) keeps embeddings in a file of their own beside the
search index: ``<index digest>.vectors.sqlite3`` in the index folder (none with
``$MEMQUILL_INDEX_DIR=:memory:``). Its layout is the semantic layer's; this module knows only
what the write path needs, so that a forgotten fact's vector is gone when ``forget`` returns,
not at the next semantic search, and a note a refresh finds deleted or changed loses its chunk
vectors at that refresh: the ``vectors`` table's ``unit`` column (``r:<record id>``,
``i:<record id>`` for a key-value store's item, ``n:<path>#<chunk>``).

:func:`forget_vectors` and :func:`forget_note_vectors` never create the file (a workspace that
never used semantic recall has none) and delete with SQLite's ``secure_delete`` on, so the
vectors' bytes are overwritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from memquill.errors import MemquillError
from memquill.index._location import index_dir, index_path
from memquill.paths import read_text_nofollow
from memquill.query import note_document

_BUSY_SECONDS: Final = 5.0


def vectors_path(root: Path) -> Path | None:
    """The vector cache file of the canonical workspace ``root`` (``None``: in memory)."""
    folder = index_dir()
    if os.fspath(folder) == ":memory:":
        return None
    return index_path(root, folder).with_suffix(".vectors.sqlite3")


def forget_vectors(root: Path, record_ids: Iterable[str]) -> int:
    """Delete the vectors of ``record_ids`` (as records, ``r:<id>``, and as a key-value
    store's items, ``i:<id>``) from ``root``'s vector cache, if it has one; how many rows went.

    Raises:
        sqlite3.Error, OSError: the file cannot be changed (the caller decides; the rows are
            also deleted by the next semantic search, which never returns them meanwhile).
    """
    path = vectors_path(root)
    if path is None or not path.is_file():
        return 0  # ``record_ids`` is never read: a workspace without a cache pays nothing
    ids = sorted(set(record_ids))
    units = [(f"{kind}:{record_id}",) for record_id in ids for kind in ("i", "r")]
    return _delete(root, "DELETE FROM vectors WHERE unit = ?", units)


def forget_note_vectors(root: Path, paths: Iterable[str]) -> int:
    """Delete the chunk vectors (``n:<path>#<chunk>``) of the notes ``paths`` that no longer
    hold (a refresh saw the note deleted, or changed: a chunk it no longer has, or whose text
    changed) from ``root``'s vector cache, if it has one; how many rows went.

    A chunk whose text is the same keeps its vector (a note read again only because it changed
    recently). The notes are read again to tell; an unreadable one loses every vector.

    Raises:
        sqlite3.Error, OSError: as :func:`forget_vectors`.
    """
    path = vectors_path(root)
    if path is None or not path.is_file():
        return 0
    doomed: list[tuple[str]] = []
    with contextlib.closing(_connect(path)) as connection:
        if not _has_vectors(connection):
            return 0
        for note in sorted(set(paths)):
            stored = connection.execute(
                "SELECT unit, digest FROM vectors WHERE unit >= ? AND unit < ?",
                (f"n:{note}#", f"n:{note}$"),  # '#' < '$': exactly this note's chunks
            ).fetchall()
            if not stored:
                continue
            current = _chunk_digests(root, note)
            doomed.extend((unit,) for unit, digest in stored if current.get(unit) != digest)
    return _delete(root, "DELETE FROM vectors WHERE unit = ?", doomed)


def unit_digest(text: str) -> str:
    """The digest a unit's row keeps of the text it embeds (32 hex of its SHA-256)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _chunk_digests(root: Path, note: str) -> dict[str, str]:
    try:
        text = read_text_nofollow(root / note, note=True)
    except MemquillError:
        return {}  # gone or unreadable: none of its vectors holds
    chunks = note_document(note, text).chunk_list()
    return {f"n:{note}#{index}": unit_digest(chunk.text) for index, chunk in enumerate(chunks)}


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(os.fspath(path), timeout=_BUSY_SECONDS, isolation_level=None)


def _has_vectors(connection: sqlite3.Connection) -> bool:
    found = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors'"
    ).fetchone()
    return found is not None


def _delete(root: Path, statement: str, rows: Sequence[tuple[str, ...]]) -> int:
    path = vectors_path(root)
    if path is None or not rows or not path.is_file():
        return 0
    connection = _connect(path)
    try:
        if not _has_vectors(connection):
            return 0
        connection.execute("PRAGMA secure_delete = ON")
        connection.execute("BEGIN IMMEDIATE")
        try:
            before = connection.total_changes
            connection.executemany(statement, rows)
            deleted = connection.total_changes - before
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
        return deleted
    finally:
        connection.close()
