"""The one write path: every save, correction and forget in memquill goes through here.

The write tools, the CLI, and later the extraction runner and the management page all call
these functions, each naming its source (``manual``, ``tool`` or ``conversation``), so the same
checks hold everywhere: the session must still have write access and the host's
``authorize_write`` must still agree (asked at every call, never only when tools were built), a
tool or conversation write needs a trusted session id (one rule, :func:`authorize`, for a
single fact and for a batch of candidates alike), and the session's secret scanner (built-ins
plus every plugin detector when the session came from :func:`memquill.open_session`) guards
the content. Merging other machines' copies and settling diverged facts are in
:mod:`memquill.sync`, on the same rule. A forget reaches semantic recall's vectors at
the write: whatever forgets a fact (a forget here, a sync merge or a resolved conflict copy that
brings another machine's forget) calls :func:`forget_revoked_vectors` with the records after
its write, so every revoked version's vectors (``r:<id>`` and ``i:<id>``) leave the workspace's
vector cache before the call returns, not at the next semantic search. The cache is never the
truth: a failure to change it is not the write's (the next semantic search deletes the rows and
never returns them meanwhile).
Failures are raised as :class:`~memquill.errors.MemquillError`; the tool boundary words them.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Final, Literal, cast

from memquill.errors import ConflictError, InvalidInputError, MemquillError, Messages
from memquill.index import forget_vectors
from memquill.paths import canonical_workspace
from memquill.store import (
    UNCHANGED,
    Candidate,
    FactKey,
    JSONValue,
    Record,
    Target,
    Unchanged,
    WriteResult,
    WriteStatus,
    iso_timestamp,
    sha256_hex,
    validate_content,
    validate_key,
)
from memquill.tools._session import MemorySession

SourceKind = Literal["manual", "tool", "conversation"]
"""Who a write comes from: a person (CLI, page), a model's tool call, or a conversation."""

Operation = Literal["remember", "update", "forget", "compact", "import", "keep"]
"""What a write did: the three tools' operations, compaction, an imported file, and a choice
among a diverged fact's versions."""

_TOOL_KEY_PREFIX: Final = "tool:"
_MANUAL_KEY_PREFIX: Final = "manual:"
_SESSION_KINDS: Final = frozenset({"tool", "conversation"})
"""Source kinds that must name the trusted session they came from."""
FORGET_ATTEMPTS: Final = 8
"""Reads and forgets :func:`forget_current` makes before a ``conflict`` is the caller's."""


@dataclass(frozen=True, slots=True)
class WriteSource:
    """The provenance a write records.

    Attributes:
        kind: ``manual``, ``tool`` or ``conversation``.
        session_id: the host's trusted session (required for ``tool`` and ``conversation``).
        message_id: the user message a ``conversation`` fact was extracted from.
        role: the role of that message (``user``).
        captured_at: when a person entered a ``manual`` fact (ISO-8601 UTC).
    """

    kind: SourceKind
    session_id: str | None = None
    message_id: str | None = None
    role: str | None = None
    captured_at: str | None = None

    @classmethod
    def manual(cls, now: datetime | None = None) -> WriteSource:
        """A person's own entry, stamped with the time it was made."""
        return cls("manual", captured_at=iso_timestamp(now or datetime.now(UTC)))

    def metadata(self) -> dict[str, JSONValue]:
        """The record's ``source`` object: ``kind`` plus the fields that are set."""
        fields: dict[str, JSONValue] = {"kind": self.kind}
        for key, value in (
            ("sessionId", self.session_id),
            ("messageId", self.message_id),
            ("role", self.role),
            ("capturedAt", self.captured_at),
        ):
            if value is not None:
                fields[key] = value
        return fields


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """What a write did, with both revisions.

    Attributes:
        operation: ``remember``, ``update``, ``forget`` or ``compact``.
        status: ``saved``, ``duplicate`` or ``blocked`` (nothing can ever save it again).
        record_id: the record the write is about (``None`` when blocked).
        revision: the store revision after the call.
        record_revision: that record's revision after the call, when it is known.
        result: everything the store returned.
        key: the fact's key, when it has one (for a forget: the key it was named by).
        forgotten_at: when a forgotten fact with the same words was forgotten: why a tool's or
            a conversation's write was ``blocked``, or a note on a person's that was saved.
    """

    operation: Operation
    status: WriteStatus
    record_id: str | None
    revision: str
    record_revision: str | None
    result: WriteResult
    key: str | None = None
    forgotten_at: str | None = None


