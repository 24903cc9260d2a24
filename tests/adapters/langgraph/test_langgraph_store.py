"""What MemquillStore adds to the store contract: Markdown a person reads, corrections with
history, forgetting, refused secrets and options, folders per namespace, and real processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp
from tests.adapters.langgraph.refusals import REFUSED, SECRET_VALUE
from tests.core.store_helpers import HOLD_LOCK, children

from memquill import (
    InvalidInputError,
    MemquillError,
    RecordStore,
    SecretError,
    UnsafePathError,
)
from memquill.errors import BlockedError
from memquill.store._record import FactKey
from memquill.store._results import Candidate
from memquill_langchain.store import MemquillStore

ANA = ("memories", "ana")


def records(root: Path, *folders: str) -> str:
    return (root.joinpath(*folders) / "memory" / "records.md").read_text("utf-8")


def versions(root: Path, *folders: str) -> list[tuple[str, str, str]]:
    snapshot = RecordStore(root.joinpath(*folders)).snapshot()
    return [(r.status, r.key or "", r.content) for r in snapshot.records]


def item_value(store: MemquillStore, namespace: tuple[str, ...], key: str) -> dict[str, Any]:
    """The value of an item the test wrote (a missing one fails the test)."""
    item = store.get(namespace, key)
    assert item is not None, (namespace, key)
    return item.value


def test_a_namespace_is_a_private_folder_and_its_items_are_readable(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path)
    store.put(ANA, "coffee", {"content": "Ana drinks her coffee black.", "topic": "food"})
    store.put(ANA, "settings", {"theme": "dark", "size": 3})
    folder = tmp_path / "memories" / "ana"
    assert stat.S_IMODE(os.stat(tmp_path / "memories").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    text = records(tmp_path, "memories", "ana")
    assert "\nAna drinks her coffee black.\n" in text
    assert '"key":"coffee"' in text and '"extra":{"fields":{"topic":"food"}}' in text
    assert '\n{\n  "theme": "dark",\n  "size": 3\n}\n' in text  # any other value: its JSON
    assert item_value(store, ANA, "settings") == {"theme": "dark", "size": 3}


def test_labels_become_folder_names_reversibly(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path)
    for namespace in (("Ana",), ("memory", "x"), ("a b", "ü"), ("~-_",)):
        store.put(namespace, "k", {"content": "x"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["%41na", "%6Demory", "a%20b", "~-_"]
    assert (tmp_path / "%6Demory" / "x" / "memory" / "records.md").is_file()
    assert (tmp_path / "a%20b" / "%C3%BC").is_dir()
    assert store.list_namespaces() == [("Ana",), ("a b", "ü"), ("memory", "x"), ("~-_",)]


def test_a_put_of_a_key_in_use_is_one_correction_and_an_identical_one_nothing(
    tmp_path: Path,
) -> None:
    store = MemquillStore(tmp_path)
    store.put(ANA, "coffee", {"content": "Ana drinks tea."})
    before = records(tmp_path, "memories", "ana")
    store.put(ANA, "coffee", {"content": "Ana drinks tea."})
    assert records(tmp_path, "memories", "ana") == before, "an identical value writes nothing"
    first = store.get(ANA, "coffee")
    store.put(ANA, "coffee", {"content": "Ana drinks coffee."})
    assert versions(tmp_path, "memories", "ana") == [
        ("superseded", "coffee", "Ana drinks tea."),
        ("active", "coffee", "Ana drinks coffee."),
    ]
    second = store.get(ANA, "coffee")
    assert first is not None and second is not None
    assert second.created_at == first.created_at and second.updated_at >= first.updated_at
    store.put(ANA, "coffee", {"content": "Ana drinks coffee.", "n": 1})
    store.put(ANA, "coffee", {"content": "Ana drinks coffee.", "n": 1.0})
    assert item_value(store, ANA, "coffee") == {"content": "Ana drinks coffee.", "n": 1.0}
    assert len(versions(tmp_path, "memories", "ana")) == 4, "1 and 1.0 are two values"


def test_delete_forgets_and_a_later_put_is_a_new_fact(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path)
    store.put(ANA, "phone", {"content": "Ana's phone is 555-0199.", "kind": "contact"})
    store.put(ANA, "phone", {"content": "Ana's phone is 555-0142.", "kind": "contact"})
    store.delete(ANA, "phone")
    text = records(tmp_path, "memories", "ana")
    assert "555-01" not in text and '"key"' not in text and "contact" not in text
    assert [status for status, _, _ in versions(tmp_path, "memories", "ana")] == [
        "revoked",
        "revoked",
    ]
    store.batch([PutOp(ANA, "phone", None)])  # forgetting nothing is no error
    store.put(ANA, "phone", {"content": "Ana has no phone now."})
    snapshot = RecordStore(tmp_path / "memories" / "ana").snapshot()
    current = snapshot.by_key("phone")
    assert current is not None and current.id == current.root_id, "a new fact, not a version"


def test_secrets_are_refused_with_memquills_error_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    store = MemquillStore(tmp_path)
    store.put(ANA, "ok", {"content": "fine"})
    before = records(tmp_path, "memories", "ana")
    for value in (
        {"content": f"my key is {SECRET_VALUE}"},
        {"content": "a note", "token": SECRET_VALUE},
        {"config": {"api_key": SECRET_VALUE}},
    ):
        with pytest.raises(SecretError) as refused:
            store.put(ANA, "leak", value)
        assert isinstance(refused.value, MemquillError) and refused.value.code == "secret"
    assert records(tmp_path, "memories", "ana") == before
    assert SECRET_VALUE not in "".join(p.read_text() for p in tmp_path.rglob("*.md"))


@REFUSED
def test_a_refused_put_into_a_new_namespace_makes_no_folder(
    tmp_path: Path, value: dict[str, object], error: type[MemquillError]
) -> None:
    store = MemquillStore(tmp_path)
    with pytest.raises(error):
        store.put(("team", "ana"), "k", value)
    assert list(tmp_path.iterdir()) == []
    store.put(("team",), "ok", {"content": "fine"})  # an existing parent: still nothing below
    with pytest.raises(error):
        store.put(("team", "ana"), "k", value)
    assert sorted(p.name for p in (tmp_path / "team").iterdir()) == ["memory"]


def test_a_bad_ttl_is_refused_and_a_put_index_kept(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="An index is"):
        MemquillStore(tmp_path, index={"dims": 3, "embed": "fake"})
    store = MemquillStore(tmp_path)
    store.put(ANA, "k", {"content": "x"}, index=["content"])  # kept for a store with an index
    kept = store.items.get(ANA, "k")
    assert kept is not None and kept.index == ("content",)
    store.delete(ANA, "k")
    with pytest.raises(InvalidInputError, match="time to live"):
        store.batch([PutOp(ANA, "k", {"content": "x"}, ttl=-5.0)])
    assert store.get(ANA, "k") is None
    store.put(ANA, "k", {"content": "y"}, index=False)  # no index for this item: as always
    assert store.get(ANA, "k") is not None
    assert store.supports_ttl is True


def test_a_put_of_forgotten_words_is_blocked_not_dropped(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path)
    store.put(ANA, "bob", {"content": "Bob's birthday is 1 June."})
    store.put(ANA, "bob", {"content": "Bob's birthday is 2 June."})
    store.delete(ANA, "bob")
    records = (tmp_path / "memories" / "ana" / "memory" / "records.md").read_bytes()
    for words in ("Bob's birthday is 1 June.", "bob's  birthday is 2 june."):
        with pytest.raises(BlockedError, match="forgotten at 20"):
            store.put(ANA, "bob", {"content": words})
        assert store.get(ANA, "bob") is None
    assert (tmp_path / "memories" / "ana" / "memory" / "records.md").read_bytes() == records


def test_bad_input_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError):
        MemquillStore(tmp_path / "missing")
    store = MemquillStore(tmp_path)
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(ANA, "k", {"content": "x"}), GetOp(("a.b",), "k")])
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp((), "k", {"content": "x"})])
    with pytest.raises(ValueError, match="Unknown operation"):
        store.batch(["not an op"])  # pyright: ignore[reportArgumentType]  (bad input on purpose)
    for value in ({1: "x"}, {"n": float("nan")}, {"s": {1, 2}}, "text"):
        with pytest.raises(InvalidInputError):
            store.put(ANA, "k", value)  # pyright: ignore[reportArgumentType]  (bad on purpose)
    with pytest.raises(InvalidInputError):
        store.put(ANA, "", {"content": "x"})
    with pytest.raises(InvalidInputError):
        store.put(ANA, "x" * 201, {"content": "x"})
    with pytest.raises(InvalidInputError):
        store.put(("memories", "é" * 90), "k", {"content": "x"})  # 540 characters escaped
    assert list(tmp_path.iterdir()) == []


def test_a_read_is_a_copy(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path)
    store.put(ANA, "k", {"content": "x", "list": [1]})
    item_value(store, ANA, "k")["list"].append(2)
    store.search(ANA)[0].value["list"].append(3)
    assert item_value(store, ANA, "k") == {"content": "x", "list": [1]}


def test_what_a_person_writes_is_what_the_store_reads(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path)
    store.put(ANA, "settings", {"theme": "dark"})
    store.put(ANA, "coffee", {"content": "Ana drinks tea.", "topic": "food"})
    people = RecordStore(tmp_path / "memories" / "ana")
    for key, text in (("settings", '{"theme": "light"}'), ("coffee", "Ana drinks coffee.")):
        snapshot = people.snapshot()
        current = snapshot.by_key(key)
        assert current is not None
        people.correct(FactKey(key), text, snapshot.record_revision(current))
    people.save([Candidate("Ana likes hiking.", {"kind": "manual"}, "manual:1", key="hiking")])
    people.save([Candidate("A fact without a key.", {"kind": "manual"}, "manual:2")])
    assert item_value(store, ANA, "settings") == {"theme": "light"}
    assert item_value(store, ANA, "coffee") == {"content": "Ana drinks coffee.", "topic": "food"}
    assert item_value(store, ANA, "hiking") == {"content": "Ana likes hiking."}
    assert sorted(item.key for item in store.search(ANA)) == ["coffee", "hiking", "settings"]
    # Prose where the JSON was: the person's words win.
    snapshot = people.snapshot()
    current = snapshot.by_key("settings")
    assert current is not None
    people.correct(FactKey("settings"), "Ana wants light mode.", snapshot.record_revision(current))
    assert item_value(store, ANA, "settings") == {"content": "Ana wants light mode."}


def test_the_walk_skips_other_folders_and_never_follows_links(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path)
    store.put(ANA, "k", {"content": "ana"})
    (tmp_path / "My Notes").mkdir()  # a person's folder: no label makes this name
    RecordStore(tmp_path / "My Notes").save([Candidate("x", {"kind": "manual"}, "m", key="k")])
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    (elsewhere / "memory").mkdir(parents=True)
    RecordStore(elsewhere).save([Candidate("outside", {"kind": "manual"}, "m", key="k")])
    (tmp_path / "memories" / "bo").symlink_to(elsewhere, target_is_directory=True)
    assert store.list_namespaces() == [ANA]
    assert [item.value for item in store.search(("memories",))] == [{"content": "ana"}]
    with pytest.raises(UnsafePathError):
        store.put(("memories", "bo"), "k", {"content": "through a link"})
    with pytest.raises(UnsafePathError):
        store.get(("memories", "bo"), "k")


def test_a_put_through_a_link_is_refused_after_its_own_checks(tmp_path: Path) -> None:
    # A lone put is checked by its write alone only when its folders are there and safe; a
    # link among them is refused as before: after the put's own checks, with nothing written.
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "bo").symlink_to(elsewhere, target_is_directory=True)
    store = MemquillStore(tmp_path)
    with pytest.raises(SecretError):
        store.put(("memories", "bo"), "k", {"content": f"my key is {SECRET_VALUE}"})
    with pytest.raises(UnsafePathError):
        store.put(("memories", "bo"), "k", {"content": "through a link"})
    assert not any(elsewhere.iterdir())


def test_two_users_never_see_each_others_items(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path)
    store.put(("memories", "ana"), "drink", {"content": "Ana drinks coffee."})
    store.put(("memories", "bo"), "drink", {"content": "Bo drinks coffee too."})
    store.put(("memories", "ana", "work"), "desk", {"content": "Ana's coffee mug is blue."})
    for user, other in (("ana", "Bo"), ("bo", "Ana")):
        found = store.search(("memories", user), query="coffee", limit=50)
        assert found and all(item.namespace[:2] == ("memories", user) for item in found)
        assert not any(other in item.value["content"] for item in found)
        assert item_value(store, ("memories", user), "drink")["content"].startswith(user.title())
    assert len(store.search(("memories",), query="coffee")) == 3


async def test_a_put_waiting_for_the_lock_leaves_the_loop_running(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path, lock_timeout=60)
    await store.aput(ANA, "first", {"content": "first"})
    lock = tmp_path / "memories" / "ana" / "memory" / ".records-lock"
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    with children((HOLD_LOCK, (str(lock),))) as (holder,):
        holder.expect("locked")
        ticking = asyncio.create_task(ticker())
        write = asyncio.create_task(store.aput(ANA, "second", {"content": "second"}))
        try:
            await asyncio.sleep(0.3)
            seen = ticks
            await asyncio.sleep(0.3)
            assert not write.done()
            assert ticks > seen > 0
            holder.send("release")
            holder.expect("released")
            await asyncio.wait_for(write, 60)
        finally:
            ticking.cancel()
            write.cancel()
    second = await store.aget(ANA, "second")
    assert second is not None and second.value == {"content": "second"}


PUTTER = """
import sys
from memquill_langchain.store import MemquillStore

