"""Bringing the index up to date with the files before it answers: the walk, and what it keeps.

One walk (:func:`memquill.query._scan.walk_workspace`) lists the candidate notes with their file
identities (path, size, mtime_ns, inode, ctime_ns, device). A note whose row has the same
identity, indexed when the file had already settled (outside the racy window: two edits
within the file system's timestamp granularity can keep an identity), is reused; every other
note is read and analysed again, new and renamed ones included. Rows of notes the walk no
longer admits are removed. The limits are applied by :func:`memquill.query._scan.admit`, exactly as
the full scan applies them, with the sizes the index recorded.

The walk's packed identities are compared with the note table's columns in C, run by run of
consecutive note ids (:func:`walked_runs`); only a run that differs is gone through note by
note. When the index holds every walked note (read again without error where it changed) and
the notes together are within the file and text limits, none is left out: the limits only
add the walk's own summary (:func:`memquill.query._scan.walk_warnings`), with no pass over
the notes.

Folder listings are kept in the index (:class:`KeptListings`), so that a fresh process need
not list every folder again.

A walk lists each folder (its sorted, filtered entries) and then ``lstat``\\ s each note; a
long-lived process keeps the listings while a folder's own identity is unchanged
(:class:`memquill.query.DocumentCache`: adding, removing or renaming an entry changes its
folder's mtime and ctime). The index keeps them too, one row per folder, so the first search of a
new process ``lstat``\\ s each folder and lists only those that changed; every note is still
``lstat``\\ ed (an edit changes only its own file's identity). A listing is kept only once its
folder has settled (outside the racy window), exactly as the in-process cache keeps it.

The rows are keyed by what a listing depends on (:func:`listing_key`): the scan settings, the
private-path lists and the index format (a change to the walk's rules must change the format,
as a change to any stored figure does). Rows made under another key are ignored and replaced.
Each row is::

    folder (UTF-8) -> size, mtime, inode, ctime, device (8 bytes each), entries, n (4 bytes each)
                      | zlib(kinds[n] | paths[n], NUL-separated (UTF-8)) | crc

A row is a cache: one that cannot be written now (a busy or read-only index) is written by a
later sync. A row that fails its checksum is damage (:class:`._db.IndexDamaged`). Rows hold
note names, so a replaced or deleted row is wiped like a removed note
(:meth:`._db.IndexDatabase.wipe_log`), and the rows of folders a change watcher saw change are
deleted at once (:meth:`KeptListings.drop`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import compress, islice, pairwise, repeat, starmap
from operator import ne, sub
from pathlib import Path
from typing import TYPE_CHECKING, Final, cast

from memquill.index._codec import CorruptBlob, seal, unseal
from memquill.index._db import FORMAT, IndexDatabase
from memquill.index._view import NoteTable
from memquill.private_paths import CREDENTIAL_PARTS, SUSPECT_NAMES, SUSPECT_STARTS
from memquill.query import (
    DocumentCache,
    FolderListing,
    Identity,
    ScanBudget,
    ScanConfig,
    Walk,
    WalkedFile,
    admit,
    load_scan_config,
    walk_warnings,
    walk_workspace,
)

if TYPE_CHECKING:
    from memquill.index._build import UnitDone


RACY_NS: Final = 2_000_000_000
"""A row indexed less than this after its file's last change is read again."""

