"""The workspace walk: which notes a search reads, within safety limits.

A search reads every note of the workspace, in two steps that a persistent index shares:

1. :func:`walk_workspace` lists folders and ``lstat``\\s files, in sorted order (UTF-16 code
   units), so every machine walks a workspace alike. It never opens a note.
2. :func:`admit` takes the walked files in that order and keeps each one that fits the
   limits, asking a *resolver* for its text size (the full scan reads the note; an index
   looks it up by file identity).

Limits (:class:`ScanBudget`) are sized for vaults of 100,000 notes: 1,000,000 directory
entries, 200,000 files, 4 GiB of text; and, from the scan configuration, 512 KiB per file
(or less) and folders at most 12 levels deep (configured ``maxDepth``, default 8). Whatever
they leave out is counted in one warning line (:func:`skip_warning`), never silently missed.
Memquill's own bookkeeping, private and credential files, ignored paths and symlinks are
never read, and are not counted: they are not notes. A note that cannot be read adds
``Skipped <path>: <message>`` and the search goes on. The walk itself, and the cache that
spares unchanged notes and folders, are :mod:`memquill.query._walk`'s; results are the same
with and without the cache.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Generic, TypeVar

from memquill.errors import SourceError
from memquill.paths import read_text_nofollow
from memquill.query._documents import SearchDocument, note_document
from memquill.query._scanconfig import ScanConfig, load_scan_config
from memquill.query._walk import (
    DocumentCache,
    PreviousWalk,
    Walk,
    WalkedFile,
    walk_folders,
)

ENTRY_LIMIT: Final = 1_000_000
FILE_LIMIT: Final = 200_000
TOTAL_BYTES_LIMIT: Final = 4 * 1024 * 1024 * 1024

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ScanBudget:
    """The walk's safety limits (the module constants, read when a scan starts)."""

    entries: int
    files: int
    bytes: int

    @classmethod
    def default(cls) -> ScanBudget:
        """The limits in force (:data:`ENTRY_LIMIT`, :data:`FILE_LIMIT`, ...)."""
        return cls(ENTRY_LIMIT, FILE_LIMIT, TOTAL_BYTES_LIMIT)


