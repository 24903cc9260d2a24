"""memquill: agent memory a person can read.

Markdown is the truth (``memory/records.md`` beside the user's own notes), writes go through one
compare-and-swap store that never loses, tears or resurrects a fact, and reads are deterministic
keyword retrieval that needs no model.
"""

from memquill.errors import (
    AccessDeniedError,
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
from memquill.secrets import RegexDetector, SecretDetector, SecretScanner
from memquill.store import RecordStore

__all__ = [
    "MAX_CONTENT_UNITS",
    "MAX_STORE_BYTES",
    "AccessDeniedError",
    "BusyError",
    "Candidate",
    "CapacityError",
    "ConflictError",
    "CorruptError",
    "ErrorCode",
    "InvalidInputError",
    "MemoryRecordError",
    "MemquillError",
    "Messages",
    "NotFoundError",
    "Preflight",
    "ProjectedRecord",
    "Projection",
    "Record",
    "RecordStatus",
    "RecordStore",
    "RegexDetector",
    "SecretDetector",
    "SecretError",
    "SecretScanner",
    "Snapshot",
    "SourceError",
    "StorageError",
    "UnsafePathError",
    "WriteResult",
    "WriteStatus",
    "__version__",
]

__version__ = "0.1.0"
