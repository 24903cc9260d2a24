"""The records store: the only code that writes ``memory/records.md``.

One :class:`RecordStore` per workspace saves, corrects, forgets and compacts facts (named by
record id, or by key: :class:`FactKey`) through a locked, compare-and-swap, atomically replaced
file (or, behind the same seam, one PostgreSQL row: :class:`RecordsBackend`);
:meth:`RecordStore.doctor` inspects it.
Everything here is below the query and tool layers and knows nothing about them.

Names are imported on first use (:func:`memquill.lazy.lazy_exports`), so a layer above that
needs one of them loads only that name's module.
``__all__`` is what users import; the other names are what the CLI, memquill's adapters, the query,
tools, items, sync and the layers above import (silently from inside memquill, with a
``DeprecationWarning`` from anywhere else).
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.store._backend import (
        FILE as FILE,
        STORE_ENV as STORE_ENV,
        FileBackend as FileBackend,
        Listing as Listing,
        RecordsBackend as RecordsBackend,
        conflict_notice as conflict_notice,
        database_listing as database_listing,
        database_workspaces as database_workspaces,
        is_database as is_database,
        open_backend as open_backend,
        resolve_location as resolve_location,
    )
    from memquill.store._codec import (
        ID_PATTERN as ID_PATTERN,
        MAX_CONTENT_UNITS as MAX_CONTENT_UNITS,
        MAX_STORE_BYTES as MAX_STORE_BYTES,
        REVISION_PATTERN as REVISION_PATTERN,
        iso_timestamp as iso_timestamp,
        record_revision as record_revision,
        sha256_hex as sha256_hex,
        store_revision as store_revision,
        validate_content as validate_content,
    )
    from memquill.store._diagnose import Diagnosis as Diagnosis
    from memquill.store._doctor import (
        ControlFinding as ControlFinding,
        DoctorReport as DoctorReport,
        HistoryFigures as HistoryFigures,
        SecretFinding as SecretFinding,
    )
    from memquill.store._families import Divergence as Divergence, KeyRename as KeyRename
    from memquill.store._fileio import read_bounded as read_bounded
    from memquill.store._hand_edits import ImportPlan as ImportPlan, RepairPlan as RepairPlan
    from memquill.store._merge import (
        MergeReport as MergeReport,
        MergeResult as MergeResult,
        merge_files as merge_files,
    )
    from memquill.store._postgres_location import (
        PostgresLocation as PostgresLocation,
        parse_location as parse_location,
        with_workspace as with_workspace,
    )
    from memquill.store._postgres_reads import (
        FoundVersion as FoundVersion,
        read_active as read_active,
        read_keyed as read_keyed,
        read_newest as read_newest,
    )
    from memquill.store._postgres_search import (
        ChangedVersion as ChangedVersion,
        IndexedDocument as IndexedDocument,
        SearchBounds as SearchBounds,
        SearchFigures as SearchFigures,
        catch_up_searches as catch_up_searches,
        search_candidates as search_candidates,
        search_figures as search_figures,
        workspace_rows as workspace_rows,
    )
    from memquill.store._record import (
        KEY_PATTERN as KEY_PATTERN,
        MAX_KEY_CHARS as MAX_KEY_CHARS,
        FactKey as FactKey,
        JSONValue as JSONValue,
        Record as Record,
        RecordStatus as RecordStatus,
        is_key as is_key,
        looks_like_id as looks_like_id,
        quote_key,
        unquote_key,
        validate_key as validate_key,
    )
    from memquill.store._record_key import (
        RecordKey as RecordKey,
        key_from_text as key_from_text,
        key_id as key_id,
        key_text as key_text,
    )
    from memquill.store._results import (
        UNCHANGED as UNCHANGED,
        Candidate as Candidate,
        CandidateResult as CandidateResult,
        Preflight as Preflight,
        ProjectedRecord as ProjectedRecord,
        Projection as Projection,
        Snapshot as Snapshot,
        Target as Target,
        Unchanged as Unchanged,
        WriteResult as WriteResult,
        WriteStatus as WriteStatus,
        provenance_line as provenance_line,
    )
    from memquill.store._secrets import (
        BUILTIN_DETECTORS,
        RegexDetector as RegexDetector,
        SecretDetector as SecretDetector,
        SecretScanner,
        normalize_for_detection,
    )
    from memquill.store._store import (
        MAX_BATCH as MAX_BATCH,
        RecordStore as RecordStore,
        ResolvedCopy as ResolvedCopy,
        ResolveReport as ResolveReport,
        snapshots as snapshots,
    )

__all__ = [
    "BUILTIN_DETECTORS",
    "SecretScanner",
    "normalize_for_detection",
    "quote_key",
    "unquote_key",
]

__getattr__, __dir__ = _lazy_exports(
    __name__,
    # The git merge driver's file merge is sync's now (memquill.sync).
    moved=dict.fromkeys(("merge_into_file", "read_copy"), "memquill.sync"),
)
