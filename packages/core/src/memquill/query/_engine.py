"""The read tools' core: ``search``, ``get`` and ``recent`` over one workspace.

:class:`MemoryQuery` is meant to live as long as its host (an MCP server, an agent): it keeps
analysed notes and records between calls, so a repeated search reads only what changed. Every
method takes its already-validated argument model (:mod:`memquill.query._models`), raises a
:class:`~memquill.errors.MemquillError` for a failure, and returns the answer as data;
:mod:`memquill.query._render` words it (spec 6.5–6.7).

``recent`` (:func:`collect_recent`) is what to review at the start of a conversation
(spec 6.7):

1. Long-term memory: the first existing of ``memory.md``, ``Memory.md``, ``MEMORY.md``,
   ``longterm/summary.md`` (trimmed, cut to 500 units).
2. The newest ``days`` daily files of ``memory/daily`` (or, when that folder does not exist,
   ``daily``), newest first (trimmed, cut to 800 units; an empty file still takes its slot).
3. The active records, newest first (a deliberate change: the original listed them oldest
   first, so the 12,000-unit cut dropped the newest), cut to 500 units; no more of them than
   the cut can show (:data:`RECENT_RECORDS`), so a workspace of 100,000 facts is neither read
   whole nor sent whole as the structured result.

A file or folder that cannot be read becomes a warning; the rest is still shown.
"""

from __future__ import annotations

import functools
import heapq
import os
import re
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

from memquill.errors import AccessDeniedError, CorruptError, MemquillError, Messages
from memquill.foundation.text import utf16_cut, utf16_len, utf16_slice
from memquill.paths import (
    canonical_workspace,
    normalize_relative,
    os_errors_as_source,
    read_workspace_file,
    relative_inside,
    source_error,
)
from memquill.query._documents import WORKSPACE_FILE, SearchDocument, record_document
from memquill.query._excerpt import build_excerpt
from memquill.query._markdown import wiki_links
from memquill.query._plain import FileType, FoundHit, SearchAnswer, SearchRequest
from memquill.query._rank import (
    Corpus,
    RankedHit,
    RankParams,
    matches_filters,
    rank,
    records_admitted,
)
from memquill.query._render import RESPONSE_UNITS, score_value
from memquill.query._scan import scan_workspace
from memquill.query._scanconfig import load_scan_config
from memquill.query._walk import DocumentCache
from memquill.store import PostgresLocation, RecordStore, conflict_notice, provenance_line

if TYPE_CHECKING:
    from memquill.query._database import CandidateRecords, RecordSource
    from memquill.query._models import (
        GetArgs,
        GetResult,
        RecentArgs,
        RecentResult,
        RecentSection,
        SearchArgs,
        SearchResult,
    )


PAGE_UNITS: Final = 3000
"""A ``get`` page, in UTF-16 units."""
SNIPPET_UNITS: Final = 300
"""A search snippet, in UTF-16 units."""
_RECORDS_PREFIX: Final = "memory/records/"


class Searcher(Protocol):
    """Ranks a workspace's notes (and the given records) exactly as the full scan would.

    A search index (:class:`memquill.index.IndexSearcher`) is one: it answers from stored
    figures instead of reading every note on every search.
    """

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
        """The best ``candidates`` hits and the warnings the full scan would give
        (``records``: the active records, or what makes them once the notes' figures are
        read)."""
        ...


