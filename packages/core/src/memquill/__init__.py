"""memquill: agent memory a person can read.

Markdown is the truth (``memory/records.md`` beside the user's own notes), writes go through one
compare-and-swap store that never loses, tears or resurrects a fact, and reads are deterministic
keyword retrieval that needs no model.

This facade holds what a first application needs, and nothing else (at most 32 names, a meta
test counts them):

- a session and its tools: :func:`open_session`, :func:`default_workspace`,
  :class:`MemorySession`, :class:`MemoryToolset`, :class:`ToolSpec`, :class:`ToolResult`;
- the store: :class:`RecordStore`, :class:`Record`, :data:`RecordStatus`;
- the one write path: :func:`remember`, :func:`correct`, :func:`forget`, each with a
  :class:`WriteSource`;
- the results: :class:`SearchResult`, :class:`SearchHit`, :class:`GetResult`,
  :class:`RecentResult`, :class:`WriteOutcome`, :class:`WriteResult`;
- the root error and the store's nine error codes (:data:`ErrorCode`) with their classes:
  :class:`MemquillError`, :class:`ConflictError`, :class:`InvalidInputError`,
  :class:`SecretError`, :class:`UnsafePathError`, :class:`BusyError`, :class:`NotFoundError`,
  :class:`CapacityError`, :class:`CorruptError`, :class:`StorageError`;
- :data:`hookimpl`, to mark a plugin's hooks.

Everything else a user imports comes from its layer's facade: the other errors and ``ERRORS``
from :mod:`memquill.errors`, workspace rules from :mod:`memquill.paths`, key quoting and secret
detection from :mod:`memquill.store`, argument models and the read engine from
:mod:`memquill.query`, the rest of the tool contract (``CATALOGUE``, bindings, retrieval,
``rename_many``) from :mod:`memquill.tools`, ``ItemStore`` from :mod:`memquill.items`, model
assistance (``TextModel``, ``ModelRanker``) from :mod:`memquill.enhance`, embeddings from
:mod:`memquill.semantic`, extraction from conversations from :mod:`memquill.lifecycle`, the
plugin system from :mod:`memquill.plugins`, and the conformance kit from
:mod:`memquill.testing`.

Names are imported on first use (:func:`memquill.lazy.lazy_exports`): ``import memquill``
loads nothing else, and a keyword search never loads model assistance, extraction or the page.
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.errors import (
        BusyError,
        CapacityError,
        ConflictError,
        CorruptError,
        ErrorCode,
        InvalidInputError,
        MemquillError,
        NotFoundError,
        SecretError,
        StorageError,
        UnsafePathError,
    )
    from memquill.paths import default_workspace
    from memquill.plugins import hookimpl, open_session
    from memquill.query import GetResult, RecentResult, SearchHit, SearchResult
    from memquill.store import Record, RecordStatus, RecordStore, WriteResult
    from memquill.tools import (
        MemorySession,
        MemoryToolset,
        ToolResult,
        ToolSpec,
        WriteOutcome,
        WriteSource,
        correct,
        forget,
        remember,
    )

__all__ = [
    "BusyError",
    "CapacityError",
    "ConflictError",
    "CorruptError",
    "ErrorCode",
    "GetResult",
    "InvalidInputError",
    "MemorySession",
    "MemoryToolset",
    "MemquillError",
    "NotFoundError",
    "RecentResult",
    "Record",
    "RecordStatus",
    "RecordStore",
    "SearchHit",
    "SearchResult",
    "SecretError",
    "StorageError",
    "ToolResult",
    "ToolSpec",
    "UnsafePathError",
    "WriteOutcome",
    "WriteResult",
    "WriteSource",
    "__version__",
    "correct",
    "default_workspace",
    "forget",
    "hookimpl",
    "open_session",
    "remember",
]

__version__ = "0.1.0"

__getattr__, __dir__ = _lazy_exports(__name__)
