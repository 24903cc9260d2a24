"""Property tests of the record-level merge over random histories on two and three machines.

Each machine is a real workspace with its own store and a clock of its own (skewed, so the
machines disagree about time). A history interleaves remember (with and without a named key),
update, forget and extraction on each machine with syncs between two of them: the one merges
the other's file (with their last common file as the base, as git gives it, or with none, as a
file-sync tool leaves a conflict copy) and the other takes the result, as a pull and a push do.
Checked at every sync: both merge orders give the same bytes, merging a result again changes
nothing, the store's locked merge writes exactly those bytes, and every invariant of the format
holds (keys unique among active facts included). At the end, after every pair synced, every
machine holds the same bytes, no acknowledged fact is lost, no forgotten text is anywhere in
the file, and ``doctor`` finds the store healthy.
"""

from __future__ import annotations

import re
import tempfile
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from itertools import combinations
from pathlib import Path
from typing import Literal, cast

import pytest
from hypothesis import example, given, settings, strategies as st

from memquill import RecordStore
from memquill.errors import ConflictError
from memquill.foundation.text import utf16_len
from memquill.store._codec import HEADER, StoreImage, decode_store, encode_store, record_revision
from memquill.store._merge import merge_files
from memquill.store._record_key import RecordKey
from memquill.store._results import Candidate

TEXTS = ("tea over coffee", "deploys on Tuesday", "the cat is Miso", "port 5434")
NAMED = (("prefs/coffee", "dark roast"), ("prefs/coffee", "light roast"), ("deploy/day", "Friday"))
MESSAGES = ("m1", "m2", "m3")
SKEW = (0, 317, -211)  # seconds each machine's clock is off by
START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
Mode = Literal["git", "file-sync"]


def operations(machines: int) -> st.SearchStrategy[list[tuple[str, int, object]]]:
    machine = st.integers(0, machines - 1)
    return st.lists(
        st.one_of(
            st.tuples(st.just("remember"), machine, st.sampled_from(TEXTS)),
            st.tuples(st.just("extract"), machine, st.sampled_from(MESSAGES)),
            st.tuples(st.just("name"), machine, st.sampled_from(NAMED)),
            st.tuples(st.just("update"), machine, st.integers(0, 30)),
            st.tuples(st.just("forget"), machine, st.integers(0, 30)),
            st.tuples(st.just("sync"), machine, machine),
            st.tuples(st.just("compact"), machine, machine),
        ),
        max_size=24,
    )


