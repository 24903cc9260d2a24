"""Why a records file does not decode: which record, and what is wrong with it, in words.

The decoder (:mod:`memquill.store._codec`) only says *that* a file is corrupt and at which
record. ``doctor`` needs to tell a person *why*, so they can decide: an edited fact whose
length no longer matches, line endings an editor changed, a marker line that is not JSON, a
field with a value memquill never writes. :func:`diagnose` walks the file the way the decoder
does and names the first problem. It never changes anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Final, cast

from memquill.errors import CorruptError
from memquill.foundation.text import utf16_len, utf16_take
from memquill.jsondoc import JSONDepthError, parse_json
from memquill.store._codec import (
    HEADER,
    HEADER_V3,
    HEADERS,
    MAX_CONTENT_UNITS,
    decode_store,
    erased_shape,
    implies,
)
from memquill.store._record import is_key

# The format's fixed strings (docs/record-format.md).
MARKER: Final = "<!-- memory-record "
MARKER_END: Final = " -->\n"
SEPARATOR: Final = "\n\n"
_SNIPPET: Final = 40


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """The first problem in a records file.

    Attributes:
        record_index: 0-based index of the record block at fault (``None``: the whole file).
        record_id: that record's id, when its marker line could be read.
        reason: what is wrong, in a sentence a person can act on.
    """

    record_index: int | None
    record_id: str | None
    reason: str

    def where(self) -> str:
        """``record 3 (id 3f2a9c1e…)``, ``record 3`` or ``the file``, for messages."""
        if self.record_index is None:
            return "the file"
        named = f" (id {self.record_id[:8]}…)" if self.record_id else ""
        return f"record {self.record_index + 1}{named}"


def next_marker(text: str, start: int) -> int:
    """Where the next record's marker line starts after ``start`` (``-1`` if none)."""
    found = text.find(SEPARATOR + MARKER, start)
    return -1 if found < 0 else found + len(SEPARATOR)


@dataclass(frozen=True, slots=True)
class TornTail:
    """The end of a records file that holds only the start of a block: a write cut off before
    it was acknowledged (a crash inside an append, or a power cut that kept part of it).

    Attributes:
        keep: how many bytes to keep, up to the end of the last complete block.
        records: how many complete records those hold.
        dropped: how many bytes follow them.
    """

    keep: int
    records: int
    dropped: int

    def sentence(self) -> str:
        """What it is, and what ``doctor --fix`` does about it."""
        return (
            f"a torn tail: the {self.dropped} bytes after record {self.records} are the start "
            "of a write that was cut off (a crash or power cut) and never acknowledged"
        )


