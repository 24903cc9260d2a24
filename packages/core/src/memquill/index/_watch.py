"""Change notification for a long-lived process (Linux inotify, through ``ctypes``).

A full walk ``lstat``\\s every note: tens of milliseconds at 20,000 notes, more than a warm
search may cost. A process that searches again and again watches the folders it walked
instead: the kernel queues an event before a write, rename or delete returns, so whatever
completed before a search began is in the queue when the search drains it. A search then
re-lists only folders that had events and re-reads only files that had events.

Anything the watcher cannot vouch for means a full walk: the event queue overflowed, a
watched folder moved, a watch could not be added (the per-user limit), the platform has no
inotify, or the workspace is on a network file system (where other machines' writes raise no
events). ``MEMQUILL_INDEX_WATCH=0`` turns the watcher off everywhere: every search then walks,
as on macOS, which is how the tests run that path on Linux too.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import re
import struct
import sys
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

WATCH_ENV: Final = "MEMQUILL_INDEX_WATCH"
"""Set to ``0`` (or ``false``, ``no``, ``off``) to never watch: a walk before every answer."""

IN_MODIFY: Final = 0x00000002
IN_ATTRIB: Final = 0x00000004
IN_CLOSE_WRITE: Final = 0x00000008
IN_MOVED_FROM: Final = 0x00000040
IN_MOVED_TO: Final = 0x00000080
IN_CREATE: Final = 0x00000100
IN_DELETE: Final = 0x00000200
IN_DELETE_SELF: Final = 0x00000400
IN_MOVE_SELF: Final = 0x00000800
IN_UNMOUNT: Final = 0x00002000
IN_Q_OVERFLOW: Final = 0x00004000
IN_IGNORED: Final = 0x00008000
IN_ONLYDIR: Final = 0x01000000
IN_DONT_FOLLOW: Final = 0x02000000
IN_EXCL_UNLINK: Final = 0x04000000
IN_ISDIR: Final = 0x40000000
IN_NONBLOCK: Final = 0o4000
IN_CLOEXEC: Final = 0o2000000

_MASK: Final = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
    | IN_EXCL_UNLINK
)
_LISTING: Final = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
_EVENT: Final = struct.Struct("iIII")
_OCTAL: Final = re.compile(r"\\([0-7]{3})")
_NETWORK: Final = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre", "davfs"}
)


@dataclass(slots=True)
class Changes:
    """What happened since the last drain.

    Attributes:
        complete: the watcher saw everything (``False``: walk everything).
        folders: folders whose entries may have changed (workspace paths).
        files: files whose content or identity may have changed (workspace paths).
    """

    complete: bool = True
    folders: set[str] = field(default_factory=set[str])
    files: set[str] = field(default_factory=set[str])

    @property
    def empty(self) -> bool:
        """Nothing happened."""
        return self.complete and not self.folders and not self.files


class Watcher:
    """Watches the folders of one workspace."""

    def __init__(self, root: Path, libc: ctypes.CDLL, fd: int) -> None:
        self._root = os.fspath(root)
        self._libc = libc
        self._fd = fd
        # The descriptor is closed with the watcher even if close() is never called.
        self._finalizer = weakref.finalize(self, os.close, fd)
        self._folders: dict[int, str] = {}
        self._watched: dict[str, int] = {}
        self._broken = False

    def watch(self, folder: str) -> None:
        """Watch ``folder`` (a workspace path; ``""`` is the workspace) before it is listed."""
        if self._broken or folder in self._watched:
            return
        location = f"{self._root}/{folder}" if folder else self._root
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(location), _MASK)
        if wd < 0:
            if ctypes.get_errno() in (errno.ENOENT, errno.ENOTDIR):
                return  # gone already: its parent's listing says so
            self._broken = True  # the watch limit, most likely: walk every time instead
            return
        self._folders[wd] = folder
        self._watched[folder] = wd

    def keep(self, folders: frozenset[str]) -> None:
        """Stop watching folders no longer walked."""
        for folder in [folder for folder in self._watched if folder not in folders]:
            wd = self._watched.pop(folder)
            self._folders.pop(wd, None)
            self._libc.inotify_rm_watch(self._fd, wd)

    def drain(self) -> Changes:
        """Every event queued so far."""
        changes = Changes(complete=not self._broken)
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                self._broken = True
                changes.complete = False
                break
            if not data:
                break
            self._parse(data, changes)
        return changes

    def close(self) -> None:
        """Stop watching."""
        self._finalizer()
        self._broken = True

    def _parse(self, data: bytes, changes: Changes) -> None:
        offset = 0
        while offset + _EVENT.size <= len(data):
            wd, mask, _, length = _EVENT.unpack_from(data, offset)
            name = data[offset + _EVENT.size : offset + _EVENT.size + length].split(b"\0", 1)[0]
            offset += _EVENT.size + length
            if mask & IN_Q_OVERFLOW:
                changes.complete = False
                continue
            folder = self._folders.get(wd)
            if mask & IN_IGNORED:
                if folder is not None and self._watched.get(folder) == wd:
                    del self._watched[folder]
                self._folders.pop(wd, None)
                continue
            if folder is None:
                continue
            if mask & (IN_MOVE_SELF | IN_UNMOUNT):
                changes.complete = False  # its path changed: every watch path may be stale
                continue
            if mask & IN_DELETE_SELF:
                continue  # the parent's event re-lists it
            child = os.fsdecode(name)
            path = f"{folder}/{child}" if folder else child
            if mask & _LISTING or (mask & IN_ISDIR and mask & IN_ATTRIB):
                changes.folders.add(folder)
                if mask & IN_ISDIR:
                    changes.folders.add(path)
            if not mask & IN_ISDIR and child:
                changes.files.add(path)


def open_watcher(root: Path) -> Watcher | None:
    """A watcher for ``root``, or ``None`` where changes cannot be watched reliably (or
    ``$MEMQUILL_INDEX_WATCH`` says not to)."""
    if os.environ.get(WATCH_ENV, "").strip().lower() in ("0", "false", "no", "off"):
        return None
    if not sys.platform.startswith("linux") or _network_file_system(root):
        return None
    try:
        libc = _libc()
        init = libc.inotify_init1
    except (OSError, AttributeError):
        return None
    init.argtypes = [ctypes.c_int]
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    fd = init(IN_NONBLOCK | IN_CLOEXEC)
    if fd < 0:
        return None
    return Watcher(root, libc, fd)


def _libc() -> ctypes.CDLL:
    """The C library: by its usual name first (``find_library`` runs ``ldconfig`` in a
    subprocess, which a first search should not wait for)."""
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _network_file_system(root: Path) -> bool:
    """Whether ``root`` lies on a file system whose remote writes raise no local events."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mounts:
            lines = mounts.read().splitlines()
    except OSError:
        return True  # cannot tell: do not trust events
    target = os.fspath(root)
    best, kind = -1, ""
    for line in lines:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if len(fields) < 5 or not right:
            continue
        mount = _OCTAL.sub(lambda match: chr(int(match[1], 8)), fields[4])
        if (target == mount or target.startswith(mount.rstrip("/") + "/")) and len(mount) > best:
            best, kind = len(mount), right.split()[0]
    return kind in _NETWORK or kind.startswith("fuse")
