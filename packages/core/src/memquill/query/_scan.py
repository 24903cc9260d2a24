"""The workspace walk: which notes a search reads, within fixed budgets.

Budgets (spec 6.2): 10,000 directory entries, 512 files, 8 MiB of text, 512 KiB per file (or
less by configuration), folders at most 12 levels deep (configured ``maxDepth``, default 8).
Memquill's own bookkeeping, private and credential files, ignored paths and symlinks are never
read.

Two decisions differ from the original system: entries are visited in sorted order (UTF-16
code units), so which notes fall inside a budget is the same on every machine; and a note that
cannot be read adds ``Skipped <path>: <message>`` instead of failing the whole search. A folder
with more entries than the budget has left is not read at all (its entries are never sorted,
so this is the only deterministic choice that never lists an unbounded folder).

:class:`DocumentCache` keeps, between scans, analysed notes keyed by path and file identity
(size, mtime_ns, inode, ctime_ns, device), so an unchanged file is not read again; and each
folder's sorted, filtered listing keyed by the folder's own identity and the scan settings, so
an unchanged folder is not listed again (adding, removing or renaming an entry changes its
folder's mtime and ctime). Files are still checked one by one: editing a file changes only its
own identity. Results are the same with and without the cache.
"""

from __future__ import annotations

import itertools
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from memquill.errors import SourceError
from memquill.paths import read_text_nofollow, source_error
from memquill.private_paths import is_private, may_be_private
from memquill.query._documents import SearchDocument, note_document
from memquill.query._rank import path_key
from memquill.query._scanconfig import ScanConfig, load_scan_config

__all__ = [
    "BUDGET_WARNING",
    "ENTRY_LIMIT",
    "ENTRY_WARNING",
    "FILE_LIMIT",
    "TOTAL_BYTES_LIMIT",
    "DocumentCache",
    "FolderListing",
    "ScanResult",
    "scan_workspace",
]

ENTRY_LIMIT: Final = 10_000
FILE_LIMIT: Final = 512
TOTAL_BYTES_LIMIT: Final = 8 * 1024 * 1024
ENTRY_WARNING: Final = (
    "Partial search: workspace scan reached its entry limit. Use memory_get for a known source "
    "path."
)
BUDGET_WARNING: Final = (
    "Partial search: workspace scan reached its file or byte limit. Use memory_get for a known "
    "source path."
)

Identity = tuple[int, int, int, int, int]
Step = tuple[str, str]
"""One step of a folder's visit: (``folder`` | ``file`` | ``skip``, workspace path or warning)."""


@dataclass(frozen=True, slots=True)
class FolderListing:
    """What a folder's entries ask the walk to do.

    Attributes:
        entries: how many entries the folder holds (each counts against the entry budget).
        steps: the folders to enter, files to read and warnings to add, in sorted order.
        cacheable: no entry failed to classify (a failure may be transient: list again).
    """

    entries: int
    steps: tuple[Step, ...]
    cacheable: bool


@dataclass(frozen=True, slots=True)
class ScanResult:
    """The notes a scan collected, in walk order, and its warnings (de-duplicated, in order)."""

    documents: tuple[SearchDocument, ...]
    warnings: tuple[str, ...]


class DocumentCache:
    """Analysed notes and folder listings of one workspace, reused while unchanged.

    Args:
        racy_seconds: a file or folder changed this recently is not cached: a second change
            within the file system's timestamp granularity could keep size and times
            identical (the "racy git" problem), so it is read again until it settles.
    """

    def __init__(self, *, racy_seconds: float = 2.0) -> None:
        self._entries: dict[str, tuple[Identity, SearchDocument]] = {}
        self._listings: dict[str, tuple[Identity, ScanConfig, FolderListing]] = {}
        self._racy_ns = int(racy_seconds * 1e9)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def folders(self) -> int:
        """How many folder listings are cached."""
        return len(self._listings)

    def get(self, path: str, identity: Identity) -> SearchDocument | None:
        """The cached document for ``path`` if its file still has ``identity``."""
        entry = self._entries.get(path)
        return entry[1] if entry is not None and entry[0] == identity else None

    def put(self, path: str, identity: Identity, document: SearchDocument) -> None:
        """Remember ``document`` for ``path`` at ``identity`` (unless it changed just now)."""
        if self._settled(identity):
            self._entries[path] = (identity, document)

    def retain(self, paths: set[str], folders: set[str] | None = None) -> None:
        """Forget every path not in ``paths`` and, if given, every folder not in ``folders``."""
        for path in [path for path in self._entries if path not in paths]:
            del self._entries[path]
        if folders is not None:
            for folder in [folder for folder in self._listings if folder not in folders]:
                del self._listings[folder]

    def listing(self, folder: str, identity: Identity, config: ScanConfig) -> FolderListing | None:
        """The cached listing of ``folder``, if its identity and the settings are unchanged."""
        entry = self._listings.get(folder)
        if entry is None or entry[0] != identity or entry[1] != config:
            return None
        return entry[2]

    def put_listing(
        self, folder: str, identity: Identity, config: ScanConfig, listing: FolderListing
    ) -> None:
        """Remember ``listing`` for ``folder`` at ``identity`` (unless it changed just now)."""
        if listing.cacheable and self._settled(identity):
            self._listings[folder] = (identity, config, listing)

    def _settled(self, identity: Identity) -> bool:
        changed = max(identity[1], identity[3])
        return abs(time.time_ns() - changed) >= self._racy_ns


