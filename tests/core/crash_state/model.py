"""A file-system model of what a power cut leaves on disk, replayed from a recorded trace.

The model is deliberately conservative: a generic POSIX file system, without ext4's
``auto_da_alloc`` heuristics or any other promise POSIX does not make.

- **File data** is volatile until ``fsync``/``fdatasync`` of a descriptor of that file: that
  makes all of its data (and its size) durable. Writes not yet synced persist, after a cut, as a
  prefix of themselves in program order: the first ones whole, the next one torn at a 512-byte
  sector boundary (any prefix; with the file's size already grown, the missing sectors read as
  zeros, as after ``data=writeback``), the rest lost. A pending ``ftruncate`` persists whole or
  not at all.
- **Folder entries** (a creation, ``rename``, ``link``, ``unlink``, ``mkdir``, ``rmdir``) are
  volatile until ``fsync`` of that folder. Syncing a file does not make its name durable, nor does
  syncing a folder make its parent's entry for it durable. After a cut, any subset of a folder's
  pending entry changes persists, applied in program order (fewer than six pending: every subset;
  more: every prefix). A ``rename`` is atomic: the target names the old file or the new one.
- A cut happens between two calls; a call is never half done, except a write (torn as above).

What it leaves out (``docs/security.md``): disks whose write cache acknowledges a flush it has
not done, fsync errors and what the kernel does to dirty pages after one, reordering of folders
against each other beyond the above, data-journalling modes that promise more, and the content of
freed blocks (a forgotten fact's old bytes may linger in free space; secure erasure is not
promised).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.core.crash_state.recorder import Call, Unmodelled

__all__ = ["SECTOR", "CrashState", "FileSystem", "crash_states"]

SECTOR = 512
_ALL_SUBSETS_BELOW = 6
_TEARS_PER_WRITE = 6
"""Torn prefixes kept per pending write: the first two and last two sectors, two in between."""


@dataclass(frozen=True, slots=True)
class _EntryChange:
    """A pending change of one folder's entries: paths set to an inode, or removed (``None``)."""

    directory: str
    changes: tuple[tuple[str, int | None], ...]
    call: int


@dataclass(frozen=True, slots=True)
class _DataChange:
    """A pending change of one file's data: bytes at an offset, or a new length."""

    offset: int
    data: bytes | None  # None: truncate to ``offset``


def _apply(content: bytes, change: _DataChange) -> bytes:
    if change.data is None:
        return content[: change.offset].ljust(change.offset, b"\0")
    start = content.ljust(change.offset, b"\0")
    end = change.offset + len(change.data)
    return start[: change.offset] + change.data + start[end:]


