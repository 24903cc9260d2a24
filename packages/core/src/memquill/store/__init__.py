"""The records store: the only code that writes ``memory/records.md``.

One :class:`RecordStore` per workspace saves, corrects, forgets and compacts facts through a
locked, compare-and-swap, atomically replaced file (or, behind the same seam, one PostgreSQL
row: :class:`RecordsBackend`); :meth:`RecordStore.doctor` inspects it.
Everything here is below the query and tool layers and knows nothing about them.
"""

from memquill.store._backend import (
    FILE,
    STORE_ENV,
    FileBackend,
    RecordsBackend,
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
)
from memquill.store._conflicts import conflict_notice
from memquill.store._diagnose import Diagnosis
from memquill.store._doctor import DoctorReport, SecretFinding
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

__all__ = [
    "BUILTIN_DETECTORS",
    "FILE",
    "ID_PATTERN",
    "MAX_BATCH",
    "MAX_CONTENT_UNITS",
    "MAX_STORE_BYTES",
    "REVISION_PATTERN",
    "STORE_ENV",
    "Candidate",
    "CandidateResult",
    "Diagnosis",
    "DoctorReport",
    "FileBackend",
    "JSONValue",
    "Preflight",
    "ProjectedRecord",
    "Projection",
    "Record",
    "RecordStatus",
    "RecordStore",
    "RecordsBackend",
    "RegexDetector",
    "RepairPlan",
    "SecretDetector",
    "SecretFinding",
    "SecretScanner",
    "Snapshot",
    "WriteResult",
    "WriteStatus",
    "conflict_notice",
    "is_database",
    "normalize_for_detection",
    "open_backend",
    "resolve_location",
]
