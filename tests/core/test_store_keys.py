"""Named facts in the store: a key per fact family, unique among active facts, kept by
corrections, erased by forget, resolved under the lock; old ids that name the current version;
forgetting several facts in one write; extra metadata beside the text.

Every test runs on the workspace file and on PostgreSQL (``backing``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from tests.core.conftest import Backing
from tests.core.store_helpers import children, expect_error, manual

from memquill import NotFoundError, RecordStore
from memquill.errors import Messages
from memquill.store._codec import decode_store
from memquill.store._record import FactKey
from memquill.store._results import Candidate
from memquill.store._secrets import secret_message


class Clock:
    def __init__(self) -> None:
        self.moment = datetime(2026, 12, 1, 9, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.moment += timedelta(seconds=1)
        return self.moment


@pytest.fixture
def store(backing: Backing) -> RecordStore:
    return backing.store(lock_timeout=5, now=Clock())


def keyed(content: str, key: str, idempotency: str | None = None) -> Candidate:
    return Candidate(content, {"kind": "manual"}, idempotency or f"op:{key}:{content}", key)


def metas(backing: Backing) -> list[dict[str, object]]:
    """Every record's metadata as stored, decoded without the store's memo."""
    return [dict(r.meta) for r in decode_store(backing.raw().decode()).records]


def test_a_key_is_stored_after_the_root_id_and_resolves_to_the_current_version(
    backing: Backing, store: RecordStore
) -> None:
    saved = store.save([keyed("I prefer dark roast.", "prefs/coffee"), manual("no key here")])
    (first, plain) = metas(backing)
    assert list(first)[:3] == ["id", "rootId", "key"] and first["key"] == "prefs/coffee"
    assert "key" not in plain
    assert b'"key":"prefs/coffee"' in backing.raw()
    snapshot = store.snapshot()
    record = snapshot.by_key("prefs/coffee")
    assert record is not None and record.id == saved.record_ids[0]
    assert store.find_key("prefs/coffee") == record
    assert store.find_key("prefs/tea") is None
    (projected, _) = store.projection().records
    assert projected.key == "prefs/coffee"
    assert projected.provenance.startswith(f"memory-record:{record.id}; key:prefs/coffee; ")
    # A correction by key keeps the key; the old version keeps it too (history), the index
    # names only the active one.
    corrected = store.correct(
        FactKey("prefs/coffee"), "I prefer light roast.", snapshot.record_revision(record)
    )
    now = store.snapshot()
    current = now.by_key("prefs/coffee")
    assert current is not None and current.id == corrected.record_id
    assert current.content == "I prefer light roast." and current.root_id == record.id
    assert [r.key for r in now.records] == ["prefs/coffee", None, "prefs/coffee"]
    # The family: when it was first saved (its first version) and when it last changed.
    family = now.family(current)
    assert [r.id for r in family] == [record.id, current.id]
    assert family[0].id == current.root_id and family[0].created_at < current.updated_at


def test_a_key_in_use_is_a_conflict_naming_the_fact_and_nothing_is_written(
    backing: Backing, store: RecordStore
) -> None:
    saved = store.save([keyed("Deploys happen on Tuesdays.", "team/deploy-day")])
    record_revision = saved.record_revision or ""
    before = backing.image()
    message = Messages.KEY_IN_USE.format(
        key="team/deploy-day", id=saved.record_id, revision=record_revision[:16]
    )
    expect_error(
        "conflict", message, store.save, [keyed("Deploys are on Fridays.", "team/deploy-day")]
    )
    assert backing.image() == before
    # The same candidate again is idempotent; keys are case-sensitive.
    assert store.save([keyed("Deploys happen on Tuesdays.", "team/deploy-day")]).status == (
        "duplicate"
    )
    assert store.save([keyed("Deploys happen on Tuesdays.", "Team/Deploy-Day")]).status == "saved"
    # One batch cannot name one key twice, and a broken key is refused before anything.
    expect_error(
        "invalid",
        Messages.BATCH_KEYS,
        store.save,
        [keyed("one", "batch/key"), keyed("two", "batch/key")],
    )
    expect_error("invalid", Messages.KEY_FORMAT, store.save, [keyed("one", "a//b")])
    expect_error("invalid", Messages.KEY_FORMAT, store.save, [keyed("one", "0b6f2a52")])


def test_forget_frees_the_key_and_erases_it_from_every_version(
    backing: Backing, store: RecordStore
) -> None:
    first = store.save([keyed("Diagnosed with asthma in 2019.", "health/diagnosis", "op-1")])
    record_id = first.record_id or ""
    store.correct(record_id, "Diagnosed with asthma in 2018.", first.revision)
    snapshot = store.snapshot()
    current = snapshot.by_key("health/diagnosis")
    assert current is not None
    forgotten = store.revoke(FactKey("health/diagnosis"), snapshot.record_revision(current))
    assert forgotten.status == "saved"
    data = backing.raw()
    assert b"health" not in data and b"diagnosis" not in data and b"asthma" not in data
    assert all("key" not in meta and meta["status"] == "revoked" for meta in metas(backing))
    assert store.find_key("health/diagnosis") is None
    expect_error(
        "not_found",
        Messages.KEY_NOT_FOUND.format(key="health/diagnosis"),
        store.revoke,
        FactKey("health/diagnosis"),
        forgotten.revision,
    )
    # The tombstone still blocks the old idempotency key; a new fact may take the key.
    blocked = store.save([keyed("Diagnosed with asthma in 2019.", "health/diagnosis", "op-1")])
    assert blocked.status == "blocked"
    again = store.save([keyed("No diagnosis on record.", "health/diagnosis", "op-2")])
    assert again.status == "saved"
    assert store.find_key("health/diagnosis") is not None


def test_a_correction_renames_or_drops_the_key_but_never_takes_another_facts(
    backing: Backing, store: RecordStore
) -> None:
    store.save([keyed("Alpha.", "notes/a.md"), keyed("Beta.", "notes/b.md")])
    snapshot = store.snapshot()
    alpha = snapshot.by_key("notes/a.md")
    beta = snapshot.by_key("notes/b.md")
    assert alpha is not None and beta is not None
    before = backing.image()
    message = Messages.KEY_IN_USE.format(
        key="notes/b.md", id=beta.id, revision=snapshot.record_revision(beta)[:16]
    )
    expect_error(
        "conflict",
        message,
        store.correct,
        FactKey("notes/a.md"),
        "Alpha.",
        snapshot.revision,
        key="notes/b.md",
    )
    assert backing.image() == before
    renamed = store.correct(FactKey("notes/a.md"), "Alpha.", snapshot.revision, key="archive/a.md")
    now = store.snapshot()
    assert now.by_key("notes/a.md") is None
    moved = now.by_key("archive/a.md")
    assert moved is not None and moved.id == renamed.record_id and moved.root_id == alpha.id
    assert [r.key for r in now.keyed("notes")] == ["notes/b.md"]
    dropped = store.correct(moved.id, "Alpha, unnamed.", now.revision, key=None)
    assert store.snapshot().by_key("archive/a.md") is None
    assert store.snapshot().find(dropped.record_id or "") is not None


def test_an_old_id_stands_for_the_current_version_only_with_the_current_revision(
    backing: Backing, store: RecordStore
) -> None:
    saved = store.save([manual("The port is 5434.")])
    old = saved.record_id or ""
    first = store.correct(old, "The port is 15434.", saved.revision)
    # With the current record revision, the old id names the current version.
    second = store.correct(old, "The port is 25434.", first.record_revision or "")
    assert second.status == "saved"
    snapshot = store.snapshot()
    current = snapshot.find(second.record_id or "")
    assert current is not None and current.supersedes == first.record_id
    # With a stale one: not_found naming the current id and revision, nothing written.
    before = backing.image()
    revision = snapshot.record_revision(current)
    message = Messages.CORRECTED.format(old=old, current=current.id, revision=revision[:16])
    error = expect_error("not_found", message, store.revoke, old, first.record_revision or "")
    assert isinstance(error, NotFoundError)
    assert (error.current_id, error.current_revision) == (current.id, revision)
    assert backing.image() == before
    # The store revision is current too: forget through the old id.
    assert store.revoke(old, snapshot.revision).status == "saved"


def test_forgetting_a_forgotten_fact_is_a_duplicate_whatever_the_revision(
    backing: Backing, store: RecordStore
) -> None:
    saved = store.save([manual("A fact to forget twice.")])
    record_id = saved.record_id or ""
    forgotten = store.revoke(record_id, saved.record_revision or "")
    before = backing.image()
    for revision in (saved.record_revision or "", forgotten.revision, "0" * 64):
        again = store.revoke(record_id, revision)
        assert (again.status, again.revision) == ("duplicate", forgotten.revision)
    assert backing.image() == before
    expect_error(
        "not_found", Messages.ACTIVE_NOT_FOUND, store.correct, record_id, "x", forgotten.revision
    )


def test_several_facts_are_forgotten_in_one_write_or_none(
    backing: Backing, store: RecordStore
) -> None:
    store.save(
        [
            keyed("Project notes.", "notes/project.md"),
            keyed("Todo list.", "notes/todo/list.md"),
            keyed("Elsewhere.", "notes2/other.md"),
        ]
    )
    snapshot = store.snapshot()
    folder = snapshot.keyed("notes/")
    assert [r.key for r in folder] == ["notes/project.md", "notes/todo/list.md"]
    assert [r.key for r in snapshot.keyed("notes/todo/list.md")] == ["notes/todo/list.md"]
    targets = [(record.id, snapshot.record_revision(record)) for record in folder]
    # One stale revision refuses the whole write.
    before = backing.image()
    stale = [targets[0], (targets[1][0], "0" * 64)]
    expect_error("conflict", Messages.STALE, store.revoke_many, stale)
    assert backing.image() == before
    expect_error("invalid", Messages.NO_TARGETS, store.revoke_many, [])
    result = store.revoke_many([(FactKey("notes/project.md"), snapshot.revision), targets[1]])
    assert result.status == "saved"
    assert [t.record_id for t in result.targets] == [r.id for r in folder]
    now = store.snapshot()
    assert [r.key for r in now.keyed()] == ["notes2/other.md"]
    assert [r.status for r in now.records] == ["revoked", "revoked", "active"]
    # One write: the revision moved once, from the snapshot the targets were read at.
    assert result.revision == now.revision


def test_several_facts_are_renamed_in_one_write_or_none(
    backing: Backing, store: RecordStore
) -> None:
    store.save(
        [
            Candidate("Project notes.", {"kind": "manual"}, "op:p", "notes/project.md", {"n": 1}),
            keyed("Todo list.", "notes/todo/list.md"),
            keyed("Elsewhere.", "other.md"),
        ]
    )
    snapshot = store.snapshot()
    project, todo = snapshot.keyed("notes/")
    moves = [
        (FactKey("notes/project.md"), "archive/project.md", snapshot.record_revision(project)),
        (todo.id, "archive/todo/list.md", snapshot.revision),
    ]
    before = backing.image()
    # All or none: one stale revision, a key another fact has, the same fact or new key twice.
    stale = [moves[0], (todo.id, "archive/todo/list.md", "0" * 64)]
    expect_error("conflict", Messages.STALE, store.rename_many, stale)
    other = snapshot.by_key("other.md")
    assert other is not None
    taken = [moves[0], (todo.id, "other.md", snapshot.revision)]
    revision = snapshot.record_revision(other)[:16]
    message = Messages.KEY_IN_USE.format(key="other.md", id=other.id, revision=revision)
    expect_error("conflict", message, store.rename_many, taken)
    expect_error("invalid", Messages.BATCH_FACTS, store.rename_many, [moves[0], moves[0]])
    twice = [moves[0], (todo.id, "archive/project.md", snapshot.revision)]
    expect_error("invalid", Messages.BATCH_KEYS, store.rename_many, twice)
    expect_error("invalid", Messages.KEY_FORMAT, store.rename_many, [(todo.id, "a//b", "x")])
    expect_error("invalid", Messages.NO_MOVES, store.rename_many, [])
    assert backing.image() == before
    result = store.rename_many(moves, {"kind": "tool", "sessionId": "s1"})
    assert result.status == "saved"
    now = store.snapshot()
    assert result.revision == now.revision  # one write
    assert [r.key for r in now.keyed()] == [
        "other.md",
        "archive/project.md",
        "archive/todo/list.md",
    ]
    moved = now.by_key("archive/project.md")
    assert moved is not None and result.targets[0].record_id == moved.id
    assert (moved.content, moved.extra, moved.root_id) == ("Project notes.", {"n": 1}, project.id)
    assert moved.source == {"kind": "tool", "sessionId": "s1"}
    assert [r.status for r in now.family(moved)] == ["superseded", "active"]
    assert now.keyed("notes") == ()
    # Keys swapped in one batch: each new key is one the other fact gives up.
    first, second = now.by_key("archive/project.md"), now.by_key("archive/todo/list.md")
    assert first is not None and second is not None
    swap = [
        (FactKey("archive/project.md"), "archive/todo/list.md", now.record_revision(first)),
        (FactKey("archive/todo/list.md"), "archive/project.md", now.record_revision(second)),
    ]
    store.rename_many(swap)
    swapped = store.snapshot().by_key("archive/project.md")
    assert swapped is not None and swapped.content == "Todo list."


def test_extra_metadata_is_kept_by_corrections_checked_like_content_and_erased_by_forget(
    backing: Backing, store: RecordStore
) -> None:
    extra = {"tags": ["coffee", "morning"], "weight": 2, "nested": {"ok": True}}
    saved = store.save(
        [Candidate("Coffee at 7.", {"kind": "manual"}, "op", "habits/coffee", extra)]
    )
    record = store.find_key("habits/coffee")
    assert record is not None and record.extra == extra
    (meta,) = metas(backing)
    assert list(meta)[-2:] == ["extra", "keyId"]  # the key id follows the hash and extra
    corrected = store.correct(FactKey("habits/coffee"), "Coffee at 8.", saved.revision)
    current = store.find_key("habits/coffee")
    assert current is not None and current.extra == extra
    replaced = store.correct(current.id, "Coffee at 9.", corrected.revision, extra={"tags": []})
    current = store.find_key("habits/coffee")
    assert current is not None and current.extra == {"tags": []}
    before = backing.image()
    secret = {"note": "token = ghp_abcdefghijklmnopqrstuvwxyz0123456789"}
    # Named in words like content's findings, never quoted.
    message = secret_message(("github_token", "assignment"))
    expect_error("secret", message, store.correct, current.id, "x", replaced.revision, extra=secret)
    big = {"text": "x" * 16_001}
    expect_error(
        "invalid",
        Messages.EXTRA_INVALID,
        store.correct,
        current.id,
        "x",
        replaced.revision,
        extra=big,
    )
    expect_error(
        "invalid",
        Messages.EXTRA_INVALID,
        store.save,
        [Candidate("y", {"kind": "manual"}, "op-y", None, {"bad": float("nan")})],
    )
    assert backing.image() == before
    store.revoke(FactKey("habits/coffee"), replaced.revision)
    assert b"tags" not in backing.raw() and b"coffee" not in backing.raw()


def test_duplicate_active_keys_or_a_broken_key_make_the_file_corrupt(backing: Backing) -> None:
    store = backing.store()
    store.save([keyed("One.", "k/one"), keyed("Two.", "k/two")])
    data = backing.raw()
    backing.put(data.replace(b'"key":"k/two"', b'"key":"k/one"'))
    error = expect_error("corrupt", Messages.EDITED, store.snapshot)
    assert getattr(error, "record_index", None) == 1
    backing.put(data.replace(b'"key":"k/two"', b'"key":"k//two"'))
    error = expect_error("corrupt", Messages.EDITED, store.snapshot)
    assert getattr(error, "record_index", None) == 1
    # Only active facts must differ: a superseded version may keep a key that is in use.
    backing.put(data)
    record = store.find_key("k/one")
    assert record is not None
    store.correct(FactKey("k/one"), "One, again.", store.snapshot().revision)
    assert [r.key for r in store.snapshot().records] == ["k/one", "k/two", "k/one"]


# Two writers race to name a fact with the same key: exactly one wins, under the lock.
RACER = """
import sys
from memquill import RecordStore
from memquill.errors import MemoryRecordError
from memquill.store._results import Candidate

