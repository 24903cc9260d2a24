"""Keeping the index current in a long-lived process: watched changes, handled in proportion.

:class:`ChangeTracker` holds what the last synchronisation saw (folder listings, file
identities, the report) and the change watcher. A search then costs nothing when nothing
changed, and only the changed folders and notes when something did (:func:`_quick`): their
folders are listed again, their notes ``lstat``\\ ed and read, and the rows of vanished notes
removed. Whatever the quick path cannot vouch for — a new or removed folder, a note at a
limit, an unreadable note, a write by another process, a missed event — falls back to one walk
(taking from the previous walk what the watcher saw unchanged, and in a fresh process the
folder listings the index kept, :mod:`._sync`) and a full comparison
(:func:`memquill.index._sync.synchronise`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, cast

from memquill.foundation.collection import collection_paused
from memquill.index._db import IndexDatabase
from memquill.index._sync import (
    KeptListings,
    Progress,
    SyncReport,
    analyse,
    synchronise,
    walked_runs,
)
from memquill.index._view import NoteTable
from memquill.query import (
    PACKED_IDENTITY,
    DocumentCache,
    FolderListing,
    Identity,
    PreviousWalk,
    ScanBudget,
    ScanConfig,
    Walk,
    WalkedFile,
    file_identity,
    list_folder,
    load_scan_config,
    walk_workspace,
)

if TYPE_CHECKING:
    from memquill.index._watch import Changes, Watcher


_UNPACK = cast("Callable[[bytes], Identity]", PACKED_IDENTITY.unpack)
QUICK_MOST: Final = 256
"""More changed notes than this go the full way (with progress and notices)."""


@dataclass(slots=True)
class _LastSync:
    """What the last synchronisation saw."""

    budget: ScanBudget
    config: ScanConfig
    report: SyncReport
    generation: int
    listings: dict[str, FolderListing]
    walk: Walk | None
    entries: int
    quick: bool
    skipped: set[str] = field(default_factory=set[str])
    known: WalkedIdentities | None = None

    def identities(self, notes: NoteTable) -> WalkedIdentities:
        """Each walked note's identity, kept current by the quick path (made at the next
        synchronisation, when the walk is let go: a process that searches once never needs
        it)."""
        if self.known is None:
            self.known = WalkedIdentities(notes, self.walk)
            self.walk = None
        return self.known


class WalkedIdentities:
    r"""The identity the last walk found each note at, mostly read from the note table.

    A walked note whose row holds the identity the walk saw is vouched for (a byte by note
    id) and its identity read back from the table's columns; only the others (notes the index
    left out, too large or unreadable, or a row that differs) are kept here, packed. A packed
    dict of every note held about 90 bytes a note; this holds about 1. A vouched row can
    change only when its note is read again after its file changed, which the watcher reports
    (the file is then looked at again, never taken as known). A table emptied and loaded
    again (the index was replaced) vouches for nothing: those notes are ``lstat``\ ed again.
    The walk is compared with the rows run by run of consecutive note ids, in C
    (:func:`._sync.walked_runs`); only a run that differs is gone through note by note.
    """

    __slots__ = ("_notes", "_other", "_sizes", "_vouched")

    def __init__(self, notes: NoteTable, walk: Walk | None) -> None:
        self._notes = notes
        self._sizes = notes.sizes
        """The table's column when vouched for (a new one: the table was loaded again)."""
        self._vouched = bytearray(len(notes.paths))
        self._other: dict[str, bytes] = {}
        if walk is None:
            return
        runs = walked_runs(walk, notes)
        if runs is None:
            self._check(walk.steps)
            return
        texts, numbers = walk.texts, walk.numbers
        for start, end, low, equal in runs:
            if equal:  # every row of the run holds what the walk saw (compared in C)
                self._vouched[low : low + end - start] = b"\x01" * (end - start)
            else:
                held = iter(numbers[5 * start : 5 * end])
                identities = cast(
                    "Iterator[Identity]", zip(held, held, held, held, held, strict=True)
                )
                self._check(zip(texts[start:end], identities, strict=True))

    def _check(self, steps: Iterable[tuple[str, Identity] | str]) -> None:
        """Vouch for each walked note whose row holds the identity the walk saw; pack the
        others'."""
        notes = self._notes
        get, vouched, other, pack = notes.ids.get, self._vouched, self._other, PACKED_IDENTITY.pack
        sizes, mtimes, inodes, ctimes, devices = (
            notes.sizes,
            notes.mtimes,
            notes.inodes,
            notes.ctimes,
            notes.devices,
        )
        for step in steps:
            if isinstance(step, str):
                continue  # a warning
            path, identity = step
            at = get(path, -1)
            if at >= 0 and (sizes[at], mtimes[at], inodes[at], ctimes[at], devices[at]) == identity:
                vouched[at] = 1
            else:
                other[path] = pack(*identity)

    def identity(self, path: str, /) -> Identity | None:
        """The identity the note at ``path`` had (``None``: not a walked note)."""
        packed = self._other.get(path)
        if packed is not None:
            return _UNPACK(packed)
        at = self._vouch(path)
        if at is None:
            return None
        notes = self._notes
        return (
            notes.sizes[at],
            notes.mtimes[at],
            notes.inodes[at],
            notes.ctimes[at],
            notes.devices[at],
        )

    def __contains__(self, path: str) -> bool:
        return path in self._other or self._vouch(path) is not None

    def read(self, path: str) -> None:
        """The note at ``path`` was read again: its row holds its identity now."""
        notes = self._notes
        at = notes.ids.get(path)
        self._other.pop(path, None)
        if at is None:
            return
        if notes.sizes is not self._sizes:  # the table was loaded again: vouch for nothing
            self._other[path] = PACKED_IDENTITY.pack(*notes.row(at).identity)
            return
        vouched = self._vouched
        if at >= len(vouched):
            vouched.extend(bytes(at + 1 - len(vouched)))
        vouched[at] = 1

    def remove(self, path: str) -> None:
        """The note at ``path`` is gone."""
        self._other.pop(path, None)
        at = self._vouch(path)
        if at is not None:
            self._vouched[at] = 0

    def _vouch(self, path: str) -> int | None:
        """The id of the vouched-for row of ``path``."""
        notes = self._notes
        at = notes.ids.get(path)
        if at is None or notes.sizes is not self._sizes:
            return None
        vouched = self._vouched
        return at if at < len(vouched) and vouched[at] else None


