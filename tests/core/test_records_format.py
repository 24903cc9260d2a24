"""The ``records.md`` format: exact bytes, both headers, revisions, and what counts as corrupt."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memquill.errors import CorruptError, Messages
from memquill.store._codec import (
    HEADER,
    LEGACY_HEADER,
    StoreImage,
    decode_store,
    encode_block,
    encode_store,
    iso_timestamp,
    record_revision,
    store_revision,
)
from memquill.store._record import Record, source_key

ID_A = "0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01"
ID_B = "1c7e3b63-9d2f-4d6f-8b1f-4e3c2a8d7b02"
STAMP = "2025-01-02T03:04:05.006Z"
HASH = "ab" * 32


def meta(record_id: object = ID_A, **changes: Any) -> dict[str, Any]:
    """Metadata of a new manual record, in the spec's key order."""
    base: dict[str, Any] = {
        "id": record_id,
        "rootId": record_id,
        "source": {"kind": "manual"},
        "status": "active",
        "createdAt": STAMP,
        "updatedAt": STAMP,
        "operationHash": HASH,
    }
    base.update(changes)
    return {key: value for key, value in base.items() if value is not None}


def block(fields: dict[str, Any], content: str, length: Any = "auto") -> str:
    """A record block built by hand, so the decoder is checked against the written contract."""
    units = len(content.encode("utf-16-le")) // 2 if length == "auto" else length
    text = json.dumps({**fields, "contentLength": units}, separators=(",", ":"), ensure_ascii=False)
    return f"<!-- memory-record {text} -->\n{content}\n\n"


def test_a_block_has_the_exact_documented_bytes() -> None:
    record = Record(meta(source={"kind": "tool", "sessionId": "会话"}), "hello\nworld")
    assert encode_block(record) == (
        '<!-- memory-record {"id":"0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01",'
        '"rootId":"0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01","source":{"kind":"tool",'
        '"sessionId":"会话"},"status":"active","createdAt":"2025-01-02T03:04:05.006Z",'
        '"updatedAt":"2025-01-02T03:04:05.006Z","operationHash":"' + HASH + '",'
        '"contentLength":11} -->\nhello\nworld\n\n'
    )


def test_content_length_counts_utf16_units() -> None:
    encoded = encode_block(Record(meta(), "a😀中"))
    assert '"contentLength":4} -->\na😀中\n\n' in encoded


def test_headers_empty_files_and_header_only_files() -> None:
    assert HEADER == "# Memory records\n\n<!-- memory-records:v1 -->\n\n"
    assert LEGACY_HEADER == "# CodePilot memory records\n\n<!-- memory-records:v1 -->\n\n"
    assert decode_store("") == StoreImage(HEADER, ())
    assert decode_store(HEADER) == StoreImage(HEADER, ())
    assert decode_store(LEGACY_HEADER) == StoreImage(LEGACY_HEADER, ())
    assert encode_store(StoreImage()) == HEADER


def test_the_legacy_header_is_read_and_kept() -> None:
    text = LEGACY_HEADER + block(meta(), "from the original system")
    image = decode_store(text)
    assert image.header == LEGACY_HEADER
    assert [r.content for r in image.records] == ["from the original system"]
    assert encode_store(image) == text


def test_unknown_keys_and_key_order_survive_a_rewrite() -> None:
    fields = {"note": {"x": [1, "两"]}, **meta(), "supersedes": ID_B, "zExtra": True}
    fields["source"] = {"kind": "conversation", "sessionId": "s", "messageId": "m", "mood": "ok"}
    text = HEADER + block(fields, "kept")
    image = decode_store(text)
    assert list(image.records[0].meta) == list(fields)
    assert image.records[0].meta["note"] == {"x": [1, "两"]}
    assert encode_store(image) == text


def test_content_that_imitates_the_format_is_just_content() -> None:
    tricky = (
        "line one\n\n"
        + block(meta(ID_B), "a fake record")
        + "<!-- memory-records:v1 -->\n\n# Memory records\n -->\n\r\n"
    )
    text = HEADER + block(meta(), tricky) + block(meta(ID_B), "real second")
    image = decode_store(text)
    assert [r.content for r in image.records] == [tricky, "real second"]
    assert encode_store(image) == text