class World:
    """The machines, their last common files, and what was acknowledged and forgotten."""

    def __init__(self, root: Path, machines: int, mode: Mode) -> None:
        self.mode = mode
        self.tick = 0
        keys = RecordKey(root / "key")  # one user, one key carried to every machine
        self.key = keys.load()  # what fingerprints the text a merge erases
        self.workspaces = [root / f"machine-{i}" for i in range(machines)]
        self.stores: list[RecordStore] = []
        for index, workspace in enumerate(self.workspaces):
            workspace.mkdir()
            self.stores.append(
                RecordStore(workspace, record_key=keys, now=self._clock(index), lock_timeout=30)
            )
        self.bases: dict[tuple[int, int], bytes] = {}
        self.family: dict[str, str] = {}  # record id -> the fact it is a version of
        self.acknowledged: dict[str, str] = {}  # text -> fact
        self.forgotten: set[str] = set()  # facts forgotten somewhere
        self.compacted = False  # a machine compacted: superseded text may be gone

    def _clock(self, index: int) -> Callable[[], datetime]:
        def now() -> datetime:
            return START + timedelta(seconds=self.tick * 7 + SKEW[index])

        return now

    def raw(self, index: int) -> bytes:
        path = self.workspaces[index] / "memory" / "records.md"
        return path.read_bytes() if path.exists() else b""

    def run(self, operation: str, index: int, argument: object) -> None:
        self.tick += 1
        store = self.stores[index]
        if operation == "remember":
            text = str(argument)
            result = store.save([Candidate(text, {"kind": "manual"}, f"manual:{text}")])
            self._acknowledge(result.targets[0].status, result.record_id, text, f"fact:{text}")
        elif operation == "name":
            key, value = cast(tuple[str, str], argument)
            text = f"{key}: {value}"
            candidate = Candidate(text, {"kind": "manual"}, f"manual:{text}", key)
            try:
                result = store.save([candidate])
            except ConflictError:
                return  # the key names another fact here: refused, nothing acknowledged
            self._acknowledge(result.targets[0].status, result.record_id, text, f"fact:{text}")
        elif operation == "extract":
            message = str(argument)
            text = f"the user said {message}"
            source = {"kind": "conversation", "sessionId": "chat", "messageId": message}
            result = store.save([Candidate(text, source, f"job-{message}:0")])
            self._acknowledge(result.targets[0].status, result.record_id, text, f"fact:{text}")
        elif operation == "update":
            active = sorted(r.id for r in store.snapshot().records if r.status == "active")
            if active:
                target = active[int(str(argument)) % len(active)]
                text = f"correction {self.tick} on machine {index}"
                result = store.correct(target, text, store.snapshot().revision)
                self._acknowledge(result.status, result.record_id, text, self.family[target])
                appended_copy_merges_as_rewritten(self.raw(index), self.key)
        elif operation == "forget":
            kept = sorted(r.id for r in store.snapshot().records if r.status != "revoked")
            if kept:
                target = kept[int(str(argument)) % len(kept)]
                store.revoke(target, store.snapshot().revision)
                self.forgotten.add(self.family[target])
        elif operation == "compact":
            before = self.raw(index)
            store.compact(store.snapshot().revision)
            compacted_copy_merges_to_itself(before, self.raw(index), self.key)
            self.compacted = True
        elif index != argument:
            self.sync(index, int(str(argument)))

    def _acknowledge(self, status: str, record_id: str | None, text: str, fact: str) -> None:
        if status == "saved" and record_id is not None:
            self.family[record_id] = fact
            self.acknowledged[text] = fact

    def sync(self, one: int, other: int) -> None:
        """``one`` merges ``other``'s file and ``other`` takes the result (pull, then push)."""
        pair = (min(one, other), max(one, other))
        base = self.bases.get(pair, b"") if self.mode == "git" else b""
        ours, theirs = self.raw(one), self.raw(other)
        merged, _ = merge_files(base, ours, theirs, self.key)
        assert merge_files(base, theirs, ours, self.key)[0] == merged, (
            "the merge depends on the side"
        )
        for again in (merged, ours, theirs):
            assert merge_files(b"", merged, again, self.key)[0] == merged, (
                "merging again changed it"
            )
        assert merge_files(base, merged, ours, self.key)[0] == merged
        assert merge_files(base, merged, theirs, self.key)[0] == merged
        assert merge_files(merged, merged, merged, self.key)[0] == merged
        self.stores[one].merge(theirs, base)
        assert self.raw(one) == merged, "the store's merge wrote other bytes"
        (self.workspaces[other] / "memory").mkdir(exist_ok=True)
        (self.workspaces[other] / "memory" / "records.md").write_bytes(merged)
        self.bases[pair] = merged
        check_invariants(merged)

    def converge(self) -> bytes:
        pairs = list(combinations(range(len(self.stores)), 2))
        for _ in range(3):
            for one, other in pairs:
                self.sync(one, other)
        files = {self.raw(index) for index in range(len(self.stores))}
        assert len(files) == 1, "the machines did not end with the same bytes"
        return files.pop()


def check_invariants(data: bytes) -> None:
    """What every merged file must satisfy."""
    if not data:
        return
    image = decode_store(data.decode())
    assert encode_store(image).encode() == data
    for block in re.finditer(rb'"contentLength":(\d+)} -->\n', data):
        assert int(block[1]) <= 16_000
    families: dict[str, list[str]] = defaultdict(list)
    for record in image.records:
        revision = record_revision(b"/workspace", record)
        assert re.fullmatch(r"[0-9a-f]{64}", revision)
        families[record.root_id].append(record.status)
        if record.status == "revoked":
            assert record.content == ""
        assert utf16_len(record.content) <= 16_000
    for statuses in families.values():
        if "revoked" in statuses:
            assert set(statuses) == {"revoked"}, "a forgotten fact has a live version"
        else:
            assert statuses.count("active") <= 1, "a fact has two active versions"
    order = [(record.created_at, record.id) for record in image.records]
    assert order == sorted(order), "records are not in canonical order"
    hashes = [record.operation_hash for record in image.records]
    assert len(hashes) == len(set(hashes)), "a duplicate write was kept twice"