class ChangeTracker:
    """Synchronisation for one index in one process (with a watcher where there can be one)."""

    def __init__(self, root: Path, *, watch: bool, racy_ns: int) -> None:
        self._root = root
        self._watch = watch
        self._watcher: Watcher | None = None
        self._seen: _LastSync | None = None
        self._racy_ns = racy_ns
        # Listings settle like notes: one changed within the racy window is listed again.
        self.listings = DocumentCache(racy_seconds=racy_ns / 1e9)
        self._kept = KeptListings()
        self._loaded = False

    def forget(self) -> None:
        """Start over (the index file was replaced or rebuilt)."""
        self._seen = None
        self._kept = KeptListings()
        self._loaded = False

    def close(self) -> None:
        """Stop watching."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        self._seen = None

    def synchronise(
        self,
        database: IndexDatabase,
        notes: NoteTable,
        *,
        budget: ScanBudget,
        progress: Progress | None,
        announce: Callable[[int], None] | None,
        workers: int | None,
    ) -> SyncReport:
        """Bring the index up to date with the files (see the module)."""
        config = load_scan_config(self._root)
        watcher = self._watcher
        if watcher is None and self._watch:
            from memquill.index._watch import open_watcher  # a process that never watches skips it

            watcher = self._watcher = open_watcher(self._root)
            self._watch = watcher is not None
        seen, previous, force = self._seen, None, set[str]()
        if watcher is not None and seen is not None and seen.budget == budget:
            seen.identities(notes)  # the walk, let go
            changes = watcher.drain()
            if changes.complete and seen.config == config:
                with database.reading() as connection:
                    notes.refresh(connection)
                ours = notes.generation == seen.generation
                if changes.empty and ours:
                    return seen.report
                if ours and seen.quick and progress is None:
                    report = _quick(self._root, database, notes, seen, changes)
                    if report is not None:
                        seen.report, seen.generation = report, notes.generation
                        self._kept.drop(database, changes.folders)
                        return report
                previous = PreviousWalk(
                    config, seen.listings, seen.identities(notes), changes.folders, changes.files
                )
                force = changes.files
        with collection_paused():
            return self._full(
                database,
                notes,
                config,
                watcher,
                previous,
                force,
                budget=budget,
                progress=progress,
                announce=announce,
                workers=workers,
            )

    def _full(
        self,
        database: IndexDatabase,
        notes: NoteTable,
        config: ScanConfig,
        watcher: Watcher | None,
        previous: PreviousWalk | None,
        force: set[str],
        *,
        budget: ScanBudget,
        progress: Progress | None,
        announce: Callable[[int], None] | None,
        workers: int | None,
    ) -> SyncReport:
        """One walk (reusing what is known) and a full comparison."""
        if not self._loaded:
            # A fresh process: the folder listings the index kept spare listing every folder
            # (read after the note table, to share its paths).
            with database.reading() as connection:
                notes.refresh(connection)
            self.listings.take_listings(config, self._kept.load(database, config, notes))
            self._loaded = True
        walk = walk_workspace(
            self._root,
            config,
            self.listings,
            budget,
            previous=previous,
            before_listing=None if watcher is None else watcher.watch,
        )
        report = synchronise(
            self._root,
            database,
            notes,
            listings=self.listings,
            budget=budget,
            walk=walk,
            progress=progress,
            announce=announce,
            workers=workers,
            # With every change watched, a second edit inside one timestamp tick still raises
            # an event (forcing a re-read), so a recently changed note needs no second read.
            racy_ns=0 if previous is not None else self._racy_ns,
            force=force,
        )
        self.listings.retain(set(), walk.folders)  # a folder gone takes its listing along
        self._kept.save(database, config, self.listings.held_listings(config))
        if watcher is None:
            self._seen = None
            return report
        watcher.keep(walk.folders)
        listings = dict(walk.listings)
        limited = any(
            "-file limit" in w or " text limit" in w or "-entry limit" in w for w in report.warnings
        )
        self._seen = _LastSync(
            budget,
            config,
            report,
            notes.generation,
            listings,
            walk,
            sum(listing.entries for listing in listings.values()),
            quick=not limited and len(listings) == len(walk.folders),
            skipped=set(report.skipped),
        )
        return report


def _quick(
    root: Path, database: IndexDatabase, notes: NoteTable, seen: _LastSync, changes: Changes
) -> SyncReport | None:
    """Apply watched changes in proportion to them; ``None`` when the full way is needed."""
    config, listings, identities = seen.config, seen.listings, seen.identities(notes)
    added: set[str] = set()
    removed: set[str] = set()
    entries = seen.entries
    for folder in sorted(changes.folders):
        old = listings.get(folder)
        if old is None:
            return None  # not a folder the walk listed cleanly (or a new one)
        new = list_folder(root, folder, config)
        if new is None or not new.cacheable:
            return None
        if [s for s in old.steps if s[0] != "file"] != [s for s in new.steps if s[0] != "file"]:
            return None  # folders came or went, or a warning changed
        before = {path for kind, path in old.steps if kind == "file"}
        after = {path for kind, path in new.steps if kind == "file"}
        added |= after - before
        removed |= before - after
        entries += new.entries - old.entries
        listings[folder] = new
    if entries > seen.budget.entries:
        return None
    candidates = added | {path for path in changes.files if path in identities}
    candidates -= removed
    if len(candidates) > QUICK_MOST or (candidates | removed) & seen.skipped:
        return None
    pending: list[WalkedFile] = []
    for path in sorted(candidates):
        try:
            identity = file_identity(os.lstat(root / path))
        except OSError:
            return None
        if identity[0] > config.max_file_bytes:
            return None
        pending.append(WalkedFile(path, identity))
    errors: dict[str, str] = {}
    analyse(root, database, notes, pending, errors, None, None, 1)
    for path in removed:
        identities.remove(path)
    removals = [path for path in removed if path in notes.ids]
    if removals:
        from memquill.index._writer import IndexWriter  # only a change writes

        IndexWriter(database, notes).store(None, removals)
    with database.reading() as connection:
        notes.refresh(connection)
    for walked in pending:
        identities.read(walked.path)
    if errors or len(notes) > seen.budget.files or notes.bytes_total > seen.budget.bytes:
        return None
    seen.entries = entries
    previous = seen.report
    return SyncReport(
        len(notes),
        previous.warnings,
        len(pending),
        len(removals),
        previous.skipped,
        read=frozenset(walked.path for walked in pending),
        gone=frozenset(removals),
    )
