"""The walk: folders listed in sorted order, notes found with their file identities, and what
a scan keeps between walks.

Rules:

- **Listing.** A folder's entries are sorted by name in UTF-16 code units, so every machine
  walks a workspace alike, and classified (:func:`list_folder`): memquill's own bookkeeping,
  private and credential files, ignored paths and symlinks are never listed as notes; folders
  deeper than ``max_depth`` are counted, not entered.
- **Walking.** A note with several hard links is skipped with a warning (unless the user opts
  in, :func:`memquill.paths.hard_links_allowed`). No note is opened here:
  :mod:`memquill.query._scan` decides what is read.
- **Keeping.** A note is reused while its file identity (size, mtime_ns, inode, ctime_ns,
  device) is unchanged, and a folder's sorted, filtered listing while the folder's own
  identity and the scan settings are (adding, removing or renaming an entry changes its
  folder's mtime and ctime). :class:`DocumentCache` spares listing an unchanged folder again
  (a search index keeps its listings for the next process); files are still checked one by
  one (editing a file changes only its own identity), the notes of a reused listing in C
  loops. A change watcher can vouch for more (:class:`PreviousWalk`).
"""

from __future__ import annotations

import itertools
import os
import stat
import struct
import time
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice, repeat
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Final, NamedTuple, Protocol, cast

from memquill.errors import Messages
from memquill.foundation.text import path_key
from memquill.paths import hard_links_allowed, source_error
from memquill.private_paths import (
    CREDENTIAL_PARTS,
    SUSPECT_NAMES,
    SUSPECT_STARTS,
    is_private,
    may_be_private,
)
from memquill.query._documents import SearchDocument
from memquill.query._scanconfig import ScanConfig

Identity = tuple[int, int, int, int, int]
"""A file's identity: size, mtime_ns, inode, ctime_ns, device."""
PACKED_IDENTITY: Final = struct.Struct("<5q")
"""An identity packed in 40 bytes (as five numbers in a tuple it holds about 230)."""
Step = tuple[str, str]
"""One step of a folder's visit: (``folder`` | ``deep`` | ``file`` | ``skip``, path or warning)."""


@dataclass(frozen=True, slots=True)
class FolderListing:
    """What a folder's entries ask the walk to do.

    Attributes:
        entries: how many entries the folder holds (each counts against the entry budget).
        kinds: each step's kind, in sorted order (see :data:`Step`).
        values: each step's path or warning.
        cacheable: no entry failed to classify (a failure may be transient: list again).

    (Two tuples, not a tuple per step: a long-lived process keeps every folder's listing.)
    """

    entries: int
    kinds: tuple[str, ...]
    values: tuple[str, ...]
    cacheable: bool

    @property
    def steps(self) -> Iterator[Step]:
        """The folders to enter, files to read and warnings to add, in sorted order."""
        return zip(self.kinds, self.values, strict=True)


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


class KnownIdentities(Protocol):
    """The identities a previous walk found, as a long-lived process keeps them between walks."""

    def identity(self, path: str, /) -> Identity | None:
        """The identity the note at ``path`` had (``None``: that walk found no note there)."""
        ...


@dataclass(frozen=True, slots=True)
class PreviousWalk:
    r"""What a previous walk saw, and what changed since (as a change watcher saw it).

    Folders not in ``folders`` keep their listing and files not in ``files`` their identity,
    without a system call; everything else is listed or ``lstat``\ ed again.
    """

    config: ScanConfig
    listings: dict[str, FolderListing]
    identities: KnownIdentities
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


_NAME: Final = attrgetter("name")


