"""The persistent search index: a rebuildable cache of what ranking reads, kept current.

:class:`SearchIndex` keeps, per workspace, an SQLite file (in the user cache folder, or where
``$MEMQUILL_INDEX_DIR`` says) with each note's figures and per-term postings, brings it up to
date with the files before every answer, and ranks with the query layer's own
:func:`~memquill.query.rank`, so an indexed search returns exactly what a full scan would.
:class:`IndexSearcher` is how the query engine uses it (one index per workspace).

Reading the package, top down:

- Answering: ``_search_index`` (:class:`SearchIndex`: refresh, rank, rebuild what is damaged,
  the one retry rule; :class:`IndexSearcher`, an index per workspace, the in-memory fallback),
  ``_corpus`` (the indexed notes and the store's records as one corpus for ``rank``),
  ``_prune`` (exact candidate pruning: which notes can still reach the re-scored set, and the
  query terms' gains).
- Keeping current: ``_tracker`` (in a long-lived process: the change watcher's events,
  handled in proportion), ``_watch`` (inotify), ``_sync`` (the walk compared with what the
  index holds: what to read, what to remove; the folder listings kept for the next process's
  walk).
- Analysing notes: ``_build`` and ``_worker`` (analysis in worker processes, and the batches
  of analysed notes the writer takes), ``_analysis`` (one note's figures, with the query
  layer's tokenizer; its chunks and their words, from one pass).
- Storing: ``_writer`` (one transaction per change; postings blocks changed in place),
  ``_codec`` (the binary forms: postings blocks, pages of notes' figures, 128 to a blob, and
  per note its term list; checksums, narrow numbers), ``_db`` (the SQLite file, its schema and
  format).
- Reading back: ``_view`` (every note, kept current page by page; the lexicon, each term's
  text once; a term's blocks, re-read only where changed; term lists).
- Around it: ``_location`` (where the file is, and a folder that cannot be used),
  ``_status`` (``memquill index --status`` and ``doctor``'s read-back), ``_vectors_file``
  (semantic recall's vectors, deleted at a forget or a refresh).

``docs/search-index.md`` explains the design and its guarantees.

Names are imported on first use (:func:`memquill.lazy.lazy_exports`): a build's worker process,
which imports only ``_worker`` and what analysis needs, loads nothing else of the package.
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.index._location import (
        INDEX_DIR_ENV as INDEX_DIR_ENV,
        index_dir as index_dir,
        index_errors as index_errors,
        index_path as index_path,
    )
    from memquill.index._search_index import (
        DAMAGED_WARNING as DAMAGED_WARNING,
        IN_MEMORY as IN_MEMORY,
        NOTICE_FROM as NOTICE_FROM,
        IndexSearcher as IndexSearcher,
        SearchIndex as SearchIndex,
        stderr_notice as stderr_notice,
    )
    from memquill.index._status import IndexStatus as IndexStatus
    from memquill.index._sync import SyncReport as SyncReport
    from memquill.index._vectors_file import (
        forget_note_vectors as forget_note_vectors,
        forget_vectors as forget_vectors,
        unit_digest as unit_digest,
        vectors_path as vectors_path,
    )

__all__: list[str] = []

__getattr__, __dir__ = _lazy_exports(__name__)
