"""Forgetting without a rewrite: a forget on a ``v3`` file appends its tombstones, then erases
the text they claim in place (docs/record-format.md, "Appended forgets").

The file then reads, at every moment a crash may leave it, as the records a rewrite writes:
after the append (the claimed text still there: the next write erases it), during the erasure
(any torn sector keeps the block's shape) and after it. An export writes each tombstone in the
place of the version it claims, so it equals the rewritten file byte for byte.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tests.core.store_helpers import manual, raw, records_path, revision_of, tool

from memquill import RecordStore
from memquill.store._codec import (
    HEADER,
    HEADER_V2,
    HEADER_V3,
    LEGACY_HEADER,
    decode_store,
    encode_store,
    unclaimed,
)
from memquill.store._record import FactKey
from memquill.store._results import Candidate
from memquill.store._tombstones import is_ledger

SECRET = "the vault code is walnut-harbour"


def keyed(content: str, key: str) -> Candidate:
    """A manual fact with the key ``key``."""
    return Candidate(content, {"kind": "manual"}, f"key:{key}:{hash(content)}", key=key)


def _v3_store(workspace: Path) -> RecordStore:
    """A store whose file became ``v3`` (its first forget was a rewrite) and holds two facts."""
    store = RecordStore(workspace)
    first = store.save([manual("a fact to forget at once"), manual("Ana drinks oat flat whites.")])
    store.revoke(first.record_ids[0] or "", first.revision)
    assert raw(workspace).startswith(HEADER_V3.encode())
    return store


def test_a_forget_appends_its_tombstone_and_erases_the_text_in_place(tmp_path: Path) -> None:
    store = _v3_store(tmp_path)
    saved = store.save([keyed(SECRET, "vault/code")])
    before = raw(tmp_path)
    start = before.rindex(b"<!-- memory-record ", 0, before.index(SECRET.encode()))

    forgotten = store.revoke(FactKey("vault/code"), saved.revision)

    after = raw(tmp_path)
    assert forgotten.status == "saved"
    assert SECRET.encode() not in after
    assert after[:start] == before[:start]  # nothing before the claimed block moved
    assert len(after) > len(before)  # the tombstone was appended, nothing rewritten
    text = after.index(b"-->\n", start) + 4
    assert after[text : text + len(SECRET)] == b" " * len(SECRET)
    assert forgotten.revision == revision_of(tmp_path, after) == store.snapshot().revision
    fresh = RecordStore(tmp_path).snapshot()
    assert fresh.revision == forgotten.revision
    assert list(fresh.records) == list(store.snapshot().records)
    assert [r.status for r in fresh.records] == ["revoked", "active", "revoked"]


def test_the_export_is_the_rewritten_file(tmp_path: Path) -> None:
    store = _v3_store(tmp_path)
    saved = store.save([keyed(SECRET, "vault/code"), manual("Bo walks to work.")])
    store.revoke(FactKey("vault/code"), saved.revision)
    on_disk = raw(tmp_path)
    exported = store.export()
    assert exported != on_disk
    assert exported == unclaimed(on_disk)
    assert exported == encode_store(decode_store(on_disk.decode())).encode()
    assert decode_store(exported.decode()) == decode_store(on_disk.decode())
    assert SECRET.encode() not in exported


def test_a_v2_file_becomes_v3_in_one_rewrite_and_appends_after(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    first = store.save([keyed("coffee, black", "prefs/coffee"), manual("tea at four")])
    corrected = store.correct(FactKey("prefs/coffee"), "coffee, with milk", first.revision)
    assert raw(tmp_path).startswith(HEADER_V2.encode())
    rewritten = store.revoke(FactKey("prefs/coffee"), corrected.revision)
    data = raw(tmp_path)
    assert data.startswith(HEADER_V3.encode())
    assert encode_store(decode_store(data.decode())).encode() == data  # statuses in place
    again = store.save([keyed("a second thing to forget", "later")], rewritten.revision)
    grown = raw(tmp_path)
    store.revoke(FactKey("later"), again.revision)
    start = grown.rindex(b"<!-- memory-record ")
    assert raw(tmp_path)[:start] == grown[:start]
    assert len(raw(tmp_path)) > len(grown)


def test_a_forgotten_key_and_text_answer_at_once_in_the_same_store(tmp_path: Path) -> None:
    store = _v3_store(tmp_path)
    older = store.snapshot()
    saved = store.save([keyed(SECRET, "vault/code")])
    kept = store.snapshot()
    forgotten = store.revoke(FactKey("vault/code"), saved.revision)

    now = store.snapshot()
    assert now.by_key("vault/code") is None
    assert now.forgotten_at([str(now.records[-1].meta["textHash"])]) is not None
    blocked = store.save([tool(SECRET, "again")], forgotten.revision)
    assert blocked.targets[0].status == "blocked"
    assert blocked.targets[0].forgotten_at is not None
    # The key is free: a new fact takes it.
    assert store.save([keyed("a new code", "vault/code")]).status == "saved"
    # Snapshots taken before the forget still answer as they did then.
    held = kept.by_key("vault/code")
    assert held is not None and held.content == SECRET
    assert older.by_key("vault/code") is None and len(older.records) == 2


KILLED_BEFORE_ERASING = """
import os, signal, sys
from memquill import RecordStore
from memquill.store._results import Candidate
from memquill.store._record import FactKey

real_pwrite = os.pwrite

def killed(fd, data, offset):
    if os.readlink(f"/proc/self/fd/{fd}").endswith("records.md"):
        os.kill(os.getpid(), signal.SIGKILL)  # the tombstone is durable; nothing is erased yet
    return real_pwrite(fd, data, offset)

