"""Folder listings kept in the index, so that a fresh process need not list every folder again.

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
from collections.abc import Mapping
from typing import Final

from memquill.index._codec import CorruptBlob, seal, unseal
from memquill.index._db import FORMAT, IndexDatabase
from memquill.private_paths import CREDENTIAL_PARTS, SUSPECT_NAMES, SUSPECT_STARTS
from memquill.query import FolderListing, Identity, ScanConfig

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

    def load(self, database: IndexDatabase, config: ScanConfig) -> Kept:
        """The stored listings made under ``config``'s key (none under another)."""
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
            kept[folder] = (identity, listing)
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


def _forget_old(database: IndexDatabase) -> None:
    """Fold the log into the file and truncate it: the old rows held names of notes."""
    with contextlib.suppress(sqlite3.OperationalError):
        database.wipe_log()


def _folder_key(folder: str) -> bytes:
    return folder.encode("utf-8", "surrogatepass")


def _encode(identity: Identity, listing: FolderListing) -> bytes:
    kinds = b"".join(_KINDS[kind] for kind, _ in listing.steps)
    paths = "\0".join(path for _, path in listing.steps).encode("utf-8", "surrogatepass")
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
        kinds = list(map(_NAMES.__getitem__, data[:count]))
        text = data[count:].decode("utf-8", "surrogatepass")
    except (struct.error, zlib.error, KeyError, UnicodeDecodeError):
        raise CorruptBlob("folder listing") from None
    paths = text.split("\0") if count else []
    if len(kinds) != count or len(paths) != count or (not count and text):
        raise CorruptBlob("folder listing length")
    steps = tuple(zip(kinds, paths, strict=True))
    return (size, mtime, ino, ctime, dev), FolderListing(entries, steps, True)