@dataclass
class FileSystem:
    """The model's state: a volatile view (what the running process sees) and a durable one."""

    root: str
    names: dict[str, int] = field(default_factory=dict[str, int])
    durable_names: dict[str, int] = field(default_factory=dict[str, int])
    folders: set[int] = field(default_factory=set[int])
    data: dict[int, bytes] = field(default_factory=dict[int, bytes])
    durable: dict[int, bytes] = field(default_factory=dict[int, bytes])
    pending_data: dict[int, list[_DataChange]] = field(default_factory=dict[int, list[_DataChange]])
    pending_entries: dict[str, list[_EntryChange]] = field(
        default_factory=dict[str, list[_EntryChange]]
    )
    fds: dict[int, int] = field(default_factory=dict[int, int])
    _next: int = 1

    @classmethod
    def from_disk(cls, root: str) -> FileSystem:
        """The tree under ``root`` as it is now, taken as fully durable."""
        model = cls(root)
        model.names[root] = model.durable_names[root] = 0
        model.folders.add(0)
        for folder, dirs, files in os.walk(root):
            for name in dirs:
                model._existing(os.path.join(folder, name), None)
            for name in files:
                path = os.path.join(folder, name)
                if os.path.islink(path):
                    raise Unmodelled(f"a symlink in the recorded tree: {path}")
                model._existing(path, Path(path).read_bytes())
        return model

    def _existing(self, path: str, content: bytes | None) -> None:
        inode = self._inode(content)
        self.names[path] = self.durable_names[path] = inode
        if content is not None:
            self.durable[inode] = content

    def _inode(self, content: bytes | None) -> int:
        inode, self._next = self._next, self._next + 1
        if content is None:
            self.folders.add(inode)
        else:
            self.data[inode] = content
            self.durable[inode] = b""
        return inode

    # -- replay ------------------------------------------------------------------------------

    def replay(self, call: Call, index: int) -> None:
        """Apply one recorded call to the volatile view (and, for a sync, the durable one)."""
        op = call.op
        if op == "mark":
            return
        if op == "open":
            assert call.path is not None and call.fd is not None
            inode = self.names.get(call.path)
            if inode is None:
                if not call.flags & os.O_CREAT:
                    raise Unmodelled(f"opened a file the model does not have: {call.path}")
                inode = self._inode(b"")
                self._entry(call.path, inode, index)
            elif call.flags & os.O_TRUNC and inode not in self.folders:
                self._change(inode, _DataChange(0, None))
            self.fds[call.fd] = inode
        elif op in {"write", "truncate"}:
            inode = self._fd(call)
            data = call.data if op == "write" else None
            self._change(inode, _DataChange(call.offset, data))
        elif op == "fsync":
            inode = self._fd(call)
            if inode in self.folders:
                folder = self._path_of(inode)
                for change in self.pending_entries.pop(folder, []):
                    self._settle(self.durable_names, change)
            else:
                self.durable[inode] = self.data[inode]
                self.pending_data.pop(inode, None)
        elif op == "close":
            assert call.fd is not None
            self.fds.pop(call.fd, None)
        elif op == "rename":
            assert call.path is not None and call.target is not None
            inode = self._named(call.path)
            if inode in self.folders or os.path.dirname(call.path) != os.path.dirname(call.target):
                raise Unmodelled(f"a rename the model does not know: {call.describe()}")
            del self.names[call.path]
            self.names[call.target] = inode
            folder = os.path.dirname(call.path)
            change = _EntryChange(folder, ((call.path, None), (call.target, inode)), index)
            self.pending_entries.setdefault(folder, []).append(change)
        elif op == "link":
            assert call.path is not None and call.target is not None
            self._entry(call.target, self._named(call.path), index)
        elif op in {"unlink", "rmdir"}:
            assert call.path is not None
            self._named(call.path)
            del self.names[call.path]
            self._entry(call.path, None, index)
        elif op == "mkdir":
            assert call.path is not None
            self._entry(call.path, self._inode(None), index)
        else:
            raise Unmodelled(f"unknown call {op}")

    def _named(self, path: str) -> int:
        try:
            return self.names[path]
        except KeyError:
            raise Unmodelled(f"the model has no {path}") from None

    def _fd(self, call: Call) -> int:
        assert call.fd is not None
        try:
            return self.fds[call.fd]
        except KeyError:
            raise Unmodelled(f"a descriptor the model did not open: {call.describe()}") from None

    def _path_of(self, inode: int) -> str:
        return next(path for path, number in self.names.items() if number == inode)

    def _entry(self, path: str, inode: int | None, index: int) -> None:
        if inode is not None:
            self.names[path] = inode
        folder = os.path.dirname(path)
        change = _EntryChange(folder, ((path, inode),), index)
        self.pending_entries.setdefault(folder, []).append(change)

    def _change(self, inode: int, change: _DataChange) -> None:
        self.data[inode] = _apply(self.data[inode], change)
        self.pending_data.setdefault(inode, []).append(change)

    @staticmethod
    def _settle(names: dict[str, int], change: _EntryChange) -> None:
        for path, inode in change.changes:
            if inode is None:
                names.pop(path, None)
            else:
                names[path] = inode

    # -- what a cut leaves -------------------------------------------------------------------

    def namespaces(self) -> list[tuple[dict[str, int], str]]:
        """Every durable namespace a cut may leave now, with a few words on which changes
        persisted."""
        folders = sorted(self.pending_entries)
        options: list[list[tuple[_EntryChange, ...]]] = []
        for folder in folders:
            changes = self.pending_entries[folder]
            if len(changes) < _ALL_SUBSETS_BELOW:
                chosen = [
                    combo
                    for size in range(len(changes) + 1)
                    for combo in itertools.combinations(changes, size)
                ]
            else:
                chosen = [tuple(changes[:size]) for size in range(len(changes) + 1)]
            options.append(chosen)
        result: list[tuple[dict[str, int], str]] = []
        for combo in itertools.product(*options):
            names = dict(self.durable_names)
            words: list[str] = []
            for folder, changes in zip(folders, combo, strict=True):
                for change in changes:
                    self._settle(names, change)
                pending = len(self.pending_entries[folder])
                calls = "".join(f", call {change.call}" for change in changes)
                words.append(
                    f"{self._label(folder)}: {len(changes)} of {pending} pending entry changes "
                    f"persisted{calls}"
                )
            result.append((names, "; ".join(words) or "no entry change pending"))
        return result

    def _label(self, folder: str) -> str:
        relative = os.path.relpath(folder, self.root)
        return "workspace/" if relative == "." else f"{relative}/"

    def contents(self, inode: int, seed: int) -> list[tuple[bytes, str]]:
        """Every content a cut may leave in file ``inode`` (sampled tears), with a label."""
        base = self.durable.get(inode, b"")
        changes = self.pending_data.get(inode, [])
        found: dict[bytes, str] = {base: "synced data only"}
        content = base
        rng = random.Random(seed)
        for number, change in enumerate(changes):
            if change.data is not None:
                end = change.offset + len(change.data)
                tears = [cut for cut in range((change.offset // SECTOR + 1) * SECTOR, end, SECTOR)]
                if len(tears) > _TEARS_PER_WRITE:
                    middle = tears[2:-2]
                    tears = sorted({*tears[:2], *tears[-2:], *rng.sample(middle, 2)})
                for cut in tears:
                    kept = change.data[: cut - change.offset]
                    torn = _apply(content, _DataChange(change.offset, kept))
                    found.setdefault(torn, f"write {number + 1}/{len(changes)} torn at {cut}")
                    if end > len(content):
                        grown = _apply(
                            content,
                            _DataChange(change.offset, kept.ljust(len(change.data), b"\0")),
                        )
                        found.setdefault(
                            grown, f"write {number + 1}/{len(changes)} torn at {cut}, zeros after"
                        )
            content = _apply(content, change)
            found.setdefault(content, f"writes 1-{number + 1}/{len(changes)} persisted")
        return list(found.items())


@dataclass(frozen=True, slots=True)
class CrashState:
    """One state a power cut may leave: every path under the root with its bytes
    (``None``: a folder)."""

    cut: int
    tree: tuple[tuple[str, bytes | None], ...]
    how: str

    @property
    def digest(self) -> str:
        hasher = hashlib.sha256()
        for path, content in self.tree:
            hasher.update(path.encode() + b"\0")
            hasher.update(b"<dir>" if content is None else hashlib.sha256(content).digest())
        return hasher.hexdigest()

    def materialise(self, root: Path) -> None:
        """Write the state under ``root`` (an empty folder): folders ``0700``, files
        ``0600``."""
        for relative, content in self.tree:
            path = root / relative
            if content is None:
                path.mkdir(mode=0o700)
            else:
                path.write_bytes(content)
                path.chmod(0o600)


def _reachable(root: str, names: dict[str, int], folders: set[int]) -> list[tuple[str, int]]:
    present: list[tuple[str, int]] = []
    for path, inode in sorted(names.items(), key=lambda item: item[0].count(os.sep)):
        if path == root:
            continue
        parent = os.path.dirname(path)
        if parent != root and names.get(parent) not in folders:
            continue  # its folder's entry did not persist: nothing can reach it
        present.append((path, inode))
    return present


def crash_states(
    calls: Sequence[Call], root: str, model: FileSystem, *, limit: int = 48
) -> Iterator[tuple[int, list[CrashState]]]:
    """For every cut point (before call 0, …, after the last call): the states a power cut
    there may leave, at most ``limit`` per cut (sampled deterministically, always keeping the
    state where nothing pending persisted and the one where everything did)."""
    for cut in range(len(calls) + 1):
        if cut:
            model.replay(calls[cut - 1], cut - 1)
        if cut and _changes_nothing(calls[cut - 1]):
            continue  # the same states, and the same promises, as the cut before it
        yield cut, _states_at(cut, root, model, limit)


def _changes_nothing(call: Call) -> bool:
    # A mark changes no state but does change what is promised: its cut is kept.
    if call.op == "close":
        return True
    return call.op == "open" and not call.flags & (os.O_CREAT | os.O_TRUNC)


def _states_at(cut: int, root: str, model: FileSystem, limit: int) -> list[CrashState]:
    rng = random.Random(cut)
    combos: list[tuple[list[tuple[str, bytes | None]], str]] = []
    for names, words in model.namespaces():
        present = _reachable(root, names, model.folders)
        choices: list[list[tuple[bytes | None, str]]] = []
        for path, inode in present:
            if inode in model.folders:
                choices.append([(None, "")])
            else:
                options = model.contents(inode, seed=cut * 7919 + inode)
                choices.append(
                    [(content, f"{os.path.basename(path)}: {label}") for content, label in options]
                )
        total = 1
        for options in choices:
            total *= len(options)
        picks: Iterator[tuple[int, ...]]
        if total <= limit:
            picks = itertools.product(*(range(len(options)) for options in choices))
        else:
            low = tuple(0 for _ in choices)
            high = tuple(len(options) - 1 for options in choices)
            sampled = {low, high}
            while len(sampled) < limit:
                sampled.add(tuple(rng.randrange(len(options)) for options in choices))
            picks = iter(sorted(sampled))
        for pick in picks:
            tree: list[tuple[str, bytes | None]] = []
            labels = [words]
            for (path, _), options, index in zip(present, choices, pick, strict=True):
                content, label = options[index]
                tree.append((os.path.relpath(path, root), content))
                if index and label:
                    labels.append(label)
            combos.append((tree, "; ".join(labels)))
    if len(combos) > limit:
        keep = {0, len(combos) - 1, *rng.sample(range(1, len(combos) - 1), limit - 2)}
        combos = [combo for index, combo in enumerate(combos) if index in keep]
    return [CrashState(cut, tuple(tree), how) for tree, how in combos]
