"""Where a namespace's items live: one workspace folder per namespace under the store's root.

A namespace is a tuple of text labels; ``("memories", "ana")`` is the workspace
``ROOT/memories/ana/``, so two users' items are two folders. A label becomes a folder name
reversibly (:func:`label_folder`):

- ``a–z 0–9 _ - ~`` stay as they are; every other character (upper-case letters too, so two
  labels never share a folder on a case-insensitive file system, and every non-ASCII character,
  so no file system's Unicode normalisation can merge two) becomes ``%XX`` escapes of its UTF-8
  bytes; ``.`` and ``%`` are escaped, so a folder name is never ``.``, ``..`` or hidden;
- the label ``memory`` becomes ``%6Demory``: ``memory/`` is where a workspace keeps its records;
- a folder name is at most 255 characters.

A folder is a namespace when its name (and each parent's, up to the root) is one
:func:`label_folder` makes and it holds ``memory/records.md``. With a database store each
namespace is a row named ``BASE/<folder>/<folder>…`` instead (:func:`row_name`), and the
namespaces are the rows under ``BASE/``.
"""

from __future__ import annotations

import functools
import os
import stat
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final, cast

from memquill.errors import InvalidInputError, Messages, UnsafePathError

Namespace = tuple[str, ...]
"""A namespace: one or more non-empty labels."""

MAX_FOLDER_NAME: Final = 255
MAX_ROW_NAME: Final = 200
_KEPT: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-~")
_RESERVED: Final = frozenset({"memory"})  # a workspace's own folder of records


def label_folder(label: object) -> str:
    """The folder name of one namespace label.

    Raises:
        InvalidInputError: the label is not non-empty text, holds a lone surrogate, or its
            folder name would be longer than 255 characters.
    """
    if not isinstance(label, str) or not label:
        raise InvalidInputError(Messages.ITEM_NAMESPACE)
    try:
        name = "".join(
            char if char in _KEPT else "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))
            for char in label
        )
    except UnicodeEncodeError:
        raise InvalidInputError(Messages.ITEM_NAMESPACE) from None
    if name in _RESERVED:
        name = f"%{ord(name[0]):02X}{name[1:]}"
    if len(name) > MAX_FOLDER_NAME:
        raise InvalidInputError(Messages.ITEM_NAMESPACE)
    return name


@functools.lru_cache(maxsize=65536)
def folder_label(name: str) -> str | None:
    """The label a folder name stands for; ``None`` if :func:`label_folder` never makes it."""
    # Kept: a search across 10,000 namespaces on a database decodes every row's name again.
    try:
        label = urllib.parse.unquote(name, errors="strict")
    except UnicodeDecodeError:
        return None
    try:
        return label if label and label_folder(label) == name else None
    except InvalidInputError:
        return None


def validate_namespace(namespace: Sequence[object]) -> Namespace:
    """``namespace`` as a tuple of labels, each checked.

    Raises:
        InvalidInputError: it is empty or a label is not acceptable.
    """
    labels: list[str] = []
    for label in namespace:
        label_folder(label)
        labels.append(cast(str, label))  # label_folder refuses anything but text
    if not labels:
        raise InvalidInputError(Messages.ITEM_NAMESPACE)
    return tuple(labels)


def namespace_folder(root: Path, namespace: Sequence[str]) -> Path:
    """The workspace folder of ``namespace`` (or of a prefix of labels) under ``root``."""
    return root.joinpath(*(label_folder(label) for label in namespace))


def row_name(base: str, namespace: Sequence[str]) -> str:
    """The database row of ``namespace``: ``BASE/<folder>/<folder>…``.

    Raises:
        InvalidInputError: longer than a row name may be (200 characters).
    """
    name = "/".join((base, *(label_folder(label) for label in namespace)))
    if len(name) > MAX_ROW_NAME:
        raise InvalidInputError(Messages.ITEM_ROW)
    return name


@functools.lru_cache(maxsize=65536)
def namespace_of_row(base: str, name: str) -> Namespace | None:
    """The namespace a row under ``BASE/`` stands for (``None``: no namespace's row)."""
    # Kept: a search across 10,000 namespaces lists and reads every row's name at each call.
    if not name.startswith(base + "/"):
        return None
    labels = [folder_label(part) for part in name[len(base) + 1 :].split("/")]
    if not labels or any(label is None for label in labels):
        return None
    return tuple(label for label in labels if label is not None)


def check_folders(root: Path, namespace: Sequence[str]) -> bool:
    """Whether every folder of ``namespace`` exists under ``root`` (``False``: some is missing).

    Raises:
        UnsafePathError: one of them is a symbolic link or not a folder.
        StorageError: one cannot be inspected (as an ``OSError``).
    """
    for folder in _folders(os.fspath(root), tuple(namespace)):
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            return False
        if not stat.S_ISDIR(mode):
            raise UnsafePathError(Messages.ITEM_PATH)
    return True


@functools.lru_cache(maxsize=4096)
def _folders(root: str, namespace: Namespace) -> tuple[str, ...]:
    """The path of each folder of ``namespace`` under ``root``, outermost first (kept: a put
    checks them, and building the paths cost three times the checks themselves).

    Raises:
        InvalidInputError: a label is not acceptable (:func:`label_folder`).
    """
    current = root
    folders: list[str] = []
    for label in namespace:
        current = os.path.join(current, label_folder(label))
        folders.append(current)
    return tuple(folders)


def walk_namespaces(root: Path, prefix: Namespace) -> Iterator[Namespace]:
    """Every namespace under ``prefix`` (itself included) whose folder holds a records file,
    in sorted order of labels. Symbolic links are never followed; a folder whose name no
    label makes (a person's own) is not entered."""
    start = namespace_folder(root, prefix)
    if prefix and not _is_folder(start):
        return
    found: list[Namespace] = []
    # Plain strings, not Paths: a walk of hundreds of namespaces runs at every search.
    stack: list[tuple[str, Namespace]] = [(os.fspath(start), prefix)]
    while stack:
        folder, labels = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # gone meanwhile, or unreadable: not a namespace this walk can see
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            if entry.name == "memory":
                if labels and _is_file(os.path.join(entry.path, "records.md")):
                    found.append(labels)
                continue
            if entry.name in _RESERVED:
                continue
            label = folder_label(entry.name)
            if label is not None:
                stack.append((entry.path, (*labels, label)))
    yield from sorted(found)


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _is_file(path: str | Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
