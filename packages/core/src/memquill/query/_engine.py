"""The read tools' core: ``search``, ``get`` and ``recent`` over one workspace.

:class:`MemoryQuery` is meant to live as long as its host (an MCP server, an agent): it keeps
analysed notes and records between calls, so a repeated search reads only what changed. Every
method takes its already-validated argument model (:mod:`memquill.query._args`), raises a
:class:`~memquill.errors.MemquillError` for a failure, and returns the answer as data;
:mod:`memquill.query._render` words it (spec 6.5–6.7).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

from memquill.errors import MemquillError
from memquill.foundation.text import utf16_len, utf16_slice
from memquill.paths import (
    canonical_workspace,
    normalize_relative,
    os_errors_as_source,
    read_workspace_file,
    source_error,
)
from memquill.query._documents import WORKSPACE_FILE, SearchDocument, record_document
from memquill.query._excerpt import build_excerpt
from memquill.query._markdown import wiki_links
from memquill.query._plain import FileType, FoundHit, SearchAnswer, SearchRequest
from memquill.query._rank import Corpus, RankedHit, RankParams, matches_filters, rank
from memquill.query._recent import collect_recent, records_unavailable
from memquill.query._render import score_value
from memquill.query._scan import scan_workspace
from memquill.query._scanconfig import load_scan_config
from memquill.query._walk import DocumentCache
from memquill.store import ProjectedRecord, RecordStore, conflict_notice

if TYPE_CHECKING:
    from memquill.query._args import GetArgs, RecentArgs, SearchArgs
    from memquill.query._models import GetResult, RecentResult, SearchResult

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
        records: Sequence[SearchDocument],
        now: datetime,
        tags: Sequence[str],
        file_type: FileType,
        params: RankParams,
        candidates: int,
    ) -> tuple[list[RankedHit], tuple[str, ...]]:
        """The best ``candidates`` hits and the warnings the full scan would give."""
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
        with os_errors_as_source(), self._lock:
            if self._searcher is not None:
                records, unavailable = self._record_documents()
                ranked, found = self._searcher.search(
                    root,
                    args.query,
                    records=records,
                    now=self._now(),
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
                    now=self._now(),
                    tags=tags,
                    file_type=args.file_type,
                    params=self._params,
                    candidates=args.limit,
                )
                found = scan.warnings
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
            source=record.provenance if record is not None else WORKSPACE_FILE,
            kind="record" if record is not None else "note",
            record_id=record.id if record is not None else None,
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
            return collect_recent(root, self._store, args.days)

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

    def _projected(self, path: str) -> ProjectedRecord | None:
        if not path.startswith(_RECORDS_PREFIX):
            return None
        try:
            return self._store.projection().by_path(path)
        except (MemquillError, OSError):
            # Unreadable managed memory: the path is private, and the safe reader says so.
            return None

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
