"""Merging other machines' copies of ``records.md`` and settling diverged facts (``docs/sync.md``).

The write path's sync half (:mod:`memquill.tools._writes` has the rest, and its one rule,
:func:`~memquill.tools._writes.authorize`, holds here too): ``memquill merge`` when OURS is a
workspace's ``records.md``, ``memquill sync resolve`` and ``memquill sync keep``. A merge that
brings another machine's forget deletes the forgotten facts' vectors at the merge, as a forget
does (:mod:`memquill.tools._vector_hook`).
"""

from __future__ import annotations

from memquill.store import MergeResult, ResolveReport
from memquill.tools._session import MemorySession
from memquill.tools._vector_hook import forget_revoked_vectors
from memquill.tools._writes import WriteOutcome, WriteSource, authorize, outcome_of


def merge_copy(
    session: MemorySession,
    theirs: bytes,
    base: bytes = b"",
    *,
    source: WriteSource,
    expected_revision: str | None = None,
) -> MergeResult:
    """Merge another machine's copy of ``records.md`` (with their common ancestor ``base``,
    empty when unknown) into the session's store, record by record (``docs/sync.md``).

    Raises:
        InvalidInputError: the session may not write now.
        CorruptError, ConflictError, and the store's errors.
    """
    authorize(session, source.metadata())
    merged = session.store.merge(theirs, base, expected_revision=expected_revision)
    if merged.write.status == "saved":
        forget_revoked_vectors(session, merged.write.records)  # another machine's forgets
    return merged


def keep_version(
    session: MemorySession, record_id: str, expected_revision: str, *, source: WriteSource
) -> WriteOutcome:
    """Settle a diverged fact on the version ``record_id`` (a unique prefix will do): the
    outcome names the version that now stands.

    Raises:
        InvalidInputError (also: not a diverged fact), ConflictError, NotFoundError, and the
        store's errors.
    """
    authorize(session, source.metadata())
    result = session.store.keep_version(
        record_id, expected_revision, source.metadata(), prefixes=True
    )
    return outcome_of("keep", result, result.record_id, result.status)


def resolve_conflict_copies(session: MemorySession, *, source: WriteSource) -> ResolveReport:
    """Merge every conflict copy a file-sync tool left beside ``records.md`` and remove it
    (a backup of ``records.md`` is written before the first change).

    Raises:
        InvalidInputError: the session may not write now. CorruptError, BusyError and the
        store's errors.
    """
    authorize(session, source.metadata())
    report = session.store.resolve_conflict_copies()
    if any(copy.problem is None for copy in report.copies):
        forget_revoked_vectors(session, session.store.snapshot().records)
    return report