def torn_tail(raw: bytes) -> TornTail | None:
    """The torn tail of ``raw``, if its only problem is one (see :class:`TornTail`).

    Torn means: every block before the tail is whole and valid, and the tail (after dropping
    trailing NUL bytes, which a power cut can leave where data was never written, and a
    character cut in half) is the start of one block that ends too soon: its marker line is
    unfinished, or its text is shorter than its ``contentLength`` and not followed by the
    blank line. A text shorter than its length *and* followed by the blank line reads as a hand
    edit of the last fact instead, as it always has (``doctor --fix`` keeps such an edit).
    """
    body = raw.rstrip(b"\0")
    text = None
    for cut in range(4):  # a UTF-8 character cut in half at the very end
        try:
            text = body[: len(body) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        break
    if text is None:
        return None
    header = next((h for h in HEADERS if text.startswith(h)), None)
    if header is None:
        return None
    cursor, index, seen, problem = _walk(text, header)
    if problem is not None and not _unfinished(text[cursor:]):
        return None
    if seen.erased:
        return None  # a forget's erasure is never torn off: its tombstones were synced first
    keep = len(text[:cursor].encode("utf-8"))
    if keep == len(raw):
        return None
    return TornTail(keep, index, len(raw) - keep)


def _unfinished(rest: str) -> bool:
    """Whether ``rest`` (from a block's start to the end) is one block that ends too soon."""
    if SEPARATOR + MARKER in rest:
        return False  # a later block follows: damage inside the file, not its end
    if len(rest) <= len(MARKER):
        return MARKER.startswith(rest)
    if not rest.startswith(MARKER):
        return False
    end = rest.find(MARKER_END, len(MARKER))
    if end < 0:
        return "\n" not in rest  # the marker line itself was cut
    try:
        parsed: object = parse_json(rest[len(MARKER) : end])
    except ValueError:
        return False
    if not isinstance(parsed, dict):
        return False
    length = cast(dict[str, object], parsed).get("contentLength")
    if type(length) is not int:
        return False
    content = rest[end + len(MARKER_END) :]
    return utf16_len(content) < length + len(SEPARATOR) and not content.endswith(SEPARATOR)


def diagnose(raw: bytes) -> Diagnosis | None:
    """The first problem in ``raw`` (the bytes of ``records.md``), or ``None`` if it decodes."""
    torn = torn_tail(raw)
    if torn is not None:
        reason = f"{torn.sentence()}; doctor --fix cuts the file back to record {torn.records}"
        return Diagnosis(torn.records, None, reason)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        # The blocks before the first bad byte decode as text; the bad one is next.
        index = _count_blocks(raw[: error.start].decode("utf-8"))
        reason = f"byte {error.start} is not UTF-8 text (a binary or re-encoded file?)"
        return Diagnosis(index, None, reason)
    header = next((h for h in HEADERS if text.startswith(h)), None)
    if header is None:
        crlf = any(text.startswith(h.replace("\n", "\r\n")) for h in HEADERS)
        if crlf:
            return Diagnosis(None, None, "an editor changed the line endings to CRLF (\\r\\n)")
        return Diagnosis(None, None, "it does not start with memquill's records header")
    _, _, seen, problem = _walk(text, header)
    if problem is not None:
        return problem
    if seen.erased:
        record_id, index = min(seen.erased.items(), key=lambda item: item[1])
        return Diagnosis(index, record_id, "it was erased by a forget, yet no tombstone follows it")
    try:
        decode_store(text)
    except CorruptError as error:  # something this walk does not model: still say where
        return Diagnosis(error.record_index, None, "it does not pass the format's checks")
    return None


def _walk(text: str, header: str) -> tuple[int, int, _Seen, Diagnosis | None]:
    """Check ``text``'s blocks after ``header`` in order, up to the first problem: where the
    walk stopped (that block's start, or the end), how many blocks passed, what they showed,
    and the problem (``None``: every block passed)."""
    cursor, index, seen = len(header), 0, _Seen(implies(header), header == HEADER_V3)
    while cursor < len(text):
        found = _block_problem(text, cursor, index, seen)
        if isinstance(found, Diagnosis):
            return cursor, index, seen, found
        cursor, index = found, index + 1
    return cursor, index, seen, None


def _count_blocks(text: str) -> int:
    # The header ends with a blank line, so every marker line follows one.
    return max(text.count(SEPARATOR + MARKER) - 1, 0)


@dataclass(slots=True)
class _Seen:
    """The ids, and the keys of active facts, of the blocks before the current one;
    ``implied``: a v2 or v3 file, where a correction frees the key of the version it
    supersedes (``held``: the key each active version holds, by id, so that is one lookup);
    ``claims``: a v3 file, where a later tombstone claims an earlier block of its id
    (``erased``: blocks only such a tombstone explains, by id, not claimed yet;
    ``forgotten``: the ids already revoked)."""

    implied: bool = False
    claims: bool = False
    erased: dict[str, int] = field(default_factory=dict[str, int])
    forgotten: set[str] = field(default_factory=set[str])
    ids: set[str] = field(default_factory=set[str])
    keys: set[str] = field(default_factory=set[str])
    held: dict[str, str] = field(default_factory=dict[str, str])


def _block_problem(text: str, cursor: int, index: int, seen: _Seen) -> Diagnosis | int:
    """The problem of the block at ``cursor``, or where the next block starts (in a v3 file,
    a block with only an erased block's shape waits for its tombstone)."""
    found = _strict_problem(text, cursor, index, seen)
    if not seen.claims or not isinstance(found, Diagnosis):
        return found
    try:
        record_id, following = erased_shape(text, cursor, index)
    except CorruptError:
        return found
    if record_id in seen.ids:
        return found
    seen.ids.add(record_id)
    seen.erased[record_id] = index
    return following


def _strict_problem(text: str, cursor: int, index: int, seen: _Seen) -> Diagnosis | int:
    """The problem of the block at ``cursor`` read as a record, or where the next starts."""

    def problem(reason: str, record_id: str | None = None) -> Diagnosis:
        return Diagnosis(index, record_id, reason)

    if not text.startswith(MARKER, cursor):
        found = text[cursor : cursor + _SNIPPET].split("\n", 1)[0] or "an empty line"
        return problem(f"a record marker line was expected, found {found!r}")
    start = cursor + len(MARKER)
    end = text.find(MARKER_END, start)
    if end < 0 or "\n" in text[start:end]:
        return problem("its marker line does not end with ' -->'")
    try:
        parsed: object = parse_json(text[start:end])
    except JSONDepthError:
        return problem("its metadata is nested too deeply to read")
    except json.JSONDecodeError as error:
        return problem(f"its metadata is not valid JSON ({error.msg})")
    except ValueError:  # a number too long to convert, say
        return problem("its metadata is not valid JSON")
    if not isinstance(parsed, dict):
        return problem("its metadata is not a JSON object")
    meta = cast(dict[str, object], parsed)
    named = meta.get("id")
    record_id = named if isinstance(named, str) else None
    length = meta.get("contentLength")
    if type(length) is not int or not 0 <= length <= MAX_CONTENT_UNITS:
        return problem("its contentLength is missing or not 0–16000", record_id)
    body = end + len(MARKER_END)
    points = utf16_take(text, body, length)
    if points is None or text[body + points : body + points + 2] != SEPARATOR:
        following = next_marker(text, body)
        stop = following - len(SEPARATOR) if following >= 0 else len(text.rstrip("\n"))
        actual = utf16_len(text[body:stop])
        if actual != length:
            return problem(
                f"its text was edited: contentLength says {length} UTF-16 units, "
                f"the text is {actual}",
                record_id,
            )
        return problem("it is not followed by a blank line", record_id)
    revoked = meta.get("status") == "revoked"
    claims = seen.claims and revoked and record_id not in seen.forgotten
    if record_id is not None and record_id in seen.ids and not claims:
        return problem(f"its id {record_id} is used by an earlier record too", record_id)
    block = text[cursor : body + points + 2]
    try:
        decode_store(HEADER + block)
    except CorruptError:
        return problem(_field_problem(meta, text[body : body + points]), record_id)
    if record_id is not None and revoked:
        seen.forgotten.add(record_id)
    if record_id is not None and record_id in seen.ids:  # a v3 tombstone claims its block
        seen.erased.pop(record_id, None)
        seen.keys.discard(seen.held.pop(record_id, ""))
        return body + points + 2
    key = meta.get("key") if meta.get("status") == "active" else None
    replaced = meta.get("supersedes")
    if seen.implied and isinstance(replaced, str):
        seen.keys.discard(seen.held.pop(replaced, ""))
    if isinstance(key, str) and key in seen.keys:
        return problem(f"its key {key} names an earlier active fact too", record_id)
    if record_id is not None:
        seen.ids.add(record_id)
    if isinstance(key, str):
        seen.keys.add(key)
        if record_id is not None:
            seen.held[record_id] = key
    return body + points + 2


def _field_problem(meta: dict[str, object], content: str) -> str:
    """Which field of an otherwise readable block the decoder refuses."""
    for key in ("id", "rootId"):
        value = meta.get(key)
        if not isinstance(value, str) or len(value) != 36:
            return f"its {key} is not a record id"
    for key in ("createdAt", "updatedAt", "operationHash"):
        if not isinstance(meta.get(key), str):
            return f"its {key} is missing or not text"
    status = meta.get("status")
    if status not in ("active", "superseded", "revoked"):
        return f"its status {status!r} is not active, superseded or revoked"
    if "key" in meta and not is_key(meta["key"]):
        return "its key is not a valid key (see docs/record-format.md)"
    if not isinstance(meta.get("extra", {}), dict):
        return "its extra metadata is not a JSON object"
    if status == "revoked" and content:
        return "it was forgotten, yet it holds text"
    if not isinstance(meta.get("source"), dict):
        return "its source is missing or not an object"
    if not content.strip():
        return "its text is blank"
    return "its source or text is not valid (see docs/record-format.md)"