def remember(
    session: MemorySession,
    content: str,
    *,
    source: WriteSource,
    idempotency_key: str | None = None,
    expected_revision: str | None = None,
    key: str | None = None,
    extra: Mapping[str, JSONValue] | None = None,
) -> WriteOutcome:
    """Save one fact. Repeating the same idempotency key (by default: made from the content
    and the fact key) saves nothing new.

    Idempotency keys are namespaced by source, so a person's never collides with a tool's.
    ``key`` names the fact (``prefs/coffee``): a key another active fact has is a
    ``conflict`` naming that fact. ``extra`` is JSON kept beside the text. With
    ``expected_revision`` (the store revision the caller saw, as the management page sends)
    the store refuses with ``conflict`` if anything changed since, checked under its lock.

    Raises:
        InvalidInputError: the session may not write now, a tool source has no session, or the
            key breaks the rules.
        SecretError, ConflictError, CapacityError, BusyError, CorruptError, UnsafePathError,
        StorageError: from the store.
    """
    authorize(session, source.metadata())
    validate_content(content)  # before the key hashes it: text that is not UTF-8 is ``invalid``
    if key is not None:
        validate_key(key)
    operation_key = _namespaced_key(source, content, idempotency_key, key)
    candidate = Candidate(content, source.metadata(), operation_key, key, extra)
    result = session.store.save([candidate], expected_revision)
    target = result.targets[0]
    return outcome_of("remember", result, target.record_id, target.status)


@dataclass(frozen=True, slots=True)
class KeyedFact:
    """A fact :func:`upsert` saves or corrects, named by its key.

    Attributes:
        key: the fact's key (``prefs/coffee``).
        content: its text.
        extra: JSON kept beside the text (``None``: none).
        idempotency_key: the key its saving as a new fact is recorded under (``None``: made
            from the content and the key, as :func:`remember` makes it).
    """

    key: str
    content: str
    extra: Mapping[str, JSONValue] | None = None
    idempotency_key: str | None = None


def upsert(
    session: MemorySession, facts: Sequence[KeyedFact], *, source: WriteSource
) -> WriteResult:
    """Save or correct each of ``facts`` by its key, in one write, all or none (what a
    key-value store's puts in bulk need): a key no active fact has is saved as a new fact (as
    :func:`remember` saves it), a fact whose text or extra JSON differ is corrected (as
    :func:`correct`), one that is the same is left alone; decided under the store's lock,
    so no write is blind. When a forgotten fact's words block any of them (a ``tool`` or
    ``conversation`` source), nothing is written and the result is ``blocked``
    (:meth:`~memquill.store.RecordStore.upsert`).

    Raises:
        InvalidInputError: the session may not write now, a tool source has no session, no
            facts, two with one key, or a key, text or extra that breaks the rules.
        SecretError, ConflictError, CapacityError, BusyError, CorruptError, UnsafePathError,
        StorageError: from the store.
    """
    authorize(session, source.metadata())
    metadata = source.metadata()
    candidates: list[Candidate] = []
    for fact in facts:
        validate_content(fact.content)  # before the key hashes it, as :func:`remember`
        validate_key(fact.key)
        operation_key = _namespaced_key(source, fact.content, fact.idempotency_key, fact.key)
        candidates.append(Candidate(fact.content, metadata, operation_key, fact.key, fact.extra))
    return session.store.upsert(candidates)


def save_candidates(
    session: MemorySession, candidates: Sequence[Candidate], *, skip_known: bool = False
) -> WriteResult:
    """Save a batch of already-keyed candidates in one transaction (1–40; all or nothing).

    For callers that build their own idempotency keys (extraction: ``job-id:index``), so a
    forgotten fact's tombstone blocks its re-extraction. With ``skip_known`` a candidate whose
    content equals an active record's (case and whitespace aside) is not saved again; the
    check runs under the store's lock, with the write.

    Raises:
        InvalidInputError: the session may not write now, a ``tool`` or ``conversation``
            candidate names no session (the rule of every write), or a candidate's source is
            not valid.
        the store's errors, as :func:`remember`.
    """
    authorize(session, *(candidate.source for candidate in candidates))
    return session.store.save(candidates, skip_known=skip_known)