store = RecordStore(sys.argv[1], location=sys.argv[2], lock_timeout=30)
print("ready", flush=True)
sys.stdin.readline()
try:
    result = store.save([Candidate(sys.argv[3], {"kind": "manual"}, sys.argv[3], "race/key")])
    print("ok", result.status, flush=True)
except MemoryRecordError as error:
    print("error", error.code, flush=True)
"""


def test_two_processes_racing_for_one_key_get_one_fact(backing: Backing) -> None:
    location = backing.location_for_child()
    args = [(RACER, (str(backing.workspace), location, f"writer {n}")) for n in range(4)]
    with children(*args) as racers:
        for racer in racers:
            racer.expect("ready")
        for racer in racers:
            racer.send("go")
        answers = sorted(racer.readline().strip() for racer in racers)
    assert answers == ["error conflict"] * 3 + ["ok saved"]
    keyed_records = [meta for meta in metas(backing) if meta.get("key") == "race/key"]
    assert len(keyed_records) == 1


def test_the_key_order_is_deterministic_and_json_stays_compact(backing: Backing) -> None:
    store = backing.store()
    store.save([Candidate("x", {"kind": "manual"}, "op", "a/b", {"z": 1, "a": [1, 2]})])
    line = backing.raw().decode().split("\n")[4]
    meta = json.loads(line.removeprefix("<!-- memory-record ").removesuffix(" -->"))
    assert list(meta) == [
        "id",
        "rootId",
        "key",
        "source",
        "status",
        "createdAt",
        "updatedAt",
        "operationHash",
        "extra",
        "keyId",
        "contentLength",
    ]
    assert '"extra":{"z":1,"a":[1,2]}' in line
