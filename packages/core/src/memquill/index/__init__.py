"""The persistent search index: a rebuildable cache of what ranking reads, kept current.

:class:`SearchIndex` keeps, per workspace, an SQLite file (in the user cache folder, or where
``$MEMQUILL_INDEX_DIR`` says) with each note's figures and per-term postings, brings it up to
date with the files before every answer, and ranks with the query layer's own
:func:`~memquill.query._rank.rank`, so an indexed search returns exactly what a full scan would.
"""

from memquill.index._location import INDEX_DIR_ENV, index_dir, index_path
from memquill.index._search_index import (
    DAMAGED_WARNING,
    NOTICE_FROM,
    IndexStatus,
    SearchIndex,
    stderr_notice,
)
from memquill.index._searcher import IN_MEMORY, IndexSearcher
from memquill.index._sync import SyncReport
from memquill.index._unusable import index_errors
from memquill.index._vectors_file import forget_vectors, vectors_path

__all__ = [
    "DAMAGED_WARNING",
    "INDEX_DIR_ENV",
    "IN_MEMORY",
    "NOTICE_FROM",
    "IndexSearcher",
    "IndexStatus",
    "SearchIndex",
    "SyncReport",
    "forget_vectors",
    "index_dir",
    "index_errors",
    "index_path",
    "stderr_notice",
    "vectors_path",
]