def scan_workspace(root: Path, cache: DocumentCache | None = None) -> ScanResult:
    """Collect the workspace's searchable notes.

    Args:
        root: the canonical workspace.
        cache: reuse (and update) analysed notes; ``None`` reads everything afresh.

    Raises:
        SourceError: the workspace folder itself cannot be listed.
    """
    walk = _Walk(root, os.fspath(root), load_scan_config(root), cache)
    walk.folder("", 0)
    if cache is not None:
        cache.retain(walk.seen, walk.folders)
    return ScanResult(tuple(walk.documents), tuple(dict.fromkeys(walk.warnings)))


def _identity(info: os.stat_result) -> Identity:
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns, info.st_dev)


@dataclass(slots=True)
class _Walk:
    root: Path
    root_text: str
    config: ScanConfig
    cache: DocumentCache | None
    documents: list[SearchDocument] = field(default_factory=list[SearchDocument])
    warnings: list[str] = field(default_factory=list[str])
    seen: set[str] = field(default_factory=set[str])
    folders: set[str] = field(default_factory=set[str])
    entries: int = 0
    total_bytes: int = 0
    stopped: bool = False

    def folder(self, relative: str, depth: int) -> None:
        listing = self._listing(relative, depth)
        if listing is None:
            return
        for kind, value in listing.steps:
            if self.stopped:
                return
            if kind == "folder":
                self.folder(value, depth + 1)
            elif kind == "file":
                self._file(value)
            else:
                self.warnings.append(value)

    def _listing(self, relative: str, depth: int) -> FolderListing | None:
        """The folder's listing (cached while the folder is unchanged), within the budget."""
        remaining = ENTRY_LIMIT - self.entries
        location = f"{self.root_text}/{relative}" if relative else self.root_text
        cache, identity = self.cache, None
        if cache is not None:
            try:
                info = os.lstat(location)
            except OSError:
                info = None  # listing it below reports the failure
            if info is not None and stat.S_ISDIR(info.st_mode):
                identity = _identity(info)
                cached = cache.listing(relative, identity, self.config)
                if cached is not None:
                    return self._count(relative, cached.entries, remaining, cached)
        try:
            with os.scandir(location) as iterator:
                listed = list(itertools.islice(iterator, remaining + 1))
        except OSError as error:
            if not relative:
                raise source_error(error) from None
            self.warnings.append(f"Skipped {relative}: {source_error(error).message}")
            return None
        if len(listed) > remaining:
            return self._count(relative, len(listed), remaining, None)
        listed.sort(key=lambda entry: path_key(entry.name))
        listing = self._classify(relative, depth, listed)
        if cache is not None and identity is not None:
            cache.put_listing(relative, identity, self.config, listing)
        return self._count(relative, len(listed), remaining, listing)

    def _count(
        self, relative: str, entries: int, remaining: int, listing: FolderListing | None
    ) -> FolderListing | None:
        if listing is None or entries > remaining:
            self.entries = ENTRY_LIMIT + 1
            self._stop(ENTRY_WARNING)
            return None
        self.entries += entries
        self.folders.add(relative)
        return listing

    def _classify(self, relative: str, depth: int, listed: list[os.DirEntry[str]]) -> FolderListing:
        config = self.config
        steps: list[Step] = []
        cacheable = True
        for entry in listed:
            path = f"{relative}/{entry.name}" if relative else entry.name
            if (may_be_private(path, entry.name) and is_private(path)) or config.ignores(path):
                continue
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if depth < config.max_depth and not config.prunes(path):
                        steps.append(("folder", path))
                    continue
                is_file = entry.is_file(follow_symlinks=False)
            except OSError as error:
                steps.append(("skip", f"Skipped {path}: {source_error(error).message}"))
                cacheable = False
                continue
            if is_file and os.path.splitext(entry.name)[1].lower() in config.extensions:
                steps.append(("file", path))
        return FolderListing(len(listed), tuple(steps), cacheable)

    def _file(self, path: str) -> None:
        try:
            info = os.lstat(f"{self.root_text}/{path}")
        except OSError as error:
            self.warnings.append(f"Skipped {path}: {source_error(error).message}")
            return
        if info.st_size > self.config.max_file_bytes:
            return
        if len(self.documents) >= FILE_LIMIT:
            self._stop(BUDGET_WARNING)
            return
        identity = _identity(info)
        document = self.cache.get(path, identity) if self.cache is not None else None
        if document is None:
            try:
                text = read_text_nofollow(self.root / path)
            except SourceError as error:
                self.warnings.append(f"Skipped {path}: {error.message}")
                return
            document = note_document(path, text)
            if self.cache is not None:
                self.cache.put(path, identity, document)
        if self.total_bytes + document.byte_size > TOTAL_BYTES_LIMIT:
            self._stop(BUDGET_WARNING)
            return
        self.documents.append(document)
        self.seen.add(path)
        self.total_bytes += document.byte_size

    def _stop(self, warning: str) -> None:
        self.stopped = True
        self.warnings.append(warning)
