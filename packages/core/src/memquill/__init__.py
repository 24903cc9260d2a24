"""memquill: agent memory a person can read.

Markdown is the truth (``memory/records.md`` beside the user's own notes), writes go through one
compare-and-swap store that never loses, tears or resurrects a fact, and reads are deterministic
keyword retrieval that needs no model.
"""

from memquill.adapters import AdapterHarness, AdapterSpec, HarnessResult, ToolDescriptor
from memquill.binding import BindingBackend, BindingStore, LegacySession, write_authorizer
from memquill.enhance import ModelDeferred, ModelIdentity, Prompt, ProviderEvent, TextModel
from memquill.errors import (
    AccessDeniedError,
    BindingError,
    BusyError,
    CapacityError,
    ConflictError,
    CorruptError,
    ErrorCode,
    InvalidInputError,
    MemoryRecordError,
    MemquillError,
    Messages,
    NotFoundError,
    SecretError,
    SourceError,
    StorageError,
    UnsafePathError,
)
from memquill.facade import lazy_exports
from memquill.harness import CoreHarness
from memquill.hookspecs import hookimpl
from memquill.paths import default_workspace
from memquill.plugins import (
    MemquillPluginManager,
    PluginFailure,
    PluginInfo,
    PluginReport,
    RegisteredAdapter,
    RegisteredDetector,
    get_plugin_manager,
    plugin_report,
    registered_adapters,
    secret_scanner,
)
from memquill.prompts import SEARCH_PROMPT, WRITE_PROMPT
from memquill.query import MemoryQuery
from memquill.query_models import (
    GetResult,
    QueryResponse,
    RecentResult,
    RecentSection,
    SearchHit,
    SearchResult,
)
from memquill.records import MAX_CONTENT_UNITS, MAX_STORE_BYTES, Record, RecordStatus
from memquill.results import (
    Candidate,
    Preflight,
    ProjectedRecord,
    Projection,
    Snapshot,
    WriteResult,
    WriteStatus,
)
from memquill.scope import Access, MemorySession
from memquill.search import FileType
from memquill.secrets import RegexDetector, SecretDetector, SecretScanner
from memquill.store import RecordStore
from memquill.tool_models import (
    ForgetArgs,
    GetArgs,
    RecentArgs,
    RememberArgs,
    SearchArgs,
    ToolResult,
    UpdateArgs,
    WriteError,
    WriteReceipt,
)
from memquill.tools import CATALOGUE, MemoryTool, MemoryToolset, ToolHints, ToolSpec

__all__ = [
    "CATALOGUE",
    "MAX_CONTENT_UNITS",
    "MAX_STORE_BYTES",
    "SEARCH_PROMPT",
    "WRITE_PROMPT",
    "Access",
    "AccessDeniedError",
    "AdapterHarness",
    "AdapterSpec",
    "BindingBackend",
    "BindingError",
    "BindingStore",
    "BusyError",
    "Candidate",
    "CapacityError",
    "ConflictError",
    "CoreHarness",
    "CorruptError",
    "ErrorCode",
    "FileType",
    "ForgetArgs",
    "GetArgs",
    "GetResult",
    "HarnessResult",
    "InvalidInputError",
    "LegacySession",
    "MemoryQuery",
    "MemoryRecordError",
    "MemorySession",
    "MemoryTool",
    "MemoryToolset",
    "MemquillError",
    "MemquillPluginManager",
    "Messages",
    "ModelDeferred",
    "ModelIdentity",
    "NotFoundError",
    "PluginFailure",
    "PluginInfo",
    "PluginReport",
    "Preflight",
    "ProjectedRecord",
    "Projection",
    "Prompt",
    "ProviderEvent",
    "QueryResponse",
    "RecentArgs",
    "RecentResult",
    "RecentSection",
    "Record",
    "RecordStatus",
    "RecordStore",
    "RegexDetector",
    "RegisteredAdapter",
    "RegisteredDetector",
    "RememberArgs",
    "SearchArgs",
    "SearchHit",
    "SearchResult",
    "SecretDetector",
    "SecretError",
    "SecretScanner",
    "Snapshot",
    "SourceError",
    "StorageError",
    "TextModel",
    "ToolDescriptor",
    "ToolHints",
    "ToolResult",
    "ToolSpec",
    "UnsafePathError",
    "UpdateArgs",
    "WriteError",
    "WriteReceipt",
    "WriteResult",
    "WriteStatus",
    "__version__",
    "default_workspace",
    "get_plugin_manager",
    "hookimpl",
    "lazy_exports",
    "plugin_report",
    "registered_adapters",
    "secret_scanner",
    "write_authorizer",
]

__version__ = "0.1.0"
