"""The records store: the only code that writes ``memory/records.md``.

One :class:`RecordStore` per workspace saves, corrects, forgets and compacts facts (named by
record id, or by key: :class:`FactKey`) through a locked, compare-and-swap, atomically replaced
file (or, behind the same seam, one PostgreSQL row: :class:`RecordsBackend`);
:meth:`RecordStore.doctor` inspects it.
Everything here is below the query and tool layers and knows nothing about them.
"""

from memquill.store._backend import (
    FILE,
    STORE_ENV,
    FileBackend,
    RecordsBackend,
    database_workspaces,
    is_database,
    open_backend,
    resolve_location,
)
from memquill.store._codec import (
    ID_PATTERN,
    MAX_CONTENT_UNITS,
    MAX_STORE_BYTES,
    REVISION_PATTERN,
    JSONValue,
    Record,
    RecordStatus,
    store_revision,
)
from memquill.store._conflicts import conflict_notice
from memquill.store._diagnose import Diagnosis
from memquill.store._doctor import ControlFinding, DoctorReport, SecretFinding
from memquill.store._edits import UNCHANGED, Target, Unchanged
from memquill.store._fact_keys import (
    KEY_PATTERN,
    MAX_KEY_CHARS,
    FactKey,
    is_key,
    looks_like_id,
    quote_key,
    unquote_key,
    validate_key,
)
from memquill.store._families import Divergence, KeyRename
from memquill.store._import import ImportPlan
from memquill.store._merge import MergeReport, merge_files
from memquill.store._merge_file import merge_into_file, read_copy
from memquill.store._merge_ops import MergeResult
from memquill.store._postgres_location import PostgresLocation, parse_location, with_workspace
from memquill.store._record_key import RecordKey, key_from_text, key_id, key_text
from memquill.store._repair import RepairPlan
from memquill.store._results import (
    Candidate,
    CandidateResult,
    Preflight,
    ProjectedRecord,
    Projection,
    Snapshot,
    WriteResult,
    WriteStatus,
)
from memquill.store._secrets import (
    BUILTIN_DETECTORS,
    RegexDetector,
    SecretDetector,
    SecretScanner,
    normalize_for_detection,
)
from memquill.store._store import MAX_BATCH, RecordStore
from memquill.store._store_sync import ResolvedCopy, ResolveReport

__all__ = [
    "BUILTIN_DETECTORS",
    "FILE",
    "ID_PATTERN",
    "KEY_PATTERN",
    "MAX_BATCH",
    "MAX_CONTENT_UNITS",
    "MAX_KEY_CHARS",
    "MAX_STORE_BYTES",
    "REVISION_PATTERN",
    "STORE_ENV",
    "UNCHANGED",
    "Candidate",
    "CandidateResult",
    "ControlFinding",
    "Diagnosis",
    "Divergence",
    "DoctorReport",
    "FactKey",
    "FileBackend",
    "ImportPlan",
    "JSONValue",
    "KeyRename",
    "MergeReport",
    "MergeResult",
    "PostgresLocation",
    "Preflight",
    "ProjectedRecord",
    "Projection",
    "Record",
    "RecordKey",
    "RecordStatus",
    "RecordStore",
    "RecordsBackend",
    "RegexDetector",
    "RepairPlan",
    "ResolveReport",
    "ResolvedCopy",
    "SecretDetector",
    "SecretFinding",
    "SecretScanner",
    "Snapshot",
    "Target",
    "Unchanged",
    "WriteResult",
    "WriteStatus",
    "conflict_notice",
    "database_workspaces",
    "is_database",
    "is_key",
    "key_from_text",
    "key_id",
    "key_text",
    "looks_like_id",
    "merge_files",
    "merge_into_file",
    "normalize_for_detection",
    "open_backend",
    "parse_location",
    "quote_key",
    "read_copy",
    "resolve_location",
    "store_revision",
    "unquote_key",
    "validate_key",
    "with_workspace",
]