def correct(
    session: MemorySession,
    target: Target,
    content: str,
    expected_revision: str,
    *,
    source: WriteSource,
    key: str | Unchanged | None = UNCHANGED,
    extra: Mapping[str, JSONValue] | Unchanged | None = UNCHANGED,
) -> WriteOutcome:
    """Replace a fact's current version with a new one (the outcome names the new version).

    ``target`` is a record id or a :class:`~memquill.store.FactKey`. ``expected_revision`` may
    be the store revision or the record's own revision; either may be given by a unique prefix,
    as may an id: the store expands them under its lock (:mod:`memquill.store._edits`). The id
    of a corrected version stands for the current one when the revision is current; otherwise
    ``not_found`` names the current id and revision. ``key`` renames the fact (``None`` drops
    its key) and ``extra`` replaces its extra JSON; by default both stay.

    Raises:
        InvalidInputError, ConflictError, NotFoundError, SecretError, and the store's errors.
    """
    authorize(session, source.metadata())
    result = session.store.correct(
        target, content, expected_revision, source.metadata(), key=key, extra=extra, prefixes=True
    )
    return outcome_of("update", result, result.record_id, result.status)


def rename_many(
    session: MemorySession, moves: Sequence[tuple[Target, str, str]], *, source: WriteSource
) -> WriteOutcome:
    """Give several facts new keys in one write, all or none (a folder of keys moved).

    Each move is ``(target, new key, expected revision)``, resolved as for :func:`correct`; each
    fact gets a new version with the same text under its new key. The outcome names the first
    new version; ``outcome.result.targets`` has each one, in order.

    Raises:
        InvalidInputError (also for no moves, the same fact or new key twice), ConflictError,
        NotFoundError, and the store's errors.
    """
    authorize(session, source.metadata())
    result = session.store.rename_many(moves, source.metadata(), prefixes=True)
    return outcome_of("update", result, result.record_id, result.status)


def find_operation(
    session: MemorySession, idempotency_key: str, *, source: WriteSource
) -> Record | None:
    """The version (any status) that :func:`remember` wrote for ``source`` with this
    ``idempotency_key``, if any: whether an operation already ran, and what became of it
    (``snapshot().current(record)`` is ``None`` when its fact was forgotten).

    Raises:
        the store's read errors.
    """
    return session.store.find_operation(_namespaced_key(source, "", idempotency_key, None))


def forget(
    session: MemorySession, target: Target, expected_revision: str, *, source: WriteSource
) -> WriteOutcome:
    """Forget a fact and every version of it; its metadata stays behind as a tombstone, without
    its text, key or extra JSON.

    ``source`` says who asks; the tombstone keeps the fact's original provenance. ``target``
    and the revision are resolved as for :func:`correct`; the outcome names the full id.
    Forgetting a forgotten fact is ``duplicate``.

    Raises:
        InvalidInputError, ConflictError, NotFoundError, and the store's errors.
    """
    return forget_many(session, [(target, expected_revision)], source=source)


def forget_revoked_vectors(session: MemorySession, records: Iterable[Record]) -> None:
    """Delete the vectors of every revoked version in ``records`` from ``session``'s
    workspace's vector cache (if it has one)."""
    # Read only once the cache is known to exist: most workspaces have none, and a forget
    # then costs nothing here whatever the store holds.
    revoked = (record.id for record in records if record.status == "revoked")
    try:
        forget_vectors(canonical_workspace(session.workspace), revoked)
    except (sqlite3.Error, OSError, MemquillError):
        return  # the fact is forgotten either way (see the module doc)


def forget_many(
    session: MemorySession, targets: Sequence[tuple[Target, str]], *, source: WriteSource
) -> WriteOutcome:
    """Forget several facts in one write, all or none (each with the revision it was read at).

    The outcome names the first target; ``outcome.result.targets`` has each one, in order.

    Raises:
        as :func:`forget`; InvalidInputError also for no targets.
    """
    authorize(session, source.metadata())
    result = session.store.revoke_many(targets, prefixes=True)
    if result.status == "saved":
        forget_revoked_vectors(session, result.records)
    first = targets[0][0] if targets else None
    outcome = outcome_of("forget", result, result.record_id, result.status)
    named = first.value if isinstance(first, FactKey) else None
    return replace(outcome, key=named)


