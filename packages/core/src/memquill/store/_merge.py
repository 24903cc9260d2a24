"""The record-level three-way merge of two ``records.md`` files (``memquill merge``).

Two machines that keep one workspace in git or a file-sync tool each append records to their
own copy; a text merge of the two conflicts at the file's tail, and a union of lines gives a
file the decoder refuses. This merge works on records instead, and gives the same bytes
whichever side is "ours" (``docs/sync.md`` is the contract):

1. **Union by id.** Every record of either side is in the result; a record only the base
   holds was dropped on both sides and stays out.
2. **One record, two copies** (the same id on both sides) joins field by field. The copy with
   the higher standing — status (``revoked`` > ``superseded`` > ``active``), then
   ``updatedAt``, then its encoded block — *leads*: its status and ``updatedAt`` win. Content:
   empty when revoked; empty when a superseded copy was compacted; else the text both hold,
   else (a hand edit) the one that changed since the base, else the leading copy's. Every
   other metadata key, unknown keys included: the value both hold, else the one that changed
   since the base, else the leading copy's; a divergence resolution (``resolvedBy``) is never
   undone, and a key renamed by an earlier merge stays renamed. Key order: the leading copy's,
   then the other's extra keys.
3. **A duplicate operation is kept once.** Records with the same ``operationHash`` and the
   same text (or no text left) are one write made on two machines: the one with the smaller
   ``(createdAt, id)`` stands for both, every reference to the other is redirected to it, and
   its status is the higher of theirs (so forgetting either forgets both).
4. **Families** (:mod:`memquill.store._families`): a family forgotten on either side is
   forgotten with every version's text erased (each keeps its text's fingerprint,
   ``textHash``: the fingerprints of both sides are carried, as any metadata is); two
   machines that corrected one fact differently leave one active version (the newest
   correction wins) and the others kept as superseded history, reported as *diverged*; two
   families that took the same named key keep it for the older family and rename the other's.
5. **Compact tombstones** (:mod:`memquill.store._tombstones`): a family the ledger of either
   side names is forgotten; when either side holds a ledger, the result is compacted as
   ``memquill compact`` would (the ledgers as one, forgotten families folded, history beyond
   the retention depth folded), so a compacted and an uncompacted copy give the compacted
   bytes on every machine.
6. **Canonical order**: records sorted by ``(createdAt, id)``; the header is the original
   system's when either side has it (so that system can still read the file), else memquill's.

The merge is pure (bytes in, bytes out) and the result always decodes: every invariant the
store keeps holds for it. Neither side is trusted more than the other, so the result is the
same when the sides are swapped, and merging a result again changes nothing.

It runs on three files (:func:`merge_files`: the git merge driver's), or as an operation the
store's locked transaction runs on the current records, any backend (:func:`merge_operation`:
``RecordStore.merge`` and ``resolve_conflict_copies``): the merge takes the writer lock,
merges whatever the store holds at that moment and publishes atomically.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, TypeAlias

from memquill.errors import CapacityError, ConflictError, CorruptError, Messages
from memquill.store._codec import (
    HEADER,
    MAX_STORE_BYTES,
    StoreImage,
    decode_store,
    encode_block,
    encode_store,
    merged_header,
)
from memquill.store._families import (
    RESOLVED_FIELD,
    Divergence,
    KeyRename,
    forgotten_version,
    is_renamed_key,
    normalise_families,
)
from memquill.store._record import KEY_FIELD, JSONValue, Record
from memquill.store._results import Snapshot, WriteResult
from memquill.store._tombstones import (
    fold,
    is_ledger,
    ledger_of,
    text_fingerprint,
    token,
    with_fingerprint,
)
from memquill.store._transaction import Operation, Outcome

_RANK: Final = {"active": 0, "superseded": 1, "revoked": 2}
_OWN_FIELDS: Final = frozenset({"status", "updatedAt"})
_COMPACT: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)  # as the file


class _Missing:
    """A metadata key a copy does not have (distinct from a JSON ``null``)."""

    __slots__ = ()


_MISSING: Final = _Missing()
_Value: TypeAlias = "JSONValue | _Missing"


@dataclass(frozen=True, slots=True)
class MergeReport:
    """What a merge decided that a person may want to know.

    Attributes:
        added: records the result holds that "ours" did not.
        folded: duplicate operations (two records of one write) kept once.
        diverged: facts corrected differently on two machines, decided by the merge.
        renamed_keys: named keys two families took; the younger family's was renamed.
        both_edited: ids whose text both sides edited by hand since the base (one was kept).
    """

    added: int = 0
    folded: int = 0
    diverged: tuple[Divergence, ...] = ()
    renamed_keys: tuple[KeyRename, ...] = ()
    both_edited: tuple[str, ...] = field(default=())

    def lines(self) -> list[str]:
        """One sentence per decision, for the person running the merge."""
        found = [f"{self.added} record(s) added"] if self.added else []
        if self.folded:
            found.append(f"{self.folded} duplicate write(s) kept once")
        found.extend(
            f"fact {item.active_id[:8]} diverged: corrected on two machines; kept the newest "
            f"correction, the other{'s' if len(item.other_ids) > 1 else ''} "
            f"({', '.join(i[:8] for i in item.other_ids)}) kept as history "
            "(`memquill sync status` shows them, `memquill sync keep` chooses)"
            for item in self.diverged
        )
        found.extend(
            f"key {item.key!r} was taken on two machines: fact {item.root_id[:8]} is now "
            f"{item.renamed!r}"
            for item in self.renamed_keys
        )
        found.extend(
            f"record {record_id[:8]}: its text was edited by hand on both sides; one edit kept"
            for record_id in self.both_edited
        )
        return found


@dataclass(frozen=True, slots=True)
class Merged:
    """A merge's result: the file's header and records (canonical order), and the report."""

    header: str
    records: tuple[Record, ...]
    report: MergeReport

    def encode(self) -> bytes:
        """The merged file's bytes (empty when neither side had a file)."""
        if not self.header:
            return b""
        return encode_store(StoreImage(self.header, self.records)).encode()


