"""What ``memquill index --status`` and ``doctor`` read of an index, without writing anything."""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memquill.index._sync import stale_notes
from memquill.query import WalkedFile

if TYPE_CHECKING:
    from memquill.index._db import IndexDatabase
    from memquill.index._notes import NoteTable
    from memquill.query import Walk


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """What :meth:`SearchIndex.status` found.

    Attributes:
        path: the index file (``None``: kept in memory).
        exists: whether it has been built.
        size: bytes on disk (file and write-ahead log).
        documents: notes indexed.
        pages: pages of notes (:mod:`._pages`).
        synced_ns: when a search or refresh last brought it up to date (ns since the epoch).
        stale: notes the next search would read (new, changed); ``None`` if not checked.
        removed: notes the next search would drop; ``None`` if not checked.
        format: what the stored figures depend on.
    """

    path: Path | None
    exists: bool
    size: int
    documents: int
    pages: int
    synced_ns: int | None
    stale: int | None
    removed: int | None
    format: str

    @property
    def fresh(self) -> bool | None:
        """Whether the index matches the files (``None``: not checked)."""
        if self.stale is None or self.removed is None:
            return None
        return self.exists and not self.stale and not self.removed


def on_disk(path: Path) -> int:
    """Bytes the index file at ``path`` takes, with its write-ahead log."""
    total = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            total += os.stat(os.fspath(path) + suffix).st_size
    return total


def index_exists(path: Path) -> bool:
    """Whether ``path`` exists; a file where a folder on its way should be is raised."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    return True


def check_buildable(folder: Path) -> None:
    """Raise what making an index in ``folder`` would raise, found without writing."""
    while not os.path.lexists(folder) and folder.parent != folder:
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))


def read_status(
    path: Path | None,
    database: IndexDatabase,
    notes: NoteTable,
    size: int,
    walk: Walk | None,
    racy_ns: int,
) -> IndexStatus:
    """The status of a built index and, given a walk made now, how far the files have moved
    on since it was brought up to date (nothing is written)."""
    with database.reading() as connection:
        notes.refresh(connection)
        pages = len(notes.pages)
        synced = database.meta_int("synced_ns") or None
    stale = removed = None
    if walk is not None:
        stale = len(stale_notes(walk, notes, racy_ns))
        walked = {step.path for step in walk.steps if isinstance(step, WalkedFile)}
        removed = sum(1 for known in notes.by_path if known not in walked)
    return IndexStatus(
        path,
        True,
        size,
        len(notes.by_id),
        pages,
        synced,
        stale,
        removed,
        database.meta("format"),
    )
