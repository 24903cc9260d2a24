"""The index file: one SQLite database per workspace, in WAL mode, safe across processes.

Tables: ``meta`` (format, workspace, the generation of the last change, the next note and
term ids), ``pages`` (the notes' figures, :data:`._codec.PAGE` notes a blob, each with the
generation of its last change), ``lexicon`` (each term's text and id: :mod:`._view`),
``terms`` (per note, its term list: every term it holds with its counts, and its chunk matrix:
:mod:`._codec`) and ``postings`` (per term, blocks of at most :data:`._codec.BLOCK` notes,
keyed by the term's id and the block's first note id, each with the generation of its last
change: :mod:`._writer`) and ``folders`` (the walk's folder listings, for the next process:
:mod:`._sync`).

The file holds the notes' vocabulary, so it is private: the folder is ``0700`` and the database
is created ``0600`` before SQLite opens it (SQLite gives its ``-wal`` and ``-shm`` files the
database's mode). That narrowing opens and closes the files, which is done only while no other
connection of this process holds them (:data:`_HELD`): SQLite coordinates processes with POSIX
advisory locks, and closing *any* descriptor of a file drops every lock the process holds on
it. Another process would then take itself for the last user and, at its exit, delete the
``-wal`` and ``-shm`` files this process still reads through (every index opened here after
that failed with ``disk I/O error``). SQLite runs with ``secure_delete`` (removed content is
overwritten with zeros, in the database and in the pages the write-ahead log receives),
temporary data stays in memory, and after a change that removed notes the log is checkpointed
and truncated (:meth:`IndexDatabase.wipe_log`), so a removed note's words are nowhere in the
files.

Every change is one transaction, so a crash leaves the old or the new index. A process reads
one search's data inside one read transaction (a consistent snapshot). A file that SQLite
cannot read or a blob that fails its checksum is *damage*: :class:`IndexDamaged` is raised and
the caller rebuilds; it is never served.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Final

from memquill.errors import SourceError
from memquill.owner_only import private_file, tighten_file
from memquill.query import CHUNK_OVERLAP, CHUNK_SIZE, STEMMER_VERSION, TOKENIZER_VERSION

SCHEMA_VERSION: Final = 7
"""6: files in the records format are no longer indexed as notes; 7: term ids deflated as steps
in term lists, raw deflate, 16 KiB pages, each term's text stored once (keyed by it)."""
FORMAT: Final = (
    f"memquill-index {SCHEMA_VERSION}; tokens {TOKENIZER_VERSION}, {STEMMER_VERSION}; "
    f"chunks {CHUNK_SIZE}/{CHUNK_OVERLAP}"
)
"""What the stored figures depend on: any change makes an existing index outdated."""

