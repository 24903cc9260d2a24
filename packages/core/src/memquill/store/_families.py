"""Fact families after a merge: forgotten stays forgotten, one active version, unique keys.

A family is every version sharing one ``rootId``. A store on one machine keeps three rules for
each: a forgotten family has every version revoked and empty; a family has at most one active
version; a named key belongs to one active family. The union of two machines' records can
break each of them, and :func:`normalise_families` restores them the same way whichever
machine merges (``docs/sync.md``):

- **Forgotten anywhere, forgotten everywhere.** A family with a revoked version has all its
  versions revoked, their text, named key and extra metadata erased (as ``forget`` erases
  them), and ``updatedAt`` the latest forget's (the merge has no clock of its own: it never
  invents a time).
- **Diverged.** Two machines that corrected the same fact leave two active versions. The one
  whose chain of corrections is newest stays active: each version's rank is the latest
  ``createdAt`` along its chain back to the first version, then the chain's length, then its
  id. The others become ``superseded`` (their text and ``updatedAt`` kept) and, being
  superseded with no successor, are reported as *diverged* until a person chooses
  (``memquill sync keep``), which marks each with ``resolvedBy``.
- **One key, one family.** Two families that took the same key on different machines: the
  family whose first version has the smaller ``(createdAt, id)`` keeps it; the other's active
  version is renamed ``<key>~<first 8 characters of its rootId>`` (longer if that is taken
  too; the key shortened to stay within 200 characters; superseded versions keep the key they
  had, as history does), and is reported until it is renamed again or forgotten.

:func:`divergences` and :func:`renamed_keys` find what is still waiting for a person in any
file, so ``doctor`` and the management page can show it; :func:`keep_operation` is a person's
choice among a diverged fact's versions (``memquill sync keep``), a store write checked against
the revision they looked at, like every other write.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from memquill.errors import InvalidInputError, Messages, NotFoundError
from memquill.store._edits import expand_id, expand_revision
from memquill.store._record import EXTRA_FIELD, KEY_FIELD, JSONValue, Record, by_family
from memquill.store._results import Snapshot, check_revision
from memquill.store._tombstones import with_fingerprint
from memquill.store._transaction import Operation, Outcome

_ERASED: Final = frozenset({KEY_FIELD, EXTRA_FIELD})
_MAX_KEY: Final = 200
RESOLVED_FIELD: Final = "resolvedBy"
"""On a diverged version a person has dealt with: the id of the version they kept."""
_RENAMED: Final = re.compile(r"(?P<key>.+)~(?P<root>[0-9a-f-]{8,36})")
_SHORT: Final = 8


@dataclass(frozen=True, slots=True)
class Divergence:
    """A fact corrected differently on two machines.

    Attributes:
        root_id: the family.
        active_id: the version that stands (the newest correction).
        other_ids: the other machines' corrections, kept as superseded history.
    """

    root_id: str
    active_id: str
    other_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class KeyRename:
    """A named key two families took: ``root_id``'s family now carries ``renamed``."""

    key: str
    root_id: str
    renamed: str


@dataclass(frozen=True, slots=True)
class Families:
    """Records with the family rules restored, and what that decided."""

    records: tuple[Record, ...]
    diverged: tuple[Divergence, ...]
    renamed_keys: tuple[KeyRename, ...]


def normalise_families(records: Iterable[Record], record_key: bytes | None = None) -> Families:
    """Restore the three family rules (see the module docstring) on merged ``records``.

    A version whose text a forget on the other side erases keeps its text's fingerprint
    (:mod:`memquill.store._tombstones`), keyed with ``record_key`` (``None``: not kept)."""
    families = by_family(records)
    diverged: list[Divergence] = []
    for root in sorted(families):
        members = families[root]
        if any(record.status == "revoked" for record in members):
            families[root] = _forgotten(members, record_key)
            continue
        families[root], divergence = _one_active(root, members)
        if divergence is not None:
            diverged.append(divergence)
    renames = _unique_keys(families)
    return Families(
        tuple(record for root in sorted(families) for record in families[root]),
        tuple(diverged),
        renames,
    )


