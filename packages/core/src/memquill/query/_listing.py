"""One folder's listing: its entries sorted and classified, as the walk takes them.

Entries are sorted by name in UTF-16 code units, so every machine walks a workspace alike.
Memquill's own bookkeeping, private and credential files, ignored paths and symlinks are never
listed as notes; folders deeper than ``max_depth`` are counted, not entered
(:mod:`memquill.query._walk` walks the listings).
"""

from __future__ import annotations

import os
from operator import attrgetter
from pathlib import Path
from typing import Final

from memquill.foundation.text import path_key
from memquill.paths import source_error
from memquill.private_paths import (
    CREDENTIAL_PARTS,
    SUSPECT_NAMES,
    SUSPECT_STARTS,
    is_private,
    may_be_private,
)
from memquill.query._scanconfig import ScanConfig
from memquill.query._walk_cache import FolderListing, Step

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
    steps: list[Step] = []
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
                    steps.append(("folder" if depth < config.max_depth else "deep", path))
                continue
            is_file = entry.is_file(follow_symlinks=False)
        except OSError as error:
            steps.append(("skip", f"Skipped {path}: {source_error(error).message}"))
            cacheable = False
            continue
        if not is_file:
            continue
        # The extension as ``os.path.splitext`` cuts it (leading dots belong to the name).
        dot = lowered.rfind(".")
        if (lowered[dot:] if dot > 0 and lowered[:dot].strip(".") else "") in extensions:
            steps.append(("file", path))
            if notes is not None:
                notes.append(entry)
    return FolderListing(len(listed), tuple(steps), cacheable)


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
