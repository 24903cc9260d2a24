"""Key syntax, the id/key rule, and the reversible quoting of any text into a key; the write
path's keyed operations (what the LangGraph store and the memory tool build on)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from memquill import (
    InvalidInputError,
    MemorySession,
    MemoryToolset,
    WriteSource,
    correct,
    forget,
    remember,
)
from memquill.errors import Messages
from memquill.store import quote_key, unquote_key
from memquill.store._record import MAX_KEY_CHARS, FactKey, is_key, looks_like_id, validate_key
from memquill.tools import rename_many, retrieve
from memquill.tools._writes import find_operation, forget_many

VALID = [
    "prefs/coffee",
    "projects/atlas/deploy-day",
    "notes/project.md",
    "Notes/Project_2026.v2.md",
    "a",
    "~",
    ".hidden/x",
    "a.b..c",
    "100%25",
    "cafe",  # hex, but shorter than any id prefix
    "0b6f2a52/x",
    "g0000000",
    "x" * MAX_KEY_CHARS,
]
INVALID = [
    "",
    "/prefs",
    "prefs/",
    "prefs//coffee",
    ".",
    "..",
    "notes/../x",
    "notes/./x",
    "my notes",
    "ééé",
    "tab\there",
    "100%",
    "100%2",
    "100%2f",  # escapes are upper-case
    "deadbeef",
    "0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01",
    "2024-01-01",
    "x" * (MAX_KEY_CHARS + 1),
    "a:b",
    "a\\b",
]


@pytest.mark.parametrize("key", VALID)
def test_valid_keys(key: str) -> None:
    assert is_key(key) and validate_key(key) == key and FactKey(key).value == key


@pytest.mark.parametrize("key", INVALID)
def test_invalid_keys_are_refused_with_the_rules(key: str) -> None:
    assert not is_key(key)
    with pytest.raises(InvalidInputError) as info:
        FactKey(key)
    assert info.value.message == Messages.KEY_FORMAT


def _key_by_its_rules(text: str) -> bool:
    """The key rules as stated: ASCII, 1 to MAX_KEY_CHARS characters, not id-shaped, and
    segments between slashes of unreserved characters or upper-case escapes, never . or .."""
    segment = re.compile(r"(?:[A-Za-z0-9._~-]|%[0-9A-F]{2})+")
    return (
        1 <= len(text) <= MAX_KEY_CHARS
        and text.isascii()
        and not looks_like_id(text)
        and all(segment.fullmatch(name) and name not in (".", "..") for name in text.split("/"))
    )


@given(st.text(alphabet="ab9AF0./%~-_:", min_size=0, max_size=12))
def test_a_key_is_what_its_rules_say(text: str) -> None:
    # ``is_key`` checks every stored record's key, so it is one match, not a split and a
    # match per segment; this holds the two to one another.
    assert is_key(text) == _key_by_its_rules(text)


def test_id_shaped_arguments_are_ids_and_everything_else_is_a_key() -> None:
    for text in ("3f2a9c1e", "3f2a9c1e-55", "0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01"):
        assert looks_like_id(text) and not is_key(text)
    for text in ("3f2a9c1", "3F2A9C1E", "3f2a9c1e/x", "prefs/coffee"):
        assert not looks_like_id(text)


@given(
    st.text(min_size=1, max_size=40).filter(
        lambda t: not any(0xD800 <= ord(c) <= 0xDFFF for c in t)
    )
)
def test_any_text_quotes_to_a_key_and_back(text: str) -> None:
    try:
        key = quote_key(text)
    except InvalidInputError:
        assert _quoted_bound([text]) > MAX_KEY_CHARS  # only ever for being too long
        return
    assert is_key(key) and "/" not in key
    assert unquote_key(key) == text


def _quoted_bound(parts: list[str]) -> int:
    """The most characters quoting can give: 3 per UTF-8 byte, the slashes, an id escape."""
    return sum(3 * len(part.encode()) for part in parts) + len(parts) - 1 + 2


@given(
    st.lists(
        st.text(min_size=1, max_size=10).filter(
            lambda t: "/" not in t and not any(0xD800 <= ord(c) <= 0xDFFF for c in t)
        ),
        min_size=1,
        max_size=4,
    )
)
def test_paths_keep_their_folders_when_quoted(parts: list[str]) -> None:
    path = "/".join(parts)
    try:
        key = quote_key(path, keep_slashes=True)
    except InvalidInputError:
        assert _quoted_bound(parts) > MAX_KEY_CHARS
        return
    assert is_key(key) and key.count("/") == path.count("/")
    assert unquote_key(key) == path


def test_quoting_examples() -> None:
    assert quote_key("user preferences") == "user%20preferences"
    assert quote_key("a/b") == "a%2Fb"
    assert quote_key("notes/my file.md", keep_slashes=True) == "notes/my%20file.md"
    assert quote_key("../x", keep_slashes=True) == "%2E%2E/x"
    assert quote_key("0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01").startswith("%30b6f2a52")
    assert quote_key("café") == "caf%C3%A9"
    for bad in ("", "a//b", "\ud800"):
        with pytest.raises(InvalidInputError):
            quote_key(bad, keep_slashes=True)
    with pytest.raises(InvalidInputError):
        quote_key("é" * 40)  # 240 characters once quoted
    with pytest.raises(InvalidInputError):
        unquote_key("%FF")  # not UTF-8


def test_the_write_path_renames_attaches_extra_and_forgets_a_folder_at_once(
    tmp_path: Path,
) -> None:
    session = MemorySession(tmp_path, "host-session")
    source = WriteSource("tool", session_id="host-session")
    first = remember(
        session, "# Project\nShip in May.", source=source, key="notes/project.md", extra={"n": 1}
    )
    assert (first.status, first.key) == ("saved", "notes/project.md")
    remember(session, "- buy milk", source=source, key="notes/todo.md")
    remember(session, "Elsewhere.", source=source, key="other.md")
    renamed = correct(
        session,
        FactKey("notes/project.md"),
        "# Project\nShip in May.",
        first.record_revision or "",
        source=source,
        key="notes/archive/project.md",
    )
    assert renamed.key == "notes/archive/project.md"
    snapshot = session.store.snapshot()
    moved = snapshot.by_key("notes/archive/project.md")
    assert moved is not None and moved.extra == {"n": 1}
    folder = snapshot.keyed("notes")
    targets = [(FactKey(r.key or ""), snapshot.record_revision(r)) for r in folder]
    gone = forget_many(session, targets, source=source)
    assert gone.status == "saved" and gone.key == "notes/todo.md"
    assert [t.status for t in gone.result.targets] == ["saved", "saved"]
    assert [r.key for r in session.store.snapshot().keyed()] == ["other.md"]
    # A read-only session may not: the one write path asks at every call.
    reader = MemorySession(tmp_path, "host-session", access="read")
    with pytest.raises(InvalidInputError) as info:
        forget_many(
            reader, [(FactKey("other.md"), session.store.snapshot().revision)], source=source
        )
    assert info.value.message == Messages.WRITE_UNAUTHORIZED


def test_the_write_path_moves_a_folder_in_one_write_and_finds_what_an_operation_wrote(
    tmp_path: Path,
) -> None:
    session = MemorySession(tmp_path, "host-session")
    source = WriteSource("tool", session_id="host-session")
    first = remember(
        session, "Ship in May.", source=source, key="notes/a.md", idempotency_key="create-a"
    )
    remember(session, "Buy milk.", source=source, key="notes/b.md")
    snapshot = session.store.snapshot()
    moves = [
        (FactKey(r.key or ""), f"archive/{r.key}", snapshot.record_revision(r)[:16])
        for r in snapshot.keyed("notes/")
    ]
    moved = rename_many(session, moves, source=source)  # revision prefixes are resolved
    assert (moved.operation, moved.status, moved.key) == ("update", "saved", "archive/notes/a.md")
    after = session.store.snapshot()
    assert [r.key for r in after.keyed()] == ["archive/notes/a.md", "archive/notes/b.md"]
    assert after.revision == moved.revision
    # What the first save wrote, found by its idempotency key: superseded by the move, its fact
    # alive under the new key; once forgotten, the fact has no current version.
    written = find_operation(session, "create-a", source=source)
    assert written is not None and written.id == first.record_id
    assert written.status == "superseded"
    current = after.current(written)
    assert current is not None and current.key == "archive/notes/a.md"
    assert find_operation(session, "create-a", source=WriteSource("manual")) is None
    forget(session, FactKey("archive/notes/a.md"), after.record_revision(current), source=source)
    gone = find_operation(session, "create-a", source=source)
    assert gone is not None and session.store.snapshot().current(gone) is None
    reader = MemorySession(tmp_path, "host-session", access="read")
    with pytest.raises(InvalidInputError) as info:
        rename_many(
            reader, [(FactKey("archive/notes/b.md"), "b.md", after.revision)], source=source
        )
    assert info.value.message == Messages.WRITE_UNAUTHORIZED


def test_hits_carry_the_key_as_data_and_retrievers_show_it(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "host-session")
    source = WriteSource("tool", session_id="host-session")
    remember(session, "The user takes oolong tea.", source=source, key="prefs/tea")
    remember(session, "The user likes green tea too.", source=source)
    toolset = MemoryToolset(session)
    hits = (toolset.call("memory_search", {"query": "tea"}).structured or {})["hits"]
    assert sorted((hit["key"] or "") for hit in hits) == ["", "prefs/tea"]
    recent = (toolset.call("memory_recent", {}).structured or {})["sections"]
    assert {section["key"] for section in recent} == {None, "prefs/tea"}
    found = {m.text: m for m in retrieve(session.query, "tea")}
    named = found["The user takes oolong tea."]
    assert named.metadata["key"] == "prefs/tea" and "key" not in named.private_keys
    plain = found["The user likes green tea too."]
    assert plain.metadata["key"] is None and "key" in plain.private_keys