def merge_files(
    base: bytes, ours: bytes, theirs: bytes, record_key: bytes | None = None
) -> tuple[bytes, MergeReport]:
    """Merge three ``records.md`` files (bytes; empty means no file) into one; text a forget
    erases keeps its fingerprint keyed with ``record_key`` (``None``: not kept).

    Raises:
        CorruptError: a side (or the base) is not a valid managed records file.
        CapacityError: the merged file would exceed 2 MiB.
    """
    base_image = decode_side(base, Messages.MERGE_BASE_CORRUPT)
    ours_image = decode_side(ours, Messages.MERGE_OURS_CORRUPT)
    theirs_image = decode_side(theirs, Messages.MERGE_THEIRS_CORRUPT)
    merged = merge_images(
        base_image, ours_image, theirs_image, empty=not (ours or theirs), record_key=record_key
    )
    data = merged.encode()
    if len(data) > MAX_STORE_BYTES:
        raise CapacityError(Messages.FULL)
    return data, merged.report


@dataclass(frozen=True, slots=True)
class MergeResult:
    """What merging another copy into the store did.

    Attributes:
        write: the store's answer (``saved``: the file changed; ``duplicate``: it already held
            everything the other copy had).
        report: what the merge decided (added, folded, diverged, renamed keys).
    """

    write: WriteResult
    report: MergeReport


def merge_operation(
    theirs: bytes,
    base: bytes,
    expected_revision: str | None,
    reports: list[MergeReport],
    backup: datetime | None = None,
    record_key: bytes | None = None,
) -> Operation:
    """The operation that merges ``theirs`` (with common ancestor ``base``) into the store.

    ``reports`` receives the merge's report when it runs; with ``backup``, the file is backed
    up first when the merge changes it (``memory/.records-backup-<backup>.md``). Text a forget
    erases keeps its fingerprint, keyed with ``record_key``.

    Raises (when built):
        CorruptError: ``theirs`` or ``base`` is not a valid managed records file.
    Raises (when run):
        ConflictError: ``expected_revision`` is given and is not the store revision.
    """
    their_image = decode_side(theirs, Messages.MERGE_THEIRS_CORRUPT)
    base_image = decode_side(base, Messages.MERGE_BASE_CORRUPT)
    # Theirs counts only as a file (an empty side decodes with memquill's header); the
    # transaction ranks it against ours (``merged_header``), as the merge driver does.
    header = their_image.header if theirs else None

    def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
        if expected_revision is not None and expected_revision != snapshot.revision:
            raise ConflictError(Messages.STALE)
        merged = merge_records(
            base_image.records, snapshot.records, their_image.records, record_key
        )
        reports.append(merged.report)
        # No records either side and no file to take from the other: do not create one (any
        # other unchanged result is caught by the transaction, which compares the bytes).
        if not merged.records and not snapshot.records and not theirs:
            return Outcome("duplicate")
        decode_store(encode_store(StoreImage(HEADER, merged.records)))  # a guard, never hit
        draft[:] = merged.records
        return Outcome("saved", header=header, backup=backup)

    return operation


