"""A forgotten fact's words block an agent from saving them again (issue 32, item 3).

Remember "Bob's birthday is 1 June.", correct it to "...2 June.", forget it: a remember from a
tool or a conversation of either text (case and whitespace aside), from any session, is
``blocked`` and names when the fact was forgotten; a person (``manual``) may save it again, and
is told. The tombstones keep keyed fingerprints, never the text.
"""

from __future__ import annotations

from pathlib import Path

from tests.core.store_helpers import conversation, raw, tool

from memquill import MemorySession, WriteSource, correct, forget, remember
from memquill.store._merge import merge_files
from memquill.store._record import FactKey
from memquill.store._record_key import RecordKey
from memquill.store._store import RecordStore
from memquill.store._tombstones import TEXT_HASH_FIELD

FIRST = "Bob's birthday is 1 June."
SECOND = "Bob's birthday is 2 June."


def _forgotten_family(workspace: Path) -> str:
    """Remember, correct and forget Bob's birthday from session ``s1``; when it was forgotten."""
    session = MemorySession(workspace, "s1")
    source = WriteSource("tool", session_id="s1")
    saved = remember(session, FIRST, source=source)
    assert saved.record_id is not None and saved.record_revision is not None
    updated = correct(session, saved.record_id, SECOND, saved.record_revision, source=source)
    assert updated.record_id is not None and updated.record_revision is not None
    gone = forget(session, updated.record_id, updated.record_revision, source=source)
    assert gone.status == "saved"
    stamps = {r.updated_at for r in gone.result.records if r.status == "revoked"}
    assert len(stamps) == 1
    return stamps.pop()


def test_a_tool_in_another_session_cannot_save_forgotten_words_again(tmp_path: Path) -> None:
    when = _forgotten_family(tmp_path)
    other = MemorySession(tmp_path, "s2")
    source = WriteSource("tool", session_id="s2")

    for text in (SECOND, FIRST, "  bob's BIRTHDAY is 2   june. "):
        outcome = remember(other, text, source=source)
        assert (outcome.status, outcome.record_id, outcome.forgotten_at) == ("blocked", None, when)

    assert remember(other, "Bob's birthday is 3 June.", source=source).status == "saved"


def test_a_conversation_batch_keeps_its_other_facts(tmp_path: Path) -> None:
    when = _forgotten_family(tmp_path)
    store = RecordStore(str(tmp_path))

    result = store.save(
        [
            conversation(SECOND, "job:0", session="s3", message="m1"),
            conversation("Ana starts school in May.", "job:1", session="s3", message="m1"),
        ],
        skip_known=True,
    )

    assert result.status == "saved"
    assert [t.status for t in result.targets] == ["blocked", "saved"]
    assert result.targets[0].forgotten_at == when
    alone = store.save([conversation(FIRST, "job:2", session="s3", message="m2")])
    assert (alone.status, alone.targets[0].forgotten_at) == ("blocked", when)


def test_a_person_may_save_forgotten_words_again_and_is_told(tmp_path: Path) -> None:
    when = _forgotten_family(tmp_path)
    session = MemorySession(tmp_path, "cli")

    outcome = remember(session, SECOND, source=WriteSource.manual())

    assert (outcome.status, outcome.forgotten_at) == ("saved", when)
    assert outcome.record_id is not None


def test_a_tool_cannot_correct_a_fact_to_forgotten_words(tmp_path: Path) -> None:
    when = _forgotten_family(tmp_path)
    session = MemorySession(tmp_path, "s2")
    source = WriteSource("tool", session_id="s2")
    saved = remember(session, "Bob likes tea.", source=source, key="bob/drink")
    assert saved.record_revision is not None

    outcome = correct(session, FactKey("bob/drink"), FIRST, saved.record_revision, source=source)

    assert (outcome.status, outcome.forgotten_at) == ("blocked", when)
    assert [r.content for r in session.store.snapshot().records if r.status == "active"] == [
        "Bob likes tea."
    ]
    by_hand = correct(
        session, FactKey("bob/drink"), FIRST, saved.record_revision, source=WriteSource.manual()
    )
    assert (by_hand.status, by_hand.forgotten_at) == ("saved", when)


def test_tombstones_keep_keyed_fingerprints_never_the_text(tmp_path: Path) -> None:
    _forgotten_family(tmp_path)

    data = raw(tmp_path).decode()
    records = RecordStore(str(tmp_path)).snapshot().records
    hashes = [r.meta.get(TEXT_HASH_FIELD) for r in records]
    assert "birthday" not in data.casefold()
    assert len(hashes) == 2 and all(isinstance(h, str) and h.startswith("hmac-v1:") for h in hashes)
    assert len(set(hashes)) == 2


def test_a_corrected_but_not_forgotten_text_is_not_blocked(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "s1")
    source = WriteSource("tool", session_id="s1")
    saved = remember(session, FIRST, source=source)
    assert saved.record_id is not None and saved.record_revision is not None
    correct(session, saved.record_id, SECOND, saved.record_revision, source=source)
    compacted = session.store.compact(session.store.snapshot().revision)
    assert compacted.status == "saved"

    again = remember(
        MemorySession(tmp_path, "s2"), FIRST, source=WriteSource("tool", session_id="s2")
    )

    assert again.status == "saved"


def test_compacted_history_still_blocks_once_the_fact_is_forgotten(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "s1")
    source = WriteSource("tool", session_id="s1")
    saved = remember(session, FIRST, source=source)
    assert saved.record_id is not None and saved.record_revision is not None
    updated = correct(session, saved.record_id, SECOND, saved.record_revision, source=source)
    session.store.compact(session.store.snapshot().revision)
    assert updated.record_id is not None
    forget(session, updated.record_id, session.store.snapshot().revision, source=source)

    other = remember(
        MemorySession(tmp_path, "s2"), FIRST, source=WriteSource("tool", session_id="s2")
    )

    assert other.status == "blocked"


def test_a_merge_keeps_the_fingerprints_of_text_it_erases(tmp_path: Path) -> None:
    """Forgotten on one machine, corrected on the other: the merged tombstone of the other
    machine's correction still blocks its words, whichever side is "ours"."""
    ours_ws, theirs_ws = tmp_path / "a", tmp_path / "b"
    ours_ws.mkdir()
    theirs_ws.mkdir()
    store = RecordStore(str(ours_ws))
    first = store.save([tool(FIRST, "k1", session="s1")])
    assert first.record_id is not None
    base = raw(ours_ws)
    (theirs_ws / "memory").mkdir()
    (theirs_ws / "memory" / "records.md").write_bytes(base)
    there = RecordStore(str(theirs_ws))
    there.correct(first.record_id, SECOND, there.snapshot().revision, {"kind": "manual"})
    store.revoke(first.record_id, store.snapshot().revision)

    key = RecordKey().load()  # the one key both stores use here (one data folder)
    merged, _ = merge_files(base, raw(ours_ws), raw(theirs_ws), key)
    swapped, _ = merge_files(base, raw(theirs_ws), raw(ours_ws), key)
    assert merged == swapped
    (ours_ws / "memory" / "records.md").write_bytes(merged)

    blocked = store.save([tool(SECOND, "k2", session="s9")])
    assert blocked.status == "blocked"
