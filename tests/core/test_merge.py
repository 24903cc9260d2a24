"""The record-level merge, rule by rule (``docs/sync.md``), on files built by hand.

Each test builds the two sides (and the base) as bytes, merges them both ways, and checks the
documented outcome; every result must also decode, and merging it again must change nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from memquill.errors import CapacityError, CorruptError, Messages
from memquill.store._codec import HEADER, LEGACY_HEADER, StoreImage, decode_store, encode_store
from memquill.store._families import divergences, renamed_keys
from memquill.store._merge import merge_files
from memquill.store._record import Record

A = "0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01"
B = "1c7e3b63-9d2f-4d6f-8b1f-4e3c2a8d7b02"
C = "2d8f4c74-ae30-4e70-9c20-5f4d3b9e8c03"
D = "3e905d85-bf41-4f81-ad31-605e4caf9d04"
T0, T1, T2, T3 = (f"2026-03-01T12:00:0{n}.000Z" for n in range(4))


def record(
    record_id: str,
    content: str = "a fact",
    *,
    root: str | None = None,
    status: str = "active",
    created: str = T0,
    updated: str | None = None,
    op: str | None = None,
    **extra: Any,
) -> Record:
    meta: dict[str, Any] = {
        "id": record_id,
        "rootId": root or record_id,
        "source": {"kind": "manual"},
        "status": status,
        "createdAt": created,
        "updatedAt": updated or created,
        "operationHash": op or f"hmac-v1:{record_id.replace('-', '')[:32]:0<64}",
        **extra,
    }
    return Record(meta, "" if status == "revoked" else content)


def file(*records: Record, header: str = HEADER) -> bytes:
    return encode_store(StoreImage(header, records)).encode()


def merged(
    base: bytes, ours: bytes, theirs: bytes, *, hand_edit: bool = False
) -> tuple[Record, ...]:
    """Both orders give the same bytes, the result decodes, and merging again changes nothing
    (without the base too, unless a side edited a record in place: only the base tells which
    side that was)."""
    data, _ = merge_files(base, ours, theirs)
    assert merge_files(base, theirs, ours)[0] == data
    for again in (b"", base) if not hand_edit else (base,):
        assert merge_files(again, data, ours)[0] == data
        assert merge_files(again, data, theirs)[0] == data
    return decode_store(data.decode()).records


def by_id(records: tuple[Record, ...]) -> dict[str, Record]:
    return {r.id: r for r in records}


def test_the_union_of_both_sides_in_canonical_order() -> None:
    shared = record(A, "shared", created=T0)
    ours = file(shared, record(C, "ours", created=T2))
    theirs = file(shared, record(B, "theirs", created=T1))
    result = merged(file(shared), ours, theirs)
    assert [r.id for r in result] == [A, B, C]  # by (createdAt, id), whatever each side had


def test_a_file_git_gave_in_another_order_comes_out_sorted() -> None:
    late, early = record(B, "late", created=T2), record(A, "early", created=T1)
    result = merged(b"", file(late, early), file(late, early))
    assert [r.id for r in result] == [A, B]


def test_a_record_only_the_base_had_stays_out() -> None:
    gone = record(B, "dropped on both sides")
    assert by_id(merged(file(record(A), gone), file(record(A)), file(record(A)))) == {A: record(A)}


@pytest.mark.parametrize(
    ("one", "other", "winner"),
    [
        ("active", "superseded", "superseded"),
        ("active", "revoked", "revoked"),
        ("superseded", "revoked", "revoked"),
    ],
)
def test_status_wins_revoked_over_superseded_over_active(one: str, other: str, winner: str) -> None:
    mine = record(A, status=one, updated=T2)
    yours = record(A, status=other, updated=T1)  # an older updatedAt does not matter
    result = merged(file(record(A)), file(mine), file(yours))
    assert result[0].status == winner
    assert result[0].updated_at == (T2 if winner == one else T1)
    if winner == "revoked":
        assert result[0].content == ""


def test_a_family_forgotten_on_one_side_is_forgotten_with_every_version() -> None:
    first = record(A, "port 5434", created=T0)
    # Ours corrected it (a new version), theirs forgot the fact.
    ours = file(
        record(A, "port 5434", status="superseded", updated=T1),
        record(B, "port 15434", root=A, created=T1, supersedes=A),
    )
    theirs = file(record(A, status="revoked", updated=T2))
    result = merged(file(first), ours, theirs)
    assert {r.status for r in result} == {"revoked"}
    assert all(r.content == "" for r in result)
    assert {r.updated_at for r in result} == {T2}  # the forget's time, invented nowhere
    assert b"5434" not in merge_files(file(first), ours, theirs)[0]


def test_a_family_forgotten_on_both_sides_carries_the_later_forgets_time() -> None:
    first = record(A, "port 5434", created=T0)
    # Each side corrected the fact its own way, then forgot it: ours at T3, theirs at T2.
    ours = file(
        record(A, status="revoked", updated=T3),
        record(B, root=A, created=T1, status="revoked", updated=T3, supersedes=A),
    )
    theirs = file(
        record(A, status="revoked", updated=T2),
        record(C, root=A, created=T1, status="revoked", updated=T2, supersedes=A),
    )
    result = merged(file(first), ours, theirs)
    assert [r.id for r in result] == [A, B, C]
    assert {r.updated_at for r in result} == {T3}  # every tombstone: the latest forget


def test_a_duplicate_write_is_kept_once_and_forgetting_either_forgets_it() -> None:
    op = "hmac-v1:" + "ab" * 32
    ours = file(record(A, "tea over coffee", created=T1, op=op))
    theirs = file(record(B, "tea over coffee", created=T2, op=op, status="revoked"))
    result = merged(b"", ours, theirs)
    assert [(r.id, r.status, r.content) for r in result] == [(A, "revoked", "")]


def test_a_duplicates_corrections_follow_the_record_that_stands_for_both() -> None:
    op = "hmac-v1:" + "cd" * 32
    ours = file(record(A, "deploys on Tuesday", created=T1, op=op))
    theirs = file(
        record(B, "deploys on Tuesday", created=T2, op=op, status="superseded", updated=T3),
        record(C, "deploys on Wednesday", root=B, created=T3, supersedes=B),
    )
    result = by_id(merged(b"", ours, theirs))
    assert set(result) == {A, C}
    assert result[A].status == "superseded"
    assert (result[C].root_id, result[C].supersedes, result[C].status) == (A, A, "active")


def test_a_key_reused_for_other_text_is_not_folded() -> None:
    op = "hmac-v1:" + "ef" * 32
    result = merged(b"", file(record(A, "one", op=op)), file(record(B, "two", op=op)))
    assert {r.content for r in result} == {"one", "two"}


def test_two_corrections_of_one_version_leave_the_newest_active_and_report_it() -> None:
    first = record(A, "the cat is Miso", created=T0)
    done = record(A, "the cat is Miso", status="superseded", updated=T1)
    ours = file(done, record(B, "the cat is Mochi", root=A, created=T1, supersedes=A))
    theirs = file(done, record(C, "the cat is Momo", root=A, created=T2, supersedes=A))
    data, report = merge_files(file(first), ours, theirs)
    result = by_id(merged(file(first), ours, theirs))
    assert result[C].status == "active"  # the newest correction
    assert result[B].status == "superseded"  # kept as history, its text and time unchanged
    assert (result[B].content, result[B].updated_at) == ("the cat is Mochi", T1)
    assert [(d.active_id, d.other_ids) for d in report.diverged] == [(C, (B,))]
    found = divergences(decode_store(data.decode()).records)
    assert [(d.root_id, d.active_id, d.other_ids) for d in found] == [(A, C, (B,))]


def test_a_longer_chain_of_corrections_outranks_a_skewed_clock() -> None:
    # Ours corrected twice; theirs once, on a machine whose clock was ahead at its first edit.
    done = record(A, "v0", status="superseded", updated=T1)
    ours = file(
        done,
        record(B, "v1", root=A, created=T1, status="superseded", updated=T2, supersedes=A),
        record(C, "v2", root=A, created=T2, supersedes=B),
    )
    theirs = file(done, record(D, "other", root=A, created=T2, supersedes=A))
    result = by_id(merged(b"", ours, theirs))
    assert result[C].status == "active"  # same newest time, and a longer chain
    assert result[D].status == "superseded"


def test_a_resolved_divergence_stays_resolved() -> None:
    done = record(A, "v0", status="superseded", updated=T1)
    kept = record(C, "Momo", root=A, created=T2, supersedes=A)
    waiting = record(B, "Mochi", root=A, created=T1, status="superseded", supersedes=A)
    resolved = record(
        B, "Mochi", root=A, created=T1, status="superseded", supersedes=A, resolvedBy=C
    )
    result = merged(b"", file(done, waiting, kept), file(done, resolved, kept))
    assert by_id(result)[B].meta["resolvedBy"] == C
    assert divergences(result) == ()


def test_two_different_resolutions_keep_the_larger_id_on_every_machine() -> None:
    # Each machine resolved the divergence of B by another version: the rule is fixed (the
    # larger id), so every machine, whichever side is ours, writes the same bytes.
    done = record(A, "v0", status="superseded", updated=T1)
    waiting = record(B, "Mochi", root=A, created=T1, status="superseded", supersedes=A)
    kept = record(C, "Momo", root=A, created=T2, supersedes=A)
    newer = record(D, "Mochi", root=A, created=T3, supersedes=C)
    by_c = record(B, "Mochi", root=A, created=T1, status="superseded", supersedes=A, resolvedBy=C)
    by_d = record(B, "Mochi", root=A, created=T1, status="superseded", supersedes=A, resolvedBy=D)
    superseded = record(
        C, "Momo", root=A, created=T2, status="superseded", updated=T3, supersedes=A
    )
    base = file(done, waiting, kept)
    result = merged(base, file(done, by_c, kept), file(done, by_d, superseded, newer))
    assert C < D and by_id(result)[B].meta["resolvedBy"] == D
    assert divergences(result) == ()


def test_compaction_on_one_side_keeps_the_text_dropped() -> None:
    old = record(A, "old text", status="superseded", updated=T1)
    compacted = record(A, "", status="superseded", updated=T1)
    successor = record(B, "new text", root=A, created=T1, supersedes=A)
    result = by_id(merged(b"", file(old, successor), file(compacted, successor)))
    assert result[A].content == ""


def test_a_hand_edit_on_one_side_wins_over_the_unchanged_text() -> None:
    base = file(record(A, "port 5434"))
    edited = file(record(A, "port 5435"))  # same length: a valid hand edit
    assert merged(base, base, edited, hand_edit=True)[0].content == "port 5435"
    both, report = merge_files(base, edited, file(record(A, "port 5436")))
    assert report.both_edited == (A,)
    assert decode_store(both.decode()).records[0].content in {"port 5435", "port 5436"}


def test_unknown_metadata_keys_survive_and_a_change_since_the_base_wins() -> None:
    base = file(record(A, note="old"))
    ours = file(record(A, note="old", tag=[1, True]))
    theirs = file(record(A, note="new"))
    result = merged(base, ours, theirs, hand_edit=True)[0]
    assert (result.meta["note"], result.meta["tag"]) == ("new", [1, True])
    assert list(result.meta)[-2:] == ["note", "tag"]


def test_json_values_compare_as_json() -> None:
    # Python says True == 1; the file does not.
    base = file(record(A, flag=1))
    result = merged(base, base, file(record(A, flag=True)), hand_edit=True)
    assert result[0].meta["flag"] is True


def test_two_families_with_one_key_keep_it_for_the_older_and_rename_the_other() -> None:
    older = record(A, "dark roast", created=T0, key="prefs/coffee")
    younger = record(B, "light roast", created=T1, key="prefs/coffee")
    data, report = merge_files(b"", file(older), file(younger))
    result = by_id(merged(b"", file(older), file(younger)))
    assert result[A].meta["key"] == "prefs/coffee"
    assert result[B].meta["key"] == f"prefs/coffee~{B[:8]}"
    assert [(r.key, r.root_id, r.renamed) for r in report.renamed_keys] == [
        ("prefs/coffee", B, f"prefs/coffee~{B[:8]}")
    ]
    assert [r.root_id for r in renamed_keys(decode_store(data.decode()).records)] == [B]
    # A copy that still has the old key does not undo the rename.
    assert merge_files(b"", data, file(younger))[0] == data


def test_a_forgotten_version_loses_its_key() -> None:
    named = record(A, "dark roast", key="prefs/coffee")
    forgotten = record(A, status="revoked", updated=T1)
    result = merged(file(named), file(named), file(forgotten))
    assert "key" not in result[0].meta


def test_the_original_header_is_kept_when_either_side_has_it() -> None:
    ours = file(record(A), header=LEGACY_HEADER)
    theirs = file(record(B, created=T1))
    data, _ = merge_files(b"", ours, theirs)
    assert data.startswith(LEGACY_HEADER.encode())
    assert merge_files(b"", theirs, ours)[0] == data


def test_empty_sides() -> None:
    assert merge_files(b"", b"", b"") == (b"", merge_files(b"", b"", b"")[1])
    theirs = file(record(A))
    assert merge_files(b"", b"", theirs)[0] == theirs
    assert merge_files(theirs, b"", b"")[0] == b""  # both sides deleted the file


@pytest.mark.parametrize(
    ("side", "message"),
    [
        (0, Messages.MERGE_BASE_CORRUPT),
        (1, Messages.MERGE_OURS_CORRUPT),
        (2, Messages.MERGE_THEIRS_CORRUPT),
    ],
)
def test_a_side_that_is_not_a_records_file_is_refused(side: int, message: str) -> None:
    sides = [file(record(A)), file(record(A)), file(record(A))]
    sides[side] = b"<<<<<<< HEAD\nnot a records file\n"
    with pytest.raises(CorruptError) as caught:
        merge_files(*sides)
    assert caught.value.message == message


def test_a_merge_over_2_mib_is_refused() -> None:
    big = "x" * 16_000
    ours = file(*(record(f"{n:08x}-0000-4000-8000-000000000000", big) for n in range(70)))
    theirs = file(*(record(f"{n:08x}-0000-4000-8000-000000000001", big) for n in range(70)))
    with pytest.raises(CapacityError):
        merge_files(b"", ours, theirs)


def test_a_renamed_key_stays_within_200_characters_and_history_keeps_the_old_one() -> None:
    long = "notes/" + "a" * 180 + "%2F" + "b" * 11  # 200 characters, an escape near the end
    assert len(long) == 200
    older = record(A, "one", created=T0, key=long)
    history = record(B, "two, before", created=T1, status="superseded", updated=T2, key=long)
    younger = record(C, "two", root=B, created=T2, supersedes=B, key=long)
    result = by_id(merged(b"", file(older), file(history, younger)))
    renamed = str(result[C].meta["key"])
    assert len(renamed) <= 200 and renamed.endswith(f"~{B[:8]}")
    assert "%" not in renamed[-12:]  # never cut inside an escape
    assert result[B].meta["key"] == long  # a superseded version keeps the key it had


def test_forgetting_erases_the_key_and_the_extra_metadata_of_every_version() -> None:
    named = record(A, "dark roast", key="prefs/coffee", extra={"source": "langgraph"})
    done = record(
        A, "dark roast", status="superseded", updated=T1, key="prefs/coffee", extra={"a": 1}
    )
    later = record(B, "light roast", root=A, created=T1, key="prefs/coffee", supersedes=A)
    forgotten = record(A, status="revoked", updated=T2)
    result = merged(file(named), file(done, later), file(forgotten))
    assert all("key" not in r.meta and "extra" not in r.meta for r in result)
