"""Compact tombstones: what a forgotten fact keeps forever, in about 32 bytes.

A forgotten fact's versions stay in ``records.md`` as tombstones (about 400 bytes of
metadata each) because they block: a retried save of the same idempotency key, extraction
from the same message, and the same words from a model (``textHash``). Kept whole, they fill
any capacity. When a write needs room (and in ``memquill compact``), every forgotten family
is folded into one *ledger*: a single record block holding only those blocking powers as
short keyed tokens, sorted and deduplicated (:func:`fold`):

- ``roots``: the family's root id (so a copy of the family arriving by a merge is known to be
  forgotten, and folded too);
- ``ops``: every version's ``operationHash`` (a retried save is ``blocked``);
- ``sources``: every version's source key, ``sessionId NUL messageId`` (extraction from that
  message is ``blocked``);
- ``texts``: every ``textHash`` with the time the family was forgotten (the blocked message
  names it, to the millisecond).

A token is 8 base64url characters: the first 48 bits of sha256 of a domain and the value. The
values are keyed fingerprints or hashes already (or, for source keys, references the file
held in plain), so a token tells nothing more; a false match needs a 48-bit collision (about
one write in 5 billion against a ledger of 50,000 families). A forgotten family without a
source key costs 32 bytes (root, op, text, time), so 50,000 of them take 1.6 MB.

Superseded versions of a live fact beyond the retention depth (:data:`RETENTION_DEPTH`, the
newest kept) go entirely: the first version's operation hash and every dropped version's
source key move to the ledger; a correction's own hash needs no keeping (a retried correction
names a revision that is gone, so compare-and-swap refuses it), and neither does a dropped
version's text fingerprint (a correction replaced those words; the retained history's words
still block once the fact is forgotten).

The ledger is an ordinary record block (``status: revoked``, empty content, a ``tombstones``
object in its metadata), so the file stays in the records-file format and an older memquill
opens it: it sees one forgotten record and does not use its tokens. Its id and operation hash
are derived from its body, its ``createdAt`` is the epoch (it sorts first), so folding is
deterministic: the same records fold to the same bytes on every machine, and a merge of a
compacted and an uncompacted copy gives the compacted bytes (``memquill.store._merge``).
"""

from __future__ import annotations

import base64
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Final, cast

from memquill.store._codec import iso_timestamp
from memquill.store._record import JSONValue, Record, source_key

LEDGER_FIELD: Final = "tombstones"
"""The metadata key of the ledger record holding the compact tombstones."""
RETENTION_DEPTH: Final = 16
"""Superseded versions of a live fact kept whole (newest first) when the store compacts."""
_VERSION: Final = 1
_TOKEN: Final = 8
_DOMAIN: Final = b"memquill:tombstone:v1\0"
_EPOCH: Final = "1970-01-01T00:00:00.000Z"
_PARTS: Final = ("roots", "ops", "sources")


def token(value: str) -> str:
    """The 8-character token of ``value`` (48 bits of sha256)."""
    digest = hashlib.sha256(_DOMAIN + value.encode("utf-8")).digest()[:6]
    return base64.urlsafe_b64encode(digest).decode()


def _stamp_token(stamp: str) -> str:
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        millis = max(0, int(moment.timestamp() * 1000))
    except (ValueError, OverflowError):
        millis = 0  # a hand-edited time: still blocks, named as the epoch
    return base64.urlsafe_b64encode(min(millis, 2**48 - 1).to_bytes(6, "big")).decode()


def _stamp_of(encoded: str) -> str:
    millis = int.from_bytes(base64.urlsafe_b64decode(encoded), "big")
    return iso_timestamp(datetime.fromtimestamp(millis / 1000, UTC))


