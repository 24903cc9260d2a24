"""What ``memquill index --status`` and ``doctor`` read of an index, without writing anything.

:func:`read_status` says what the index holds and what the next search would read or drop;
:func:`verify_blobs` reads every stored blob back, as ``doctor`` does: checksums and parses,
nothing else.
"""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memquill.index._codec import PAGE, CorruptBlob, decode_block, decode_page, decode_term_list
from memquill.index._sync import decode_listing, stale_notes
from memquill.query import WalkedFile

if TYPE_CHECKING:
    from memquill.index._db import IndexDatabase
    from memquill.index._view import NoteTable
    from memquill.query import Walk


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """What :meth:`SearchIndex.status` found.

    Attributes:
        path: the index file (``None``: kept in memory).
        exists: whether it has been built.
        size: bytes on disk (file and write-ahead log).
        documents: notes indexed.
        pages: pages of notes (:mod:`._codec`).
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
        removed = sum(1 for known in notes.ids if known not in walked)
    return IndexStatus(
        path,
        True,
        size,
        len(notes),
        pages,
        synced,
        stale,
        removed,
        database.meta("format"),
    )


def verify_blobs(database: IndexDatabase) -> list[str]:
    """Problems with any postings block, term list, page or kept folder listing (empty: all
    sound).

    Every note on a page must have its term list, on the page its id names, and no note may
    have a term list without being on a page; every term with postings must be in the
    lexicon, and every term of the lexicon must have postings.
    """
    problems: list[str] = []
    with database.reading() as connection:
        held: set[int] = set()
        for term, lo, blob in connection.execute("SELECT term, lo, data FROM postings"):
            held.add(int(term))
            try:
                block = decode_block(bytes(blob))
            except CorruptBlob as error:
                problems.append(f"postings of term {term} from note {lo}: {error}")
                continue
            if block.ids[0] != lo:
                problems.append(f"postings of term {term} from note {lo}: start elsewhere")
        known = {int(term) for (term,) in connection.execute("SELECT id FROM lexicon")}
        problems.extend(f"term {term}: not in the lexicon" for term in sorted(held - known))
        problems.extend(f"term {term}: held by no note" for term in sorted(known - held))
        listed: set[int] = set()
        for doc_id, blob in connection.execute("SELECT id, data FROM terms"):
            try:
                decode_term_list(bytes(blob))
            except CorruptBlob as error:
                problems.append(f"term list of note {doc_id}: {error}")
            listed.add(int(doc_id))
        paged: set[int] = set()
        for page, blob in connection.execute("SELECT page, data FROM pages"):
            try:
                rows = decode_page(bytes(blob))
            except CorruptBlob as error:
                problems.append(f"page {page}: {error}")
                continue
            for row in rows:
                if row.id // PAGE != page:
                    problems.append(f"note {row.path!r}: on page {page}")
                paged.add(row.id)
        for path, blob in connection.execute("SELECT path, data FROM folders"):
            try:
                decode_listing(bytes(blob))
            except CorruptBlob as error:
                problems.append(f"listing of folder {bytes(path)!r}: {error}")
        problems.extend(f"note {doc_id}: no term list" for doc_id in sorted(paged - listed))
        problems.extend(f"note {doc_id}: on no page" for doc_id in sorted(listed - paged))
    return problems[:20]