@dataclass(frozen=True, slots=True)
class Admitted(Generic[T]):
    """What :func:`admit` kept, in walk order, and the warnings (de-duplicated, in order)."""

    items: tuple[T, ...]
    paths: tuple[str, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ScanResult:
    """The notes a scan collected, in walk order, and its warnings (de-duplicated, in order)."""

    documents: tuple[SearchDocument, ...]
    warnings: tuple[str, ...]


def scan_workspace(
    root: Path, cache: DocumentCache | None = None, budget: ScanBudget | None = None
) -> ScanResult:
    """Collect the workspace's searchable notes, reading each one (the reference scan).

    Args:
        root: the canonical workspace.
        cache: reuse (and update) analysed notes; ``None`` reads everything afresh.
        budget: the safety limits (default: :meth:`ScanBudget.default`).

    Raises:
        SourceError: the workspace folder itself cannot be listed.
    """
    budget = budget or ScanBudget.default()
    walk = walk_workspace(root, load_scan_config(root), cache, budget)

    def resolve(walked: WalkedFile) -> tuple[SearchDocument, int] | str:
        path, identity = walked.path, walked.identity
        document = cache.get(path, identity) if cache is not None else None
        if document is None:
            try:
                text = read_text_nofollow(root / path, note=True)
            except SourceError as error:
                return error.message
            document = note_document(path, text)
            if cache is not None:
                cache.put(path, identity, document)
        return document, document.byte_size

    admitted = admit(walk, resolve, budget)
    if cache is not None:
        cache.retain(set(admitted.paths), walk.folders)
    return ScanResult(admitted.items, admitted.warnings)


def walk_workspace(
    root: Path,
    config: ScanConfig,
    cache: DocumentCache | None = None,
    budget: ScanBudget | None = None,
    *,
    previous: PreviousWalk | None = None,
    before_listing: Callable[[str], None] | None = None,
) -> Walk:
    """List the workspace's candidate notes with their identities (no note is opened).

    See :func:`memquill.query._walk.walk_folders`; ``budget`` gives the entry limit.

    Raises:
        SourceError: the workspace folder itself cannot be listed.
    """
    entries = (budget or ScanBudget.default()).entries
    return walk_folders(
        root, config, cache, entries, previous=previous, before_listing=before_listing
    )


def admit(
    walk: Walk,
    resolve: Callable[[WalkedFile], tuple[T, int] | str],
    budget: ScanBudget | None = None,
) -> Admitted[T]:
    """Keep the walked notes that fit the limits, in walk order.

    Args:
        walk: what :func:`walk_workspace` found.
        resolve: a note's item and text size in UTF-8 bytes, or why it cannot be read; asked
            in walk order, and only for notes that may still fit.
        budget: the safety limits.
    """
    budget = budget or ScanBudget.default()
    limit = walk.config.max_file_bytes
    items: list[T] = []
    paths: list[str] = []
    warnings: list[str] = []
    oversized = past_files = past_bytes = 0
    total = 0
    stopped = ""
    most_files, most_bytes = budget.files, budget.bytes
    # Plain tuple access throughout: a walk of a large workspace passes here once per note.
    for step in walk.steps:
        if isinstance(step, str):
            warnings.append(step)
            continue
        path, identity = step
        if identity[0] > limit:
            oversized += 1
            continue
        if not stopped and len(items) >= most_files:
            stopped = "files"
        if stopped:
            past_files += stopped == "files"
            past_bytes += stopped == "bytes"
            continue
        resolved = resolve(step)
        if isinstance(resolved, str):
            warnings.append(f"Skipped {path}: {resolved}")
            continue
        item, size = resolved
        if total + size > most_bytes:
            stopped = "bytes"
            past_bytes += 1
            continue
        items.append(item)
        paths.append(path)
        total += size
    summary = skip_warning(
        oversized=oversized,
        max_file_bytes=limit,
        past_files=past_files,
        past_bytes=past_bytes,
        deep_folders=walk.deep_folders,
        max_depth=walk.config.max_depth,
        entry_stopped=walk.entry_stopped,
        budget=budget,
    )
    if summary:
        warnings.insert(0, summary)
    return Admitted(tuple(items), tuple(paths), tuple(dict.fromkeys(warnings)))


def walk_warnings(walk: Walk, budget: ScanBudget | None = None) -> tuple[str, ...]:
    """What :func:`admit` warns when the walk warned of nothing, every note resolves and
    none is left out (within the size limit, the notes together within the file and text
    limits): the walk's own summary (folders too deep, the entry limit), if any."""
    summary = skip_warning(
        oversized=0,
        max_file_bytes=walk.config.max_file_bytes,
        past_files=0,
        past_bytes=0,
        deep_folders=walk.deep_folders,
        max_depth=walk.config.max_depth,
        entry_stopped=walk.entry_stopped,
        budget=budget or ScanBudget.default(),
    )
    return (summary,) if summary else ()


def skip_warning(
    *,
    oversized: int,
    max_file_bytes: int,
    past_files: int,
    past_bytes: int,
    deep_folders: int,
    max_depth: int,
    entry_stopped: bool,
    budget: ScanBudget,
) -> str:
    """One line counting what the limits left out ("" when nothing was)."""
    parts: list[str] = []
    if oversized:
        parts.append(f"{_count(oversized, 'file')} larger than {_size(max_file_bytes)}")
    if past_files:
        parts.append(f"{_count(past_files, 'file')} past the {budget.files:,}-file limit")
    if past_bytes:
        parts.append(f"{_count(past_bytes, 'file')} past the {_size(budget.bytes)} text limit")
    if deep_folders:
        parts.append(f"{_count(deep_folders, 'folder')} deeper than {max_depth} levels")
    if entry_stopped:
        parts.append(f"every folder past the {budget.entries:,}-entry limit")
    if not parts:
        return ""
    return f"Partial search: skipped {', '.join(parts)}. Use memory_get for a known source path."


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" + ("" if number == 1 else "s")


def _size(limit: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if limit >= scale and limit % scale == 0:
            return f"{limit // scale:,} {unit}"
    return f"{limit:,} bytes"