def _forgotten(members: Sequence[Record], record_key: bytes | None) -> list[Record]:
    stamp = max(record.updated_at for record in members if record.status == "revoked")
    return [forgotten_version(with_fingerprint(r, record_key), stamp) for r in members]


def forgotten_version(record: Record, stamp: str) -> Record:
    """``record`` as a tombstone: revoked at ``stamp``, no text, no named key, no extra."""
    meta: dict[str, JSONValue] = {k: v for k, v in record.meta.items() if k not in _ERASED}
    meta["status"] = "revoked"
    meta["updatedAt"] = stamp
    if meta == dict(record.meta) and not record.content and list(meta) == list(record.meta):
        return record
    return Record(meta, "")


def _one_active(root: str, members: list[Record]) -> tuple[list[Record], Divergence | None]:
    active = [record for record in members if record.status == "active"]
    if len(active) < 2:
        return members, None
    ranks = _chain_ranks(members)
    winner = max(active, key=lambda record: ranks[record.id])
    others = {record.id for record in active if record is not winner}
    demoted = [
        record.evolve(status="superseded") if record.id in others else record for record in members
    ]
    return demoted, Divergence(root, winner.id, tuple(sorted(others)))


def _chain_ranks(members: Sequence[Record]) -> dict[str, tuple[str, int, str]]:
    """Each version's rank: the latest ``createdAt`` on its chain, the chain's length, its id.

    A correction always ranks above the version it corrects, whatever the clocks said.
    """
    by_id = {record.id: record for record in members}
    ranks: dict[str, tuple[str, int, str]] = {}
    for start in members:
        trail: list[Record] = []
        seen: set[str] = set()
        current: Record | None = start
        while current is not None and current.id not in ranks and current.id not in seen:
            seen.add(current.id)
            trail.append(current)
            previous = current.supersedes
            current = by_id.get(previous) if previous is not None else None
        latest, depth = ("", 0)
        if current is not None and current.id in ranks:
            latest, depth, _ = ranks[current.id]
        for record in reversed(trail):
            latest, depth = max(latest, record.created_at), depth + 1
            ranks[record.id] = (latest, depth, record.id)
    return ranks


def _unique_keys(families: dict[str, list[Record]]) -> tuple[KeyRename, ...]:
    holders: dict[str, list[str]] = defaultdict(list)
    for root in sorted(families):
        key = _family_key(families[root])
        if key is not None:
            holders[key].append(root)
    taken = set(holders)
    renames: list[KeyRename] = []
    for key in sorted(holders):
        roots = holders[key]
        if len(roots) < 2:
            continue
        for root in sorted(roots, key=lambda r: _first_version(families[r]))[1:]:
            new = renamed_key(key, root, taken)
            taken.add(new)
            families[root] = [
                Record({**record.meta, KEY_FIELD: new}, record.content)
                if record.status == "active" and record.meta.get(KEY_FIELD) == key
                else record
                for record in families[root]
            ]
            renames.append(KeyRename(key, root, new))
    return tuple(renames)


def _family_key(members: Sequence[Record]) -> str | None:
    """The named key of a family's active version, if it has one."""
    for record in members:
        if record.status == "active":
            key = record.meta.get(KEY_FIELD)
            return key if isinstance(key, str) else None
    return None


def _first_version(members: Sequence[Record]) -> tuple[str, str]:
    first = next((r for r in members if r.id == r.root_id), None)
    if first is None:
        first = min(members, key=lambda r: (r.created_at, r.id))
    return (first.created_at, first.id)