_SETTLE_LOG_FROM: Final = 256
"""Notes analysed at once after which the write-ahead log is folded into the file."""
Progress = Callable[[int, int], None]
"""Called as ``(done, total)`` while notes are analysed."""


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one synchronisation did.

    Attributes:
        notes: the notes within the limits (the index holds exactly these).
        warnings: the warnings the same full scan would give (skips, unreadable notes).
        analysed: notes read and analysed.
        removed: rows removed.
        skipped: walked notes left out (too large, unreadable).
        read: the notes analysed (new or changed), by path.
        gone: the notes whose rows were removed, by path.
    """

    notes: int
    warnings: tuple[str, ...]
    analysed: int
    removed: int
    skipped: frozenset[str] = frozenset()
    read: frozenset[str] = frozenset()
    gone: frozenset[str] = frozenset()


def synchronise(
    root: Path,
    database: IndexDatabase,
    notes: NoteTable,
    *,
    listings: DocumentCache | None,
    budget: ScanBudget | None = None,
    walk: Walk | None = None,
    progress: Progress | None = None,
    announce: Callable[[int], None] | None = None,
    workers: int | None = None,
    racy_ns: int = RACY_NS,
    force: frozenset[str] | set[str] = frozenset(),
) -> SyncReport:
    """Make the index hold exactly the notes a full scan would read now.

    Args:
        root: the canonical workspace.
        database: its index.
        notes: this process's mirror of the index (refreshed here).
        listings: a folder-listing cache to reuse between walks.
        budget: the walk's limits.
        walk: a walk already made (by a change watcher); ``None`` walks now.
        progress: told how far analysis got.
        announce: told, before a long analysis starts, how many notes it reads.
        workers: worker processes for a large analysis (default: the usable cores).
        racy_ns: rows indexed less than this after their file changed are read again.
        force: notes to read again whatever their identity (a watcher saw them written).
    """
    budget = budget or ScanBudget.default()
    if walk is None:
        walk = walk_workspace(root, load_scan_config(root), listings, budget)
    with database.reading() as connection:
        notes.refresh(connection)
    oversized: list[str] = []
    pending, indexed = _stale(walk, notes, racy_ns, force, oversized)
    errors: dict[str, str] = {}
    analysed = analyse(root, database, notes, pending, errors, progress, announce, workers)
    if analysed:
        with database.reading() as connection:
            notes.refresh(connection)

    ids, byte_sizes = notes.ids, notes.byte_sizes

    def resolve(walked: WalkedFile) -> tuple[int, int] | str:
        path = walked[0]
        if errors:
            error = errors.get(path)
            if error is not None:
                return error
        doc_id = ids.get(path)
        if doc_id is None:  # pragma: no cover - analysed above
            return "Memory source is not readable."
        return doc_id, byte_sizes[doc_id]

    if (
        indexed
        and not oversized
        and not errors
        and len(walk.texts) <= budget.files
        and notes.bytes_total <= budget.bytes
    ):
        # Every walked note indexed (and read again without error where it changed), all of
        # them within the limits: none is left out.
        paths, warnings = walk.texts, walk_warnings(walk, budget)
    else:
        admitted = admit(walk, resolve, budget)
        paths, warnings = admitted.paths, admitted.warnings
    keep = set(paths)
    removals = [path for path in notes.ids if path not in keep]
    if removals or analysed or not database.meta_int("synced_ns"):
        from memquill.index._writer import IndexWriter  # a current index loads no write side

        IndexWriter(database, notes).store(None, removals, synced=True)
        with database.reading() as connection:
            notes.refresh(connection)
    skipped = frozenset([*oversized, *errors])
    read = frozenset(walked[0] for walked in pending if walked[0] not in errors)
    return SyncReport(
        len(paths),
        warnings,
        analysed,
        len(removals),
        skipped,
        read=read,
        gone=frozenset(removals),
    )


def stale_notes(
    walk: Walk,
    notes: NoteTable,
    racy_ns: int = RACY_NS,
    force: frozenset[str] | set[str] = frozenset(),
    oversized: list[str] | None = None,
) -> list[WalkedFile]:
    """The walked notes the index must read (again): new, changed, unsettled or forced
    (and, into ``oversized``, those too large to read)."""
    return _stale(walk, notes, racy_ns, force, oversized)[0]


def _stale(
    walk: Walk,
    notes: NoteTable,
    racy_ns: int,
    force: frozenset[str] | set[str],
    oversized: list[str] | None,
) -> tuple[list[WalkedFile], bool]:
    """:func:`stale_notes`, and whether the walk warned of nothing and the index holds every
    note it walked (before any is read again).

    The walk is compared with the rows run by run of consecutive note ids, in C
    (:func:`walked_runs`); only a run that differs, holds a note too large, read too soon
    after its last change or forced, is gone through note by note.
    """
    runs = walked_runs(walk, notes)
    if runs is None:
        return _stale_by_note(
            walk.steps, notes, walk.config.max_file_bytes, racy_ns, force, oversized
        ), False
    pending: list[WalkedFile] = []
    limit = walk.config.max_file_bytes
    texts, numbers, seen = walk.texts, walk.numbers, notes.seen
    for start, end, low, equal in runs:
        if (
            equal
            and max(numbers[5 * start : 5 * end : 5]) <= limit
            and force.isdisjoint(texts[start:end])
            # ``seen - max(mtime, ctime) >= racy_ns`` for each note, as two minimums.
            and all(
                min(map(sub, seen[low : low + end - start], numbers[5 * start + at : 5 * end : 5]))
                >= racy_ns
                for at in (1, 3)
            )
        ):
            continue
        held = iter(numbers[5 * start : 5 * end])
        identities = cast("Iterator[Identity]", zip(held, held, held, held, held, strict=True))
        steps = starmap(WalkedFile, zip(texts[start:end], identities, strict=True))
        pending += _stale_by_note(steps, notes, limit, racy_ns, force, oversized)
    return pending, True


def _stale_by_note(
    steps: Iterable[WalkedFile | str],
    notes: NoteTable,
    limit: int,
    racy_ns: int,
    force: frozenset[str] | set[str],
    oversized: list[str] | None,
) -> list[WalkedFile]:
    """The notes among ``steps`` the index must read (again), one by one."""
    pending: list[WalkedFile] = []
    get = notes.ids.get
    sizes, mtimes, inodes, ctimes, devices, seen = (
        notes.sizes,
        notes.mtimes,
        notes.inodes,
        notes.ctimes,
        notes.devices,
        notes.seen,
    )
    for step in steps:
        if isinstance(step, str):
            continue  # a warning
        path, identity = step
        if identity[0] > limit:
            if oversized is not None:
                oversized.append(path)
            continue
        at = get(path)
        # Read after the file had settled: later edits change the identity. Otherwise read
        # again once it has settled (a second edit inside the window could keep the identity).
        if (
            at is None
            or (sizes[at], mtimes[at], inodes[at], ctimes[at], devices[at]) != identity
            or seen[at] - max(identity[1], identity[3]) < racy_ns
            or path in force
        ):
            pending.append(step)
    return pending


def walked_runs(walk: Walk, notes: NoteTable) -> list[tuple[int, int, int, bool]] | None:
    """The walk's notes in runs the table holds under consecutive ids (as a build numbers
    them), each as its first and last place in the walk (``start``, ``end``: a slice), its
    first note id, and whether every row of the run holds the identity the walk saw
    (compared column by column in C); ``None`` when the walk warned or some walked note is
    not indexed."""
    if walk.warned:
        return None
    found = list(map(notes.ids.get, walk.texts))
    if None in found:
        return None
    ids = cast("list[int]", found)
    count = len(ids)
    steps = map(ne, map(sub, islice(ids, 1, None), ids), repeat(1))
    bounds = [0, *compress(range(1, count), steps), count] if count else []
    columns = (notes.sizes, notes.mtimes, notes.inodes, notes.ctimes, notes.devices)
    numbers = walk.numbers
    runs: list[tuple[int, int, int, bool]] = []
    for start, end in pairwise(bounds):
        low, high = ids[start], ids[start] + end - start
        equal = all(
            column[low:high] == numbers[5 * start + offset : 5 * end : 5]
            for offset, column in enumerate(columns)
        )
        runs.append((start, end, low, equal))
    return runs


def analyse(
    root: Path,
    database: IndexDatabase,
    notes: NoteTable,
    pending: list[WalkedFile],
    errors: dict[str, str],
    progress: Progress | None,
    announce: Callable[[int], None] | None,
    workers: int | None,
) -> int:
    """Read and analyse ``pending`` into the index (batches stored as they come)."""
    if not pending:
        return 0
    if announce is not None:
        announce(len(pending))
    # The build and the writer load only when a note must be read: a current index needs neither.
    from memquill.index._build import analysers, run_units, worker_count
    from memquill.index._writer import IndexWriter

    writer = IndexWriter(database, notes)
    count = analysers(len(pending), worker_count() if workers is None else workers)
    done = 0

    def advance(unit: UnitDone) -> None:
        nonlocal done
        errors.update(unit.errors)
        done += unit.count
        if progress is not None:
            progress(done, len(pending))

    items = [(step.path, step.identity) for step in pending]
    run_units(root, items, workers=count, done=advance, store=writer.store)
    if len(pending) >= _SETTLE_LOG_FROM:
        database.wipe_log()  # a large analysis leaves a long log: fold it in and drop it
    return len(pending)


# ----------------------------------------------------------------------------------------------
# The folder listings the index keeps (see the module doc).


Kept = dict[str, tuple[Identity, FolderListing]]
"""Folder -> (its identity when listed, its listing)."""
_HEAD: Final = struct.Struct("<5qII")
_KINDS: Final = {"file": b"f", "folder": b"d", "deep": b"D"}
_NAMES: Final = {code[0]: kind for kind, code in _KINDS.items()}
_KEY: Final = "listings"
"""The ``meta`` entry naming the key the stored listings were made under."""


def listing_key(config: ScanConfig) -> str:
    """What a folder's listing depends on besides its entries, as one string."""
    rules = [
        FORMAT,
        sorted(config.extensions),
        config.max_depth,
        list(config.ignore),
        sorted(SUSPECT_NAMES),
        list(SUSPECT_STARTS),
        sorted(CREDENTIAL_PARTS),
    ]
    return hashlib.sha256(json.dumps(rules).encode()).hexdigest()


