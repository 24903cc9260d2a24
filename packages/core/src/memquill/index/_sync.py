"""Bringing the index up to date with the files before it answers.

One walk (:func:`memquill.query._scan.walk_workspace`) lists the candidate notes with their file
identities (path, size, mtime_ns, inode, ctime_ns, device). A note whose row has the same
identity, indexed when the file had already settled (outside the racy window: two edits
within the file system's timestamp granularity can keep an identity), is reused; every other
note is read and analysed again, new and renamed ones included. Rows of notes the walk no
longer admits are removed. The limits are applied by :func:`memquill.query._scan.admit`, exactly as
the full scan applies them, with the sizes the index recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from memquill.index._db import IndexDatabase
from memquill.index._notes import NoteTable
from memquill.index._pages import NoteRow
from memquill.query import (
    DocumentCache,
    ScanBudget,
    Walk,
    WalkedFile,
    admit,
    load_scan_config,
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
        walk: the walk it compared against.
        notes: the notes within the limits (the index holds exactly these).
        warnings: the warnings the same full scan would give (skips, unreadable notes).
        analysed: notes read and analysed.
        removed: rows removed.
        skipped: walked notes left out (too large, unreadable).
        read: the notes analysed (new or changed), by path.
        gone: the notes whose rows were removed, by path.
    """

    walk: Walk
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
    pending = stale_notes(walk, notes, racy_ns, force, oversized)
    errors: dict[str, str] = {}
    analysed = analyse(root, database, notes, pending, errors, progress, announce, workers)
    if analysed:
        with database.reading() as connection:
            notes.refresh(connection)

    by_path = notes.by_path

    def resolve(walked: WalkedFile) -> tuple[NoteRow, int] | str:
        path = walked[0]
        if errors:
            error = errors.get(path)
            if error is not None:
                return error
        row = by_path.get(path)
        if row is None:  # pragma: no cover - analysed above
            return "Memory source is not readable."
        return row, row[8]  # its byte size

    admitted = admit(walk, resolve, budget)
    keep = set(admitted.paths)
    removals = [path for path in notes.by_path if path not in keep]
    if removals or analysed or not database.meta_int("synced_ns"):
        from memquill.index._writer import IndexWriter  # a current index loads no write side

        IndexWriter(database, notes).store(None, removals, synced=True)
        with database.reading() as connection:
            notes.refresh(connection)
    skipped = frozenset([*oversized, *errors])
    read = frozenset(walked[0] for walked in pending if walked[0] not in errors)
    return SyncReport(
        walk,
        len(admitted.paths),
        admitted.warnings,
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
    pending: list[WalkedFile] = []
    limit = walk.config.max_file_bytes
    get = notes.by_path.get
    for step in walk.steps:
        if isinstance(step, str):
            continue  # a warning
        path, identity = step
        if identity[0] > limit:
            if oversized is not None:
                oversized.append(path)
            continue
        row = get(path)
        # Read after the file had settled: later edits change the identity. Otherwise read
        # again once it has settled (a second edit inside the window could keep the identity).
        if (
            row is None
            or row[2:7] != identity
            or row.seen - max(identity[1], identity[3]) < racy_ns
            or path in force
        ):
            pending.append(step)
    return pending


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
