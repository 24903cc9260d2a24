"""Deterministic keyword retrieval over a workspace: ``search``, ``get`` and ``recent``.

:class:`MemoryQuery` reads the user's notes and the store's active records (as projections
``memory/records/<id>.md``), ranks them and pages through sources; it takes validated argument
models and returns result models, which the renderers word exactly as the tools show them.
It never writes.
"""

from memquill.query._args import (
    FileType,
    GetArgs,
    RecentArgs,
    SearchArgs,
    parse_args,
    validation_message,
)
from memquill.query._documents import SearchDocument
from memquill.query._engine import PAGE_UNITS, SNIPPET_UNITS, MemoryQuery, Searcher
from memquill.query._models import (
    GetResult,
    HitKind,
    RecentResult,
    RecentSection,
    ResultT,
    SearchHit,
    SearchResult,
    SectionKind,
)
from memquill.query._rank import RankParams
from memquill.query._render import render_get, render_recent, render_search
from memquill.query._scan import DocumentCache
from memquill.query._tokens import TOKENIZER_VERSION, is_cjk, query_terms, tokenize, words

__all__ = [
    "PAGE_UNITS",
    "SNIPPET_UNITS",
    "TOKENIZER_VERSION",
    "DocumentCache",
    "FileType",
    "GetArgs",
    "GetResult",
    "HitKind",
    "MemoryQuery",
    "RankParams",
    "RecentArgs",
    "RecentResult",
    "RecentSection",
    "ResultT",
    "SearchArgs",
    "SearchDocument",
    "SearchHit",
    "SearchResult",
    "Searcher",
    "SectionKind",
    "is_cjk",
    "parse_args",
    "query_terms",
    "render_get",
    "render_recent",
    "render_search",
    "tokenize",
    "validation_message",
    "words",
]
