"""The tool contract: six memory tools, the sessions they run for, and the one write path.

:data:`CATALOGUE` owns every tool's name, description and schemas; :class:`MemoryToolset` binds
it to a :class:`MemorySession` and is the one place a failure becomes a tool's text;
:mod:`memquill.tools._writes` (with :mod:`memquill.tools._merges` for sync) is the only way
anything in memquill writes memory.
:class:`ItemStore` keeps items of nested namespaces as named facts (a LangGraph store's core);
:func:`namespace_folder` is where a namespace's workspace lives (ADK's per-user scopes too).
"""

from memquill.tools._args import ForgetArgs, RememberArgs, UpdateArgs
from memquill.tools._binding import (
    BindingBackend,
    BindingStore,
    LegacySession,
    default_bindings_path,
    write_authorizer,
)
from memquill.tools._catalogue import CATALOGUE, ToolAccess, ToolHints, ToolSpec
from memquill.tools._item_paths import check_folders, namespace_folder, validate_namespace
from memquill.tools._item_values import expires_at
from memquill.tools._items import ItemHit, ItemStore, StoredItem
from memquill.tools._merges import keep_version, merge_copy, resolve_conflict_copies
from memquill.tools._prompts import SEARCH_PROMPT, WRITE_PROMPT, system_prompt
from memquill.tools._ranking import CANDIDATE_LIMIT, CandidateRanker, RankDecision
from memquill.tools._results import ToolResult, WriteError, WriteOperation, WriteReceipt
from memquill.tools._retrieval import (
    PRIVATE_METADATA,
    RetrievedMemory,
    memory_context,
    retrieve,
)
from memquill.tools._session import Access, MemorySession
from memquill.tools._toolset import MemoryTool, MemoryToolset
from memquill.tools._writes import (
    Operation,
    SourceKind,
    WriteOutcome,
    WriteSource,
    compact,
    correct,
    find_operation,
    forget,
    forget_many,
    import_records,
    remember,
    rename_many,
    save_candidates,
)

__all__ = [
    "CANDIDATE_LIMIT",
    "CATALOGUE",
    "PRIVATE_METADATA",
    "SEARCH_PROMPT",
    "WRITE_PROMPT",
    "Access",
    "BindingBackend",
    "BindingStore",
    "CandidateRanker",
    "ForgetArgs",
    "ItemHit",
    "ItemStore",
    "LegacySession",
    "MemorySession",
    "MemoryTool",
    "MemoryToolset",
    "Operation",
    "RankDecision",
    "RememberArgs",
    "RetrievedMemory",
    "SourceKind",
    "StoredItem",
    "ToolAccess",
    "ToolHints",
    "ToolResult",
    "ToolSpec",
    "UpdateArgs",
    "WriteError",
    "WriteOperation",
    "WriteOutcome",
    "WriteReceipt",
    "WriteSource",
    "check_folders",
    "compact",
    "correct",
    "default_bindings_path",
    "expires_at",
    "find_operation",
    "forget",
    "forget_many",
    "import_records",
    "keep_version",
    "memory_context",
    "merge_copy",
    "namespace_folder",
    "remember",
    "rename_many",
    "resolve_conflict_copies",
    "retrieve",
    "save_candidates",
    "system_prompt",
    "validate_namespace",
    "write_authorizer",
]
