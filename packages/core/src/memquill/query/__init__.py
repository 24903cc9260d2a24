"""Deterministic keyword retrieval over a workspace: ``search``, ``get`` and ``recent``.

:class:`MemoryQuery` reads the user's notes and the store's active records (as projections
``memory/records/<id>.md``), ranks them and pages through sources; it takes validated argument
models and returns result models, which the renderers word exactly as the tools show them.
It never writes.

Names are imported on first use (:func:`memquill.lazy.lazy_exports`), so a layer above that
needs one of them loads only that name's module. ``__all__`` is what the CLI, the adapters and
users import; the other names are what the index, tools, items and the layers above import
(silently from inside memquill, with a ``DeprecationWarning`` from anywhere else).
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.foundation.text import path_key as path_key
    from memquill.query._args import (
        GetArgs,
        RecentArgs,
        SearchArgs,
        parse_args,
        utf16_bounds as utf16_bounds,
        validation_message as validation_message,
    )
    from memquill.query._counts import count_words as count_words, split_words as split_words
    from memquill.query._dates import (
        MonthKey as MonthKey,
        month_matches as month_matches,
        path_day as path_day,
        query_months as query_months,
    )
    from memquill.query._documents import (
        SearchDocument as SearchDocument,
        note_document as note_document,
        record_document as record_document,
    )
    from memquill.query._engine import SNIPPET_UNITS as SNIPPET_UNITS, MemoryQuery
    from memquill.query._file_type import FileType
    from memquill.query._listing import list_folder as list_folder
    from memquill.query._markdown import (
        CHUNK_OVERLAP as CHUNK_OVERLAP,
        CHUNK_SIZE as CHUNK_SIZE,
        heading_text as heading_text,
        note_meta as note_meta,
        window_bounds as window_bounds,
    )
    from memquill.query._models import (
        GetResult as GetResult,
        RecentResult as RecentResult,
        ResultT as ResultT,
        SearchHit as SearchHit,
        SearchResult as SearchResult,
    )
    from memquill.query._plain import (
        MAX_SEARCH_LIMIT,
        FoundHit as FoundHit,
        SearchAnswer,
        SearchRequest as SearchRequest,
        search_request,
    )
    from memquill.query._rank import (
        CANDIDATES as CANDIDATES,
        Corpus as Corpus,
        day_factor as day_factor,
        idf as idf,
        matches_filters as matches_filters,
        month_gain as month_gain,
        rank,
    )
    from memquill.query._rank_model import (
        Posting as Posting,
        RankDocument as RankDocument,
        RankedHit as RankedHit,
        RankParams as RankParams,
    )
    from memquill.query._render import (
        render_get as render_get,
        render_recent as render_recent,
        render_search,
        score_value as score_value,
    )
    from memquill.query._scan import (
        ScanBudget as ScanBudget,
        admit as admit,
        walk_workspace as walk_workspace,
    )
    from memquill.query._scanconfig import (
        ScanConfig as ScanConfig,
        load_scan_config as load_scan_config,
    )
    from memquill.query._stemmer import STEMMER_VERSION as STEMMER_VERSION
    from memquill.query._tokens import (
        TOKENIZER_VERSION,
        camel_free as camel_free,
        fold as fold,
        is_cjk as is_cjk,
        query_terms as query_terms,
        tokenize as tokenize,
        words as words,
    )
    from memquill.query._walk import Walk as Walk, WalkedFile as WalkedFile
    from memquill.query._walk_cache import (
        DocumentCache as DocumentCache,
        FolderListing as FolderListing,
        Identity as Identity,
        PreviousWalk as PreviousWalk,
        file_identity as file_identity,
    )

__all__ = [
    "MAX_SEARCH_LIMIT",
    "TOKENIZER_VERSION",
    "FileType",
    "GetArgs",
    "MemoryQuery",
    "RecentArgs",
    "SearchAnswer",
    "SearchArgs",
    "parse_args",
    "rank",
    "render_search",
    "search_request",
]

__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "CANDIDATES": "memquill.query._rank",
        "CHUNK_OVERLAP": "memquill.query._markdown",
        "CHUNK_SIZE": "memquill.query._markdown",
        "MAX_SEARCH_LIMIT": "memquill.query._plain",
        "Corpus": "memquill.query._rank",
        "DocumentCache": "memquill.query._walk_cache",
        "FileType": "memquill.query._file_type",
        "FolderListing": "memquill.query._walk_cache",
        "FoundHit": "memquill.query._plain",
        "GetArgs": "memquill.query._args",
        "GetResult": "memquill.query._models",
        "Identity": "memquill.query._walk_cache",
        "MemoryQuery": "memquill.query._engine",
        "MonthKey": "memquill.query._dates",
        "Posting": "memquill.query._rank_model",
        "PreviousWalk": "memquill.query._walk_cache",
        "RankDocument": "memquill.query._rank_model",
        "RankParams": "memquill.query._rank_model",
        "RankedHit": "memquill.query._rank_model",
        "RecentArgs": "memquill.query._args",
        "RecentResult": "memquill.query._models",
        "ResultT": "memquill.query._models",
        "SNIPPET_UNITS": "memquill.query._engine",
        "STEMMER_VERSION": "memquill.query._stemmer",
        "ScanBudget": "memquill.query._scan",
        "ScanConfig": "memquill.query._scanconfig",
        "SearchAnswer": "memquill.query._plain",
        "SearchArgs": "memquill.query._args",
        "SearchDocument": "memquill.query._documents",
        "SearchHit": "memquill.query._models",
        "SearchRequest": "memquill.query._plain",
        "SearchResult": "memquill.query._models",
        "TOKENIZER_VERSION": "memquill.query._tokens",
        "Walk": "memquill.query._walk",
        "WalkedFile": "memquill.query._walk",
        "admit": "memquill.query._scan",
        "camel_free": "memquill.query._tokens",
        "count_words": "memquill.query._counts",
        "day_factor": "memquill.query._rank",
        "file_identity": "memquill.query._walk_cache",
        "fold": "memquill.query._tokens",
        "heading_text": "memquill.query._markdown",
        "idf": "memquill.query._rank",
        "is_cjk": "memquill.query._tokens",
        "list_folder": "memquill.query._listing",
        "load_scan_config": "memquill.query._scanconfig",
        "matches_filters": "memquill.query._rank",
        "month_gain": "memquill.query._rank",
        "month_matches": "memquill.query._dates",
        "note_document": "memquill.query._documents",
        "note_meta": "memquill.query._markdown",
        "parse_args": "memquill.query._args",
        "path_day": "memquill.query._dates",
        "path_key": "memquill.foundation.text",
        "query_months": "memquill.query._dates",
        "query_terms": "memquill.query._tokens",
        "rank": "memquill.query._rank",
        "record_document": "memquill.query._documents",
        "render_get": "memquill.query._render",
        "render_recent": "memquill.query._render",
        "render_search": "memquill.query._render",
        "score_value": "memquill.query._render",
        "search_request": "memquill.query._plain",
        "split_words": "memquill.query._counts",
        "tokenize": "memquill.query._tokens",
        "utf16_bounds": "memquill.query._args",
        "validation_message": "memquill.query._args",
        "walk_workspace": "memquill.query._scan",
        "window_bounds": "memquill.query._markdown",
        "words": "memquill.query._tokens",
        "PAGE_UNITS": "memquill.query._engine",
        "HitKind": "memquill.query._models",
        "RecentSection": "memquill.query._models",
        "Searcher": "memquill.query._engine",
        "SectionKind": "memquill.query._models",
    },
)
