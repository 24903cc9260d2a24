"""Property tests: any valid content and any valid store survive encode → decode byte for byte."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st
from tests.core.store_helpers import manual, raw

from memquill import RecordStore
from memquill.foundation.controls import FORBIDDEN
from memquill.foundation.text import utf16_len
from memquill.store._codec import (
    HEADER,
    LEGACY_HEADER,
    StoreImage,
    decode_store,
    encode_block,
    encode_store,
    iso_timestamp,
)
from memquill.store._record import Record
from memquill.store._transaction import read_snapshot

# Fragments that stress the framing: fake markers, separators, CRLF, astral and CJK text.
TRICKY = st.sampled_from(
    [
        '<!-- memory-record {"id":"00000000-0000-0000-0000-000000000000","contentLength":3} -->\n',
        "<!-- memory-records:v1 -->\n\n",
        "# Memory records\n\n",
        " -->\n",
        "\n\n",
        "\r\n",
        "\r",
        "😀",
        "𝄞",
        "👩‍💻",
        "记忆",
        "한국어",
        "\ufeff",
        "  ",
        "\t",
    ]
)
CHARS = st.characters(exclude_categories=["Cs"], exclude_characters="\0")
CONTENT = (
    st.lists(st.one_of(TRICKY, st.text(CHARS, min_size=1, max_size=8)), min_size=1, max_size=8)
    .map("".join)
    .filter(lambda text: bool(text.strip()))
)
# What a write accepts: not only zero-width or format characters (blank to a reader), and no
# control character but tab and newline (a file may hold them: CONTENT still decodes).
SAVABLE = CONTENT.map(lambda text: FORBIDDEN.sub("", text)).filter(
    lambda text: any(not c.isspace() and unicodedata.category(c) != "Cf" for c in text)
)
IDS = st.uuids(version=4).map(str)
STAMPS = st.integers(0, 4_102_444_800_000).map(
    lambda ms: iso_timestamp(datetime.fromtimestamp(ms / 1000, UTC))
)
REFERENCE = st.text(
    st.characters(exclude_categories=["Cs"], min_codepoint=0x20), min_size=1, max_size=30
)
SOURCES: st.SearchStrategy[dict[str, str]] = st.one_of(
    st.fixed_dictionaries({"kind": st.just("manual")}, optional={"capturedAt": STAMPS}),
    st.fixed_dictionaries(
        {"kind": st.just("tool"), "sessionId": REFERENCE},
        optional={"role": st.sampled_from(["user", "assistant"])},
    ),
    st.fixed_dictionaries(
        {"kind": st.just("conversation"), "sessionId": REFERENCE, "messageId": REFERENCE},
        optional={"role": st.sampled_from(["user", "assistant"]), "extra": REFERENCE},
    ),
)
EXTRA_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(CHARS, max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=4,
)


@st.composite
def records(draw: st.DrawFn, record_id: str) -> Record:
    status = draw(st.sampled_from(["active", "superseded", "revoked"]))
    meta: dict[str, Any] = {
        "id": record_id,
        "rootId": draw(st.just(record_id) | IDS),
        "source": draw(SOURCES),
        "status": status,
        "createdAt": draw(STAMPS),
        "updatedAt": draw(STAMPS),
        "operationHash": draw(st.text("0123456789abcdef", min_size=64, max_size=64)),
    }
    if draw(st.booleans()):
        meta["supersedes"] = draw(IDS)
    for key in draw(st.lists(st.sampled_from(["xNote", "xTags", "xLegacy"]), unique=True)):
        meta[key] = draw(EXTRA_VALUES)
    if status == "revoked":
        content = ""
    elif status == "superseded":
        content = draw(st.just("") | CONTENT)
    else:
        content = draw(CONTENT)
    return Record(meta, content)


@st.composite
def images(draw: st.DrawFn) -> StoreImage:
    ids = draw(st.lists(IDS, unique=True, max_size=4))
    return StoreImage(
        draw(st.sampled_from([HEADER, LEGACY_HEADER])), tuple(draw(records(i)) for i in ids)
    )


@settings(max_examples=200)
@given(CONTENT)
def test_any_content_round_trips_byte_exact(content: str) -> None:
    record = Record(
        {
            "id": "0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01",
            "rootId": "0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01",
            "source": {"kind": "manual"},
            "status": "active",
            "createdAt": "2025-01-01T00:00:00.000Z",
            "updatedAt": "2025-01-01T00:00:00.000Z",
            "operationHash": "0" * 64,
        },
        content,
    )
    text = encode_store(StoreImage(HEADER, (record, record.evolve(id="1" * 36))))
    decoded = decode_store(text)
    assert [r.content for r in decoded.records] == [content, content]
    assert encode_store(decoded).encode() == text.encode()
    assert f'"contentLength":{len(content.encode("utf-16-le")) // 2}}}' in encode_block(record)


@settings(max_examples=100)
@given(images())
def test_whole_stores_round_trip(image: StoreImage) -> None:
    text = encode_store(image)
    decoded = decode_store(text)
    assert decoded == image
    assert [list(r.meta) for r in decoded.records] == [list(r.meta) for r in image.records]
    assert encode_store(decoded) == text


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(SAVABLE, min_size=1, max_size=3, unique=True))
def test_saved_content_reads_back_byte_exact(tmp_path_factory: Any, contents: list[str]) -> None:
    workspace: Path = tmp_path_factory.mktemp("ws")
    store = RecordStore(workspace)
    result = store.save([manual(content, f"k{i}") for i, content in enumerate(contents)])
    snapshot = read_snapshot(store.locations())
    assert [r.content for r in snapshot.records] == contents
    assert snapshot.revision == result.revision
    text = raw(workspace).decode()
    for record, content in zip(snapshot.records, contents, strict=True):
        assert f'"contentLength":{utf16_len(content)}}} -->\n{content}\n\n' in text
        assert record.meta["source"] == {"kind": "manual"}
