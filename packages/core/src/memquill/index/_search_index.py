""":class:`SearchIndex`: one workspace's persistent search index, kept current and queried;
:class:`IndexSearcher`: the query engine's way to rank through such indexes.

The index is only a cache: the notes stay the truth, the file can be deleted at any time,
and a damaged one is set aside and rebuilt (with a warning), never read. Before each answer
it is brought up to date with the files (:mod:`._sync`); ranking is
:func:`memquill.query._rank.rank` itself, over :class:`._corpus.IndexedCorpus`.

One retry rule (:func:`retried`): after a recoverable failure (a note that changed while it
was read, a damaged file set aside) the work is tried again a fixed number of times, and the
last attempt's error propagates unchanged.

An :class:`IndexSearcher` keeps one :class:`SearchIndex` per canonical workspace for as long as
it lives (a session, a server). When the index file cannot be used at all (a read-only or full
cache folder), the index is kept in this process's memory instead, and the first answer says
so once.
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Generator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Final, TypeVar

from memquill.errors import MemquillError, Messages, SourceError
from memquill.index._corpus import IndexedCorpus, StaleNote
from memquill.index._db import (
    IndexDamaged,
    IndexDatabase,
    IndexOutdated,
    discard_index,
    remove_index_files,
)
from memquill.index._location import (
    UNUSABLE,
    default_index_dir,
    index_dir,
    index_path,
    unusable_message,
)
from memquill.index._prune import GainFactors, bulk_module
from memquill.index._status import (
    IndexStatus,
    check_buildable,
    index_exists,
    on_disk,
    read_status,
)
from memquill.index._sync import Progress, SyncReport
from memquill.index._tracker import ChangeTracker
from memquill.index._view import NoteTable, PostingsReader
from memquill.owner_only import private_folder
from memquill.query import (
    CANDIDATES,
    Corpus,
    FileType,
    RankedHit,
    RankParams,
    RecordSource,
    ScanBudget,
    SearchDocument,
    load_scan_config,
    rank,
    walk_workspace,
)

DAMAGED_WARNING: Final = "The search index was damaged; it has been rebuilt from the notes."
NOTICE_FROM: Final = 2000
"""Analysing this many notes before an answer is announced (on stderr by default)."""
_ATTEMPTS: Final = 5
"""Reads of one search while notes keep changing under it (each attempt first catches up;
processes sharing an index under churn met a new change on each of three on a loaded machine)."""
_LOGGER: Final = "memquill.index"
IN_MEMORY: Final = ":memory:"
"""``$MEMQUILL_INDEX_DIR`` (or ``folder``) value that keeps every index in process memory."""

RefreshListener = Callable[[Path, SyncReport], None]
"""Told ``(root, report)`` after a refresh that read or removed notes (semantic recall embeds
the new chunks then). It must not raise: indexing and keyword search never wait on it."""


def stderr_notice(message: str) -> None:
    """Print a notice about long work on stderr (stdout may be a protocol stream)."""
    print(message, file=sys.stderr, flush=True)


class SearchIndex:
    """The search index of one workspace.

    Args:
        root: the canonical workspace.
        location: the index file; ``None`` for the default place (see
            :func:`memquill.index.index_path`); ``":memory:"`` keeps it in this process only.
        notice: told, in words, about long work (default: printed on stderr).
        workers: worker processes for large analyses (default: the usable cores).
        racy_seconds: a note indexed within this time of its last change is read again
            (two edits inside the file system's timestamp granularity can keep its identity).
        watch: between searches, learn of changes from the operating system (where it can
            tell reliably) instead of walking every folder again.
        listener: told of every refresh that read or removed notes, once per refresh, after
            it (outside the index's lock). Without one, the vectors semantic recall keeps for
            those notes are deleted then (``_vectors_file.forget_note_vectors``): a
            deleted or changed note's vectors never outlive the refresh that sees it; a
            listener (:class:`~memquill.semantic.SemanticRanker`) takes that over, keeping
            the vectors of chunks that did not change.
    """

    def __init__(
        self,
        root: Path,
        *,
        location: Path | str | None = None,
        notice: Callable[[str], None] | None = stderr_notice,
        workers: int | None = None,
        racy_seconds: float = 2.0,
        watch: bool = True,
        listener: RefreshListener | None = None,
    ) -> None:
        self.root = root
        self.listener = listener
        self._told: SyncReport | None = None
        self._racy_ns = int(racy_seconds * 1e9)
        self.path: Path | None = (
            None if location == ":memory:" else Path(location) if location else index_path(root)
        )
        self._notice = notice
        self._workers = workers
        self._db: IndexDatabase | None = None
        self._notes = NoteTable()
        self._reader = PostingsReader(self._notes)
        self._factors = GainFactors()
        self._lock = threading.RLock()
        self._warnings: list[str] = []
        self._records: tuple[tuple[SearchDocument, ...], Corpus] | None = None
        self._documents = OrderedDict[tuple[int, int], SearchDocument]()
        self._tracker = ChangeTracker(root, watch=watch, racy_ns=self._racy_ns)

    # -- public ----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        records: Sequence[SearchDocument] | RecordSource = (),
        now: datetime,
        tags: Sequence[str] = (),
        file_type: FileType = "all",
        params: RankParams | None = None,
        candidates: int = CANDIDATES,
        budget: ScanBudget | None = None,
    ) -> tuple[list[RankedHit], tuple[str, ...]]:
        """Bring the index up to date, then rank as :func:`memquill.query._rank.rank` would.

        ``records`` are the active records ranked beside the notes, or what makes them once
        the notes' figures are read (a database workspace's: only those that can rank).

        Returns:
            The hits and the warnings a full scan would give (plus one if the index had to be
            rebuilt).
        """
        params = params or RankParams()
        wanted = frozenset(tag.lower().removeprefix("#") for tag in tags)

        def attempt() -> tuple[SyncReport, list[RankedHit]]:
            report = self._refresh(budget, None)
            with self._reading() as connection:
                if callable(records):
                    reader = self._reader

                    def holding(term: str) -> int:
                        return len(reader.postings(connection, term).ids)

                    record_corpus = records(len(self._notes), holding)
                else:
                    record_corpus = self._record_corpus(tuple(records))
                corpus = IndexedCorpus(
                    self.root,
                    connection,
                    self._notes,
                    self._reader,
                    record_corpus,
                    self._documents,
                    self._factors,
                )
                corpus.narrow(
                    query,
                    params=params,
                    now=now,
                    file_type=file_type,
                    tags=wanted,
                    depth=max(params.rerank_depth, candidates),
                    numpy=bulk_module(),
                )
                hits = rank(
                    corpus,
                    query,
                    now=now,
                    tags=tags,
                    file_type=file_type,
                    params=params,
                    candidates=candidates,
                )
            return report, hits

        with self._lock:
            # A note that changed under the read (or an index rebuilt meanwhile) is read again.
            report, hits = retried(attempt, on=StaleNote, times=_ATTEMPTS)
            warnings = (*self._take_warnings(), *report.warnings)
        self._tell(report)
        return hits, warnings

    def refresh(
        self, *, budget: ScanBudget | None = None, progress: Progress | None = None
    ) -> SyncReport:
        """Bring the index up to date with the files now (the listener is told after)."""
        report = self._refresh(budget, progress)
        self._tell(report)
        return report

    def _refresh(self, budget: ScanBudget | None, progress: Progress | None) -> SyncReport:
        def attempt() -> SyncReport:
            return self._tracker.synchronise(
                self._open(),
                self._notes,
                budget=budget or ScanBudget.default(),
                progress=progress,
                announce=self._announce,
                workers=self._workers,
            )

        with self._lock:
            return retried(
                attempt, on=IndexDamaged, times=2, recover=lambda _: self._rebuild_damaged()
            )

    def status(self, *, freshness: bool = True) -> IndexStatus:
        """What the index holds and (with ``freshness``) how far the files have moved on.

        Nothing is written: a missing index stays missing.

        Raises:
            OSError: an index that is not built yet could not be (a file is where its folder
                should be, or the folder cannot be written).
        """
        with self._lock:
            path = self.path
            exists = path is None or index_exists(path)
            size = on_disk(path) if path else 0
            if not exists:
                assert path is not None
                check_buildable(path.parent)
                return IndexStatus(path, False, 0, 0, 0, None, None, None, "")
            walk = None
            if freshness:
                walk = walk_workspace(
                    self.root, load_scan_config(self.root), self._tracker.listings
                )
            return read_status(path, self._open(), self._notes, size, walk, self._racy_ns)

    def check(self) -> list[str]:
        """Problems found reading every page, row and blob of the index (empty: sound)."""
        with self._lock:
            if self.path is not None and not self.path.exists():
                return []
            try:
                database = IndexDatabase(self.path, str(self.root))
            except IndexOutdated as error:
                return [f"outdated ({error}); it is rebuilt at the next search"]
            except IndexDamaged as error:
                return [f"damaged ({error}); it is rebuilt at the next search"]
            try:
                problems = database.check()
                if not problems:
                    from memquill.index._status import verify_blobs  # only a check reads blobs

                    problems = verify_blobs(database)
            except IndexDamaged as error:
                problems = [str(error)]
            finally:
                database.close()
            return problems

    def discard(self) -> None:
        """Delete the index file (the next search or refresh builds it again)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._reset()
            if self.path is not None:
                remove_index_files(self.path)

    def close(self) -> None:
        """Close the index file and stop watching."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._tracker.close()

    # -- internals -------------------------------------------------------------------------

    def _tell(self, report: SyncReport) -> None:
        """Tell the listener of a refresh that read or removed notes (once per report), or
        delete those notes' vectors without one."""
        with self._lock:
            if report is self._told or not (report.read or report.gone):
                return
            self._told = report
            listener = self.listener
        if listener is not None:
            listener(self.root, report)
            return
        # Loaded only once a note was read or is gone: a search of a current index never is.
        from memquill.index._vectors_file import forget_note_vectors

        try:
            forget_note_vectors(self.root, report.read | report.gone)  # what no longer holds
        except (sqlite3.Error, OSError) as error:
            # The index is current either way; a semantic search prunes the rows later and
            # never returns them meanwhile (it compares current chunks only). Only a failure
            # is logged: a search loads no ``logging``.
            import logging

            logging.getLogger(_LOGGER).warning("vectors of changed notes not deleted: %s", error)

    def _announce(self, count: int) -> None:
        if self._notice is not None and count >= NOTICE_FROM:
            self._notice(f"Indexing {count:,} notes in {self.root}…")

    def _take_warnings(self) -> list[str]:
        taken, self._warnings = self._warnings, []
        return taken

    @contextlib.contextmanager
    def _reading(self) -> Generator[sqlite3.Connection]:
        database = self._open()
        try:
            with database.reading() as connection:
                self._notes.refresh(connection)
                yield connection
        except IndexDamaged:
            self._rebuild_damaged()
            raise StaleNote("index rebuilt") from None

    def _open(self) -> IndexDatabase:
        database = self._db
        if database is not None and not database.replaced():
            return database
        if database is not None:
            database.close()
            self._reset()

        def attempt() -> IndexDatabase:
            if self.path is not None:
                folder = self.path.parent
                private_folder(folder, tighten=folder == default_index_dir())
            self._db = IndexDatabase(self.path, str(self.root))
            return self._db

        def recover(error: IndexDamaged | IndexOutdated) -> None:
            self._discard(damaged=isinstance(error, IndexDamaged))

        return retried(attempt, on=(IndexDamaged, IndexOutdated), times=2, recover=recover)

    def _rebuild_damaged(self) -> None:
        """Set aside the file this process found damaged (unless already replaced)."""
        damaged = None
        if self._db is not None:
            damaged = self._db.inode
            self._db.close()
            self._db = None
        self._discard(damaged=True, inode=damaged)

    def _discard(self, *, damaged: bool, inode: tuple[int, int] | None = None) -> None:
        """Delete the index file (under a lock, so that only one process does it).

        Another process may have replaced it meanwhile: a file that is no longer ``inode``
        (when given), or that opens cleanly (when not), is kept.
        """
        self._reset()
        path = self.path
        if path is None:
            if damaged:
                self._warnings.append(DAMAGED_WARNING)
            return
        if not discard_index(path, str(self.root), inode=inode):
            return  # another process replaced it meanwhile
        if damaged:
            self._warnings.append(DAMAGED_WARNING)

    def _reset(self) -> None:
        self._documents = OrderedDict[tuple[int, int], SearchDocument]()
        self._tracker.forget()
        self._notes = NoteTable()
        self._reader = PostingsReader(self._notes)
        self._factors = GainFactors()

    def _record_corpus(self, records: tuple[SearchDocument, ...]) -> Corpus:
        cached = self._records
        if (
            cached is not None
            and len(cached[0]) == len(records)
            and all(a is b for a, b in zip(cached[0], records, strict=True))
        ):
            return cached[1]
        corpus = Corpus(records)
        self._records = (records, corpus)
        return corpus


T = TypeVar("T")
E = TypeVar("E", bound=BaseException)


def retried(
    attempt: Callable[[], T],
    *,
    on: type[E] | tuple[type[E], ...],
    times: int,
    recover: Callable[[E], object] = lambda error: None,
) -> T:
    """``attempt()``, run up to ``times`` times while it raises ``on``.

    After each failure but the last, ``recover(error)`` runs (set a damaged file aside, say);
    the last attempt's error reaches the caller unchanged.
    """
    for _ in range(times - 1):
        try:
            return attempt()
        except on as error:
            recover(error)
    return attempt()


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
        records: Sequence[SearchDocument] | RecordSource,
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
