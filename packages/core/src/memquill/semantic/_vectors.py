"""The vector cache: embeddings of a workspace's records, note chunks and items; never the truth.

One SQLite file per workspace beside its search index (``<digest>.vectors.sqlite3`` in the
index folder, ``$MEMQUILL_INDEX_DIR`` included; ``:memory:`` keeps vectors in the process),
created owner-only before SQLite opens it. Rows are keyed by **unit** — ``r:<record id>`` for
a record version, ``n:<path>#<chunk>`` for a note chunk — and hold the digest of the embedded
text, so a changed chunk is embedded again, and the vector as float32.

The file holds one **space** at a time: the keyed fingerprint of the embedder's identity (never
the identity itself) and the vectors' length. An embedder with another identity (another
model, key or setting) or length finds the space changed and every vector is dropped and
rebuilt. A forgotten fact's vectors are deleted by the forget itself
(:func:`memquill.index.forget_vectors`, from the write path, and at a sync merge), a deleted
or changed note's chunk vectors by the index refresh that sees it (:meth:`VectorCache.drop_notes`
from a session with an embedder, the index's own ``forget_note_vectors`` from any other).
Units that are no longer searchable for another reason (a corrected record, a deletion that
failed) are deleted whenever a semantic search sees the workspace (:meth:`VectorCache.prune`),
with SQLite's ``secure_delete`` on so their bytes are overwritten; and they are never returned
before that, because similarity is only computed for units the search's own documents give
(active records, current notes). Units ``i:<record id>`` are a key-value store's items
(:func:`memquill.semantic._texts.similarity_order`): a search of the workspace leaves them be.

Deleting the file loses nothing but the time to embed again.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from array import array
from collections.abc import Generator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

from memquill.errors import MemquillError
from memquill.index import unit_digest, vectors_path
from memquill.owner_only import private_file, private_folder, tighten_file
from memquill.paths import canonical_workspace
from memquill.semantic._embedder import Vector

FORMAT: Final = "memquill-vectors:v1"
_BUSY_SECONDS: Final = 5.0
_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS vectors ("
    " unit TEXT PRIMARY KEY, digest TEXT NOT NULL, vector BLOB NOT NULL)",
)
_ITEM: Final = "i:"
_CHUNK: Final = 500  # SQLite host parameters per statement, well under its limit


class VectorCache:
    """One workspace's vectors (see the module doc). Thread-safe; several processes may share
    the file (SQLite's locking; a writer waits up to 5 s).

    Args:
        path: the file (``None``: in process memory only).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._space: str | None = None
        self._mirror: dict[str, tuple[str, Vector]] = {}

    def lookup(self, space: str, wanted: Sequence[tuple[str, str]]) -> dict[str, Vector]:
        """The cached vectors of ``wanted`` (unit, digest) pairs whose digest still matches.

        A change of space drops every vector first (the embedder changed).
        """
        with self._lock:
            self._enter(space)
            missing = [
                unit for unit, digest in wanted if self._mirror.get(unit, ("",))[0] != digest
            ]
            if missing:
                self._read(missing)
            found: dict[str, Vector] = {}
            for unit, digest in wanted:
                held = self._mirror.get(unit)
                if held is not None and held[0] == digest:
                    found[unit] = held[1]
            return found

    def store(self, space: str, rows: Iterable[tuple[str, str, Vector]]) -> None:
        """Keep ``(unit, digest, vector)`` rows (replacing older ones of the same unit)."""
        # The mirror keeps what the file gives back (float32), so a vector compares the same
        # whether it was just embedded or read by another process.
        rows = [(unit, digest, _unpack(_pack(vector))) for unit, digest, vector in rows]
        with self._lock:
            self._enter(space)
            with self._writing() as connection:
                connection.executemany(
                    "INSERT OR REPLACE INTO vectors (unit, digest, vector) VALUES (?, ?, ?)",
                    [(unit, digest, _pack(vector)) for unit, digest, vector in rows],
                )
            for unit, digest, vector in rows:
                self._mirror[unit] = (digest, vector)

    def prune(self, space: str, keep: Iterable[str]) -> int:
        """Delete every record and note vector whose unit is not in ``keep`` (items' units,
        ``i:``, stay); the number deleted."""
        kept = set(keep)
        with self._lock:
            self._enter(space)
            connection = self._connect()
            stored = [
                row[0]
                for row in connection.execute("SELECT unit FROM vectors")
                if not row[0].startswith(_ITEM)
            ]
            for unit in [u for u in self._mirror if u not in kept and not u.startswith(_ITEM)]:
                del self._mirror[unit]
            return self._delete([unit for unit in stored if unit not in kept])

    def drop_notes(self, space: str, paths: Iterable[str], keep: Mapping[str, str]) -> int:
        """Delete the chunk vectors of the notes ``paths`` but those ``keep`` names with the
        same digest (the chunks they still have, unchanged); the number deleted."""
        with self._lock:
            self._enter(space)
            connection = self._connect()
            doomed: list[str] = []
            for path in sorted(set(paths)):
                doomed.extend(
                    unit
                    for unit, digest in connection.execute(
                        "SELECT unit, digest FROM vectors WHERE unit >= ? AND unit < ?",
                        (f"n:{path}#", f"n:{path}$"),  # '#' < '$': this note's chunks
                    )
                    if keep.get(unit) != digest
                )
            return self._delete(doomed)

    def units(self) -> dict[str, str]:
        """Every stored unit and its digest (for tests and status)."""
        with self._lock:
            connection = self._connect()
            return dict(connection.execute("SELECT unit, digest FROM vectors ORDER BY unit"))

    def close(self) -> None:
        """Close the file (it is opened again when needed)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
            self._space = None
            self._mirror.clear()

    # -- internals -------------------------------------------------------------------------

    def _delete(self, units: Sequence[str]) -> int:
        gone = sorted(set(units))
        if gone:
            with self._writing() as writer:
                writer.executemany("DELETE FROM vectors WHERE unit = ?", [(u,) for u in gone])
        for unit in gone:
            self._mirror.pop(unit, None)
        return len(gone)

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            target = ":memory:"
            if self.path is not None:
                private_folder(self.path.parent)
                private_file(self.path)  # before SQLite creates it with its default mode
                tighten_file(Path(os.fspath(self.path) + "-journal"))
                target = os.fspath(self.path)
            connection = sqlite3.connect(
                target, timeout=_BUSY_SECONDS, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA secure_delete = ON")  # forgotten vectors are overwritten
            for statement in _SCHEMA:
                connection.execute(statement)
            self._connection = connection
        return self._connection

    def _enter(self, space: str) -> None:
        """Make ``space`` the file's space, dropping every vector of another one."""
        if self._space == space:
            return
        connection = self._connect()
        row = connection.execute("SELECT value FROM meta WHERE key = 'space'").fetchone()
        if row is None or row[0] != f"{FORMAT} {space}":
            with self._writing() as writer:
                writer.execute("DELETE FROM vectors")
                writer.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('space', ?)",
                    (f"{FORMAT} {space}",),
                )
        self._space = space
        self._mirror.clear()

    def _read(self, units: Sequence[str]) -> None:
        connection = self._connect()
        for start in range(0, len(units), _CHUNK):
            part = units[start : start + _CHUNK]
            marks = ",".join("?" * len(part))
            query = f"SELECT unit, digest, vector FROM vectors WHERE unit IN ({marks})"  # noqa: S608 - marks only
            for unit, digest, blob in connection.execute(query, part):
                self._mirror[unit] = (digest, _unpack(blob))

    @contextlib.contextmanager
    def _writing(self) -> Generator[sqlite3.Connection]:
        connection = self._connect()
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")