class KeptListings:
    """The listings the index holds, and which of them this process has written or read."""

    def __init__(self) -> None:
        self._key = ""
        self._stored: dict[str, Identity] = {}
        self._foreign = False
        """The index holds rows made under another key (to be deleted)."""
        self._pending: set[str] = set()
        """Folders whose rows are still to be dropped."""

    def load(
        self, database: IndexDatabase, config: ScanConfig, notes: NoteTable | None = None
    ) -> Kept:
        """The stored listings made under ``config``'s key (none under another), each note's
        path the string ``notes`` holds for it, if it does (a long-lived process keeps both:
        two copies of every path held about 80 bytes a note more)."""
        key = listing_key(config)
        self._key, self._stored = key, {}
        if database.path is None:
            return {}
        with database.reading() as connection:
            if database.meta(_KEY) != key:
                self._foreign = database.meta(_KEY) != ""
                return {}
            rows = connection.execute("SELECT path, data FROM folders").fetchall()
        kept: Kept = {}
        for path, blob in rows:
            folder = bytes(path).decode("utf-8", "surrogatepass")
            identity, listing = decode_listing(bytes(blob))
            kept[folder] = (identity, listing if notes is None else shared_paths(listing, notes))
            self._stored[folder] = identity
        return kept

    def save(
        self,
        database: IndexDatabase,
        config: ScanConfig,
        held: Mapping[str, tuple[Identity, FolderListing]],
    ) -> None:
        """Store ``held`` (the listings the walk may reuse) where it differs from the index.

        Nothing waits: if another process is writing, the listings are stored next time.
        """
        if database.path is None:
            return
        key = listing_key(config)
        if key != self._key:
            self._key, self._stored = key, {}
        stored = self._stored
        writes = [
            (_folder_key(folder), _encode(identity, listing))
            for folder, (identity, listing) in held.items()
            if stored.get(folder) != identity
        ]
        if not writes and stored.keys() <= held.keys() and not self._foreign:
            return
        keys = {_folder_key(folder) for folder in held}
        try:
            with database.writing(wait=False) as connection:
                if database.meta(_KEY) != key:
                    database.set_meta(_KEY, key)
                    writes = [
                        (_folder_key(folder), _encode(identity, listing))
                        for folder, (identity, listing) in held.items()
                    ]
                # Every row of a folder not walked now goes (another process may have
                # stored it): its names are of notes no longer there.
                present = {
                    bytes(path) for (path,) in connection.execute("SELECT path FROM folders")
                }
                deletes = [(path,) for path in present - keys]
                connection.executemany("DELETE FROM folders WHERE path = ?", deletes)
                connection.executemany(
                    "INSERT OR REPLACE INTO folders(path, data) VALUES (?, ?)", writes
                )
        except sqlite3.OperationalError:
            return  # busy, read-only or full: a later sync stores them
        replaced = bool(deletes) or any(path in present for path, _ in writes)
        self._stored = {folder: identity for folder, (identity, _) in held.items()}
        self._foreign = False
        if replaced:
            _forget_old(database)

    def drop(self, database: IndexDatabase, folders: set[str]) -> None:
        """Forget the stored listings of ``folders`` (changed, as a change watcher saw: a
        removed note's name must not stay behind). Those that cannot be forgotten now (a busy
        or read-only index) are tried again at the next call."""
        folders = self._pending | folders
        if not folders or database.path is None:
            return
        try:
            with database.writing(wait=False) as connection:
                deleted = connection.executemany(
                    "DELETE FROM folders WHERE path = ?", [(_folder_key(f),) for f in folders]
                ).rowcount
        except sqlite3.OperationalError:
            self._pending = folders
            return
        self._pending = set()
        for folder in folders:
            self._stored.pop(folder, None)
        if deleted:
            _forget_old(database)