store = MemquillStore(sys.argv[1])
for index in range(int(sys.argv[3])):
    key = f"{sys.argv[2]}-{index}"
    store.put(("memories", "ana"), key, {"content": f"fact {key}", "n": index})
    if index % 3 == 0:
        store.put(("memories", "ana"), key, {"content": f"fact {key}, corrected", "n": index})
    print("acked", key, flush=True)
print("done", flush=True)
"""


def _expected(key: str) -> dict[str, object]:
    index = int(key.rsplit("-", 1)[1])
    text = f"fact {key}, corrected" if index % 3 == 0 else f"fact {key}"
    return {"content": text, "n": index}


@pytest.mark.slow
def test_kill_9_during_puts_loses_nothing_acknowledged(tmp_path: Path) -> None:
    acknowledged: list[str] = []
    with children((PUTTER, (str(tmp_path), "killed", "400"))) as (child,):
        while len(acknowledged) < 25:
            line = child.readline()
            assert line.startswith("acked "), line
            acknowledged.append(line.split()[1])
        child.kill()  # mid-run: somewhere inside a put, a correction or between them
    store = MemquillStore(tmp_path)
    for key in acknowledged:
        assert item_value(store, ANA, key) == _expected(key)
    report = RecordStore(tmp_path / "memories" / "ana").doctor()
    assert report.error is None and not report.lock_held, report
    store.put(ANA, "after", {"content": "the store goes on"})
    assert store.get(ANA, "after") is not None


@pytest.mark.slow
def test_writers_in_several_processes_lose_no_put(tmp_path: Path) -> None:
    scripts = [(PUTTER, (str(tmp_path), f"w{n}", "15")) for n in range(4)]
    with children(*scripts) as writers:
        outputs = [writer.finish() for writer in writers]
    lines = [line for out in outputs for line in out.splitlines()]
    keys = [line.split()[1] for line in lines if line.startswith("acked")]
    assert len(keys) == 60
    store = MemquillStore(tmp_path)
    found = {item.key: item.value for item in store.search(ANA, limit=100)}
    assert found == {key: _expected(key) for key in keys}
    assert RecordStore(tmp_path / "memories" / "ana").doctor().error is None
    assert json.loads(json.dumps(found)) == found


def test_a_search_across_namespaces_reads_again_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemquillStore(tmp_path)
    for index in range(30):
        store.put(("memories", f"u{index}"), "k", {"content": f"user {index} drinks coffee"})
    assert len(store.search(("memories",), query="coffee", limit=50)) == 30
    reads: list[Path] = []
    original = RecordStore.snapshot

    def counted(self: RecordStore) -> object:
        reads.append(Path(self.workspace))
        return original(self)

    monkeypatch.setattr(RecordStore, "snapshot", counted)
    assert len(store.search(("memories",), query="coffee", limit=50)) == 30
    assert reads == []  # nothing changed: every namespace's items are reused
    # Another writer (another store over the root) changes one namespace and adds another.
    other = MemquillStore(tmp_path)
    other.put(("memories", "u3"), "k2", {"content": "user 3 also drinks tea and coffee"})
    other.put(("memories", "new"), "k", {"content": "a new user drinks coffee"})
    reads.clear()
    found = store.search(("memories",), query="coffee", limit=50)
    assert len(found) == 32
    assert sorted(p.name for p in reads) == ["new", "u3"]