def compacted_copy_merges_to_itself(before: bytes, after: bytes, key: bytes) -> None:
    """A merge of a file compacted (``after``) and its uncompacted copy (``before``), either
    way round, gives the bytes the compacted file merges to alone (in canonical order), with
    no base or the uncompacted file as the base (a compacted file is never the ancestor of an
    uncompacted copy: compaction only drops)."""
    for base in (b"", before):
        compacted = merge_files(base, after, after, key)[0]
        assert merge_files(base, after, before, key)[0] == compacted, "compaction lost"
        assert merge_files(base, before, after, key)[0] == compacted, "compaction lost"
        check_invariants(compacted)


def appended_copy_merges_as_rewritten(data: bytes, key: bytes) -> None:
    """A file whose corrections were appended (v2), the same records rewritten, and the same
    history as a v1 file (every status in place, as older versions wrote it) merge to the
    same bytes, whichever side each is on."""
    image = decode_store(data.decode())
    rewritten = encode_store(image).encode()
    as_v1 = encode_store(StoreImage(HEADER, image.records)).encode()
    alone = merge_files(b"", data, data, key)[0]
    for one, other in ((data, rewritten), (rewritten, data), (data, as_v1), (as_v1, data)):
        assert merge_files(b"", one, other, key)[0] == alone, "an appended correction merged apart"


def check_model(world: World, data: bytes) -> None:
    records = decode_store(data.decode()).records if data else ()
    contents = {record.content for record in records}
    live = {world.family[r.id] for r in records if r.status == "active" and r.id in world.family}
    for text, fact in world.acknowledged.items():
        if fact in world.forgotten:
            assert text not in contents, f"forgotten text came back: {text!r}"
        elif world.compacted:  # compaction drops superseded text: the fact itself stays
            assert fact in live, f"an acknowledged fact was lost: {text!r}"
        else:
            assert text in contents, f"an acknowledged fact was lost: {text!r}"
    assert live.isdisjoint(world.forgotten)


def run_history(machines: int, mode: Mode, steps: list[tuple[str, int, object]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        world = World(Path(folder), machines, mode)
        for operation, index, argument in steps:
            world.run(operation, index, argument)
        final = world.converge()
        check_invariants(final)
        check_model(world, final)
        report = world.stores[0].doctor()
        assert report.error is None and report.ok


# The same write made on two machines, forgotten and folded on one: it must stay forgotten
# after the merge (it came back), and merging the result again must change nothing.
_FOLDED_TWIN = [
    ("remember", 0, "tea over coffee"),
    ("remember", 1, "tea over coffee"),
    ("forget", 0, 0),
    ("compact", 0, 0),
]
_FOLDED_AGAIN = [
    ("remember", 0, "tea over coffee"),
    ("remember", 1, "deploys on Tuesday"),
    ("forget", 0, 0),
    ("remember", 0, "deploys on Tuesday"),
    ("compact", 0, 0),
    ("forget", 0, 0),
]


@pytest.mark.parametrize("mode", ["git", "file-sync"])
@settings(max_examples=75)
@example(steps=_FOLDED_TWIN)
@example(steps=_FOLDED_AGAIN)
@given(steps=operations(2))
def test_two_machines_converge_on_the_same_bytes(
    mode: Mode, steps: list[tuple[str, int, object]]
) -> None:
    run_history(2, mode, steps)


@pytest.mark.parametrize("mode", ["git", "file-sync"])
@settings(max_examples=75)
@given(steps=operations(3))
def test_three_machines_converge_on_the_same_bytes(
    mode: Mode, steps: list[tuple[str, int, object]]
) -> None:
    run_history(3, mode, steps)
