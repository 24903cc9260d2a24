"""The git merge driver's side: what ``memquill merge`` does with the files git hands it.

Git gives a merge driver three temporary files (``%O %A %B``: the common ancestor, this side,
the other side) and reads the result back from the second. That file is git's own, not a
workspace's ``records.md``, so it is merged without the writer lock, but with the rest of the
store's care: both sides and the base are read bounded and without following a symlink, the
result is written to a staging file beside it and fsynced, the file is compared again (a
compare-and-swap on the bytes the merge read) and only then replaced, in one rename. When
OURS is a workspace's ``memory/records.md`` (:func:`records_workspace`) the merge is a store
write instead, under the writer lock, through the write path (:func:`memquill.tools.merge_copy`).
"""

from __future__ import annotations

import os
from pathlib import Path

from memquill.errors import ConflictError, MemoryRecordError, Messages, StorageError
from memquill.foundation.atomic import atomic_write
from memquill.store import MergeReport, merge_files, read_bounded


def read_copy(path: Path) -> bytes:
    """The bytes of a copy of ``records.md`` at ``path`` (an empty file: none).

    Raises:
        StorageError: it is missing, not a regular file, a symlink, unreadable or over 2 MiB.
    """
    if not path.exists() and not path.is_symlink():
        raise StorageError(Messages.COPY_UNREADABLE)
    try:
        return read_bounded(path)
    except (MemoryRecordError, OSError):
        raise StorageError(Messages.COPY_UNREADABLE) from None


def merge_into_file(
    path: Path, base: bytes, theirs: bytes, record_key: bytes | None = None
) -> tuple[MergeReport, bool]:
    """Merge ``theirs`` (with ancestor ``base``) into the file ``path``: the report, and
    whether the file changed. Text a forget erases keeps its fingerprint keyed with
    ``record_key`` (this machine's, when it has one).

    Raises:
        CorruptError: a side is not a valid records file. CapacityError: the result would
        exceed 2 MiB. ConflictError: the file changed while merging. StorageError.
    """
    ours = read_copy(path)
    data, report = merge_files(base, ours, theirs, record_key)
    if data == ours:
        return report, False

    def unchanged() -> None:
        if read_bounded(path) != ours:
            raise ConflictError(Messages.CHANGED_WHILE_SAVING)

    try:
        atomic_write(path, data, check=unchanged)
    except MemoryRecordError:
        raise
    except OSError as error:
        raise StorageError(Messages.SAVE_FAILED) from error
    return report, True


def records_workspace(path: Path) -> Path | None:
    """The workspace whose ``memory/records.md`` ``path`` is (symlinks resolved), if it is
    one: the driver then merges into the store rather than into a plain file."""
    real = Path(os.path.realpath(path))
    if real.name == "records.md" and real.parent.name == "memory":
        return real.parent.parent
    return None