os.pwrite = killed
store = RecordStore(sys.argv[1])
store.revoke(FactKey("vault/code"), store.snapshot().revision)
"""


def test_a_forget_killed_before_its_erasure_is_erased_by_the_next_write(tmp_path: Path) -> None:
    store = _v3_store(tmp_path)
    store.save([keyed(SECRET, "vault/code")])
    child = subprocess.run(
        [sys.executable, "-c", KILLED_BEFORE_ERASING, str(tmp_path)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert child.returncode == -9, child.stderr.decode()
    crashed = raw(tmp_path)
    assert SECRET.encode() in crashed  # the text is still there, claimed
    reader = RecordStore(tmp_path).snapshot()
    assert all(r.content != SECRET for r in reader.records)
    assert reader.by_key("vault/code") is None
    assert SECRET.encode() not in RecordStore(tmp_path).export()

    after = RecordStore(tmp_path).save([manual("the next write")])

    assert after.status == "saved"
    assert SECRET.encode() not in raw(tmp_path)
    assert after.revision == revision_of(tmp_path, raw(tmp_path))
    assert list(RecordStore(tmp_path).snapshot().records) == list(after.records)


def test_every_torn_erasure_reads_and_the_next_write_finishes_it(tmp_path: Path) -> None:
    store = _v3_store(tmp_path)
    store.save([keyed("ünïcode 北京 🎉 " + SECRET, "vault/code")])
    before = raw(tmp_path)
    store.revoke(FactKey("vault/code"), store.snapshot().revision)
    erased = raw(tmp_path)
    appended = before + erased[len(before) :]  # the tombstone, nothing erased
    records = decode_store(erased.decode()).records
    changed = [n for n in range(len(before)) if before[n] != erased[n]]
    assert changed
    for cut in range(changed[0], changed[-1] + 1, 7):  # the erasure torn at every 7th byte
        torn = erased[:cut] + appended[cut:]
        assert decode_store(torn.decode()).records == records
        records_path(tmp_path).write_bytes(torn)
        RecordStore(tmp_path).save([manual(f"write after a tear at {cut}")])
        finished = raw(tmp_path)
        assert finished[: len(erased)] == erased
        records_path(tmp_path).write_bytes(erased)


def test_churn_at_a_small_capacity_never_fills(tmp_path: Path) -> None:
    """Each cycle puts a fact near the longest allowed and forgets it: the appended claims fill
    the file, and a rewrite drops them when they would not fit, so a store with no live fact
    never reports it full."""
    store = RecordStore(tmp_path, capacity=1024 * 1024)
    sizes: list[int] = []
    for cycle in range(160):
        text = f"cycle {cycle} " + "x" * 15_000
        saved = store.save([keyed(text, "churn/item")])
        store.revoke(FactKey("churn/item"), saved.revision)
        sizes.append(len(raw(tmp_path)))
    assert max(sizes) <= 1024 * 1024
    assert min(sizes[100:]) < max(sizes)  # rewrites happened in between
    records = store.snapshot().records
    assert all(r.status == "revoked" for r in records)
    blocked = store.save([tool("cycle 7 " + "x" * 15_000, "again")])
    assert blocked.targets[0].status == "blocked"


def test_a_rewrite_for_room_folds_the_tombstones_so_the_next_is_far_off(tmp_path: Path) -> None:
    """When a put or a forget no longer fits as an append, its rewrite folds every forgotten
    fact but the one it forgets: a rewrite that only dropped the erased blocks left a file
    nearly full of tombstones, rewritten again within a few cycles, again and again."""
    capacity = 1024 * 1024
    store = RecordStore(tmp_path, capacity=capacity)
    size = 0
    rewrites: list[tuple[int, int, int]] = []  # (cycle, size after, tombstones left whole)
    for cycle in range(400):
        saved = store.save([keyed(f"short-lived fact {cycle} ".ljust(8_000, "x"), "churn/item")])
        for write in ("put", "forget"):
            if write == "forget":
                store.revoke(FactKey("churn/item"), saved.revision)
            now = len(raw(tmp_path))
            if now < size:
                records = store.snapshot().records
                whole = sum(1 for r in records if r.status == "revoked" and not is_ledger(r))
                rewrites.append((cycle, now, whole))
            size = now
    assert len(rewrites) >= 3
    assert all(whole <= 1 for _, _, whole in rewrites), rewrites
    assert all(after <= capacity // 2 for _, after, _ in rewrites), rewrites


def test_the_revision_is_the_hash_of_the_bytes_after_erasures_far_apart(tmp_path: Path) -> None:
    store = _v3_store(tmp_path)
    first = store.save([keyed(f"early fact {n}", f"early/{n}") for n in range(20)])
    store.compact(first.revision)  # a rewrite: later erasures hash on from where it ended
    revision = store.snapshot().revision
    for n in (0, 19, 7):
        revision = store.revoke(FactKey(f"early/{n}"), revision).revision
        data = raw(tmp_path)
        identity = os.fsencode(tmp_path.resolve())
        assert revision == hashlib.sha256(identity + b"\0" + data).hexdigest()


def test_a_forget_on_the_original_systems_file_is_still_a_rewrite(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save([keyed("the standup is at nine", "standup")])
    legacy = LEGACY_HEADER.encode() + raw(tmp_path)[len(HEADER) :]
    records_path(tmp_path).write_bytes(legacy)
    store = RecordStore(tmp_path)
    store.revoke(FactKey("standup"), store.snapshot().revision)
    data = raw(tmp_path)
    assert data.startswith(LEGACY_HEADER.encode())
    assert encode_store(decode_store(data.decode())).encode() == data