def test_revisions_hash_the_real_root_nul_and_exact_bytes(tmp_path: Path) -> None:
    data = (HEADER + block(meta(), "x")).encode()
    expected = hashlib.sha256(str(tmp_path).encode() + b"\0" + data).hexdigest()
    assert store_revision(tmp_path, data) == expected
    assert store_revision(tmp_path, b"") != store_revision(tmp_path / "other", b"")
    assert store_revision(tmp_path, data + b" ") != expected
    record = decode_store(data.decode()).records[0]
    assert (
        record_revision(tmp_path, record)
        == hashlib.sha256(str(tmp_path).encode() + b"\0" + block(meta(), "x").encode()).hexdigest()
    )


def test_iso_timestamps_match_javascript() -> None:
    moment = datetime(2025, 1, 2, 3, 4, 5, 6789, tzinfo=UTC)
    assert iso_timestamp(moment) == "2025-01-02T03:04:05.006Z"
    east = moment.astimezone(timezone(timedelta(hours=8)))
    assert iso_timestamp(east) == "2025-01-02T03:04:05.006Z"


def test_source_key_needs_both_session_and_message() -> None:
    assert source_key({"kind": "conversation", "sessionId": "s", "messageId": "m"}) == "s\0m"
    assert source_key({"kind": "tool", "sessionId": "s"}) is None
    assert source_key({"kind": "manual"}) is None


def test_stored_secrets_do_not_make_the_file_corrupt() -> None:
    text = HEADER + block(meta(), "key sk-abcdefghijklmnopqrstuv")
    assert decode_store(text).records[0].content == "key sk-abcdefghijklmnopqrstuv"


def test_escaped_characters_in_metadata_are_fine() -> None:
    text = HEADER + block(meta(), "x").replace(STAMP, "\\u00e9\\ud83d\\ude00", 1)
    assert decode_store(text).records[0].created_at == "é😀"


def test_compacted_superseded_versions_may_be_empty() -> None:
    text = HEADER + block(meta(status="superseded"), "") + block(meta(ID_B, rootId=ID_A), "new")
    assert [r.status for r in decode_store(text).records] == ["superseded", "active"]


GOOD = block(meta(), "first fact")

CORRUPT_BLOCKS: dict[str, str] = {
    "content edited, length not": GOOD.replace("first fact", "first fact!"),
    "content shortened": GOOD.replace("first fact", "first fac"),
    "CRLF separator": GOOD[:-2] + "\r\n\r\n",
    "CRLF after the marker": GOOD.replace(" -->\n", " -->\r\n"),
    "truncated in content": GOOD[:-8],
    "truncated in metadata": GOOD[:40],
    "missing final newline": GOOD[:-1],
    "not JSON": block(meta(), "x").replace('{"id"', '{id"'),
    "JSON array": "<!-- memory-record [1] -->\nx\n\n",
    "no contentLength": GOOD.replace(',"contentLength":10', ""),
    "negative length": block(meta(), "", length=-1),
    "length over 16000": block(meta(), "x" * 16001, length=16001),
    "boolean length": block(meta(), "x", length=True),
    "float length": block(meta(), "x", length=1.0),
    "uppercase id": block(meta(ID_A.upper()), "x"),
    "short id": block(meta("abc"), "x"),
    "id not a string": block(meta(7), "x"),
    "bad rootId": block(meta(rootId="nope"), "x"),
    "bad status": block(meta(status="deleted"), "x"),
    # Values that cannot be looked up in a set of names: corrupt, not a TypeError.
    "status a list": block(meta(status=["active"]), "x"),
    "source kind a list": block(meta(source={"kind": ["tool"], "sessionId": "s"}), "x"),
    "source role an object": block(meta(source={"kind": "manual", "role": {}}), "x"),
    "createdAt not a string": block(meta(createdAt=1), "x"),
    "no updatedAt": block(meta(updatedAt=None), "x"),
    "no operationHash": block(meta(operationHash=None), "x"),
    "no source": block(meta(source=None), "x"),
    "unknown source kind": block(meta(source={"kind": "email"}), "x"),
    "conversation without message": block(
        meta(source={"kind": "conversation", "sessionId": "s"}), "x"
    ),
    "tool without session": block(meta(source={"kind": "tool"}), "x"),
    "bad role": block(meta(source={"kind": "manual", "role": "system"}), "x"),
    "long session id": block(meta(source={"kind": "tool", "sessionId": "s" * 201}), "x"),
    "control char in message id": block(
        meta(source={"kind": "conversation", "sessionId": "s", "messageId": "m\n"}), "x"
    ),
    "blank active content": block(meta(), "   "),
    "empty active content": block(meta(), ""),
    "NUL in content": block(meta(), "a\0b"),
    "revoked with content": block(meta(status="revoked"), "still here"),
    # Escaped lone surrogates parse as JSON but could never be written back as UTF-8.
    "lone surrogate in createdAt": block(meta(), "x").replace(STAMP, "\\ud800", 1),
    "lone surrogate in an unknown key": block({**meta(), "note": "\udc00"}, "x").replace(
        "\udc00", "\\udc00"
    ),
    "lone surrogate in the source": block(
        meta(source={"kind": "tool", "sessionId": "s"}), "x"
    ).replace('"sessionId":"s"', '"sessionId":"\\ud83d"'),
}

