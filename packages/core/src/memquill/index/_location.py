"""Where a workspace's index lives, and a place there that cannot be used, worded once.

The index folder is the user cache folder, one file per canonical workspace;
``$MEMQUILL_INDEX_DIR`` (or an explicit folder) places every index elsewhere. The file name is
a digest of the canonical workspace path, so two spellings of one folder share an index and no
note's name appears outside the workspace.

A read-only, full or misplaced cache folder is not damage: a search keeps the index in memory
and says why (:class:`~memquill.index.IndexSearcher`); ``memquill index``, whose whole job is
the saved index, fails with the same words as a ``storage`` error. :func:`unusable_message`
maps what the operating system or SQLite said to one of four fixed messages (never its own
text, which names absolute paths).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import sqlite3
from collections.abc import Generator
from pathlib import Path
from typing import Final

from memquill.errors import MemquillError, Messages, StorageError
from memquill.index._db import IndexDamaged, IndexOutdated
from memquill.paths import user_cache_dir

INDEX_DIR_ENV: Final = "MEMQUILL_INDEX_DIR"


def index_dir() -> Path:
    """The folder that holds the indexes: ``$MEMQUILL_INDEX_DIR``, else the user cache.

    The value ``:memory:`` keeps every index in process memory (nothing is written).
    """
    configured = os.environ.get(INDEX_DIR_ENV)
    if configured == ":memory:":
        return Path(configured)
    if configured:
        return Path(configured).expanduser()
    return default_index_dir()


def default_index_dir() -> Path:
    """``memquill/index`` in the user cache folder: memquill's own (kept ``0700``)."""
    return user_cache_dir() / "memquill" / "index"


def index_path(root: Path, folder: Path | None = None) -> Path:
    """The index file of the canonical workspace ``root``."""
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:32]
    return (folder or index_dir()) / f"{digest}.sqlite3"


UNUSABLE: Final = (OSError, sqlite3.OperationalError, IndexDamaged, IndexOutdated)
"""What opening, reading or writing an index file raises when its folder cannot be used."""

_READ_ONLY: Final = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
_FULL: Final = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_NOT_A_FOLDER: Final = frozenset({errno.ENOTDIR, errno.EEXIST})
# SQLite's primary result codes (sqlite3.h): what the library answers for the same faults.
_SQLITE_PERM, _SQLITE_READONLY, _SQLITE_FULL, _SQLITE_CANTOPEN = 3, 8, 13, 14


def unusable_message(error: BaseException) -> str:
    """The message for an index that ``error`` (one of :data:`UNUSABLE`) made unusable."""
    if isinstance(error, OSError):
        if error.errno in _READ_ONLY:
            return Messages.INDEX_READ_ONLY
        if error.errno in _FULL:
            return Messages.INDEX_FULL
        if error.errno in _NOT_A_FOLDER:
            return Messages.INDEX_NOT_A_FOLDER
    elif isinstance(error, sqlite3.OperationalError):
        code = getattr(error, "sqlite_errorcode", 0) & 0xFF
        # The file is there (made before SQLite opens it): it cannot be opened for writing,
        # or its -wal and -shm files cannot be made beside it.
        if code in (_SQLITE_PERM, _SQLITE_READONLY, _SQLITE_CANTOPEN):
            return Messages.INDEX_READ_ONLY
        if code == _SQLITE_FULL:
            return Messages.INDEX_FULL
    return Messages.INDEX_UNUSABLE


@contextlib.contextmanager
def index_errors() -> Generator[None]:
    """Turn an unusable index folder or file into a ``storage`` error with that message."""
    try:
        yield
    except MemquillError:
        raise
    except UNUSABLE as error:
        raise StorageError(unusable_message(error)) from error
