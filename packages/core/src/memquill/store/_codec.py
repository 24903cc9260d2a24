"""The ``memory/records.md`` format: records, encoding, decoding and revisions.

A file is a header followed by record blocks, and nothing else::

    # Memory records\\n\\n<!-- memory-records:v2 -->\\n\\n
    <!-- memory-record {compact JSON metadata + "contentLength"} -->\\n
    <exactly contentLength UTF-16 units of content>\\n\\n
    ...

``docs/record-format.md`` is the full contract. Decoding is strict: anything else is
:class:`~memquill.errors.CorruptError`, and a corrupt file is never rewritten.

In a ``v2`` file a correction may be appended without rewriting the version it replaces: a
version still written ``active`` that a later version of its fact names in ``supersedes`` is
read as ``superseded`` since that version's ``createdAt`` (:func:`implied_supersede`), exactly
what a rewrite would have written. ``v1`` files (memquill's before, and the original system's)
write every status in place, and are read as they always were.

A ``v3`` file reads as ``v2`` and may also hold forgets that were appended instead of
rewritten: a later ``revoked`` block whose ``id`` an earlier block has *claims* that block and
takes its place in the records (the very tombstone a rewrite writes there), and a claimed
block is skipped whatever it holds. A forget then overwrites what it claimed in place, with
filler that keeps the block's shape whatever part of that write reaches the disk
(:func:`erase_block`), so a claimed block may no longer be readable metadata: only its marker,
its id, its ``contentLength`` and its length in UTF-16 units are kept. A block that is not
valid and that no later tombstone claims is corrupt, as in every version.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Protocol, cast

from memquill.errors import CorruptError, InvalidInputError, Messages
from memquill.foundation.controls import first_control
from memquill.foundation.text import LONE_SURROGATE, utf16_len, utf16_take
from memquill.jsondoc import parse_json
from memquill.store._record import (
    EXTRA_FIELD,
    KEY_FIELD,
    JSONValue,
    Record,
    is_key,
)

HEADER: Final = "# Memory records\n\n<!-- memory-records:v1 -->\n\n"
"""The header of a records file memquill creates (every status written in place)."""
HEADER_V2: Final = "# Memory records\n\n<!-- memory-records:v2 -->\n\n"
"""The header of a file whose corrections may be appended (statuses implied by successors).

A file gets it at its first correction, which rewrites it once; earlier memquill versions
accept only the ``v1`` headers, so they refuse such a file (``corrupt``) instead of reading
an implied-superseded version as active."""
HEADER_V3: Final = "# Memory records\n\n<!-- memory-records:v3 -->\n\n"
"""The header of a file whose forgets may be appended (a later tombstone claims each version it
forgets, which is then erased in place); it reads as ``v2`` otherwise.

Earlier memquill versions accept only the ``v1`` and ``v2`` headers, so they refuse such a
file (``corrupt``) instead of reading a forgotten version, or its erased block, as data."""
LEGACY_HEADER: Final = "# CodePilot memory records\n\n<!-- memory-records:v1 -->\n\n"
"""The original system's header: read, and kept when such a file is rewritten (its
corrections keep rewriting it, so the original system can still read it)."""
HEADERS: Final = (HEADER_V3, HEADER_V2, HEADER, LEGACY_HEADER)
"""Every header memquill reads."""


def merged_header(*headers: str | None) -> str:
    """The header of a merge of files with ``headers`` (the same whichever side merges): the
    original system's if a side has it (that system can then still read the result), else
    the newest of v3 and v2 a side has (a merge rewrites every status in place, so any would
    read), else memquill's v1."""
    return next((h for h in (LEGACY_HEADER, HEADER_V3, HEADER_V2) if h in headers), HEADER)


def implies(header: str | None) -> bool:
    """Whether a file with ``header`` may hold appended corrections (``v2`` and ``v3``)."""
    return header in (HEADER_V2, HEADER_V3)


MAX_CONTENT_UNITS: Final = 16_000
"""The longest record content, in UTF-16 code units."""
MAX_STORE_BYTES: Final = 2 * 1024 * 1024
"""The largest records file, in UTF-8 bytes (2 MiB)."""
ID_PATTERN: Final = r"^[a-f0-9-]{36}$"
"""A record id: a lowercase UUID (36 characters)."""
REVISION_PATTERN: Final = r"^[a-f0-9]{64}$"
"""A store or record revision: 64 lowercase hexadecimal characters (sha256)."""

