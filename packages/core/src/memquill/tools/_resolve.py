"""Which fact and revision a write names, when it gives a prefix instead of the full value.

Read tools show a record's id once (in its path) and its revision by the first 16 hex digits,
so a model copies less; the write path takes those back. A prefix is resolved against a
snapshot of the store: an id prefix must name exactly one record (an active one first: older
versions of other facts that share the prefix do not make it ambiguous), and a revision prefix
must start the current store revision, the named record's current revision, or (for an old
version of a fact that is still active) the current version's revision. The store then
resolves the target and compares the full revision under its lock as always, so a prefix
matches only a revision that is still current when the write happens: resolving never weakens
compare-and-swap.

Full values (36-character ids, 64-digit revisions) pass through without reading the store; a
key (:class:`~memquill.store.FactKey`) is resolved by the store itself.
"""

from __future__ import annotations

from typing import Final

from memquill.errors import InvalidInputError, Messages, NotFoundError
from memquill.store import FactKey, RecordStore, Snapshot, Target

FULL_ID: Final = 36
"""Characters of a record id (a UUID)."""
FULL_REVISION: Final = 64
"""Hex digits of a store or record revision (SHA-256)."""


def resolve_target(
    store: RecordStore, target: Target, revision: str, *, forgetting: bool
) -> tuple[Target, str]:
    """The full record id (or the key) and the full revision that ``target`` and ``revision``
    name.

    Raises:
        InvalidInputError: the id prefix names more than one record.
        NotFoundError: it names none.
    """
    if len(revision) == FULL_REVISION and (isinstance(target, FactKey) or len(target) == FULL_ID):
        return target, revision
    snapshot = store.snapshot()
    if isinstance(target, FactKey):
        record = snapshot.by_key(target.value)
        if record is None:
            return target, revision  # the store answers: no active fact has that key
        return target, resolve_revision(snapshot, record.id, revision)
    if len(target) != FULL_ID:
        try:
            target = resolve_record(snapshot, target, active_only=False)
        except NotFoundError:
            if forgetting:
                raise
            raise NotFoundError(Messages.ACTIVE_NOT_FOUND) from None
    if len(revision) != FULL_REVISION:
        revision = resolve_revision(snapshot, target, revision)
    return target, revision


def resolve_record(snapshot: Snapshot, given: str, *, active_only: bool) -> str:
    """The one record id ``given`` is, or starts (active records first)."""
    eligible = [r for r in snapshot.records if r.status == "active" or not active_only]
    if any(record.id == given for record in eligible):
        return given
    pools = [[r for r in eligible if r.status == "active"]]
    if not active_only:
        pools.append(eligible)
    for pool in pools:
        matches = sorted({record.id for record in pool if given and record.id.startswith(given)})
        if len(matches) > 1:
            raise InvalidInputError(Messages.ID_AMBIGUOUS)
        if matches:
            return matches[0]
    raise NotFoundError(Messages.ACTIVE_NOT_FOUND if active_only else Messages.NOT_FOUND)


def resolve_revision(snapshot: Snapshot, record_id: str | None, given: str) -> str:
    """The current revision (the store's, or the record's) that ``given`` is or starts.

    A prefix of none of them is returned as given: it matches no full revision, so the store
    refuses it under its lock with the answer it gives any stale revision (``conflict``, or
    ``not_found`` naming the current version of a corrected one).
    """
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