def _pack(vector: Vector) -> bytes:
    return array("f", vector).tobytes()


def _unpack(blob: bytes) -> Vector:
    values = array("f")
    values.frombytes(blob)
    return tuple(values)


# ----------------------------------------------------------------------------------------------
# A key-value store's item vectors, kept in each namespace workspace's vector cache.
#
# :func:`~memquill.semantic._texts.similarity_order` given ``units`` — each text's workspace folder
# and unit name, ``i:<record id>`` for an item (its current version) — looks the texts' vectors up
# in the workspace's :class:`~memquill.semantic._vectors.VectorCache` before embedding anything, and
# keeps what it embedded there: a new process with the same embedder finds them; another embedder
# finds the space changed and every vector of that file is rebuilt; a forget deletes the item's row
# at the write (:func:`memquill.index.forget_vectors`), wherever it comes from. A folder that cannot
# be a workspace (a database store's namespace, which has no folder) keeps its vectors in the
# caller's memo only.


ItemUnit = tuple[Path, str]
"""A text's workspace folder and unit name (``i:<record id>``)."""


def kept_vectors(
    space: str, units: Sequence[ItemUnit], texts: Sequence[str], keys: Sequence[str]
) -> dict[str, Vector]:
    """The cached vectors of ``texts`` (by their memo ``keys``) whose digest still matches."""
    found: dict[str, Vector] = {}
    for cache, rows in _by_cache(units, texts, keys):
        with contextlib.closing(cache):
            try:
                held = cache.lookup(space, [(unit, digest) for unit, digest, _ in rows])
            except (sqlite3.Error, OSError):
                continue  # the cache is never the truth: embed again
            found.update((key, held[unit]) for unit, _, key in rows if unit in held)
    return found


def keep_vectors(
    space: str,
    units: Sequence[ItemUnit],
    texts: Sequence[str],
    keys: Sequence[str],
    memo: Mapping[str, Vector],
) -> None:
    """Store the vectors ``memo`` holds for ``texts`` in their workspaces' caches."""
    for cache, rows in _by_cache(units, texts, keys):
        with contextlib.closing(cache):
            kept = [(unit, digest, memo[key]) for unit, digest, key in rows if key in memo]
            with contextlib.suppress(sqlite3.Error, OSError):
                cache.store(space, kept)


def _by_cache(
    units: Sequence[ItemUnit], texts: Sequence[str], keys: Sequence[str]
) -> list[tuple[VectorCache, list[tuple[str, str, str]]]]:
    grouped: dict[Path, list[tuple[str, str, str]]] = {}
    for (folder, unit), text, key in zip(units, texts, keys, strict=True):
        grouped.setdefault(folder, []).append((unit, unit_digest(text), key))
    caches: list[tuple[VectorCache, list[tuple[str, str, str]]]] = []
    for folder, rows in grouped.items():
        try:
            path = vectors_path(canonical_workspace(folder))
        except (MemquillError, OSError):
            continue  # no folder (a database store's namespace): the memo only
        if path is not None:
            caches.append((VectorCache(path), rows))
    return caches
