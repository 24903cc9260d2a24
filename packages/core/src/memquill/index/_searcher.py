""":class:`IndexSearcher`: the query engine's way to rank through a search index.

It keeps one :class:`SearchIndex` per canonical workspace for as long as it lives (a session,
a server). When the index file cannot be used at all (a read-only or full cache folder), the
index is kept in this process's memory instead, and the first answer says so once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Final

from memquill.errors import MemquillError, Messages, SourceError
from memquill.index._corpus import StaleNote
from memquill.index._location import UNUSABLE, index_dir, index_path, unusable_message
from memquill.index._search_index import RefreshListener, SearchIndex, stderr_notice
from memquill.query import FileType, RankedHit, RankParams, SearchDocument

IN_MEMORY: Final = ":memory:"
"""``$MEMQUILL_INDEX_DIR`` (or ``folder``) value that keeps every index in process memory."""


class IndexSearcher:
    """Ranks through each workspace's persistent index (the query engine's ``Searcher``).

    Args:
        folder: where index files go (default: ``$MEMQUILL_INDEX_DIR``, else the user cache;
            ``":memory:"`` keeps them in this process only).
        notice: told, in words, about long work (default: printed on stderr).
        watch: learn of changes from the operating system between searches.
        racy_seconds: see :class:`SearchIndex`.
    """

    def __init__(
        self,
        folder: Path | str | None = None,
        *,
        notice: Callable[[str], None] | None = stderr_notice,
        watch: bool = True,
        racy_seconds: float = 2.0,
    ) -> None:
        self._folder = folder
        self._notice = notice
        self._watch = watch
        self._racy = racy_seconds
        self._indexes: dict[Path, SearchIndex] = {}
        self._lock = threading.Lock()
        self._fallback: str | None = None
        self._listener: RefreshListener | None = None

    def on_refresh(self, listener: RefreshListener | None) -> None:
        """Tell ``listener`` of every refresh of every index here that read or removed notes
        (see :class:`SearchIndex`; ``None``: nobody, those notes' vectors are deleted)."""
        with self._lock:
            self._listener = listener
            for index in self._indexes.values():
                index.listener = listener

    def index(self, root: Path) -> SearchIndex:
        """The index of the canonical workspace ``root`` (opened on first use)."""
        with self._lock:
            found = self._indexes.get(root)
            if found is None:
                location = self._location(root)
                found = SearchIndex(
                    root,
                    location=location,
                    notice=self._notice,
                    watch=self._watch,
                    racy_seconds=self._racy,
                    listener=self._listener,
                )
                self._indexes[root] = found
            return found

    def search(
        self,
        root: Path,
        query: str,
        *,
        records: Sequence[SearchDocument],
        now: datetime,
        tags: Sequence[str],
        file_type: FileType,
        params: RankParams,
        candidates: int,
    ) -> tuple[list[RankedHit], tuple[str, ...]]:
        """Rank through ``root``'s index (see :meth:`SearchIndex.search`)."""

        def ranked(index: SearchIndex) -> tuple[list[RankedHit], tuple[str, ...]]:
            return index.search(
                query,
                records=records,
                now=now,
                tags=tags,
                file_type=file_type,
                params=params,
                candidates=candidates,
            )

        index = self.index(root)
        try:
            return ranked(index)
        except StaleNote:
            # Notes kept changing under every attempt: say so rather than mix versions.
            raise SourceError(Messages.SOURCE_READ_FAILED) from None
        except UNUSABLE as error:
            if index.path is None or isinstance(error, MemquillError):
                raise
            # The file cannot be used (read-only folder, disk full): keep this workspace's
            # index in memory from now on, and say so once.
            with self._lock:
                index.close()
                memory = SearchIndex(
                    root,
                    location=IN_MEMORY,
                    notice=self._notice,
                    watch=self._watch,
                    racy_seconds=self._racy,
                    listener=self._listener,
                )
                self._indexes[root] = memory
            hits, warnings = ranked(memory)
            note = f"{Messages.INDEX_IN_MEMORY} {unusable_message(error)}"
            return hits, (note, *warnings)

    def close(self) -> None:
        """Close every open index."""
        with self._lock:
            for index in self._indexes.values():
                index.close()
            self._indexes.clear()

    def _location(self, root: Path) -> Path | str:
        folder = self._folder
        if folder is None:
            folder = index_dir()
        if str(folder) == IN_MEMORY:
            return IN_MEMORY
        return index_path(root, Path(folder))