# Bytes after a valid block belong to the next (bad) block.
TRAILING: dict[str, str] = {
    "trailing whitespace": GOOD + " ",
    "trailing newline": GOOD + "\n",
    "garbage after a block": GOOD + "x" + GOOD,
}


@pytest.mark.parametrize("bad", list(CORRUPT_BLOCKS.values()), ids=list(CORRUPT_BLOCKS))
def test_hand_edits_make_the_file_corrupt_and_name_the_record(bad: str) -> None:
    # The bad block comes second, so the index proves which block failed.
    with pytest.raises(CorruptError) as info:
        decode_store(HEADER + block(meta(ID_B), "a good first block") + bad)
    assert info.value.message == Messages.EDITED
    assert info.value.record_index == 1


# Valid sources near the bad ones above: a decoder that remembers the sources it found valid
# must still refuse every bad one after them.
GOOD_SOURCES: list[dict[str, Any]] = [
    {"kind": "tool", "sessionId": "s"},
    {"kind": "manual", "role": "user"},
    {"kind": "conversation", "sessionId": "s", "messageId": "m"},
    {"kind": "tool", "sessionId": "s" * 200},
    {"kind": "manual"},
]
GOOD_IDS = [f"{n:08x}-8c1e-4c5e-9a0e-3d2b1f7c6a01" for n in range(len(GOOD_SOURCES))]


@pytest.mark.parametrize("bad", list(CORRUPT_BLOCKS.values()), ids=list(CORRUPT_BLOCKS))
def test_a_bad_block_after_good_sources_is_still_corrupt(bad: str) -> None:
    good = "".join(
        block(meta(record_id, source=source), "good")
        for record_id, source in zip(GOOD_IDS, GOOD_SOURCES, strict=True)
    )
    with pytest.raises(CorruptError) as info:
        decode_store(HEADER + good + bad)
    assert (info.value.message, info.value.record_index) == (Messages.EDITED, len(GOOD_SOURCES))


@pytest.mark.parametrize("bad", list(TRAILING.values()), ids=list(TRAILING))
def test_bytes_after_the_last_block_are_corrupt(bad: str) -> None:
    with pytest.raises(CorruptError) as info:
        decode_store(HEADER + block(meta(ID_B), "a good first block") + bad)
    assert (info.value.message, info.value.record_index) == (Messages.EDITED, 2)


def test_a_duplicate_id_is_corrupt() -> None:
    with pytest.raises(CorruptError) as info:
        decode_store(HEADER + GOOD + block(meta(), "same id again"))
    assert (info.value.message, info.value.record_index) == (Messages.EDITED, 1)


@pytest.mark.parametrize(
    "text",
    [
        "# My own memory\n\nI like tea.\n",
        "\ufeff" + HEADER + GOOD,
        HEADER.replace("\n", "\r\n") + GOOD,
        "# Memory records\n<!-- memory-records:v1 -->\n\n" + GOOD,
        "# Memory records\n\n<!-- memory-records:v4 -->\n\n",
        HEADER[:-1],
        GOOD,
    ],
    ids=["foreign", "BOM", "CRLF header", "one newline", "v4", "truncated header", "no header"],
)
def test_anything_without_an_exact_header_is_not_managed(text: str) -> None:
    with pytest.raises(CorruptError) as info:
        decode_store(text)
    assert (info.value.message, info.value.record_index) == (Messages.FOREIGN, None)
