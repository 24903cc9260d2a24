"""Where a workspace's index lives: the user cache folder, one file per canonical workspace.

``$MEMQUILL_INDEX_DIR`` (or an explicit folder) places every index elsewhere. The file name is
a digest of the canonical workspace path, so two spellings of one folder share an index and no
note's name appears outside the workspace.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Final

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