def forget_current(
    session: MemorySession, target: Target, *, source: WriteSource
) -> WriteOutcome | None:
    """Forget the fact ``target`` names as it stands now, for a caller that holds no revision
    of its own (a framework's ``delete`` by key or id): never a blind write.

    Each attempt reads the store, takes the revision of the version ``target`` names (a
    :class:`~memquill.store.FactKey`: its active fact; an id: that version) and forgets with
    it through :func:`forget`, so compare-and-swap holds as for any forget. When another
    writer moved the fact between the read and the forget (``conflict``), it reads again and
    forgets what it then reads, at most :data:`FORGET_ATTEMPTS` times in all; the last
    ``conflict`` is raised. ``None``: the read found nothing ``target`` names (nothing is
    written).

    The first attempt looks at the store as this session last read or wrote it, without
    reading (a framework's put and delete in turn would otherwise read the whole file at every
    delete): the forget's compare-and-swap checks the revision it takes from there, and a fact
    it does not hold is looked for in a real read.

    Raises:
        NotFoundError: the fact went between the read and the forget, or the version an id
            named was corrected meanwhile (the error names the current one), as :func:`forget`.
        ConflictError: still moving after :data:`FORGET_ATTEMPTS` attempts.
        InvalidInputError, and the store's errors, as :func:`forget`.
    """
    attempt = 1
    recent = True
    while True:
        snapshot = session.store.snapshot(recent=recent)
        if isinstance(target, FactKey):
            record = snapshot.by_key(target.value)
        else:
            record = snapshot.find(target)
        if record is None and recent:
            recent = False
            continue
        recent = False
        if record is None:
            return None
        try:
            return forget(session, target, snapshot.record_revision(record), source=source)
        except ConflictError:
            if attempt == FORGET_ATTEMPTS:
                raise
            attempt += 1


def compact(session: MemorySession, expected_revision: str, *, source: WriteSource) -> WriteOutcome:
    """Drop the text of superseded versions, keeping every tombstone (never automatic).

    ``expected_revision`` may be a prefix of the current store revision.

    Raises:
        InvalidInputError, ConflictError (``expected_revision`` is not the store revision),
        and the store's errors.
    """
    authorize(session, source.metadata())
    result = session.store.compact(expected_revision, prefixes=True)
    return outcome_of("compact", result, None, result.status)


def import_records(
    session: MemorySession, data: bytes, expected_revision: str, *, source: WriteSource
) -> WriteOutcome:
    """Put an edited copy of ``records.md`` back in one validated compare-and-swap write.

    The copy may edit facts' text and add records; every existing record keeps its metadata
    (tombstones stay). Changed and new text passes the session's secret scanner.

    Raises:
        InvalidInputError, CorruptError, ConflictError, SecretError, and the store's errors.
    """
    authorize(session, source.metadata())
    result = session.store.replace(data, expected_revision)
    return outcome_of("import", result, None, result.status)


def authorize(session: MemorySession, *sources: object) -> None:
    """The one rule every write passes before the store is asked: the session may write now
    (write access, and the host still agrees), and each source but a person's own names the
    trusted session it came from (``sessionId``). What else a source must hold is the store's
    to check."""
    if not session.write_allowed():
        raise InvalidInputError(Messages.WRITE_UNAUTHORIZED)
    for source in sources:
        if not isinstance(source, Mapping):
            continue  # no provenance at all: the store refuses it (``source_required``)
        fields = cast(Mapping[str, object], source)
        if fields.get("kind") in _SESSION_KINDS and not fields.get("sessionId"):
            raise InvalidInputError(Messages.NO_SESSION)


def _namespaced_key(
    source: WriteSource, content: str, given: str | None, fact_key: str | None
) -> str:
    # A named fact's default fingerprint covers its key too: the same text under another key
    # (or under none) is another fact.
    text = content if fact_key is None else f"{fact_key}\0{content}"
    if source.kind == "tool":
        # A content fingerprint, as the tool receipt contract defines it.
        fingerprint = given or hashlib.md5(text.encode()).hexdigest()  # noqa: S324
        return f"{_TOOL_KEY_PREFIX}{source.session_id}:{fingerprint}"
    if source.kind == "manual":
        return given or _MANUAL_KEY_PREFIX + sha256_hex(text)
    if given is None:
        raise InvalidInputError(Messages.KEY_REQUIRED)
    return given


def outcome_of(
    operation: Operation, result: WriteResult, record_id: str | None, status: WriteStatus
) -> WriteOutcome:
    # The store reports the record revision of its first target only.
    known = record_id is not None and record_id == result.record_id
    revision = result.record_revision if known else None
    # From the end: the record a write reports is nearly always the one it just appended, and
    # a scan from the start would make every write O(records).
    found = (r for r in reversed(result.records) if r.id == record_id)
    record = next(found, None) if record_id else None
    key = record.key if record is not None else None
    forgotten = result.targets[0].forgotten_at if result.targets else None
    return WriteOutcome(
        operation, status, record_id, result.revision, revision, result, key, forgotten
    )