def merge_images(
    base: StoreImage,
    ours: StoreImage,
    theirs: StoreImage,
    *,
    empty: bool = False,
    record_key: bytes | None = None,
) -> Merged:
    """Merge decoded files (``empty``: neither side has a file, so neither has the result).

    Raises:
        CorruptError: the result does not decode (never expected: a guard, not a path).
    """
    header = ""
    if not empty:  # an empty side decodes with memquill's header, so only a file counts
        header = merged_header(ours.header, theirs.header)
    merged = merge_records(base.records, ours.records, theirs.records, record_key)
    result = Merged(header, merged.records, merged.report)
    if header:
        decode_store(result.encode().decode())  # every invariant the decoder checks holds
    return result


def merge_records(
    base: Sequence[Record],
    ours: Sequence[Record],
    theirs: Sequence[Record],
    record_key: bytes | None = None,
) -> Merged:
    """The record-level merge (see the module docstring); ``header`` is left empty. Text a
    forget erases keeps its fingerprint keyed with ``record_key`` (``None``: not kept)."""
    base_by_id = {record.id: record for record in base}
    ours_by_id = {record.id: record for record in ours}
    theirs_by_id = {record.id: record for record in theirs}
    joined: dict[str, Record] = {}
    both_edited: list[str] = []
    for record_id in sorted(ours_by_id.keys() | theirs_by_id.keys()):
        one, other = ours_by_id.get(record_id), theirs_by_id.get(record_id)
        if one is None or other is None:
            only = one if one is not None else other
            assert only is not None  # the id came from one of the two sides
            joined[record_id] = only
            continue
        record, edited = join_record(base_by_id.get(record_id), one, other)
        joined[record_id] = record
        if edited:
            both_edited.append(record_id)
    folded_records, folded = _fold_duplicates(joined.values())
    families = normalise_families(_revoke_covered(folded_records, record_key), record_key)
    settled: Sequence[Record] = families.records
    if any(is_ledger(record) for record in settled):
        settled = fold(settled)[0]  # a compacted side: compact the result alike (rule 5)
    records = tuple(sorted(settled, key=lambda r: (r.created_at, r.id)))
    ours_ids = set(ours_by_id)
    report = MergeReport(
        added=sum(1 for record in records if record.id not in ours_ids),
        folded=folded,
        diverged=families.diverged,
        renamed_keys=families.renamed_keys,
        both_edited=tuple(both_edited),
    )
    return Merged("", records, report)


def _revoke_covered(records: Sequence[Record], record_key: bytes | None) -> list[Record]:
    """``records`` with what a ledger covers forgotten (rule 5):

    - a family the ledger names: the side that compacted it forgot it; revoked;
    - a version made by an operation the ledger holds, with the words it forgot (or none
      left): rule 3 across a fold, the same write made on two machines, one of which forgot
      and folded it. Alone in its family it is dropped, as rule 3 folds a duplicate into the
      write it repeats (which the ledger holds), so merging the result again changes nothing;
      corrected on its own, its family is revoked.
    """
    ledger = ledger_of(records)
    if not ledger:
        return list(records)

    def forgotten(record: Record) -> str | None:
        """When the ledger says ``record``'s words were forgotten (``None``: it does not)."""
        if not record.content or record_key is None:
            return None
        return ledger.forgotten_at((text_fingerprint(record_key, record.content),))

    def repeats(record: Record) -> bool:
        """Whether ``record`` repeats a forgotten write the ledger holds."""
        if record.status == "revoked" or is_ledger(record):
            return False
        if not ledger.blocks_operation((record.operation_hash,)):
            return False
        return not record.content or record_key is None or forgotten(record) is not None

    named = {r.root_id for r in records if token(r.root_id) in ledger.roots}
    repeated = {r.root_id for r in records if repeats(r)} - named
    members = Counter(r.root_id for r in records if r.root_id in repeated)
    kept: list[Record] = []
    for record in records:
        root = record.root_id
        if root in repeated and members[root] == 1:
            continue  # the duplicate of a folded write: folded into it
        if (root in named or root in repeated) and record.status != "revoked":
            # Revoked when its words were forgotten (the ledger's time, so merging the result
            # again with this copy gives the same ledger), else at its own last change.
            when = forgotten(record) or record.updated_at
            record = forgotten_version(with_fingerprint(record, record_key), when)
        kept.append(record)
    return kept


def join_record(base: Record | None, one: Record, other: Record) -> tuple[Record, bool]:
    """Two copies of one record as one (rule 2); whether both edited its text by hand."""
    if one is other or encode_block(one) == encode_block(other):  # JSON equality, key order
        return one, False
    lead, second = sorted((one, other), key=_standing)[::-1]
    before = base.meta if base is not None else None
    keys = [*lead.meta, *(key for key in second.meta if key not in lead.meta)]
    meta: dict[str, JSONValue] = {}
    for key in keys:
        if key in _OWN_FIELDS:
            meta[key] = lead.meta[key]
            continue
        value = _join_field(key, before, lead.meta, second.meta)
        if not isinstance(value, _Missing):
            meta[key] = value
    content, edited = _join_content(base, lead, second)
    return Record(meta, content), edited