def classify(
    relative: str,
    depth: int,
    listed: list[os.DirEntry[str]],
    config: ScanConfig,
    notes: list[os.DirEntry[str]] | None = None,
) -> FolderListing:
    """What the sorted entries of the folder ``relative`` (at ``depth``) ask the walk to do
    (and, into ``notes``, the entry of each note listed)."""
    kinds: list[str] = []
    values: list[str] = []
    cacheable = True
    extensions = config.extensions
    prefix = f"{relative}/" if relative else ""
    # The checks every entry gets, with their constants at hand (a walk lists every note).
    suspect_folder = may_be_private(prefix, "")
    pattern = config.pattern
    starts, ends, always = config.literal_ends
    for entry in listed:
        name = entry.name
        path = prefix + name
        lowered = name.lower()
        if (
            suspect_folder
            or lowered.startswith(SUSPECT_STARTS)
            or "\\" in name
            or lowered in SUSPECT_NAMES
            or not CREDENTIAL_PARTS.isdisjoint(lowered.split("."))
        ) and is_private(path):
            continue
        if (
            pattern is not None
            and (always or path.startswith(starts) or path.endswith(ends))
            and pattern.fullmatch(path) is not None
        ):
            continue
        try:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if not config.prunes(path):
                    kinds.append("folder" if depth < config.max_depth else "deep")
                    values.append(path)
                continue
            is_file = entry.is_file(follow_symlinks=False)
        except OSError as error:
            kinds.append("skip")
            values.append(f"Skipped {path}: {source_error(error).message}")
            cacheable = False
            continue
        if not is_file:
            continue
        # The extension as ``os.path.splitext`` cuts it (leading dots belong to the name).
        dot = lowered.rfind(".")
        if (lowered[dot:] if dot > 0 and lowered[:dot].strip(".") else "") in extensions:
            kinds.append("file")
            values.append(path)
            if notes is not None:
                notes.append(entry)
    return FolderListing(len(listed), tuple(kinds), tuple(values), cacheable)


def sort_entries(listed: list[os.DirEntry[str]]) -> None:
    """Sort entries by name in UTF-16 code units (below U+D800 that is code point order)."""
    if max((entry.name for entry in listed), default="") < "\ud800":
        listed.sort(key=_NAME)
    else:
        listed.sort(key=lambda entry: path_key(entry.name))


def list_folder(root: Path, relative: str, config: ScanConfig) -> FolderListing | None:
    """One folder's listing, as the walk makes it (``None``: it cannot be listed now)."""
    depth = relative.count("/") + 1 if relative else 0
    location = f"{os.fspath(root)}/{relative}" if relative else os.fspath(root)
    try:
        with os.scandir(location) as iterator:
            listed = list(iterator)
    except OSError:
        return None
    sort_entries(listed)
    return classify(relative, depth, listed, config)


_LINKS: Final = attrgetter("st_nlink")
_IDENTITY: Final = cast(
    "Callable[[os.stat_result], Identity]",
    attrgetter("st_size", "st_mtime_ns", "st_ino", "st_ctime_ns", "st_dev"),
)
_INODE: Final = itemgetter(2)
_DEVICE: Final = itemgetter(4)
_SIGN: Final = 1 << 63
_WRAP: Final = 1 << 64


class WalkedFile(NamedTuple):
    """A note the walk found: its workspace path and file identity (a tuple: a walk makes
    one per note, so it is made fast)."""

    path: str
    identity: Identity

    @property
    def size(self) -> int:
        """Its size in bytes, as ``lstat`` saw it."""
        return self.identity[0]


_NEW_WALKED = cast(
    "Callable[[type[WalkedFile], tuple[str, Identity]], WalkedFile]",
    tuple.__new__,  # pyright: ignore[reportUnknownMemberType]
)
"""A :class:`WalkedFile` made in C (its own constructor is a Python function; a walk makes one
per note)."""


@dataclass(frozen=True, slots=True)
class Walk:
    r"""One walk of a workspace, before any note is read.

    The walk keeps its notes packed: each step's path or warning in one tuple, and each
    note's identity as five numbers in one array (40 bytes a note, where a
    :class:`WalkedFile` of a tuple of five numbers held about 300 while the walk lasted);
    :attr:`steps` makes the :class:`WalkedFile`\ s as it is read, in C.

    Attributes:
        config: the scan settings it used.
        texts: each step's note path or warning, in walk order.
        numbers: the identity of each note (the steps not in ``warned``), five numbers a
            note, in walk order.
        warned: the places in ``texts`` that hold warnings, ascending.
        folders: every folder listed (workspace paths; the workspace itself is ``""``).
        deep_folders: folders not entered because they lie deeper than ``max_depth``.
        entry_stopped: the entry limit stopped the walk.
        listings: each listed folder's listing (those that listed cleanly).
    """

    config: ScanConfig
    texts: tuple[str, ...]
    numbers: array[int]
    warned: tuple[int, ...]
    folders: frozenset[str]
    deep_folders: int
    entry_stopped: bool
    listings: dict[str, FolderListing] = field(default_factory=dict[str, FolderListing])

    @property
    def steps(self) -> Iterator[WalkedFile | str]:
        """Files and warnings, in walk order (made afresh at each reading)."""
        texts = iter(self.texts)
        numbers = iter(self.numbers)
        identities = cast(
            "Iterator[Identity]", zip(numbers, numbers, numbers, numbers, numbers, strict=True)
        )
        start = 0
        for at in self.warned:
            # The paths first: ``zip`` stops on them, taking no identity past the run.
            yield from map(
                _NEW_WALKED,
                repeat(WalkedFile),
                zip(islice(texts, at - start), identities, strict=False),
            )
            yield next(texts)
            start = at + 1
        yield from map(_NEW_WALKED, repeat(WalkedFile), zip(texts, identities, strict=True))


