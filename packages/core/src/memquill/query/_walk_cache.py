"""What a scan keeps between walks: file identities, folder listings and analysed notes.

A note is reused while its file identity (size, mtime_ns, inode, ctime_ns, device) is
unchanged, and a folder's sorted, filtered listing while the folder's own identity and the scan
settings are (adding, removing or renaming an entry changes its folder's mtime and ctime).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

from memquill.query._documents import SearchDocument
from memquill.query._scanconfig import ScanConfig

Identity = tuple[int, int, int, int, int]
"""A file's identity: size, mtime_ns, inode, ctime_ns, device."""
Step = tuple[str, str]
"""One step of a folder's visit: (``folder`` | ``deep`` | ``file`` | ``skip``, path or warning)."""


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


def file_identity(info: os.stat_result) -> Identity:
    """The identity of a file from its ``lstat`` (inode and device as signed 64-bit numbers,
    so an index can store them)."""
    ino, dev = info.st_ino, info.st_dev
    return (
        info.st_size,
        info.st_mtime_ns,
        ino if ino < 1 << 63 else ino - (1 << 64),
        info.st_ctime_ns,
        dev if dev < 1 << 63 else dev - (1 << 64),
    )


@dataclass(frozen=True, slots=True)
class PreviousWalk:
    r"""What a previous walk saw, and what changed since (as a change watcher saw it).

    Folders not in ``folders`` keep their listing and files not in ``files`` their identity,
    without a system call; everything else is listed or ``lstat``\ ed again.
    """

    config: ScanConfig
    listings: dict[str, FolderListing]
    identities: dict[str, Identity]
    folders: set[str]
    files: set[str]


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
        if self.settled(identity):
            self._entries[path] = (identity, document)

    def retain(self, paths: set[str], folders: set[str] | frozenset[str] | None = None) -> None:
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
        if listing.cacheable and self.settled(identity):
            self._listings[folder] = (identity, config, listing)

    def held_listings(self, config: ScanConfig) -> dict[str, tuple[Identity, FolderListing]]:
        """Every cached listing made with ``config``, with its folder's identity."""
        return {
            folder: (identity, listing)
            for folder, (identity, made, listing) in self._listings.items()
            if made == config
        }

    def take_listings(
        self, config: ScanConfig, listings: Mapping[str, tuple[Identity, FolderListing]]
    ) -> None:
        """Reuse listings made with ``config`` by an earlier process (kept by an index)."""
        for folder, (identity, listing) in listings.items():
            self._listings.setdefault(folder, (identity, config, listing))

    def settled(self, identity: Identity) -> bool:
        """Whether a file or folder with ``identity`` last changed outside the racy window."""
        changed = max(identity[1], identity[3])
        return abs(time.time_ns() - changed) >= self._racy_ns
