"""Tombstones: what a forgotten fact keeps forever (its text's fingerprint, then about 32 bytes).

**Fingerprints.** A forget erases a fact's text, key and extra metadata; its operation hashes
and source keys block a retry of the same write and re-extraction from the same message, but
not the same words arriving another way (another session, an update, a new message). So every
version of a forgotten family keeps, in its tombstone, ``textHash``: a keyed fingerprint of the
text that version held, normalised as duplicates are compared (:func:`same_words`: NFKC,
case-folded, whitespace runs as one space). Never the text itself: the fingerprint is
``hmac-v1:`` + HMAC-SHA256 under the record key (:mod:`memquill.store._record_key`), so a
copy of ``records.md`` does not let anyone test guesses of what was forgotten.

A save or correction whose source is ``tool`` or ``conversation`` (a model, an adapter,
extraction, the memory tool, the LangGraph store) whose normalised text matches a forgotten
version's fingerprint under any key this store recognises answers ``blocked``, naming when the
fact was forgotten. A person (source ``manual``) may save it again on purpose: the write is
``saved`` and says it was forgotten before. A superseded version that is compacted keeps the
fingerprint of the text it dropped, so forgetting its fact later still blocks that text;
fingerprints of a family that is not forgotten never block anything.

**The ledger.** A forgotten fact's versions stay in ``records.md`` as tombstones (about 400 bytes of
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
import bisect
import hashlib
import hmac
import threading
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final, cast

from memquill.store._codec import iso_timestamp
from memquill.store._record import JSONValue, Record, by_family, source_key
from memquill.store._record_key import KEYED_PREFIX

LEDGER_FIELD: Final = "tombstones"
"""The metadata key of the ledger record holding the compact tombstones."""
RETENTION_DEPTH: Final = 16
"""Superseded versions of a live fact kept whole (newest first) when the store compacts."""
_VERSION: Final = 1
_TOKEN: Final = 8
_DOMAIN: Final = b"memquill:tombstone:v1\0"
_EPOCH: Final = "1970-01-01T00:00:00.000Z"
_PARTS: Final = ("roots", "ops", "sources")


TEXT_HASH_FIELD: Final = "textHash"
"""The metadata key holding a version's forgotten-text fingerprint."""
BLOCKING_KINDS: Final = frozenset({"tool", "conversation"})
"""The source kinds a forgotten text blocks (a person's ``manual`` write is never blocked)."""
_TEXT_DOMAIN: Final = b"memquill:text-fingerprint:v1\0"


def same_words(content: str) -> str:
    """``content`` as duplicates are compared: NFKC, case-folded, whitespace runs as one space."""
    return " ".join(unicodedata.normalize("NFKC", content).casefold().split())


def text_fingerprint(key: bytes, content: str) -> str:
    """The keyed fingerprint of ``content``'s normalised text."""
    data = _TEXT_DOMAIN + same_words(content).encode("utf-8")
    return KEYED_PREFIX + hmac.new(key, data, hashlib.sha256).hexdigest()


def with_fingerprint(record: Record, key: bytes | None) -> Record:
    """``record`` carrying the fingerprint of its text, before that text is dropped (unchanged
    when it holds no text, already has one, or no key is given)."""
    if key is None or not record.content or TEXT_HASH_FIELD in record.meta:
        return record
    return record.evolve(**{TEXT_HASH_FIELD: text_fingerprint(key, record.content)})


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


_BASE64_ORDER: Final = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
    "".join(chr(48 + value) for value in range(64)),
)


def _in_order(stamp: str) -> str:
    """A time token rewritten so that comparing strings compares the times (base64url's
    characters do not sort in the order of their values: ``z`` is 51, ``0`` is 52)."""
    return stamp.translate(_BASE64_ORDER)


def _stamp_of(encoded: str) -> str:
    millis = int.from_bytes(base64.urlsafe_b64decode(encoded), "big")
    return iso_timestamp(datetime.fromtimestamp(millis / 1000, UTC))


_Body = tuple[str, str, str, str]
"""A ledger's four parts as written: roots, ops, sources, texts."""


