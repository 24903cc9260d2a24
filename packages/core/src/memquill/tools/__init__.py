"""The tool contract: six memory tools, the sessions they run for, and the one write path.

:data:`CATALOGUE` owns every tool's name, description and schemas; :class:`MemoryToolset` binds
it to a :class:`MemorySession` and is the one place a failure becomes a tool's text;
:mod:`memquill.tools._writes` is the only way anything in memquill writes memory (sync's
writes, in :mod:`memquill.sync`, pass its one rule, :func:`~memquill.tools._writes.authorize`).

Names are imported on first use (:func:`memquill.lazy.lazy_exports`): a read session's tools
never load the write path or the bindings.
``__all__`` is what users import; the other names are what the CLI, memquill's adapters, items,
enhance, sync, lifecycle and the layers above import (silently from inside memquill, with a
``DeprecationWarning`` from anywhere else).
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.tools._binding import (
        BindingBackend as BindingBackend,
        BindingStore,
        LegacySession as LegacySession,
        default_bindings_path as default_bindings_path,
        write_authorizer as write_authorizer,
    )
    from memquill.tools._catalogue import (
        CATALOGUE,
        ForgetArgs as ForgetArgs,
        RememberArgs as RememberArgs,
        UpdateArgs as UpdateArgs,
        WriteError as WriteError,
        WriteOperation as WriteOperation,
        WriteReceipt as WriteReceipt,
    )
    from memquill.tools._ranking import (
        CANDIDATE_LIMIT as CANDIDATE_LIMIT,
        CandidateRanker as CandidateRanker,
        RankDecision as RankDecision,
    )
    from memquill.tools._retrieval import (
        PRIVATE_METADATA,
        RetrievedMemory as RetrievedMemory,
        memory_context,
        retrieve,
    )
    from memquill.tools._session import Access as Access, MemorySession as MemorySession
    from memquill.tools._specs import (
        ToolAccess as ToolAccess,
        ToolHints as ToolHints,
        ToolSpec as ToolSpec,
    )
    from memquill.tools._toolset import (
        SEARCH_PROMPT,
        WRITE_PROMPT,
        MemoryTool,
        MemoryToolset as MemoryToolset,
        ToolResult as ToolResult,
        system_prompt as system_prompt,
    )
    from memquill.tools._writes import (
        KeyedFact as KeyedFact,
        Operation as Operation,
        SourceKind as SourceKind,
        WriteOutcome as WriteOutcome,
        WriteSource as WriteSource,
        authorize as authorize,
        compact as compact,
        correct as correct,
        find_operation as find_operation,
        forget as forget,
        forget_current as forget_current,
        forget_many as forget_many,
        forget_revoked_vectors as forget_revoked_vectors,
        import_records as import_records,
        outcome_of as outcome_of,
        remember as remember,
        rename_many,
        save_candidates as save_candidates,
        upsert as upsert,
    )

__all__ = [
    "CATALOGUE",
    "PRIVATE_METADATA",
    "SEARCH_PROMPT",
    "WRITE_PROMPT",
    "BindingStore",
    "MemoryTool",
    "memory_context",
    "rename_many",
    "retrieve",
]

__getattr__, __dir__ = _lazy_exports(
    __name__,
    # The item store is a layer of its own now (memquill.items).
    moved={
        **dict.fromkeys(
            (
                "ItemHit",
                "ItemStore",
                "StoredItem",
                "check_folders",
                "expires_at",
                "namespace_folder",
                "validate_namespace",
            ),
            "memquill.items",
        ),
        # Sync's writes live with the rest of sync (memquill.sync).
        **dict.fromkeys(("keep_version", "merge_copy", "resolve_conflict_copies"), "memquill.sync"),
    },
)