class MemoryQuery:
    """Search, read and review one workspace's memory.

    Args:
        workspace: absolute path of the workspace folder.
        store: the records store to project active records from (one is made if omitted).
        now: the clock decay is measured from (UTC); injectable for tests.
        cache: keep analysed notes between calls (results are identical either way); a
            :class:`~memquill.query.DocumentCache` may be given to tune it.
        params: ranking constants (see :class:`memquill.query.RankParams`).
        searcher: rank through this (a search index) instead of scanning every note; the
            full scan stays the reference it must match byte for byte.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        store: RecordStore | None = None,
        now: Callable[[], datetime] | None = None,
        cache: bool | DocumentCache = True,
        params: RankParams | None = None,
        searcher: Searcher | None = None,
    ) -> None:
        self._workspace = os.fspath(workspace)
        self._searcher = searcher
        self._store = store or RecordStore(self._workspace)
        self._now = now or (lambda: datetime.now(UTC))
        self._cache = (
            cache if isinstance(cache, DocumentCache) else DocumentCache() if cache else None
        )
        self._params = params or RankParams()
        self._records: dict[tuple[str, str], SearchDocument] = {}
        self._corpus: Corpus | None = None
        self._lock = threading.Lock()

    @property
    def workspace(self) -> str:
        """The workspace path as given."""
        return self._workspace

    @property
    def searcher(self) -> Searcher | None:
        """What ranks instead of the full scan (a search index), if anything."""
        return self._searcher

    def search(self, args: SearchArgs) -> SearchResult:
        """Find memories matching ``args.query`` (spec 6.3/6.5, ranked as DESIGN.md §4).

        Raises:
            MemquillError: the workspace cannot be used (unreadable folder, bad path).
        """
        from memquill.query._models import SearchHit, SearchResult

        answer = self.answer(args)
        hits = tuple(SearchHit.model_validate(hit.as_data()) for hit in answer.hits)
        return SearchResult(hits=hits, warnings=answer.warnings)

    def answer(self, args: SearchArgs | SearchRequest) -> SearchAnswer:
        """:meth:`search`, answered as plain data: the same hits and warnings, without the
        result models (a process that searches once never loads pydantic; issue 36).

        Raises:
            MemquillError: the workspace cannot be used (unreadable folder, bad path).
        """
        root = canonical_workspace(self._workspace)
        tags = tuple(args.tags or ())
        source: _DatabaseRecords | None = None
        unavailable: str | None = None
        now = self._now()
        with os_errors_as_source(), self._lock:
            if self._searcher is not None:
                source = self._record_source(args, tags, now)
                records: Sequence[SearchDocument] | RecordSource = source or ()
                if source is None:
                    records, unavailable = self._record_documents()
                ranked, found = self._searcher.search(
                    root,
                    args.query,
                    records=records,
                    now=now,
                    tags=tags,
                    file_type=args.file_type,
                    params=self._params,
                    candidates=args.limit,
                )
            else:
                scan = scan_workspace(root, self._cache)
                records, unavailable = self._record_documents()
                corpus = self._corpus_of((*scan.documents, *records))
                ranked = rank(
                    corpus,
                    args.query,
                    now=now,
                    tags=tags,
                    file_type=args.file_type,
                    params=self._params,
                    candidates=args.limit,
                )
                found = scan.warnings
            if source is not None:
                unavailable = source.unavailable
        # Missing remembered facts come first: the answer without them is not the whole truth.
        warnings = [f"Managed memory unavailable: {unavailable}"] if unavailable else []
        waiting = conflict_notice(self._store.conflict_copies())
        if waiting is not None:
            warnings.append(waiting)
        warnings.extend(found)
        hits = tuple(_hit(rank_, hit) for rank_, hit in enumerate(ranked[: args.limit], 1))
        return SearchAnswer(hits=hits, warnings=tuple(dict.fromkeys(warnings)))

    def get(self, args: GetArgs) -> GetResult:
        """Read a workspace source or an active record's projection, one page at a time.

        ``args.char_start`` is a UTF-16 offset within the selected lines (``next_char_start``
        of the previous page).

        Raises:
            AccessDeniedError: the path is absolute, escapes the workspace, is private (memquill's
                own or a credential file) or is not a note.
            SourceError: the source is missing, unreadable, not a regular file or too large.
        """
        from memquill.query._models import GetResult

        path = normalize_relative(args.file_path)
        root = canonical_workspace(self._workspace)
        record = self._projected(path)
        if record is not None:
            content = record.content
        else:
            # Only what search reads: the notes of the scan settings' extensions.
            notes = load_scan_config(root).extensions
            with os_errors_as_source():
                content = read_workspace_file(root, path, extensions=notes)
        lines = content.split("\n")
        first = args.line_start or 1
        selected = "\n".join(lines[first - 1 : args.line_end])
        offset = args.char_start or 0
        page, next_start = _page(selected, offset)
        return GetResult(
            path=path,
            line_start=first,
            line_end=args.line_end,
            char_start=offset,
            content=page,
            next_char_start=next_start,
            links=wiki_links(page),
            line_count=content.count("\n") + (not content.endswith("\n") and bool(content)),
            source=record.source if record is not None else WORKSPACE_FILE,
            kind="record" if record is not None else "note",
            record_id=record.record_id if record is not None else None,
            record_revision=record.record_revision if record is not None else None,
            key=record.key if record is not None else None,
        )

    def recent(self, args: RecentArgs) -> RecentResult:
        """Long-term memory, the newest ``args.days`` daily files and every active record.

        Active records come newest first, each with its record revision in the provenance.

        Raises:
            MemquillError: the workspace cannot be used.
        """
        root = canonical_workspace(self._workspace)
        with os_errors_as_source():
            return collect_recent(root, self._newest, args.days)

    def documents(
        self, args: SearchArgs | SearchRequest
    ) -> tuple[tuple[SearchDocument, ...], frozenset[str]]:
        """Every document a search may return, and the paths ``args``' filters admit.

        The documents are the scanned notes (within the scan's budgets) and the active
        records, exactly what the full scan ranks: optional semantic recall compares them with
        the query. Records that cannot be read are left out (the search itself says why).

        Raises:
            MemquillError: the workspace cannot be used.
        """
        root = canonical_workspace(self._workspace)
        tags = frozenset(tag.lower().removeprefix("#") for tag in args.tags or ())
        with os_errors_as_source(), self._lock:
            scan = scan_workspace(root, self._cache)
            records, _ = self._record_documents()
        documents = (*scan.documents, *records)
        admitted = frozenset(d.path for d in documents if matches_filters(d, args.file_type, tags))
        return documents, admitted

    # -- internals -------------------------------------------------------------------------

    def _projected(self, path: str) -> SearchDocument | None:
        """The active record whose projection is ``path`` (read by its id alone from a
        database workspace past its bound), if any."""
        if not path.startswith(_RECORDS_PREFIX):
            return None
        try:
            database = self._in_database()
            if database is not None:
                from memquill.query._database import database_record

                found = database_record(*database, path)
                if found is not False:
                    return found
            record = self._store.projection().by_path(path)
        except (MemquillError, OSError):
            # Unreadable managed memory: the path is private, and the safe reader says so.
            return None
        if record is None:
            return None
        return self._records.get((record.id, record.record_revision)) or record_document(record)

    def _newest(self, count: int) -> list[RecentSection]:
        """The ``count`` active records created last, newest first (read alone from a
        database workspace past its bound; ties: the later in file order first).

        Raises:
            MemquillError: the records cannot be read.
            OSError: the records file cannot be read.
        """
        database = self._in_database()
        if database is not None:
            from memquill.query._database import database_newest

            found = database_newest(*database, count)
            if found is not False:
                return [
                    _fact(
                        record.projection_path,
                        record.content,
                        provenance_line(record.id, record.key, record.source, revision),
                        record.id,
                        revision,
                        record.key,
                    )
                    for record, revision in found
                ]
        records = self._store.projection().records
        newest = heapq.nlargest(
            count, range(len(records)), key=lambda at: (records[at].created_at, at)
        )
        return [
            _fact(r.path, r.content, r.provenance, r.id, r.record_revision, r.key)
            for r in (records[at] for at in newest)
        ]

    def _in_database(self) -> tuple[PostgresLocation, bytes] | None:
        """The location and identity of a database workspace past its bound, whose records
        are asked of the server (:mod:`memquill.query._database`); ``None``: project every
        record here (a file, or a small workspace).

        Raises:
            StorageError: the database cannot be reached or read.
        """
        location = getattr(self._store.backend, "location", None)
        if not isinstance(location, PostgresLocation):
            return None
        from memquill.query._database import searched_in_database

        identity = searched_in_database(location)
        return None if identity is None else (location, identity)

    def _record_source(
        self, args: SearchArgs | SearchRequest, tags: Sequence[str], now: datetime
    ) -> _DatabaseRecords | None:
        """The records of a database workspace past its bound, as the server's candidates;
        ``None``: project every record here (also for a database that cannot be reached:
        the projection then says why)."""
        try:
            database = self._in_database()
        except MemquillError:
            return None
        if database is None:
            return None
        from memquill.query._database import database_records

        candidates = functools.partial(
            database_records,
            *database,
            args.query,
            depth=max(self._params.rerank_depth, args.limit),
            now=now,
            params=self._params,
            tags=frozenset(tag.lower().removeprefix("#") for tag in tags),
            admitted=records_admitted(args.file_type),
        )
        return _DatabaseRecords(candidates, self._record_documents)

    def _record_documents(self) -> tuple[tuple[SearchDocument, ...], str | None]:
        try:
            projection = self._store.projection()
        except MemquillError as error:
            return (), records_unavailable(error)
        except OSError as error:
            return (), source_error(error).message
        known = self._records
        current: dict[tuple[str, str], SearchDocument] = {}
        for record in projection.records:
            key = (record.id, record.record_revision)
            current[key] = known.get(key) or record_document(record)
        self._records = current
        return tuple(current.values()), None

    def _corpus_of(self, documents: tuple[SearchDocument, ...]) -> Corpus:
        cached = self._corpus
        if (
            cached is not None
            and len(cached.documents) == len(documents)
            and all(a is b for a, b in zip(cached.documents, documents, strict=True))
        ):
            return cached
        corpus = Corpus(documents)
        if self._cache is not None:
            self._corpus = corpus
        return corpus


class _DatabaseRecords:
    """A :class:`~memquill.query._database.RecordSource` of a database workspace's
    ``candidates`` (or, when the server says to rank every record here, ``project``'s), and
    what made the records unavailable, if anything did."""

    def __init__(
        self,
        candidates: Callable[..., CandidateRecords | None],
        project: Callable[[], tuple[tuple[SearchDocument, ...], str | None]],
    ) -> None:
        self._candidates = candidates
        self._project = project
        self.unavailable: str | None = None

    def __call__(self, notes: int, holding: Callable[[str], int]) -> Corpus:
        self.unavailable = None
        try:
            found = self._candidates(notes=notes, holding=holding)
        except MemquillError as error:
            self.unavailable = records_unavailable(error)
            return Corpus(())
        if found is not None:
            return found
        documents, self.unavailable = self._project()
        return Corpus(documents)


def _hit(position: int, ranked: RankedHit) -> FoundHit:
    document = ranked.document
    excerpt = build_excerpt(document.lines(), ranked.terms, SNIPPET_UNITS)
    return FoundHit(
        rank=position,
        path=document.path,
        line=excerpt.line + 1,
        score=score_value(ranked.score),
        heading=excerpt.heading,
        snippet=excerpt.text,
        source=document.source,
        kind=document.kind,
        record_id=document.record_id,
        record_revision=document.record_revision,
        key=document.key,
    )


def _page(selected: str, char_start: int) -> tuple[str, int | None]:
    """The page at ``char_start`` and where the next one starts (``None``: this is the last)."""
    if selected.isascii():
        page = selected[char_start : char_start + PAGE_UNITS]
        end = char_start + len(page)
        return page, end if end < len(selected) else None
    page = utf16_slice(selected, char_start, char_start + PAGE_UNITS)
    end = utf16_len(utf16_slice(selected, 0, char_start + PAGE_UNITS))
    return page, end if end < utf16_len(selected) else None


LONGTERM_CANDIDATES: Final = ("memory.md", "Memory.md", "MEMORY.md", "longterm/summary.md")
DAILY_FOLDERS: Final = ("memory/daily", "daily")
DAILY_NAME: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\.md")
LONGTERM_UNITS: Final = 500
DAILY_UNITS: Final = 800
RECORD_UNITS: Final = 500
RECENT_RECORDS: Final = -(-RESPONSE_UNITS // len("Source: memory/records/.md ()\n\n\n"))
"""The most records ``recent`` can show: a record's part of the text is never shorter than
that line (and the blank line before the next), so the record after this many starts past
the 12,000-unit cut. ``recent`` reads and returns no more (375)."""
# JavaScript's String.prototype.trim removes these (Python's strip differs at the edges).
_JS_SPACE: Final = (
    " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def records_unavailable(error: MemquillError) -> str:
    """Why remembered facts are missing from an answer; for a corrupt file, what to run."""
    if isinstance(error, CorruptError):
        return f"{error.message} {Messages.REPAIR_HINT}"
    return error.message


def collect_recent(
    root: Path, newest: Callable[[int], list[RecentSection]], days: int
) -> RecentResult:
    """Build the recent-memory review of the workspace ``root``.

    Args:
        root: the canonical workspace.
        newest: its newest active records, as many as asked for, newest first (raises
            :class:`MemquillError` or :class:`OSError` when they cannot be read).
        days: how many daily files (newest first).
    """
    # The models load with a review: a search never loads pydantic.
    from memquill.query._models import RecentResult

    sections: list[RecentSection] = []
    warnings: list[str] = []
    longterm = _longterm(root, warnings)
    if longterm is not None:
        sections.append(longterm)
    sections.extend(_daily(root, days, warnings))
    unavailable: str | None = None
    try:
        sections.extend(newest(RECENT_RECORDS))
    except MemquillError as error:
        unavailable = records_unavailable(error)
    except OSError as error:
        unavailable = source_error(error).message
    return RecentResult(
        sections=tuple(sections), warnings=tuple(warnings), managed_unavailable=unavailable
    )


def _fact(
    path: str, text: str, provenance: str, record_id: str, revision: str, key: str | None
) -> RecentSection:
    """An active record's part of ``recent``."""
    from memquill.query._models import RecentSection

    content, cut = utf16_cut(text, RECORD_UNITS)
    return RecentSection(
        kind="record",
        path=path,
        content=content,
        truncated=cut,
        source=provenance,
        record_id=record_id,
        record_revision=revision,
        key=key,
    )


def _longterm(root: Path, warnings: list[str]) -> RecentSection | None:
    from memquill.query._models import RecentSection

    for path in LONGTERM_CANDIDATES:
        # Existence follows symlinks: a broken link counts as absent, as in the original.
        if not os.path.exists(root / path):
            continue
        try:
            text = read_workspace_file(root, path).strip(_JS_SPACE)
        except MemquillError as error:
            warnings.append(f"Skipped {path}: {error.message}")
            continue
        if not text:
            return None
        content, cut = utf16_cut(text, LONGTERM_UNITS)
        return RecentSection(kind="longterm", path=path, content=content, truncated=cut)
    return None


def _daily(root: Path, days: int, warnings: list[str]) -> list[RecentSection]:
    from memquill.query._models import RecentSection

    folder = DAILY_FOLDERS[0] if os.path.exists(root / DAILY_FOLDERS[0]) else DAILY_FOLDERS[1]
    if not os.path.exists(root / folder):
        return []
    try:
        real = os.path.realpath(root / folder)
        if relative_inside(root, real) is None:
            raise AccessDeniedError(Messages.DAILY_OUTSIDE)
        names = sorted(name for name in os.listdir(real) if DAILY_NAME.fullmatch(name))
    except MemquillError as error:
        warnings.append(f"Skipped daily memory: {error.message}")
        return []
    except OSError as error:
        warnings.append(f"Skipped daily memory: {source_error(error).message}")
        return []
    sections: list[RecentSection] = []
    for name in reversed(names[-days:]):
        path = f"{folder}/{name}"
        try:
            text = read_workspace_file(root, path).strip(_JS_SPACE)
        except MemquillError as error:
            warnings.append(f"Skipped {path}: {error.message}")
            continue
        if text:
            content, cut = utf16_cut(text, DAILY_UNITS)
            sections.append(RecentSection(kind="daily", path=path, content=content, truncated=cut))
    return sections