@dataclass(slots=True)
class Ledger:
    """The compact tombstones, decoded: token sets, and text token → forgotten time."""

    roots: set[str] = field(default_factory=set[str])
    ops: set[str] = field(default_factory=set[str])
    sources: set[str] = field(default_factory=set[str])
    texts: dict[str, str] = field(default_factory=dict[str, str])
    """Text token → the token of the (latest) time it was forgotten."""
    restamped: set[str] = field(default_factory=set[str], compare=False, repr=False)
    """Text tokens held already whose time :meth:`add_text` moved later."""
    grown_from: tuple[Ledger, _Body] | None = field(default=None, compare=False, repr=False)
    """A ledger this one holds all of, never changed, with its parts as written (sorted):
    :meth:`record` then inserts only what was added, instead of sorting every token again."""

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
        return _stamp_of(max(stamps, key=_in_order)) if stamps else None

    def add_text(self, fingerprint_token: str, stamp_token: str) -> None:
        held = self.texts.get(fingerprint_token)
        if held is None:
            self.texts[fingerprint_token] = stamp_token
        elif _in_order(held) < _in_order(stamp_token):
            self.texts[fingerprint_token] = stamp_token
            self.restamped.add(fingerprint_token)

    def absorb(self, other: Ledger) -> None:
        if not self and self.grown_from is None:
            self.grown_from = other.grown_from
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
        parts = self._parts()
        body: dict[str, JSONValue] = {
            "v": _VERSION,
            **dict(zip((*_PARTS, "texts"), parts, strict=True)),
        }
        _remember(parts, self)
        digest = hashlib.sha256(repr(sorted(body.items())).encode()).hexdigest()
        ident = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
        latest = max(self.texts.values(), key=_in_order, default="")
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

    def _parts(self) -> _Body:
        """The four parts as written: each sorted, every text token followed by its time."""
        texts = self.texts
        if self.grown_from is None:
            roots, ops, sources = (
                "".join(sorted(cast(set[str], getattr(self, part)))) for part in _PARTS
            )
            ordered = sorted(texts)
            joined = "".join(map(str.__add__, ordered, map(texts.__getitem__, ordered)))
            return roots, ops, sources, joined
        base, written = self.grown_from
        roots, ops, sources = (
            _inserted(text, _TOKEN, sorted(cast(set[str], getattr(self, part)) - mine))
            for part, text, mine in zip(
                _PARTS, written, (base.roots, base.ops, base.sources), strict=False
            )
        )
        # Keys, not items: no tuple per text (a collector pass over the heap at 50,000).
        changed = sorted(t + texts[t] for t in (texts.keys() - base.texts.keys()) | self.restamped)
        return roots, ops, sources, _inserted(written[3], 2 * _TOKEN, changed)


def _inserted(text: str, width: int, entries: list[str]) -> str:
    """``text`` (sorted entries of ``width`` characters, unique by their first :data:`_TOKEN`)
    with each of ``entries`` (sorted, of the same kind) in its place: an entry whose token
    ``text`` holds replaces it."""
    if not entries:
        return text
    tokens = _Tokens(text, width)
    pieces: list[str] = []
    start = 0
    for entry in entries:
        key = entry[:_TOKEN]
        at = bisect.bisect_left(tokens, key, start)
        pieces += (text[start * width : at * width], entry)
        start = at + 1 if at < len(tokens) and tokens[at] == key else at
    pieces.append(text[start * width :])
    return "".join(pieces)


class _Tokens:
    """The tokens of a written ledger part, by index, read out of the text as :mod:`bisect`
    asks for them."""

    def __init__(self, text: str, width: int) -> None:
        self._text, self._width = text, width

    def __len__(self) -> int:
        return len(self._text) // self._width

    def __getitem__(self, index: int) -> str:
        start = index * self._width
        return self._text[start : start + _TOKEN]


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


_PARSED: Final[dict[_Body, Ledger]] = {}
"""The last few ledgers decoded or written, by their parts (never changed once here)."""
_PARSED_KEPT: Final = 8
_PARSED_LOCK: Final = threading.Lock()


def _parsed(body: _Body) -> Ledger:
    known = _PARSED.get(body)
    if known is not None:
        return known
    widths = (_TOKEN, _TOKEN, _TOKEN, 2 * _TOKEN)
    chunks = [_chunks(text, width) for text, width in zip(body, widths, strict=True)]
    ledger = Ledger(set(chunks[0]), set(chunks[1]), set(chunks[2]))
    for entry in chunks[3]:
        ledger.add_text(entry[:_TOKEN], entry[_TOKEN:])
    sizes = (len(ledger.roots), len(ledger.ops), len(ledger.sources), len(ledger.texts))
    # Written as memquill writes it (each part sorted, each token once, nothing left over):
    # a ledger grown from it inserts what it adds. A hand-edited one is sorted again in full.
    if all(
        len(text) == len(part) * width and size == len(part) and part == sorted(part)
        for text, part, width, size in zip(body, chunks, widths, sizes, strict=True)
    ):
        ledger.grown_from = (ledger, body)
    _keep(body, ledger)
    return ledger


def _remember(body: _Body, ledger: Ledger) -> None:
    """Keep a copy of ``ledger``, just written as ``body``, for the next decoding of it."""
    if body not in _PARSED:
        kept = Ledger(set(ledger.roots), set(ledger.ops), set(ledger.sources), dict(ledger.texts))
        kept.grown_from = (kept, body)
        _keep(body, kept)


def _keep(body: _Body, ledger: Ledger) -> None:
    with _PARSED_LOCK:  # stores in several threads: the oldest is dropped by one of them
        _PARSED[body] = ledger
        while len(_PARSED) > _PARSED_KEPT:
            del _PARSED[next(iter(_PARSED))]


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text) - size + 1, size)]


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
    families = by_family(record for record in records if not is_ledger(record))
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
