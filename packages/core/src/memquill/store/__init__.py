"""The records store: the only code that writes ``memory/records.md``.

One :class:`RecordStore` per workspace saves, corrects, forgets and compacts facts through a
locked, compare-and-swap, atomically replaced file; :meth:`RecordStore.doctor` inspects it.
Everything here is below the query and tool layers and knows nothing about them.
"""

from memquill.store._codec import (
    ID_PATTERN,
    MAX_CONTENT_UNITS,
    MAX_STORE_BYTES,
    REVISION_PATTERN,
    JSONValue,
    Record,
    RecordStatus,
)
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
    "ID_PATTERN",
    "MAX_BATCH",
    "MAX_CONTENT_UNITS",
    "MAX_STORE_BYTES",
    "REVISION_PATTERN",
    "Candidate",
    "CandidateResult",
    "Diagnosis",
    "DoctorReport",
    "JSONValue",
    "Preflight",
    "ProjectedRecord",
    "Projection",
    "Record",
    "RecordStatus",
    "RecordStore",
    "RegexDetector",
    "RepairPlan",
    "SecretDetector",
    "SecretFinding",
    "SecretScanner",
    "Snapshot",
    "WriteResult",
    "WriteStatus",
    "normalize_for_detection",
]