def renamed_key(key: str, root_id: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """The key a family that lost ``key`` to another carries: ``key~<rootId prefix>`` (the key
    shortened when that would exceed 200 characters, never inside a ``%XX`` escape)."""
    candidate = key
    for length in range(_SHORT, len(root_id) + 1):
        suffix = f"~{root_id[:length]}"
        stem = key[: _MAX_KEY - len(suffix)]
        if stem.endswith("%"):
            stem = stem[:-1]
        elif stem[-2:-1] == "%":
            stem = stem[:-2]
        candidate = stem + suffix
        if candidate not in taken:
            return candidate
    return candidate


def is_renamed_key(candidate: str, key: str) -> bool:
    """Whether ``candidate`` is what a merge renames ``key`` to (for some family)."""
    found = _RENAMED.fullmatch(candidate)
    return found is not None and found["key"] == key


def divergences(records: Sequence[Record]) -> tuple[Divergence, ...]:
    """Facts whose other machines' corrections still wait for a person's choice.

    A version waits when it is superseded, nothing supersedes it (a correction would), it has
    no ``resolvedBy``, it still holds text, and that text differs from the active version's.
    """
    successors = {record.supersedes for record in records if record.supersedes is not None}
    families = by_family(records)
    found: list[Divergence] = []
    for root in sorted(families):
        members = families[root]
        active = next((r for r in members if r.status == "active"), None)
        if active is None:
            continue
        waiting = tuple(
            sorted(
                record.id
                for record in members
                if record.status == "superseded"
                and record.id not in successors
                and RESOLVED_FIELD not in record.meta
                and record.content
                and record.content != active.content
            )
        )
        if waiting:
            found.append(Divergence(root, active.id, waiting))
    return tuple(found)


def renamed_keys(records: Sequence[Record]) -> tuple[KeyRename, ...]:
    """Active facts still carrying a key a merge renamed (``key~<their rootId prefix>``)."""
    found: list[KeyRename] = []
    for record in records:
        key = record.meta.get(KEY_FIELD)
        if record.status != "active" or not isinstance(key, str):
            continue
        match = _RENAMED.fullmatch(key)
        if match is not None and record.root_id.startswith(match["root"]):
            found.append(KeyRename(match["key"], record.root_id, key))
    return tuple(found)


def family_of(records: Sequence[Record], record_id: str) -> tuple[Record, ...]:
    """Every version of the family ``record_id`` belongs to (empty if it is unknown)."""
    target = next((record for record in records if record.id == record_id), None)
    if target is None:
        return ()
    return tuple(record for record in records if record.root_id == target.root_id)


def keep_operation(
    record_id: str,
    expected_revision: str,
    *,
    source: dict[str, JSONValue],
    now: str,
    new_id: Callable[[], str],
    hashed: Callable[[str], dict[str, JSONValue]],
    prefixes: bool = False,
) -> Operation:
    """The operation that settles a diverged fact on the version ``record_id`` (with
    ``prefixes``, the id and the revision may be short forms: :mod:`memquill.store._edits`).

    Keeping the active version marks every waiting version ``resolvedBy`` it. Keeping one of
    the other machines' versions writes its text as a new version correcting the active one
    (``source``, at ``now``), and marks every waiting version ``resolvedBy`` the new one.
    ``hashed`` gives the operation-hash fields of a key.

    Raises (when run):
        ConflictError: ``expected_revision`` is neither the store's nor the record's revision.
        NotFoundError: no record has that id. InvalidInputError: it is not part of a diverged
            fact.
    """

    def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        named, expected = record_id, expected_revision
        if prefixes:  # any version may be kept: an unknown prefix is ``not_found``, as a forget's
            named = expand_id(snapshot, named, forgetting=True)
            expected = expand_revision(snapshot, named, expected)
        target = snapshot.find(named)
        check_revision(snapshot, target, expected)
        if target is None:
            raise NotFoundError(Messages.NOT_FOUND)
        found = _divergence_of(snapshot, target.id)
        if found is None:
            raise InvalidInputError(Messages.NOT_DIVERGED)
        active = snapshot.find(found.active_id)
        assert active is not None  # divergences name an active version
        kept = active.id
        if target.id != active.id:
            kept = new_id()
            draft[draft.index(active)] = active.evolve(status="superseded", updatedAt=now)
            material = f"keep:{target.id}:{active.id}:{expected}"
            successor = active.successor(
                target.content, new_id=kept, source=source, stamp=now, hashed=hashed(material)
            )
            draft.append(successor)
        waiting = set(found.other_ids)
        draft[:] = [
            Record({**record.meta, RESOLVED_FIELD: kept}, record.content)
            if record.id in waiting
            else record
            for record in draft
        ]
        return Outcome("saved", (kept,), frozenset({kept}))

    return operation


def _divergence_of(snapshot: Snapshot, record_id: str) -> Divergence | None:
    for found in divergences(snapshot.records):
        if record_id == found.active_id or record_id in found.other_ids:
            return found
    return None
