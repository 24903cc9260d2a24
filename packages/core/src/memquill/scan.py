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

:class:`DocumentCache` keeps analysed notes between scans, keyed by path and file identity
(size, mtime_ns, inode, ctime_ns, device): an unchanged file is not read again.
"""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from memquill.documents import SearchDocument, note_document
from memquill.errors import SourceError
from memquill.paths import is_private, read_text_nofollow, source_error
from memquill.scanconfig import ScanConfig, load_scan_config
from memquill.search import path_key

__all__ = [
    "BUDGET_WARNING",
    "ENTRY_LIMIT",
    "ENTRY_WARNING",
    "FILE_LIMIT",
    "TOTAL_BYTES_LIMIT",
    "DocumentCache",
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


@dataclass(frozen=True, slots=True)
class ScanResult:
    """The notes a scan collected, in walk order, and its warnings (de-duplicated, in order)."""

    documents: tuple[SearchDocument, ...]
    warnings: tuple[str, ...]


class DocumentCache:
    """Analysed notes of one workspace, reused while their files are unchanged.

    Args:
        racy_seconds: a file changed this recently is not cached: a second write within the
            file system's timestamp granularity could keep size and times identical (the
            "racy git" problem), so such a file is read again until it settles.
    """

    def __init__(self, *, racy_seconds: float = 2.0) -> None:
        self._entries: dict[str, tuple[Identity, SearchDocument]] = {}
        self._racy_ns = int(racy_seconds * 1e9)

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, path: str, identity: Identity) -> SearchDocument | None:
        """The cached document for ``path`` if its file still has ``identity``."""
        entry = self._entries.get(path)
        return entry[1] if entry is not None and entry[0] == identity else None

    def put(self, path: str, identity: Identity, document: SearchDocument) -> None:
        """Remember ``document`` for ``path`` at ``identity`` (unless it changed just now)."""
        changed = max(identity[1], identity[3])
        if abs(time.time_ns() - changed) >= self._racy_ns:
            self._entries[path] = (identity, document)

    def retain(self, paths: set[str]) -> None:
        """Forget every path not in ``paths`` (deleted, moved or now out of budget)."""
        for path in [path for path in self._entries if path not in paths]:
            del self._entries[path]


def scan_workspace(root: Path, cache: DocumentCache | None = None) -> ScanResult:
    """Collect the workspace's searchable notes.

    Args:
        root: the canonical workspace.
        cache: reuse (and update) analysed notes; ``None`` reads everything afresh.

    Raises:
        SourceError: the workspace folder itself cannot be listed.
    """
    walk = _Walk(root, load_scan_config(root), cache)
    walk.folder("", 0)
    if cache is not None:
        cache.retain(walk.seen)
    return ScanResult(tuple(walk.documents), tuple(dict.fromkeys(walk.warnings)))


def _maybe_private(path: str, name: str) -> bool:
    """A cheap necessary condition of :func:`is_private` for a path whose parents passed."""
    lowered = name.lower()
    return (
        lowered.startswith((".", "id_"))
        or lowered.endswith((".pem", ".key"))
        or path[:7].lower() == "memory/"
        or "\\" in path
    )


@dataclass(slots=True)
class _Walk:
    root: Path
    config: ScanConfig
    cache: DocumentCache | None
    documents: list[SearchDocument] = field(default_factory=list[SearchDocument])
    warnings: list[str] = field(default_factory=list[str])
    seen: set[str] = field(default_factory=set[str])
    entries: int = 0
    total_bytes: int = 0
    stopped: bool = False

    def folder(self, relative: str, depth: int) -> None:
        listed = self._list(relative)
        if listed is None:
            return
        config = self.config
        for entry in listed:
            if self.stopped:
                return
            path = f"{relative}/{entry.name}" if relative else entry.name
            if (_maybe_private(path, entry.name) and is_private(path)) or config.ignores(path):
                continue
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if depth < config.max_depth and not config.prunes(path):
                        self.folder(path, depth + 1)
                    continue
                is_file = entry.is_file(follow_symlinks=False)
            except OSError as error:
                self.warnings.append(f"Skipped {path}: {source_error(error).message}")
                continue
            if is_file and os.path.splitext(entry.name)[1].lower() in config.extensions:
                self._file(entry, path)

    def _list(self, relative: str) -> list[os.DirEntry[str]] | None:
        remaining = ENTRY_LIMIT - self.entries
        try:
            with os.scandir(self.root / relative if relative else self.root) as iterator:
                listed = list(itertools.islice(iterator, remaining + 1))
        except OSError as error:
            if not relative:
                raise source_error(error) from None
            self.warnings.append(f"Skipped {relative}: {source_error(error).message}")
            return None
        if len(listed) > remaining:
            self.entries = ENTRY_LIMIT + 1
            self._stop(ENTRY_WARNING)
            return None
        self.entries += len(listed)
        listed.sort(key=lambda entry: path_key(entry.name))
        return listed

    def _file(self, entry: os.DirEntry[str], path: str) -> None:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError as error:
            self.warnings.append(f"Skipped {path}: {source_error(error).message}")
            return
        if info.st_size > self.config.max_file_bytes:
            return
        if len(self.documents) >= FILE_LIMIT:
            self._stop(BUDGET_WARNING)
            return
        identity = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns, info.st_dev)
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
