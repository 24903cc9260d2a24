"""The records store: the only code that writes ``memory/records.md``.

One :class:`RecordStore` per workspace saves, corrects, forgets and compacts facts (named by
record id, or by key: :class:`FactKey`) through a locked, compare-and-swap, atomically replaced
file (or, behind the same seam, one PostgreSQL row: :class:`RecordsBackend`);
:meth:`RecordStore.doctor` inspects it.
Everything here is below the query and tool layers and knows nothing about them.

Names are imported on first use (:func:`memquill.lazy.lazy_exports`), so a layer above that
needs one of them loads only that name's module.
``__all__`` is what the CLI, the adapters and users import; the other names are what the query,
tools, items, sync and the layers above import (silently from inside memquill, with a
``DeprecationWarning`` from anywhere else).
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.store._backend import (
        FILE as FILE,
        STORE_ENV,
        FileBackend as FileBackend,
        RecordsBackend as RecordsBackend,
        database_workspaces as database_workspaces,
        is_database,
        open_backend as open_backend,
        resolve_location,
    )
    from memquill.store._codec import (
        ID_PATTERN as ID_PATTERN,
        MAX_CONTENT_UNITS,
        MAX_STORE_BYTES,
        REVISION_PATTERN as REVISION_PATTERN,
        iso_timestamp as iso_timestamp,
        sha256_hex as sha256_hex,
        store_revision,
        validate_content as validate_content,
    )
    from memquill.store._conflicts import conflict_notice as conflict_notice
    from memquill.store._diagnose import Diagnosis as Diagnosis
    from memquill.store._doctor import (
        ControlFinding as ControlFinding,
        DoctorReport,
        SecretFinding as SecretFinding,
    )
    from memquill.store._fact_keys import (
        KEY_PATTERN as KEY_PATTERN,
        MAX_KEY_CHARS,
        FactKey,
        is_key as is_key,
        looks_like_id,
        quote_key,
        unquote_key,
        validate_key as validate_key,
    )
    from memquill.store._families import Divergence as Divergence, KeyRename as KeyRename
    from memquill.store._fileio import read_bounded as read_bounded
    from memquill.store._history import HistoryFigures
    from memquill.store._import import ImportPlan as ImportPlan
    from memquill.store._merge import MergeReport as MergeReport, merge_files as merge_files
    from memquill.store._merge_ops import MergeResult as MergeResult
    from memquill.store._postgres_location import (
        PostgresLocation as PostgresLocation,
        parse_location,
        with_workspace as with_workspace,
    )
    from memquill.store._record import JSONValue as JSONValue, Record, RecordStatus as RecordStatus
    from memquill.store._record_key import RecordKey, key_from_text, key_id, key_text
    from memquill.store._repair import RepairPlan as RepairPlan
    from memquill.store._results import (
        Candidate,
        CandidateResult,
        Preflight as Preflight,
        ProjectedRecord as ProjectedRecord,
        Projection as Projection,
        Snapshot,
        WriteResult as WriteResult,
        WriteStatus as WriteStatus,
    )
    from memquill.store._secrets import (
        BUILTIN_DETECTORS,
        RegexDetector as RegexDetector,
        SecretDetector as SecretDetector,
        SecretScanner,
        normalize_for_detection,
    )
    from memquill.store._store import (
        MAX_BATCH,
        RecordStore as RecordStore,
        ResolvedCopy as ResolvedCopy,
        ResolveReport as ResolveReport,
    )
    from memquill.store._targets import UNCHANGED as UNCHANGED, Target, Unchanged as Unchanged

__all__ = [
    "BUILTIN_DETECTORS",
    "MAX_BATCH",
    "MAX_CONTENT_UNITS",
    "MAX_KEY_CHARS",
    "MAX_STORE_BYTES",
    "STORE_ENV",
    "Candidate",
    "CandidateResult",
    "DoctorReport",
    "FactKey",
    "HistoryFigures",
    "Record",
    "RecordKey",
    "SecretScanner",
    "Snapshot",
    "Target",
    "is_database",
    "key_from_text",
    "key_id",
    "key_text",
    "looks_like_id",
    "normalize_for_detection",
    "parse_location",
    "quote_key",
    "resolve_location",
    "store_revision",
    "unquote_key",
]

__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "BUILTIN_DETECTORS": "memquill.store._secrets",
        "Candidate": "memquill.store._results",
        "CandidateResult": "memquill.store._results",
        "ControlFinding": "memquill.store._doctor",
        "Diagnosis": "memquill.store._diagnose",
        "Divergence": "memquill.store._families",
        "DoctorReport": "memquill.store._doctor",
        "FILE": "memquill.store._backend",
        "FactKey": "memquill.store._fact_keys",
        "FileBackend": "memquill.store._backend",
        "HistoryFigures": "memquill.store._history",
        "ID_PATTERN": "memquill.store._codec",
        "ImportPlan": "memquill.store._import",
        "JSONValue": "memquill.store._record",
        "KEY_PATTERN": "memquill.store._fact_keys",
        "KeyRename": "memquill.store._families",
        "MAX_BATCH": "memquill.store._store",
        "MAX_CONTENT_UNITS": "memquill.store._codec",
        "MAX_KEY_CHARS": "memquill.store._fact_keys",
        "MAX_STORE_BYTES": "memquill.store._codec",
        "MergeReport": "memquill.store._merge",
        "MergeResult": "memquill.store._merge_ops",
        "PostgresLocation": "memquill.store._postgres_location",
        "Preflight": "memquill.store._results",
        "ProjectedRecord": "memquill.store._results",
        "Projection": "memquill.store._results",
        "REVISION_PATTERN": "memquill.store._codec",
        "Record": "memquill.store._record",
        "RecordKey": "memquill.store._record_key",
        "RecordStatus": "memquill.store._record",
        "RecordStore": "memquill.store._store",
        "RecordsBackend": "memquill.store._backend",
        "RegexDetector": "memquill.store._secrets",
        "RepairPlan": "memquill.store._repair",
        "ResolveReport": "memquill.store._store",
        "ResolvedCopy": "memquill.store._store",
        "STORE_ENV": "memquill.store._backend",
        "SecretDetector": "memquill.store._secrets",
        "SecretFinding": "memquill.store._doctor",
        "SecretScanner": "memquill.store._secrets",
        "Snapshot": "memquill.store._results",
        "Target": "memquill.store._targets",
        "UNCHANGED": "memquill.store._targets",
        "Unchanged": "memquill.store._targets",
        "WriteResult": "memquill.store._results",
        "WriteStatus": "memquill.store._results",
        "conflict_notice": "memquill.store._conflicts",
        "database_workspaces": "memquill.store._backend",
        "is_database": "memquill.store._backend",
        "is_key": "memquill.store._fact_keys",
        "iso_timestamp": "memquill.store._codec",
        "key_from_text": "memquill.store._record_key",
        "key_id": "memquill.store._record_key",
        "key_text": "memquill.store._record_key",
        "looks_like_id": "memquill.store._fact_keys",
        "merge_files": "memquill.store._merge",
        "normalize_for_detection": "memquill.store._secrets",
        "open_backend": "memquill.store._backend",
        "parse_location": "memquill.store._postgres_location",
        "quote_key": "memquill.store._fact_keys",
        "read_bounded": "memquill.store._fileio",
        "resolve_location": "memquill.store._backend",
        "sha256_hex": "memquill.store._codec",
        "store_revision": "memquill.store._codec",
        "unquote_key": "memquill.store._fact_keys",
        "validate_content": "memquill.store._codec",
        "validate_key": "memquill.store._fact_keys",
        "with_workspace": "memquill.store._postgres_location",
    },
    # The git merge driver's file merge is sync's now (memquill.sync).
    moved=dict.fromkeys(("merge_into_file", "read_copy"), "memquill.sync"),
)
