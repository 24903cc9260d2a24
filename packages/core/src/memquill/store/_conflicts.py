"""Conflict copies: the copies of ``records.md`` a file-sync tool leaves beside it.

Syncthing, Dropbox, Nextcloud/ownCloud and OneDrive cannot merge two machines' edits of one
file; each keeps one version as ``records.md`` and renames the other (the names are in
:func:`memquill.private_paths.is_records_conflict_copy`). The facts only the renamed copy holds
are then missing from memory until it is merged back (``memquill sync resolve``). Search,
``doctor`` and ``memquill sync status`` name the copies waiting; the read tools never serve
them (they are private paths).
"""

from __future__ import annotations

import os
from pathlib import Path

from memquill.errors import Messages
from memquill.private_paths import is_records_conflict_copy


def conflict_copies(directory: Path) -> tuple[str, ...]:
    """The conflict copies in ``directory`` (a workspace's ``memory/``), workspace-relative
    and sorted; whatever their file type (reading them checks that)."""
    try:
        with os.scandir(directory) as entries:
            names = [entry.name for entry in entries if is_records_conflict_copy(entry.name)]
    except OSError:
        return ()
    return tuple(f"memory/{name}" for name in sorted(names))


def conflict_notice(copies: tuple[str, ...]) -> str | None:
    """The warning a search answer starts with while copies wait (``None``: none wait)."""
    return Messages.CONFLICT_COPIES.format(copies=", ".join(copies)) if copies else None
