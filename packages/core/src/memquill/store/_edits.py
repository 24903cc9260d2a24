"""Corrections and forgets as pure operations: which version a write applies to, and the change.

A write names its fact by record id or by key (:class:`~memquill.store.FactKey`), and the
target is resolved under the writer lock, on the records the transaction read:

- a key: the active version that has it; none → ``not_found`` (whatever the revision: there
  is nothing to read again);
- an unknown id: ``conflict`` unless the revision is the store's, then ``not_found``;
- the id of the active version: that version;
- the id of a corrected version whose fact is still active: the current version, when the
  revision given is current (the store's, or the current version's record revision); else
  ``not_found`` naming the current id and revision. A bare ``conflict`` would send the caller
  round a refresh loop: reading the old id again can never help;
- the id of a forgotten version: ``forget`` answers ``duplicate`` (the fact is gone already,
  whatever revision was given); ``update`` answers ``not_found``. The same for a forgotten
  fact's first id once compact tombstones folded it (the ledger keeps root ids only: a later
  version's id is then unknown);

Then the revision must be the store revision or the target's record revision, else
``conflict``. Forgetting empties every version of each fact and erases its key and extra
metadata: a forgotten ``health/diagnosis`` leaves no trace of its name, while the tombstones
keep blocking the fact's idempotency keys and source messages, and each keeps a keyed
fingerprint of the text its version held (:mod:`memquill.store._tombstones`). A correction
from a tool or a conversation to text a forgotten fact held is ``blocked``; a person's is not.

A write that allows it (``prefixes``: the tools' and the CLI's) may name its fact and revision
by the short forms read tools show (:func:`_expanded`); they are expanded here, on the same
records, so the full revision is still compared under the lock and a prefix never weakens
compare-and-swap.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Final, cast

from memquill.errors import ConflictError, InvalidInputError, Messages, NotFoundError
from memquill.foundation.text import utf16_len
from memquill.jsondoc import parse_json
from memquill.store._codec import MAX_CONTENT_UNITS
from memquill.store._record import FactKey, JSONValue, Record
from memquill.store._record_key import distinct_keys, keyed_fields
from memquill.store._results import UNCHANGED, Snapshot, Target, Unchanged, check_revision
from memquill.store._tombstones import (
    BLOCKING_KINDS,
    text_fingerprint,
    with_fingerprint,
)
from memquill.store._transaction import Operation, Outcome, Reads


def resolve_target(
    snapshot: Snapshot, target: Target, expected: str, *, forgetting: bool
) -> Record | None:
    """The version a correction (``forgetting=False``) or forget applies to (module docstring);
    ``None`` when forgetting a fact that is forgotten already.

    Raises:
        NotFoundError: no such fact (or, for an old version, naming the current one).
        ConflictError: ``expected`` is neither the store's nor the target's revision.
    """
    if isinstance(target, FactKey):
        record = snapshot.by_key(target.value)
        if record is None:
            raise NotFoundError(Messages.KEY_NOT_FOUND.format(key=target.value))
        return _checked(snapshot, record, expected)
    record = snapshot.find(target)
    if record is None:
        if forgetting and snapshot.ledger().holds_root(target):
            return None  # a fact forgotten and folded since: forgotten already, as before
        if expected != snapshot.revision:  # as before there were keys: the revision first
            raise ConflictError(Messages.STALE)
        raise NotFoundError(Messages.NOT_FOUND if forgetting else Messages.ACTIVE_NOT_FOUND)
    if record.status == "revoked":
        if forgetting:
            return None
        raise NotFoundError(Messages.ACTIVE_NOT_FOUND)
    if record.status == "active":
        return _checked(snapshot, record, expected)
    current = snapshot.current(record)
    if current is None:  # a fact with no current version (only a hand edit leaves one)
        if forgetting:
            return _checked(snapshot, record, expected)
        raise NotFoundError(Messages.ACTIVE_NOT_FOUND)
    revision = snapshot.record_revision(current)
    if expected not in (snapshot.revision, revision):
        message = Messages.CORRECTED.format(
            old=record.id, current=current.id, revision=revision[:16]
        )
        raise NotFoundError(message, current.id, revision)
    return current


def _checked(snapshot: Snapshot, record: Record, expected: str) -> Record:
    check_revision(snapshot, record, expected)
    return record


FULL_ID: Final = 36
"""Characters of a record id (a UUID)."""
FULL_REVISION: Final = 64
"""Hex digits of a store or record revision (SHA-256)."""


def _expanded(
    snapshot: Snapshot,
    named: Sequence[tuple[Target, str]],
    prefixes: bool,
    *,
    forgetting: bool,
) -> list[tuple[Target, str]]:
    """``named`` with its short forms (read tools show an id once and a revision by 16 digits)
    expanded when ``prefixes`` allows them: an id prefix by :func:`expand_id`, a revision
    prefix by :func:`expand_revision` (for a key, against its active fact; :func:`resolve_target`
    answers for a key no fact has). Every one is expanded before any is checked, so a batch's
    first refusal is the same whatever comes after it.

    Raises:
        InvalidInputError, NotFoundError: as :func:`expand_id`.
    """
    if not prefixes:
        return list(named)
    expanded: list[tuple[Target, str]] = []
    for target, revision in named:
        if isinstance(target, FactKey):
            record = snapshot.by_key(target.value)
            record_id = None if record is None else record.id
        else:
            target = record_id = expand_id(snapshot, target, forgetting=forgetting)
        expanded.append((target, expand_revision(snapshot, record_id, revision)))
    return expanded


def expand_id(snapshot: Snapshot, given: str, *, forgetting: bool) -> str:
    """The one record id ``given`` is, or starts (active records first); a full id as given.

    Raises:
        InvalidInputError: the prefix names more than one record.
        NotFoundError: it names none.
    """
    if len(given) == FULL_ID or snapshot.find(given) is not None:
        return given
    active = [r for r in snapshot.records if r.status == "active"]
    for pool in (active, snapshot.records):
        matches = sorted({record.id for record in pool if given and record.id.startswith(given)})
        if len(matches) > 1:
            raise InvalidInputError(Messages.ID_AMBIGUOUS)
        if matches:
            return matches[0]
    raise NotFoundError(Messages.NOT_FOUND if forgetting else Messages.ACTIVE_NOT_FOUND)


def expand_revision(snapshot: Snapshot, record_id: str | None, given: str) -> str:
    """The current revision (the store's, the record's or, for an old version of a fact that
    is still active, the current version's) that ``given`` is or starts.

    A prefix of none of them is returned as given: it matches no full revision, so the check
    that follows refuses it as it refuses any stale revision (``conflict``, or ``not_found``
    naming the current version of a corrected one).
    """
    if len(given) == FULL_REVISION:
        return given
    current = [snapshot.revision]
    target = None if record_id is None else snapshot.find(record_id)
    if target is not None:
        current.append(snapshot.record_revision(target))
        latest = snapshot.current(target)
        if latest is not None and latest is not target:
            current.append(snapshot.record_revision(latest))
    for revision in current:
        if given and revision.startswith(given):
            return revision
    return given


def correction(
    target: Target,
    content: str,
    given: str,
    source: Mapping[str, JSONValue],
    *,
    key: str | Unchanged | None,
    extra: Mapping[str, JSONValue] | Unchanged | None,
    record_key: bytes,
    now: Callable[[], str],
    new_id: Callable[[], str],
    known_keys: Sequence[bytes] = (),
    prefixes: bool = False,
) -> Operation:
    """The operation that supersedes the target's current version with ``content``.

    ``key`` renames the fact (``None`` removes its key) and ``extra`` replaces its extra
    metadata; :data:`UNCHANGED` keeps them. The arguments are validated already. ``known_keys``
    are the other keys whose forgotten-text fingerprints count. With ``prefixes`` the target
    and revision may be short forms (:func:`expand`).
    """

    def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        [(named, expected)] = _expanded(snapshot, [(target, given)], prefixes, forgetting=False)
        current = resolve_target(snapshot, named, expected, forgetting=False)
        assert current is not None  # only a forget resolves to nothing
        keys = distinct_keys(record_key, known_keys)
        when = snapshot.forgotten_at(text_fingerprint(k, content) for k in keys)
        if when is not None and source.get("kind") in BLOCKING_KINDS:
            return Outcome("blocked", (None,), forgotten_at=(when,))
        new_key = current.key if key is UNCHANGED else key
        snapshot.check_key_free(new_key, {current.root_id})
        stamp = now()
        version = _supersede(
            snapshot,
            draft,
            current,
            content,
            expected,
            source,
            key=key,
            extra=extra,
            record_key=record_key,
            stamp=stamp,
            new_id=new_id,
        )
        whole = expected == snapshot.revision or (
            prefixes and isinstance(named, str) and len(named) != FULL_ID  # a prefix: every id
        )
        reads = None if whole else _family_reads(current, named, new_key)
        return Outcome(
            "saved", (version.id,), frozenset({version.id}), forgotten_at=(when,), reads=reads
        )

    return operation


def _family_reads(current: Record, named: Target, new_key: str | None) -> Reads:
    """What a correction checked by the fact's own revision looked at: its fact and keys."""
    keys = {current.key, new_key, named.value if isinstance(named, FactKey) else None}
    return Reads(roots=frozenset({current.root_id}), keys=frozenset(k for k in keys if k))


def renaming(
    moves: Sequence[tuple[Target, str, str]],
    source: Mapping[str, JSONValue],
    *,
    record_key: bytes,
    now: Callable[[], str],
    new_id: Callable[[], str],
    prefixes: bool = False,
) -> Operation:
    """The operation that gives several facts new keys in one write, all or none (a folder of
    keys moved, say): each ``(target, new key, revision)`` gets a new version with the same
    text and extra metadata under the new key, as a correction with ``key`` does.

    Each target is resolved and its revision checked as for a correction (short forms too,
    with ``prefixes``). A new key may be one that a fact of the same batch gives up; it may not
    name any other active fact, and no two moves may name the same fact or the same new key.
    The keys are validated already.
    """

    def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        named = _expanded(snapshot, [(t, r) for t, _, r in moves], prefixes, forgetting=False)
        chosen: list[tuple[Record, str, str]] = []
        for (target, expected), (_, new_key, _) in zip(named, moves, strict=True):
            current = resolve_target(snapshot, target, expected, forgetting=False)
            assert current is not None  # only a forget resolves to nothing
            chosen.append((current, new_key, expected))
        roots = {current.root_id for current, _, _ in chosen}
        if len(roots) != len(chosen):
            raise InvalidInputError(Messages.BATCH_FACTS)
        if len({new_key for _, new_key, _ in chosen}) != len(chosen):
            raise InvalidInputError(Messages.BATCH_KEYS)
        for _, new_key, _ in chosen:
            snapshot.check_key_free(new_key, roots)
        stamp = now()
        ids = tuple(
            _supersede(
                snapshot,
                draft,
                current,
                current.content,
                expected,
                source,
                key=new_key,
                extra=UNCHANGED,
                record_key=record_key,
                stamp=stamp,
                new_id=new_id,
            ).id
            for current, new_key, expected in chosen
        )
        return Outcome("saved", ids, frozenset(ids))

    return operation


def _supersede(
    snapshot: Snapshot,
    draft: list[Record],
    current: Record,
    content: str,
    expected: str,
    source: Mapping[str, JSONValue],
    *,
    key: str | Unchanged | None,
    extra: Mapping[str, JSONValue] | Unchanged | None,
    record_key: bytes,
    stamp: str,
    new_id: Callable[[], str],
) -> Record:
    """Mark ``current`` superseded in ``draft`` and append its new version (returned)."""
    position = _position(snapshot, draft, current)
    draft[position] = current.evolve(status="superseded", updatedAt=stamp)
    hashed = keyed_fields(record_key, f"correction:{current.id}:{expected}:{content}")
    version = current.successor(content, new_id=new_id(), source=source, stamp=stamp, hashed=hashed)
    if key is not UNCHANGED or extra is not UNCHANGED:
        version = version.with_fact_fields(
            current.key if key is UNCHANGED else key,
            current.extra if extra is UNCHANGED else extra,
        )
    draft.append(version)
    return version


def _position(snapshot: Snapshot, draft: list[Record], record: Record) -> int:
    """Where ``record`` is in ``draft``: at its place in ``snapshot`` (indexed), unless the
    draft moved it (then looked for)."""
    found = snapshot.position(record.id)
    if found is not None and found < len(draft) and draft[found] is record:
        return found
    return draft.index(record)


def revocation(
    targets: Sequence[tuple[Target, str]],
    now: Callable[[], str],
    record_key: bytes,
    *,
    prefixes: bool = False,
) -> Operation:
    """The operation that forgets every target's fact in one write (each target with the
    revision it was read at; short forms too, with ``prefixes``); ``duplicate`` when all of
    them were forgotten already. Every version keeps the fingerprint of the text it held,
    keyed with ``record_key``."""

    def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        roots: set[str] = set()
        ids: list[str] = []
        changed: set[str] = set()
        for target, expected in _expanded(snapshot, targets, prefixes, forgetting=True):
            record = resolve_target(snapshot, target, expected, forgetting=True)
            if record is None:
                assert isinstance(target, str)  # a key never names a forgotten fact
                ids.append(target)
                continue
            roots.add(record.root_id)
            ids.append(record.id)
            changed.add(record.id)
        if not roots:
            return Outcome("duplicate", tuple(ids))
        stamp = now()
        for root in sorted(roots):  # each version in its place: a v3 file appends the claims
            for member in snapshot.family_of(root):
                draft[_position(snapshot, draft, member)] = _erased(member, stamp, record_key)
        return Outcome("saved", tuple(ids), frozenset(changed))

    return operation


def _erased(record: Record, stamp: str, record_key: bytes) -> Record:
    """The tombstone of ``record``: no text, no key, no extra metadata; the fingerprint of its
    text."""
    record = with_fingerprint(record, record_key)
    if record.key is not None or record.extra is not None:
        record = record.with_fact_fields(None, None)
    return record.evolve("", status="revoked", updatedAt=stamp)


def check_extra(
    extra: Mapping[str, JSONValue] | None, scan: Callable[[str], None]
) -> dict[str, JSONValue] | None:
    """A plain JSON copy of ``extra``, checked like content: at most 16000 UTF-16 units of
    compact JSON, and no credential material in it (``scan``: a scanner's ``check`` of that
    JSON text, raising ``SecretError``).

    Raises:
        InvalidInputError: not a JSON object, not encodable, or too long.
        SecretError: it holds credential material.
    """
    if extra is None:
        return None
    if not isinstance(cast(object, extra), Mapping):  # callers outside the type checker
        raise InvalidInputError(Messages.EXTRA_INVALID)
    try:
        text = json.dumps(dict(extra), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        text.encode()
    except (TypeError, ValueError, RecursionError):
        raise InvalidInputError(Messages.EXTRA_INVALID) from None
    if utf16_len(text) > MAX_CONTENT_UNITS:
        raise InvalidInputError(Messages.EXTRA_INVALID)
    try:
        # Read back as records.md is read: nesting deeper than the codec takes is refused now.
        copied: dict[str, JSONValue] = parse_json(text)
    except ValueError:
        raise InvalidInputError(Messages.EXTRA_INVALID) from None
    scan(text)
    return copied