def _standing(record: Record) -> tuple[int, str, bytes]:
    """Which copy leads: the higher status, then the later ``updatedAt``, then its bytes."""
    return (_RANK[record.status], record.updated_at, encode_block(record).encode())


def _join_field(
    key: str,
    base: Mapping[str, JSONValue] | None,
    lead: Mapping[str, JSONValue],
    second: Mapping[str, JSONValue],
) -> _Value:
    first, other = lead.get(key, _MISSING), second.get(key, _MISSING)
    if _same(first, other):
        return first
    if base is not None:
        before = base.get(key, _MISSING)
        if _same(first, before):
            return other
        if _same(other, before):
            return first
    if key == RESOLVED_FIELD:  # a person's choice is never undone by a copy that missed it
        present = [v for v in (first, other) if isinstance(v, str)]
        return max(present) if present else first
    renamed = isinstance(first, str) and isinstance(other, str) and is_renamed_key(other, first)
    return other if key == KEY_FIELD and renamed else first


def _join_content(base: Record | None, lead: Record, second: Record) -> tuple[str, bool]:
    if lead.status == "revoked":
        return "", False
    if lead.status == "superseded" and any(
        r.status == "superseded" and not r.content for r in (lead, second)
    ):
        return "", False  # compacted on one machine: the text stays dropped
    if lead.content == second.content or not second.content:
        return lead.content, False
    if not lead.content:
        return second.content, False
    if base is not None and base.content == lead.content:
        return second.content, False
    if base is not None and base.content == second.content:
        return lead.content, False
    return lead.content, True


def _same(first: _Value, other: _Value) -> bool:
    if isinstance(first, _Missing) or isinstance(other, _Missing):
        return first is other
    return _canonical(first) == _canonical(other)


def _canonical(value: JSONValue) -> str:
    # JSON equality, not Python's (``True == 1``); key order counts, as it does in the file.
    return _COMPACT.encode(value)


def _fold_duplicates(records: Iterable[Record]) -> tuple[list[Record], int]:
    """Rule 3: records of one operation kept once, references redirected to the survivor."""
    by_hash: dict[str, list[Record]] = defaultdict(list)
    pool = list(records)
    for record in pool:
        by_hash[record.operation_hash].append(record)
    alias: dict[str, str] = {}
    for group in by_hash.values():
        if len(group) < 2 or len({r.content for r in group if r.content}) > 1:
            continue  # one record, or a key reused for different text: not one write
        keeper = min(group, key=lambda r: (r.created_at, r.id))
        alias.update((r.id, keeper.id) for r in group if r is not keeper)
    if not alias:
        return pool, 0
    survivors: dict[str, Record] = {}
    for record in sorted(pool, key=lambda r: (r.created_at, r.id)):
        moved = _redirect(record, alias)
        kept = survivors.get(moved.id)
        survivors[moved.id] = moved if kept is None else _fold(kept, moved)
    return list(survivors.values()), len(alias)


def _redirect(record: Record, alias: Mapping[str, str]) -> Record:
    changes: dict[str, JSONValue] = {}
    for key in ("id", "rootId", "supersedes"):
        value = record.meta.get(key)
        if isinstance(value, str) and value in alias:
            changes[key] = alias[value]
    return Record({**record.meta, **changes}, record.content) if changes else record


def _fold(keeper: Record, twin: Record) -> Record:
    """``twin`` (the same write, made elsewhere) folded into ``keeper``: its metadata stays,
    the higher status wins, and text that one copy dropped stays dropped."""
    lead = max((keeper, twin), key=lambda r: (_RANK[r.status], r.updated_at))
    status = lead.status
    content = keeper.content
    if status == "revoked" or (
        status == "superseded"
        and any(r.status == "superseded" and not r.content for r in (keeper, twin))
    ):
        content = ""
    elif not content:
        content = twin.content
    meta = {**keeper.meta, "status": status, "updatedAt": lead.updated_at}
    resolved = keeper.meta.get(RESOLVED_FIELD, twin.meta.get(RESOLVED_FIELD))
    if resolved is not None:
        meta[RESOLVED_FIELD] = resolved
    return Record(meta, content)


def decode_side(data: bytes, message: str) -> StoreImage:
    """One copy of ``records.md`` decoded strictly (empty bytes: no file, no records).

    Raises:
        CorruptError: with ``message`` (which copy), naming the first bad record when it can.
    """
    try:
        return decode_store(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise CorruptError(message) from None
    except CorruptError as error:
        raise CorruptError(message, error.record_index) from None