def shared_paths(listing: FolderListing, notes: NoteTable) -> FolderListing:
    """``listing`` with each indexed note's path the string the note table holds."""
    values = listing.values
    found = list(map(notes.ids.get, values))
    paths = notes.paths
    if None not in found:  # every step a note (in C)
        shared = tuple(map(paths.__getitem__, cast("list[int]", found)))
    else:
        pairs = zip(values, found, strict=True)
        shared = tuple(value if at is None else paths[at] for value, at in pairs)
    return FolderListing(
        listing.entries, listing.kinds, cast("tuple[str, ...]", shared), listing.cacheable
    )


def _forget_old(database: IndexDatabase) -> None:
    """Fold the log into the file and truncate it: the old rows held names of notes."""
    with contextlib.suppress(sqlite3.OperationalError):
        database.wipe_log()


def _folder_key(folder: str) -> bytes:
    return folder.encode("utf-8", "surrogatepass")


def _encode(identity: Identity, listing: FolderListing) -> bytes:
    kinds = b"".join(map(_KINDS.__getitem__, listing.kinds))
    paths = "\0".join(listing.values).encode("utf-8", "surrogatepass")
    head = _HEAD.pack(*identity, listing.entries, len(kinds))
    return seal(head + zlib.compress(kinds + paths, 6))


def decode_listing(blob: bytes) -> tuple[Identity, FolderListing]:
    """A stored folder's identity and listing.

    Raises:
        CorruptBlob: it fails its checksum or does not parse.
    """
    view = unseal(blob)
    try:
        size, mtime, ino, ctime, dev, entries, count = _HEAD.unpack_from(view)
        data = zlib.decompress(view[_HEAD.size :])
        kinds = tuple(map(_NAMES.__getitem__, data[:count]))
        text = data[count:].decode("utf-8", "surrogatepass")
    except (struct.error, zlib.error, KeyError, UnicodeDecodeError):
        raise CorruptBlob("folder listing") from None
    paths = text.split("\0") if count else []
    if len(kinds) != count or len(paths) != count or (not count and text):
        raise CorruptBlob("folder listing length")
    return (size, mtime, ino, ctime, dev), FolderListing(entries, kinds, tuple(paths), True)