_PREFIX: Final = "<!-- memory-record "
_META_END: Final = " -->\n"
_SEPARATOR: Final = "\n\n"
_ID: Final = re.compile(ID_PATTERN)
# What an erased block's metadata keeps (erase_block): its id first, its contentLength last.
_ERASED_META: Final = re.compile(
    r'\{"id":"([a-f0-9-]{36})"[^\n]*,"contentLength":(0|[1-9][0-9]{0,4})\}'
)
_ERASED_HEAD: Final = len(_PREFIX) + len('{"id":"') + 36 + 1
# Erasure filler: ASCII becomes a space; any other character keeps its lead byte and takes the
# lowest continuation bytes valid after it (C2 A0 rather than a C1 control).
_ASCII_BLANK: Final = dict.fromkeys(range(128), " ")
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]")
_SECOND_BYTE: Final = {0xC2: 0xA0, 0xE0: 0xA0, 0xED: 0x80, 0xF0: 0x90}
_STATUSES: Final = frozenset({"active", "superseded", "revoked"})
_KINDS: Final = frozenset({"manual", "conversation", "tool"})
_ROLES: Final = frozenset({"user", "assistant"})
_REFERENCE_FIELDS: Final = ("sessionId", "messageId", "capturedAt")
_SOURCES_KEPT: Final = 4
_KNOWN_SOURCE_KEYS: Final = frozenset({"kind", "role", *_REFERENCE_FIELDS})
_MAX_REFERENCE_UNITS: Final = 200
_CONTROL: Final = re.compile(r"[\x00-\x1f]")
# What ``json.dumps(meta, separators=(",", ":"), ensure_ascii=False)`` writes, built once.
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class StoreImage:
    """A decoded records file.

    Attributes:
        header: the header the file has (or will have when created).
        records: every version, in file order.
    """

    header: str = HEADER
    records: tuple[Record, ...] = field(default=())


def sha256_hex(text: str) -> str:
    """Lowercase hex sha256 of the UTF-8 bytes of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def identity_bytes(identity: Path | bytes) -> bytes:
    """The bytes that seed a store's revisions.

    A file store is identified by its workspace's real path (a :class:`~pathlib.Path`); a
    database store by the workspace id it keeps (bytes). Two stores with the same records
    therefore never share revisions.
    """
    return identity if isinstance(identity, bytes) else os.fsencode(identity)


def store_revision(identity: Path | bytes, raw: bytes) -> str:
    """The store revision: sha256 of the store's identity (for a file store the workspace's
    real path), NUL, and the file's bytes."""
    return hashlib.sha256(identity_bytes(identity) + b"\0" + raw).hexdigest()


def record_revision(identity: Path | bytes, record: Record) -> str:
    """A record revision: sha256 of the store's identity, NUL, and the record's block."""
    return block_revision(identity, encode_block(record).encode())


def block_revision(identity: Path | bytes, block: bytes) -> str:
    """The record revision of the record whose encoded block is ``block``
    (:func:`record_revision`, for a caller that holds the block already)."""
    return hashlib.sha256(identity_bytes(identity) + b"\0" + block).hexdigest()