def walk_folders(
    root: Path,
    config: ScanConfig,
    cache: DocumentCache | None,
    entry_limit: int,
    *,
    previous: PreviousWalk | None = None,
    before_listing: Callable[[str], None] | None = None,
) -> Walk:
    """List the workspace's candidate notes with their identities (no note is opened).

    Args:
        root: the canonical workspace.
        config: the scan settings.
        cache: reuse folder listings while a folder's identity is unchanged.
        entry_limit: the most directory entries listed.
        previous: a previous walk and what changed since (with the same settings).
        before_listing: called with each folder about to be listed (a watcher watches it).

    Raises:
        SourceError: the workspace folder itself cannot be listed.
    """
    if previous is not None and previous.config != config:
        previous = None
    walk = _Walk(
        root,
        os.fspath(root),
        config,
        cache,
        entry_limit,
        previous,
        before_listing,
    )
    walk.folder("", 0)
    return Walk(
        config,
        tuple(walk.texts),
        walk.numbers,
        tuple(walk.warned),
        frozenset(walk.folders),
        walk.deep,
        walk.entry_stopped,
        walk.listings,
    )


@dataclass(slots=True)
class _Walk:
    root: Path
    root_text: str
    config: ScanConfig
    cache: DocumentCache | None
    entry_limit: int
    previous: PreviousWalk | None
    before_listing: Callable[[str], None] | None
    texts: list[str] = field(default_factory=list[str])
    """Each step's note path or warning."""
    numbers: array[int] = field(default_factory=lambda: array("q"))
    """Each note's identity, five numbers a note."""
    warned: list[int] = field(default_factory=list[int])
    """The places in ``texts`` that hold warnings."""
    listings: dict[str, FolderListing] = field(default_factory=dict[str, FolderListing])
    folders: set[str] = field(default_factory=set[str])
    entries: int = 0
    deep: int = 0
    entry_stopped: bool = False
    seen: dict[str, Identity | str] = field(default_factory=dict[str, Identity | str])
    """Identities (or why not) of the notes of folders just listed, until walked."""
    links: bool = field(default_factory=hard_links_allowed)
    """Notes with several hard links are walked (:func:`memquill.paths.hard_links_allowed`)."""

    def folder(self, relative: str, depth: int) -> None:
        listing = self._listing(relative, depth)
        if listing is None:
            return
        for kind, value in listing.steps:
            if self.entry_stopped:
                return
            if kind == "folder":
                self.folder(value, depth + 1)
            elif kind == "file":
                self._file(value)
            elif kind == "deep":
                self.deep += 1
            else:
                self._warn(value)

    def _listing(self, relative: str, depth: int) -> FolderListing | None:
        """The folder's listing (cached while the folder is unchanged), within the budget."""
        remaining = self.entry_limit - self.entries
        previous = self.previous
        if previous is not None and relative not in previous.folders:
            known = previous.listings.get(relative)
            if known is not None:
                self.listings[relative] = known
                return self._count(relative, known.entries, remaining, known)
        if self.before_listing is not None:
            self.before_listing(relative)
        location = f"{self.root_text}/{relative}" if relative else self.root_text
        cache, identity = self.cache, None
        if cache is not None:
            try:
                info = os.lstat(location)
            except OSError:
                info = None  # listing it below reports the failure
            if info is not None and stat.S_ISDIR(info.st_mode):
                identity = file_identity(info)
                cached = cache.listing(relative, identity, self.config)
                if cached is not None:
                    self.listings[relative] = cached
                    if previous is None and cached.entries <= remaining:
                        self._stat_listed(cached)
                    return self._count(relative, cached.entries, remaining, cached)
        try:
            folder = _open_folder(location)
        except OSError as error:
            if not relative:
                raise source_error(error) from None
            self._warn(f"Skipped {relative}: {source_error(error).message}")
            return None
        try:
            with os.scandir(location if folder is None else folder) as iterator:
                listed = list(itertools.islice(iterator, remaining + 1))
            if len(listed) > remaining:
                return self._count(relative, len(listed), remaining, None)
            sort_entries(listed)
            notes: list[os.DirEntry[str]] | None = [] if folder is not None else None
            listing = classify(relative, depth, listed, self.config, notes)
            if notes:
                self._stat_files(listing, notes)
        except OSError as error:
            if not relative:
                raise source_error(error) from None
            self._warn(f"Skipped {relative}: {source_error(error).message}")
            return None
        finally:
            if folder is not None:
                os.close(folder)
        if cache is not None and identity is not None:
            cache.put_listing(relative, identity, self.config, listing)
        if listing.cacheable:
            self.listings[relative] = listing
        return self._count(relative, len(listed), remaining, listing)

    def _stat_files(self, listing: FolderListing, notes: list[os.DirEntry[str]]) -> None:
        """Each listed note's identity, read relative to the open folder (the kernel then
        looks up one name, not the whole path), for :meth:`_file` to take."""
        paths = (path for kind, path in listing.steps if kind == "file")
        seen = self.seen
        links = self.links
        for path, entry in zip(paths, notes, strict=True):
            try:
                seen[path] = _walked(entry.stat(follow_symlinks=False), links)
            except OSError as error:
                seen[path] = source_error(error).message

    def _stat_listed(self, listing: FolderListing) -> None:
        """Each note's identity for a reused listing, in C loops (a fresh process reuses
        every unchanged folder's listing but must still ``lstat`` each note); one that
        fails, or has several hard links, is left to :meth:`_file`, which says why."""
        paths = [path for kind, path in listing.steps if kind == "file"]
        if not paths:
            return
        try:
            infos = list(map(os.lstat, map(f"{self.root_text}/".__add__, paths)))
        except OSError:
            return
        if not self.links and max(map(_LINKS, infos)) > 1:
            return
        identities = list(map(_IDENTITY, infos))
        if max(map(_INODE, identities)) >= _SIGN or max(map(_DEVICE, identities)) >= _SIGN:
            return  # numbers stored signed: made one by one
        self.seen.update(zip(paths, identities, strict=True))

    def _count(
        self, relative: str, entries: int, remaining: int, listing: FolderListing | None
    ) -> FolderListing | None:
        if listing is None or entries > remaining:
            self.entries = self.entry_limit + 1
            self.entry_stopped = True
            return None
        self.entries += entries
        self.folders.add(relative)
        return listing

    def _file(self, path: str) -> None:
        previous = self.previous
        if previous is not None and path not in previous.files:
            known = previous.identities.identity(path)
            if known is not None:
                self.texts.append(path)
                self.numbers.extend(known)
                return
        seen = self.seen.pop(path, None)
        if seen is None:
            # A folder whose listing was reused: its notes are ``lstat``ed here, by path.
            try:
                seen = _walked(os.lstat(f"{self.root_text}/{path}"), self.links)
            except OSError as error:
                seen = source_error(error).message
        if isinstance(seen, str):
            self._warn(f"Skipped {path}: {seen}")
        else:
            self.texts.append(path)
            self.numbers.extend(seen)

    def _warn(self, warning: str) -> None:
        self.warned.append(len(self.texts))
        self.texts.append(warning)


def _walked(info: os.stat_result, links: bool) -> Identity | str:
    """The identity of a note with this ``lstat``, or why it is skipped (several hard links,
    unless ``links``: :func:`memquill.paths.is_hard_linked`; the reader checks again on the
    open file)."""
    if info.st_nlink > 1 and not links:
        return Messages.HARD_LINK
    ino, dev = info.st_ino, info.st_dev
    return (
        info.st_size,
        info.st_mtime_ns,
        ino if ino < _SIGN else ino - _WRAP,
        info.st_ctime_ns,
        dev if dev < _SIGN else dev - _WRAP,
    )


def _open_folder(location: str) -> int | None:
    """A descriptor of the folder where names can be looked up relative to one (``None``:
    this platform lists and looks up by path; its listings do not give inodes either)."""
    if os.scandir not in os.supports_fd:  # pragma: no cover - Windows
        return None
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.open(location, flags)
