"""Deterministic keyword retrieval over a workspace: ``search``, ``get`` and ``recent``.

:class:`MemoryQuery` reads the user's notes and the store's active records (as projections
``memory/records/<id>.md``), ranks them and pages through sources; it takes validated argument
models and returns result models, which the renderers word exactly as the tools show them.
It never writes.

Names are imported on first use (:func:`memquill.lazy.lazy_exports`), so a layer above that needs
one of them loads only that name's module. ``__all__`` is what users import; the other names are
what the CLI, memquill's adapters, the index, tools, items and the layers above import (silently
from inside memquill, with a ``DeprecationWarning`` from anywhere else).
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.foundation.text import path_key as path_key
    from memquill.query._database import (
        DATABASE_RECORDS as DATABASE_RECORDS,
        RECORDS_ANALYSIS as RECORDS_ANALYSIS,
        CandidateRecords as CandidateRecords,
        RecordSource as RecordSource,
        analysed_projection as analysed_projection,
        analysed_record as analysed_record,
        current_figures as current_figures,
        database_record as database_record,
        database_records as database_records,
        five as five,
        needed_terms as needed_terms,
        record_of as record_of,
        searched_in_database as searched_in_database,
        server_document as server_document,
        tie_text as tie_text,
    )
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
    from memquill.query._engine import (
        PAGE_UNITS as PAGE_UNITS,
        SNIPPET_UNITS as SNIPPET_UNITS,
        MemoryQuery,
        Searcher as Searcher,
    )
    from memquill.query._inverted import (
        IndexCorpus as IndexCorpus,
        TermIndex as TermIndex,
        document_postings as document_postings,
        single_chunk as single_chunk,
    )
    from memquill.query._markdown import (
        CHUNK_OVERLAP as CHUNK_OVERLAP,
        CHUNK_SIZE as CHUNK_SIZE,
        NoteMeta as NoteMeta,
        heading_text as heading_text,
        note_meta as note_meta,
        window_bounds as window_bounds,
    )
    from memquill.query._models import (
        GetArgs,
        GetResult as GetResult,
        HitKind as HitKind,
        RecentArgs,
        RecentResult as RecentResult,
        RecentSection as RecentSection,
        ResultT as ResultT,
        SearchArgs,
        SearchHit as SearchHit,
        SearchResult as SearchResult,
        SectionKind as SectionKind,
        parse_args as parse_args,
        utf16_bounds as utf16_bounds,
        validation_message as validation_message,
    )
    from memquill.query._plain import (
        MAX_SEARCH_LIMIT,
        FileType,
        FoundHit as FoundHit,
        SearchAnswer as SearchAnswer,
        SearchRequest as SearchRequest,
        search_request as search_request,
    )
    from memquill.query._rank import (
        CANDIDATES as CANDIDATES,
        Corpus as Corpus,
        Posting as Posting,
        RankDocument as RankDocument,
        RankedHit as RankedHit,
        RankParams as RankParams,
        day_factor as day_factor,
        idf as idf,
        matches_filters as matches_filters,
        month_gain as month_gain,
        rank as rank,
    )
    from memquill.query._render import (
        render_get as render_get,
        render_recent as render_recent,
        render_search as render_search,
        score_value as score_value,
    )
    from memquill.query._scan import (
        ScanBudget as ScanBudget,
        admit as admit,
        walk_warnings as walk_warnings,
        walk_workspace as walk_workspace,
    )
    from memquill.query._scanconfig import (
        ScanConfig as ScanConfig,
        load_scan_config as load_scan_config,
    )
    from memquill.query._tokens import (
        COMPOUND as COMPOUND,
        STEMMER_VERSION as STEMMER_VERSION,
        TOKENIZER_VERSION,
        ascii_word_bytes as ascii_word_bytes,
        camel_free as camel_free,
        compound_terms as compound_terms,
        count_keys as count_keys,
        count_words as count_words,
        fold as fold,
        is_cjk as is_cjk,
        query_terms as query_terms,
        split_words as split_words,
        tokenize as tokenize,
        word_keys as word_keys,
        words as words,
    )
    from memquill.query._topk import (
        KeptCorpus as KeptCorpus,
        narrow as narrow,
    )
    from memquill.query._walk import (
        PACKED_IDENTITY as PACKED_IDENTITY,
        DocumentCache as DocumentCache,
        FolderListing as FolderListing,
        Identity as Identity,
        PreviousWalk as PreviousWalk,
        Walk as Walk,
        WalkedFile as WalkedFile,
        file_identity as file_identity,
        list_folder as list_folder,
    )

__all__ = [
    "MAX_SEARCH_LIMIT",
    "TOKENIZER_VERSION",
    "FileType",
    "GetArgs",
    "MemoryQuery",
    "RecentArgs",
    "SearchArgs",
]

__getattr__, __dir__ = _lazy_exports(__name__)