def iso_timestamp(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ`` in UTC, as JavaScript's ``toISOString`` writes it."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def encode_block(record: Record) -> str:
    """One record block: marker line with compact JSON metadata, content, blank line."""
    meta = {**record.meta, "contentLength": utf16_len(record.content)}
    text = _ENCODER.encode(meta)
    return f"{_PREFIX}{text}{_META_END}{record.content}{_SEPARATOR}"


def encode_store(image: StoreImage) -> str:
    """The whole file for ``image``."""
    return image.header + "".join(encode_block(record) for record in image.records)


def decode_store(text: str, intact: list[int] | None = None) -> StoreImage:
    """Parse a records file strictly (``intact``: :func:`decode_after`).

    Raises:
        CorruptError: the file is not a managed records file, or any block fails validation
            (``record_index`` names the first bad block).
    """
    if not text:
        return StoreImage()
    header = next((h for h in HEADERS if text.startswith(h)), None)
    if header is None:
        raise CorruptError(Messages.FOREIGN)
    _, records = decode_after(
        text, len(header), implied=implies(header), claims=header == HEADER_V3, intact=intact
    )
    return StoreImage(header, records)


class KnownRecords(Protocol):
    """What decoding that continues after records already decoded asks of them (a
    :class:`~memquill.store.Snapshot` of those records answers)."""

    def position(self, record_id: str, /) -> int | None:
        """Where the version with this id is (``None``: nowhere)."""
        ...

    def by_key(self, key: str, /) -> Record | None:
        """The active version whose fact has this key."""
        ...


def decode_after(
    text: str,
    cursor: int,
    before: Sequence[Record] = (),
    *,
    implied: bool = False,
    claims: bool = False,
    known: KnownRecords | None = None,
    intact: list[int] | None = None,
) -> tuple[dict[int, Record], tuple[Record, ...]]:
    """Decode the record blocks of ``text`` from ``cursor`` to its end, strictly, after
    ``before``: the places of ``before`` whose record the new blocks changed (a version an
    appended correction superseded, one a ``v3`` tombstone claimed) with the record each now
    holds, and the new records. ``before`` is read only at the places the new blocks name,
    never copied, so taking in a few blocks after many records costs what those blocks do.

    ``before`` are the records already decoded in front of ``cursor`` (ids must stay unique
    and ``record_index`` counts them).
    ``known`` answers for ``before`` (ids and active keys), so decoding a few blocks appended
    after many records does not index them all again.
    ``implied`` (a ``v2`` or ``v3`` file): a correction makes the active version it names
    superseded (:func:`implied_supersede`), in the result, before its own key is checked.
    ``claims`` (a ``v3`` file): a ``revoked`` block whose id an earlier block has takes that
    block's place, and a block that does not decode but keeps an erased block's shape
    (:func:`erase_block`) waits for such a tombstone; the file is corrupt at the first one
    none claims. ``intact`` collects the places whose claimed block is not wholly erased
    (:func:`erase_block`): text a forget was killed before erasing, which the next write
    erases.

    Raises:
        CorruptError: a block fails validation (``record_index`` names the first bad one).
    """
    head = len(before)
    changed: dict[int, Record] = {}
    added: list[Record | None] = []  # None: an erased block waiting for its tombstone

    def at(position: int) -> Record | None:
        if position >= head:
            return added[position - head]
        found = changed.get(position)
        return before[position] if found is None else found

    def put(position: int, record: Record) -> None:
        if position >= head:
            added[position - head] = record
        else:
            changed[position] = record

    seen: dict[str, int] = {}
    keys: set[str | None] = set()
    freed: set[str] = set()  # keys of ``before`` that the new blocks freed
    place: Callable[[str], int | None]
    taken: Callable[[str], bool]
    if known is None:
        seen = {record.id: position for position, record in enumerate(before)}
        keys = {record.key for record in before if record.status == "active"} - {None}
        place, taken = seen.get, keys.__contains__
    else:
        lookup = known

        def known_place(record_id: str, /) -> int | None:
            found = seen.get(record_id)
            return lookup.position(record_id) if found is None else found

        def known_taken(key: str, /) -> bool:
            return key in keys or (key not in freed and lookup.by_key(key) is not None)

        place, taken = known_place, known_taken

    def free(key: str | None) -> None:
        if key is not None:
            keys.discard(key)
            freed.add(key)

    sources: list[object] = []  # sources found valid, the latest first (see _valid_record)
    erased: dict[str, int] = {}  # id -> block number of an erased block no tombstone claimed yet
    torn: set[str] = set()  # ids of erased blocks some of whose bytes are not erased yet
    blocks = head
    while cursor < len(text):
        index, blocks = blocks, blocks + 1
        if not claims:
            record, cursor = _decode_block(text, cursor, index, sources)
        else:
            try:
                record, cursor = _decode_block(text, cursor, index, sources)
            except CorruptError:
                start = cursor
                record_id, cursor = erased_shape(text, cursor, index)
                if place(record_id) is not None:
                    raise
                block = text[start:cursor].encode()
                if intact is not None and erase_block(block) != block:
                    torn.add(record_id)  # an erasure cut short: the rest waits for the next
                erased[record_id] = index
                seen[record_id] = head + len(added)
                added.append(None)
                continue
            claimed = place(record.id) if record.status == "revoked" else None
            if claimed is not None:
                earlier = at(claimed)
                if earlier is None:
                    del erased[record.id]
                    if intact is not None and record.id in torn:
                        intact.append(claimed)
                elif earlier.status == "revoked":
                    raise CorruptError(Messages.EDITED, index)  # a tombstone of a tombstone
                else:
                    if earlier.status == "active":
                        free(earlier.key)
                    if intact is not None:
                        intact.append(claimed)
                put(claimed, record)
                continue
        replaced = place(record.supersedes or "") if implied else None
        earlier = at(replaced) if replaced is not None else None
        if earlier is not None:
            superseded = implied_supersede(earlier, record)
            if superseded is not earlier:
                put(replaced or 0, superseded)
                free(earlier.key)
        key = record.key if record.status == "active" else None
        if place(record.id) is not None or (key is not None and taken(key)):
            raise CorruptError(Messages.EDITED, index)  # ids are unique, keys among active facts
        seen[record.id] = head + len(added)
        if key is not None:
            keys.add(key)
        added.append(record)
    if erased:
        raise CorruptError(Messages.EDITED, min(erased.values()))  # erased, yet never forgotten
    return changed, cast(tuple[Record, ...], tuple(added))


def implied_supersede(earlier: Record, successor: Record) -> Record:
    """``earlier`` as a ``v2`` file reads it once ``successor`` follows it: superseded since
    ``successor`` was created, when ``successor`` is a correction of it (same fact, names it in
    ``supersedes``) and ``earlier`` is still written active; else ``earlier`` itself.

    This is the very record a correction's rewrite writes, so a file whose corrections were
    appended and the same file rewritten decode to equal records.
    """
    if (
        earlier.status != "active"
        or successor.supersedes != earlier.id
        or successor.root_id != earlier.root_id
    ):
        return earlier
    return earlier.evolve(status="superseded", updatedAt=successor.created_at)


def _decode_block(text: str, cursor: int, index: int, sources: list[object]) -> tuple[Record, int]:
    def corrupt() -> CorruptError:
        return CorruptError(Messages.EDITED, index)

    if not text.startswith(_PREFIX, cursor):
        raise corrupt()
    start = cursor + len(_PREFIX)
    end = text.find(_META_END, start)
    if end < 0:
        raise corrupt()
    try:
        parsed: object = parse_json(text[start:end])
    except ValueError:  # not JSON, or nested too deeply to read (jsondoc)
        raise corrupt() from None
    if not isinstance(parsed, dict):
        raise corrupt()
    meta = cast(dict[str, JSONValue], parsed)
    if text.find("\\u", start, end) >= 0 and not _encodable(meta):
        raise corrupt()  # an escaped lone surrogate: the record could never be rewritten
    length = meta.pop("contentLength", None)
    if type(length) is not int or not 0 <= length <= MAX_CONTENT_UNITS:
        raise corrupt()
    body = end + len(_META_END)
    points = utf16_take(text, body, length)
    if points is None or text[body + points : body + points + 2] != _SEPARATOR:
        raise corrupt()
    record = Record(meta, text[body : body + points])
    if not _valid_record(record, sources):
        raise corrupt()
    return record, body + points + 2


def erased_shape(text: str, cursor: int, index: int) -> tuple[str, int]:
    """The id of the block at ``cursor`` read only by an erased block's shape (marker, id,
    ``contentLength``, that many UTF-16 units, the blank line), and where the next begins.

    Raises:
        CorruptError: not even that shape.
    """
    start = cursor + len(_PREFIX)
    end = text.find(_META_END, start)
    found = _ERASED_META.fullmatch(text, start, end) if end >= 0 else None
    if not text.startswith(_PREFIX, cursor) or found is None:
        raise CorruptError(Messages.EDITED, index)
    length = int(found[2])
    body = end + len(_META_END)
    points = utf16_take(text, body, length) if length <= MAX_CONTENT_UNITS else None
    if points is None or text[body + points : body + points + 2] != _SEPARATOR:
        raise CorruptError(Messages.EDITED, index)
    return found[1], body + points + 2


_SPAN_META: Final = re.compile(rb'\{"id":"([a-f0-9-]{36})".*,"contentLength":(0|[1-9][0-9]{0,4})\}')


def block_spans(raw: bytes | bytearray, cursor: int, end: int) -> Iterator[tuple[str, int, int]]:
    """Each block of ``raw[cursor:end]``, a part that decoded (whole blocks, a claim and an
    erased block included), as its id and its start and end byte offsets, in file order.

    Only the marker, the id and ``contentLength`` are read (the metadata is parsed only when
    a person reordered it), so walking a file costs far less than decoding it.
    """
    prefix, meta_end = _PREFIX.encode(), _META_END.encode()
    while cursor < end:
        start = cursor + len(prefix)
        stop = raw.find(meta_end, start, end)
        meta = bytes(raw[start:stop])
        found = _SPAN_META.fullmatch(meta)
        if found is not None:
            record_id, length = found[1].decode(), int(found[2])
        else:
            parsed = cast(dict[str, JSONValue], parse_json(meta.decode()))
            record_id, length = str(parsed["id"]), cast(int, parsed["contentLength"])
        body = stop + len(meta_end)
        chunk = bytes(raw[body : body + 4 * length])
        if chunk[:length].isascii():
            size = length
        else:  # the units' characters, then their UTF-8 length (a cut last character dropped)
            text = chunk.decode("utf-8", "ignore")
            size = len(text[: utf16_take(text, 0, length) or 0].encode())
        yield record_id, cursor, body + size + len(_SEPARATOR)
        cursor = body + size + len(_SEPARATOR)


def unclaimed(raw: bytes) -> bytes:
    """A records file with each tombstone a ``v3`` forget appended moved into the place of the
    block it claims (which is dropped): what a rewrite of the same records would write, their
    blocks' bytes kept. Any other file is returned as it is.

    Raises:
        CorruptError: a ``v3`` file that does not decode.
    """
    if not raw.startswith(HEADER_V3.encode()):
        return raw
    decode_store(raw.decode("utf-8"))  # strict first: the walk trusts what decoded
    cursor = len(HEADER_V3.encode())
    places: dict[str, int] = {}
    blocks: list[bytes] = []
    for record_id, start, end in block_spans(raw, cursor, len(raw)):
        place = places.get(record_id)
        if place is None:
            places[record_id] = len(blocks)
            blocks.append(raw[start:end])
        else:
            blocks[place] = raw[start:end]
    return raw[:cursor] + b"".join(blocks)


def erase_block(block: bytes) -> bytes:
    """``block`` (one record block, as encoded) with everything but its shape overwritten: the
    metadata between its id and its ``contentLength``, and its text.

    Each character becomes filler of the same UTF-8 length and lead byte, with continuation
    bytes valid after that lead (``C2 A0`` for ``C2``, so no C1 control is written): however
    much of the in-place write reaches the disk, sector by sector, the bytes stay UTF-8 of the
    same UTF-16 length, so the block keeps its shape for the tombstone that claims it
    (:func:`decode_after` with ``claims``). What the filler still shows, until the next
    rewrite drops the block, is the text's length and each character's UTF-8 length.
    """
    text = block.decode("utf-8")
    metadata_end = text.index(_META_END)
    length = text.rindex(',"contentLength":', 0, metadata_end)
    body = metadata_end + len(_META_END)
    head = text[:_ERASED_HEAD].encode()
    return b"".join(
        (
            head,
            _filler(text[_ERASED_HEAD:length]),
            text[length:body].encode(),
            _filler(text[body : len(text) - len(_SEPARATOR)]),
            _SEPARATOR.encode(),
        )
    )


def _filler(text: str) -> bytes:
    return _NON_ASCII.sub(_filler_character, text.translate(_ASCII_BLANK)).encode()


def _filler_character(found: re.Match[str]) -> str:
    data = found[0].encode()
    second = _SECOND_BYTE.get(data[0], 0x80)
    return bytes((data[0], second, *(0x80,) * (len(data) - 2))).decode()


def _valid_record(record: Record, sources: list[object]) -> bool:
    # Every block another writer appended is validated as it is taken in: unrolled, with
    # each value's type checked before it is looked up in a set (a list there raised
    # ``TypeError``, not ``corrupt``). Most records share a few sources (one session's), so
    # one equal to a source already found valid is valid (equal JSON values differ in type
    # only among numbers and booleans, which no checked field holds): ``sources`` keeps the
    # last few found valid, the latest first.
    meta = record.meta
    get = meta.get
    record_id, root_id, status = get("id"), get("rootId"), get("status")
    if not (isinstance(record_id, str) and _ID.fullmatch(record_id)):
        return False
    if root_id != record_id and not (isinstance(root_id, str) and _ID.fullmatch(root_id)):
        return False
    if not (
        isinstance(get("createdAt"), str)
        and isinstance(get("updatedAt"), str)
        and isinstance(get("operationHash"), str)
        and isinstance(status, str)
        and status in _STATUSES
    ):
        return False
    if KEY_FIELD in meta and not is_key(meta[KEY_FIELD]):
        return False
    if EXTRA_FIELD in meta and not isinstance(meta[EXTRA_FIELD], dict):
        return False
    source = get("source")
    if source not in sources:
        try:
            validate_source(source)
        except InvalidInputError:
            return False
        sources.insert(0, source)
        del sources[_SOURCES_KEPT:]
    content = record.content
    if status == "revoked" or (status == "superseded" and not content):
        # Forgotten versions hold nothing; compaction empties superseded ones.
        return content == ""
    return _content_problem(content) is None


def _content_problem(content: object) -> str | None:
    if (
        not isinstance(content, str)
        or not content.strip()
        or "\0" in content
        or utf16_len(content) > MAX_CONTENT_UNITS
    ):
        return Messages.CONTENT
    return None


def validate_content(content: object) -> str:
    """Return ``content`` if it is 1–16000 UTF-16 units, not blank (nor only zero-width
    characters), free of NUL and of the other control characters a terminal acts on
    (:data:`memquill.foundation.controls.FORBIDDEN`: C0 but tab and newline, DEL, C1).

    (Credentials are checked separately, by :class:`~memquill.store.SecretScanner`.)

    Raises:
        InvalidInputError: otherwise.
    """
    problem = _content_problem(content)
    if problem is None and LONE_SURROGATE.search(cast(str, content)):
        problem = Messages.CONTENT  # decoded files never hold one, so only writes check
    if problem is None and _invisible(cast(str, content)):
        # Only zero-width and format characters: blank to a reader. Checked on writes only,
        # so a record saved before this rule still reads.
        problem = Messages.CONTENT
    if problem is None and (control := first_control(cast(str, content))) is not None:
        # Checked on writes only: a record saved before this rule still reads (and
        # ``memquill doctor`` names it); the CLI shows such characters escaped.
        problem = Messages.CONTROL_CHARACTER.format(control)
    if problem is not None:
        raise InvalidInputError(problem)
    return cast(str, content)


def _invisible(content: str) -> bool:
    return all(char.isspace() or unicodedata.category(char) == "Cf" for char in content)


def validate_source(source: object) -> Mapping[str, JSONValue]:
    """Return ``source`` if it is valid provenance.

    Raises:
        InvalidInputError: with the spec's message for the first problem found.
    """
    if type(source) is not dict and not isinstance(source, Mapping):  # dict: no ABC check
        raise InvalidInputError(Messages.SOURCE_REQUIRED)
    fields = cast(Mapping[str, object], source)
    kind = fields.get("kind")
    if not isinstance(kind, str) or kind not in _KINDS:
        raise InvalidInputError(Messages.SOURCE_REQUIRED)
    for key in _REFERENCE_FIELDS:
        value = fields.get(key)
        if value is not None and not _valid_reference(value):
            raise InvalidInputError(Messages.SOURCE_REFERENCE)
    if kind == "tool" and not fields.get("sessionId"):
        raise InvalidInputError(Messages.TOOL_SOURCE)
    if kind == "conversation" and not (fields.get("sessionId") and fields.get("messageId")):
        raise InvalidInputError(Messages.CONVERSATION_SOURCE)
    role = fields.get("role")
    if role is not None and (not isinstance(role, str) or role not in _ROLES):
        raise InvalidInputError(Messages.SOURCE_ROLE)
    if not _KNOWN_SOURCE_KEYS.issuperset(fields) and not _encodable(fields):
        raise InvalidInputError(Messages.SOURCE_REFERENCE)  # an extra key that cannot be written
    return cast(Mapping[str, JSONValue], source)


def _encodable(value: object) -> bool:
    """Whether ``value`` can be written as UTF-8 JSON (no lone surrogates, only JSON types)."""
    try:
        json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    except (TypeError, ValueError):
        return False
    return True


def _valid_reference(value: object) -> bool:
    return (
        isinstance(value, str)
        and utf16_len(value) <= _MAX_REFERENCE_UNITS
        and not _CONTROL.search(value)
        and not LONE_SURROGATE.search(value)
    )