_SCHEMA: Final = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pages(page INTEGER PRIMARY KEY, gen INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE lexicon(term TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE terms(id INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE postings(
    term INTEGER NOT NULL, lo INTEGER NOT NULL, gen INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (term, lo)) WITHOUT ROWID;
CREATE TABLE folders(path BLOB PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;
"""
_PAGE_BYTES: Final = 16_384
_BUSY_MS: Final = 60_000
_WIPE_BUSY_MS: Final = 2_000
"""How long truncating the log waits for readers of older snapshots (then: at the next one)."""
_LOG_BYTES: Final = 1 << 20
_READ_CACHE_KIB: Final = 2048
"""SQLite's page cache while reading: a search reads a few blocks and term lists, which the
operating system's file cache keeps; a larger cache only holds a warm process's memory up."""
_LARGE_WRITE_CACHE_KIB: Final = 16_384
"""SQLite's page cache inside a large write transaction (a build's B-tree pages stay in it;
an edit's few pages need no more than a search's)."""
_SIDE_FILES: Final = ("-wal", "-shm")
_HELD: Final = Counter[tuple[int, int]]()
"""Open connections of this process per index file (device, inode)."""
_HELD_LOCK: Final = threading.Lock()


class IndexDamaged(Exception):
    """The index file is damaged: it must be rebuilt, never read."""


class IndexOutdated(Exception):
    """The index was written by another format or for another workspace."""


class IndexDatabase:
    """One open index file (or an in-memory index when ``path`` is ``None``).

    Raises:
        IndexDamaged: the file exists but SQLite cannot read it.
        IndexOutdated: it holds another format or another workspace.
    """

    def __init__(self, path: Path | None, workspace: str) -> None:
        self.path = path
        self.workspace = workspace
        self.wipe_pending = False
        self._held: tuple[int, int] | None = None
        target = ":memory:" if path is None else os.fspath(path)
        with _HELD_LOCK:  # no other thread opens or closes one meanwhile
            if path is not None and not _HELD[file_inode(path) or (-1, -1)]:
                _make_private(path)
            try:
                self.connection = sqlite3.connect(
                    target, timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False
                )
            except sqlite3.DatabaseError as error:
                raise IndexDamaged(str(error)) from None
            self.inode = self._held = file_inode(path)
            if self._held is not None:
                _HELD[self._held] += 1
        try:
            self._prepare()
        except sqlite3.OperationalError:
            self.close()
            raise
        except sqlite3.DatabaseError as error:
            self.close()
            raise IndexDamaged(str(error)) from None
        except (IndexOutdated, IndexDamaged):
            self.close()
            raise

    def close(self) -> None:
        """Close the connection (again: nothing)."""
        self.connection.close()
        with _HELD_LOCK:
            held, self._held = self._held, None
            if held is not None:
                _HELD[held] -= 1
                if _HELD[held] <= 0:
                    del _HELD[held]

    def replaced(self) -> bool:
        """Whether the file at ``path`` is no longer the one this connection holds."""
        return self.path is not None and file_inode(self.path) != self.inode

    @contextlib.contextmanager
    def reading(self) -> Generator[sqlite3.Connection]:
        """A read transaction: every read inside sees one snapshot."""
        with self._guard():
            self.connection.execute("BEGIN")
            try:
                yield self.connection
            finally:
                self.connection.execute("COMMIT")

    @contextlib.contextmanager
    def writing(self, *, wait: bool = True, large: bool = False) -> Generator[sqlite3.Connection]:
        """A write transaction (waits for other writers, unless ``wait`` is false: then
        ``sqlite3.OperationalError`` if one is writing); rolled back on any error. A ``large``
        one (many notes) has a larger page cache while it lasts."""
        with self._guard():
            if wait:
                self.connection.execute("BEGIN IMMEDIATE")
            else:
                self.connection.execute("PRAGMA busy_timeout = 0")
                try:
                    self.connection.execute("BEGIN IMMEDIATE")
                finally:
                    self.connection.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
            if large:
                self.connection.execute(f"PRAGMA cache_size = -{_LARGE_WRITE_CACHE_KIB}")
            try:
                try:
                    yield self.connection
                except BaseException:
                    # SQLite rolls back by itself on some errors (a full disk): never mask those.
                    if self.connection.in_transaction:
                        self.connection.execute("ROLLBACK")
                    raise
                self.connection.execute("COMMIT")
            finally:
                if large:
                    # Once the transaction ends (no dirty page left to spill), shrinking the
                    # cache frees the pages over the reading size.
                    self.connection.execute(f"PRAGMA cache_size = -{_READ_CACHE_KIB}")

    def wipe_log(self) -> None:
        """Checkpoint the write-ahead log into the database and truncate it to nothing.

        The log keeps every page a transaction wrote until it is overwritten, words of removed
        notes included. Readers of an older snapshot hold it back for a moment; if they are
        still there after :data:`_WIPE_BUSY_MS`, :attr:`wipe_pending` is set and the next
        change tries again.
        """
        if self.path is None:
            return
        execute = self.connection.execute
        with self._guard():
            execute(f"PRAGMA busy_timeout = {_WIPE_BUSY_MS}")
            try:
                row = execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        self.wipe_pending = row is None or int(row[0]) != 0

    def meta(self, key: str, default: str = "") -> str:
        """A ``meta`` value."""
        row = self.connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else str(row[0])

    def meta_int(self, key: str) -> int:
        """A ``meta`` value that holds a number (0 when absent)."""
        value = self.meta(key, "0")
        try:
            return int(value)
        except ValueError:
            raise IndexDamaged(f"meta {key}") from None

    def set_meta(self, key: str, value: str | int) -> None:
        """Set a ``meta`` value (inside a write transaction)."""
        self.connection.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, str(value)),
        )

    def check(self) -> list[str]:
        """SQLite's own consistency check (every page); empty when the file is sound."""
        with self._guard():
            rows = self.connection.execute("PRAGMA quick_check").fetchall()
        problems = [str(row[0]) for row in rows]
        return [] if problems == ["ok"] else problems

    @contextlib.contextmanager
    def _guard(self) -> Generator[None]:
        try:
            yield
        except sqlite3.OperationalError:
            raise  # busy, locked, disk full, read-only: not damage
        except sqlite3.DatabaseError as error:
            raise IndexDamaged(str(error)) from None

    def _prepare(self) -> None:
        execute = self.connection.execute
        # Before anything is written (it sets a new file's page size only): a term list of a
        # kilobyte leaves less of a 16 KiB page unused than of a 4 KiB one.
        execute(f"PRAGMA page_size = {_PAGE_BYTES}")
        if self.path is not None:
            execute("PRAGMA journal_mode = WAL")
        execute("PRAGMA synchronous = NORMAL")  # a cache: a lost last commit is re-derived
        execute("PRAGMA secure_delete = ON")
        execute("PRAGMA temp_store = MEMORY")  # no temporary files outside the private folder
        execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        # A checkpoint leaves the log at most this long (a build would leave it tens of MB).
        execute(f"PRAGMA journal_size_limit = {_LOG_BYTES}")
        execute("PRAGMA cell_size_check = ON")
        execute(f"PRAGMA cache_size = -{_READ_CACHE_KIB}")
        execute("BEGIN IMMEDIATE")
        try:
            exists = execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
            ).fetchone()
            if exists is None:
                for statement in _SCHEMA.strip().split(";"):
                    if statement.strip():
                        execute(statement)
                self.set_meta("format", FORMAT)
                self.set_meta("workspace", self.workspace)
                for key in ("generation", "next_id", "next_term", "synced_ns"):
                    self.set_meta(key, 0)
            elif self.meta("format") != FORMAT or self.meta("workspace") != self.workspace:
                raise IndexOutdated(self.meta("format"))
        except BaseException:
            if self.connection.in_transaction:
                execute("ROLLBACK")
            raise
        execute("COMMIT")


def _make_private(path: Path) -> None:
    """Create the index file ``0600`` before SQLite would create it ``0644``, and narrow an
    existing one and its ``-wal`` and ``-shm`` files (only while this process holds no
    connection to them: see the module doc)."""
    try:
        private_file(path)
    except SourceError:
        raise IndexDamaged("not a regular file") from None
    for suffix in _SIDE_FILES:
        tighten_file(Path(os.fspath(path) + suffix))


def file_inode(path: Path | None) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``, or ``None``."""
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def remove_index_files(path: Path) -> None:
    """Delete an index file and its log and shared-memory files (those present)."""
    for suffix in ("", *_SIDE_FILES):
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.fspath(path) + suffix)


def discard_index(path: Path, root: str, *, inode: tuple[int, int] | None) -> bool:
    """Delete the index file at ``path`` (under a lock, so that only one process does it).

    Another process may have replaced it meanwhile: a file that is no longer ``inode`` (when
    given), or that opens cleanly (when not), is kept. Returns whether it was deleted.
    """
    import portalocker  # only here: a process that reads a sound index never loads it

    lock = Path(os.fspath(path) + ".lock")
    private_file(lock)  # portalocker would create it with the default mode
    with portalocker.Lock(
        lock,
        mode="a",
        timeout=60,
        flags=portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING,
    ):
        if inode is not None:
            if file_inode(path) != inode:
                return False
        else:
            try:
                probe = IndexDatabase(path, root)
            except (IndexDamaged, IndexOutdated):
                pass
            else:
                probe.close()
                return False
        remove_index_files(path)
    return True
