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

import contextlib
import gc
import os
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from memquill.index._db import IndexDatabase
from memquill.index._sync import KeptListings, Progress, SyncReport, analyse, synchronise
from memquill.index._view import NoteTable
from memquill.query import (
    PACKED_IDENTITY,
    DocumentCache,
    FolderListing,
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
    known: dict[str, bytes] | None = None

    def identities(self) -> dict[str, bytes]:
        """Each walked note's identity, packed, kept current by the quick path (made at the
        next synchronisation, when the walk is let go: a process that searches once never
        needs it)."""
        if self.known is None:
            self.known = self.walk.identities() if self.walk is not None else {}
            self.walk = None
        return self.known


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
            seen.identities()  # the walk, packed
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
                    config, seen.listings, seen.identities(), changes.folders, changes.files
                )
                force = changes.files
        with _collection_paused():
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
            # A fresh process: the folder listings the index kept spare listing every folder.
            self.listings.take_listings(config, self._kept.load(database, config))
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
        limited = any(
            "-file limit" in w or " text limit" in w or "-entry limit" in w for w in report.warnings
        )
        self._seen = _LastSync(
            budget,
            config,
            report,
            notes.generation,
            dict(walk.listings),
            walk,
            sum(listing.entries for listing in walk.listings.values()),
            quick=not limited and len(walk.listings) == len(walk.folders),
            skipped=set(report.skipped),
        )
        return report


@contextlib.contextmanager
def _collection_paused() -> Generator[None]:
    """No cyclic garbage collection meanwhile: a fresh process's walk and comparison make
    hundreds of thousands of objects that hold no cycles, and collecting while they are made
    costs about a tenth of its first search."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _quick(
    root: Path, database: IndexDatabase, notes: NoteTable, seen: _LastSync, changes: Changes
) -> SyncReport | None:
    """Apply watched changes in proportion to them; ``None`` when the full way is needed."""
    config, listings, identities = seen.config, seen.listings, seen.identities()
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
        identities.pop(path, None)
    removals = [path for path in removed if path in notes.ids]
    if removals:
        from memquill.index._writer import IndexWriter  # only a change writes

        IndexWriter(database, notes).store(None, removals)
    with database.reading() as connection:
        notes.refresh(connection)
    for walked in pending:
        row = notes.get(walked.path)
        if row is not None:
            identities[walked.path] = PACKED_IDENTITY.pack(*row.identity)
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
