"""The files under ``/memories`` in one snapshot of the store: named facts seen as a tree.

A file is an active fact whose key is the escaped form of its path (:mod:`._paths`); a
directory is a key prefix with at least one such file below it, so a directory exists while it
holds a file and is gone with its last one (the root always exists). A name may be a file and
a directory at once when the facts' keys say so (``notes`` and ``notes/a.md``, written by
another adapter): listings then show both, the file first.

A directory listing is the reference's: the directory itself, then its entries two levels deep,
each level sorted by name, a directory followed by its own entries, hidden names (a leading
``.``) left out with everything below them. A file's size is its text's UTF-8 length, as the
reference's file would be; a directory's is the total of the files it holds at any depth (the
reference shows the file system's own directory size, which depends on the file system).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memquill import Record
from memquill.store import Snapshot
from memquill_anthropic._messages import Texts
from memquill_anthropic._paths import MemoryPath, names_of_key
from memquill_anthropic._text import file_size, size_label


@dataclass
class _Folder:
    files: dict[str, int] = field(default_factory=dict[str, int])
    folders: dict[str, _Folder] = field(default_factory=dict[str, "_Folder"])

    def total(self) -> int:
        return sum(self.files.values()) + sum(folder.total() for folder in self.folders.values())


class MemoryFiles:
    """The files of one snapshot.

    Args:
        snapshot: the store as read (no lock is held; a write checks its revision again).
    """

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def file(self, path: MemoryPath) -> Record | None:
        """The active version of the file at ``path``, if there is one."""
        return None if path.is_root else self.snapshot.by_key(path.key)

    def below(self, path: MemoryPath) -> list[tuple[tuple[str, ...], Record]]:
        """Every file strictly below ``path``, as names relative to it, in key order."""
        found: list[tuple[tuple[str, ...], Record]] = []
        for record in self.snapshot.keyed(path.prefix):
            names = names_of_key(record.key or "")
            if names is not None and len(names) > len(path.names):
                found.append((names[len(path.names) :], record))
        return sorted(found, key=lambda entry: entry[0])

    def is_directory(self, path: MemoryPath) -> bool:
        """Whether ``path`` is the root or holds at least one file."""
        return path.is_root or bool(self.below(path))

    def exists(self, path: MemoryPath) -> bool:
        """Whether ``path`` is a file or a directory."""
        return self.file(path) is not None or self.is_directory(path)

    def file_above(self, path: MemoryPath) -> MemoryPath | None:
        """The nearest path above ``path`` that is a file, if any (it cannot hold files)."""
        for ancestor in reversed(path.ancestors()):
            if self.file(ancestor) is not None:
                return ancestor
        return None

    def revision(self, record: Record) -> str:
        """The record revision a write of ``record`` must name."""
        return self.snapshot.record_revision(record)

    def listing(self, path: MemoryPath) -> str:
        """The ``view`` answer for a directory."""
        root = _Folder()
        for names, record in self.below(path):
            folder = root
            for name in names[:-1]:
                folder = folder.folders.setdefault(name, _Folder())
            folder.files[names[-1]] = file_size(record.content)
        entries: list[tuple[str, str]] = []
        _walk(root, "", 1, entries)
        lines = [f"{size_label(root.total())}\t{path.given}"]
        lines.extend(f"{size}\t{path.given}/{relative}" for size, relative in entries)
        return f"{Texts.LISTING.format(path=path.given)}\n" + "\n".join(lines)


def _walk(folder: _Folder, relative: str, depth: int, entries: list[tuple[str, str]]) -> None:
    for name in sorted(folder.files.keys() | folder.folders.keys()):
        if name.startswith("."):
            continue
        here = f"{relative}/{name}" if relative else name
        if name in folder.files:
            entries.append((size_label(folder.files[name]), here))
        inner = folder.folders.get(name)
        if inner is not None:
            entries.append((size_label(inner.total()), f"{here}/"))
            if depth < 2:
                _walk(inner, here, depth + 1, entries)