@dataclass(slots=True)
class Ledger:
    """The compact tombstones, decoded: token sets, and text token → forgotten time."""

    roots: set[str] = field(default_factory=set[str])
    ops: set[str] = field(default_factory=set[str])
    sources: set[str] = field(default_factory=set[str])
    texts: dict[str, str] = field(default_factory=dict[str, str])
    """Text token → the token of the (latest) time it was forgotten."""

    def __bool__(self) -> bool:
        return bool(self.roots or self.ops or self.sources or self.texts)

    def holds_root(self, record_id: str) -> bool:
        """Whether ``record_id`` is the root id of a folded fact (its first version's id)."""
        return bool(self.roots) and token(record_id) in self.roots

    def blocks_operation(self, hashes: Iterable[str]) -> bool:
        """Whether any of ``hashes`` (an operation's) belongs to a folded tombstone."""
        return bool(self.ops) and any(token(value) in self.ops for value in hashes)

    def blocks_source(self, key: str | None) -> bool:
        """Whether a folded tombstone came from the message ``key`` names."""
        return key is not None and token(key) in self.sources

    def forgotten_at(self, fingerprints: Iterable[str]) -> str | None:
        """When a folded fact with one of ``fingerprints`` was forgotten (``None``: none)."""
        stamps = [self.texts[t] for t in map(token, fingerprints) if t in self.texts]
        return _stamp_of(max(stamps)) if stamps else None

    def add_text(self, fingerprint_token: str, stamp_token: str) -> None:
        if self.texts.get(fingerprint_token, "") < stamp_token:
            self.texts[fingerprint_token] = stamp_token

    def absorb(self, other: Ledger) -> None:
        self.roots |= other.roots
        self.ops |= other.ops
        self.sources |= other.sources
        if not self.texts:
            self.texts = other.texts.copy()  # the common case (one ledger): copied in C
            return
        for text, stamp in other.texts.items():
            self.add_text(text, stamp)

    def record(self) -> Record:
        """The ledger as one record block (deterministic: it depends only on the tokens)."""
        body: dict[str, JSONValue] = {"v": _VERSION}
        for part in _PARTS:
            body[part] = "".join(sorted(cast(set[str], getattr(self, part))))
        texts = self.texts
        ordered = sorted(texts)
        body["texts"] = "".join(map(str.__add__, ordered, map(texts.__getitem__, ordered)))
        digest = hashlib.sha256(repr(sorted(body.items())).encode()).hexdigest()
        ident = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
        latest = max(self.texts.values(), default="")
        meta: dict[str, JSONValue] = {
            "id": ident,
            "rootId": ident,
            "source": {"kind": "manual"},
            "status": "revoked",
            "createdAt": _EPOCH,
            "updatedAt": _stamp_of(latest) if latest else _EPOCH,
            "operationHash": f"tombstones-v1:{digest}",
            LEDGER_FIELD: body,
        }
        return Record(meta, "")


def is_ledger(record: Record) -> bool:
    """Whether ``record`` is the ledger of compact tombstones."""
    return isinstance(record.meta.get(LEDGER_FIELD), dict)


def ledger_of(records: Iterable[Record]) -> Ledger:
    """Every ledger among ``records``, as one (empty when there is none)."""
    found = Ledger()
    for record in records:
        if is_ledger(record):
            found.absorb(_parsed(_body_key(record.meta[LEDGER_FIELD])))
    return found


def _body_key(body: JSONValue) -> tuple[str, str, str, str]:
    fields = cast(Mapping[str, JSONValue], body)
    values = [fields.get(part, "") for part in (*_PARTS, "texts")]
    return cast(tuple[str, str, str, str], tuple(v if isinstance(v, str) else "" for v in values))


@lru_cache(maxsize=8)
def _parsed(body: tuple[str, str, str, str]) -> Ledger:
    roots, ops, sources, texts = body
    ledger = Ledger(_chunks(roots, _TOKEN), _chunks(ops, _TOKEN), _chunks(sources, _TOKEN))
    for entry in _chunks(texts, 2 * _TOKEN):
        ledger.add_text(entry[:_TOKEN], entry[_TOKEN:])
    return ledger


def _chunks(text: str, size: int) -> set[str]:
    return {text[i : i + size] for i in range(0, len(text) - size + 1, size)}


def fold(
    records: Sequence[Record],
    depth: int | None = RETENTION_DEPTH,
    spared: frozenset[str] = frozenset(),
) -> tuple[list[Record], int]:
    """``records`` with every forgotten family (but those whose root is in ``spared``), and
    every live family's superseded versions beyond the newest ``depth`` (``None``: none of
    them), folded into one ledger; and how many versions were folded.

    The result keeps the others in their order, the ledger first; it is ``records`` unchanged
    (and 0) when there is nothing to fold and at most one ledger.
    """
    ledger = ledger_of(records)
    families: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        if not is_ledger(record):
            families[record.root_id].append(record)
    dropped: set[int] = set()
    for root, members in families.items():
        if root in spared:
            continue
        if all(r.status == "revoked" for r in members) or token(root) in ledger.roots:
            _fold_forgotten(ledger, root, members)
            dropped.update(id(r) for r in members)
            continue
        if depth is None:
            continue
        superseded = sorted(
            (r for r in members if r.status == "superseded"), key=lambda r: (r.created_at, r.id)
        )
        for record in superseded[: max(0, len(superseded) - depth)]:
            if record.supersedes is None:  # the first version: its save's idempotency key
                ledger.ops.add(token(record.operation_hash))
            if (key := record.source_key) is not None:
                ledger.sources.add(token(key))
            dropped.add(id(record))
    ledgers = sum(1 for r in records if is_ledger(r))
    if not dropped and ledgers <= 1:
        return list(records), 0
    kept = [r for r in records if id(r) not in dropped and not is_ledger(r)]
    return ([ledger.record()] if ledger else []) + kept, len(dropped)


def _fold_forgotten(ledger: Ledger, root: str, members: Sequence[Record]) -> None:
    stamp = _stamp_token(max(r.updated_at for r in members))
    ledger.roots.add(token(root))
    for record in members:
        ledger.ops.add(token(record.operation_hash))
        if (key := source_key(record.source)) is not None:
            ledger.sources.add(token(key))
        fingerprint = record.meta.get("textHash")
        if isinstance(fingerprint, str):
            ledger.add_text(token(fingerprint), stamp)
