"""``MemquillStore.batch``: each namespace's puts are one write, with the rules of ``put``.

How many writes a batch made is read from what the store itself shows: on files, the writer
lock's opens (one per write transaction, seen by an audit hook in a process of its own); on
PostgreSQL, the namespace row's ``seq``, which every write bumps. Nothing here times anything
(``benchmarks/langgraph_store.py --batch`` does).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp
from tests.adapters.langgraph.refusals import REFUSED, SECRET_VALUE
from tests.conftest import Server

from memquill import MemquillError, RecordStore, SecretError
from memquill.errors import BlockedError, CapacityError
from memquill_langchain.store import MemquillStore

ANA = ("memories", "ana")
BO = ("memories", "bo")


@pytest.fixture(params=["file", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a store's namespaces live: files, or a workspace base of its own on PostgreSQL."""
    if request.param == "file":
        yield "file"
        return
    server: Server = request.getfixturevalue("postgres_server")
    yield f"{server.url}#workspace=bulk-{uuid.uuid4().hex[:12]}"


def _mixed_ops(namespace: tuple[str, ...]) -> list[PutOp]:
    """New keys, corrections, an unchanged value, a TTL, an index, several puts to one key."""
    ops = [PutOp(namespace, f"k{i}", {"content": f"Fact number {i}.", "n": i}) for i in range(8)]
    ops.append(PutOp(namespace, "old", {"content": "Ana drinks coffee now."}))  # a correction
    ops.append(PutOp(namespace, "same", {"content": "Ana lives in Porto."}))  # unchanged
    ops.append(PutOp(namespace, "ttl", {"content": "Ana is in Lisbon this week."}, ttl=60.0))
    ops.append(PutOp(namespace, "indexed", {"content": "Ana plays chess."}, index=False))
    ops.append(PutOp(namespace, "k3", {"content": "Fact three, as corrected."}))  # the last wins
    return ops


def _interleaved() -> list[PutOp]:
    """Both namespaces' puts, one of each in turn."""
    return [op for pair in zip(_mixed_ops(ANA), _mixed_ops(BO), strict=True) for op in pair]


def _seeded(store: MemquillStore, namespace: tuple[str, ...]) -> None:
    store.put(namespace, "old", {"content": "Ana drinks tea."})
    store.put(namespace, "same", {"content": "Ana lives in Porto."})


def _seq(url: str, row: str) -> int:
    with psycopg.connect(url.split("#", 1)[0], autocommit=True) as connection:
        found = connection.execute(
            "SELECT seq FROM memquill.workspaces WHERE workspace = %s", (row,)
        ).fetchone()
    assert found is not None, row
    return int(str(found[0]))


_COUNT_LOCKS = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from langgraph.store.base import PutOp
    from memquill_langchain.store import MemquillStore

    root = Path(sys.argv[1])
    ops = [PutOp(tuple(o["ns"]), o["key"], o["value"], ttl=o["ttl"], index=o["index"])
           for o in json.loads(sys.argv[2])]
    store = MemquillStore(root)
    for ns in {op.namespace for op in ops}:
        store.put(ns, "old", {"content": "Ana drinks tea."})
        store.put(ns, "same", {"content": "Ana lives in Porto."})
    opened = []
    counting = False

    def hook(event, args):
        if counting and event == "open" and str(args[0]).endswith(".records-lock"):
            opened.append(str(Path(args[0]).parent.parent.relative_to(root)))

    sys.addaudithook(hook)
    counting = True
    store.batch(ops)
    counting = False
    store.close()
    print(json.dumps(sorted(opened)))
    """
)


def _lock_opens(root: Path, ops: list[PutOp]) -> list[str]:
    """The namespace folders whose writer lock ``batch(ops)`` took, once per taking, on a
    store whose namespaces hold two items already (run in a process of its own)."""
    given = [
        {
            "ns": list(op.namespace),
            "key": op.key,
            "value": op.value,
            "ttl": op.ttl,
            "index": op.index,
        }
        for op in ops
    ]
    done = subprocess.run(
        [sys.executable, "-c", _COUNT_LOCKS, str(root), json.dumps(given)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_each_namespace_of_a_batch_is_one_write_on_files(tmp_path: Path) -> None:
    assert _lock_opens(tmp_path, _interleaved()) == ["memories/ana", "memories/bo"]


def test_each_namespace_of_a_batch_is_one_write_on_postgres(
    tmp_path: Path, postgres_server: Server
) -> None:
    base = f"bulk-{uuid.uuid4().hex[:12]}"
    url = f"{postgres_server.url}#workspace={base}"
    store = MemquillStore(tmp_path, store=url)
    try:
        for namespace in (ANA, BO):
            _seeded(store, namespace)
        before = {ns: _seq(url, f"{base}/{'/'.join(ns)}") for ns in (ANA, BO)}
        store.batch(_interleaved())
        after = {ns: _seq(url, f"{base}/{'/'.join(ns)}") for ns in (ANA, BO)}
    finally:
        store.close()
    assert {ns: after[ns] - before[ns] for ns in (ANA, BO)} == {ANA: 1, BO: 1}


def _listing(store: MemquillStore) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    return [
        (item.namespace, item.key, item.value) for item in store.search(("memories",), limit=100)
    ]


def _shape(root: Path, location: str, namespace: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """The namespace's record versions as a person reads them, ids and times aside."""
    if location == "file":
        store = RecordStore(root.joinpath(*namespace))
    else:
        base = location.split("#workspace=", 1)[1]
        row = location.split("#", 1)[0] + f"#workspace={base}/{'/'.join(namespace)}"
        store = RecordStore(root, location=row)
    try:
        snapshot = store.snapshot()
    finally:
        store.close()
    ids = {record.id: index for index, record in enumerate(snapshot.records)}
    shape: list[tuple[Any, ...]] = []
    for record in snapshot.records:
        extra = dict(record.extra or {})
        if "ttl" in extra:
            extra["ttl"] = "kept"  # an expiry is counted from each put's own clock
        shape.append(
            (
                record.status,
                record.key,
                record.content,
                json.dumps(extra, sort_keys=True),
                ids.get(record.supersedes or ""),
                ids.get(record.root_id),
            )
        )
    return shape


def test_a_batch_leaves_what_the_same_puts_one_by_one_leave(tmp_path: Path, location: str) -> None:
    """A guard, not a change: the records and the items equal those of sequential puts."""
    (tmp_path / "batch").mkdir()
    (tmp_path / "one").mkdir()
    batched_at = location if location == "file" else location + "-b"
    single_at = location if location == "file" else location + "-s"
    batched = MemquillStore(tmp_path / "batch", store=batched_at)
    single = MemquillStore(tmp_path / "one", store=single_at)
    try:
        for store in (batched, single):
            _seeded(store, ANA)
        ops = _mixed_ops(ANA) + _mixed_ops(BO)
        assert batched.batch(ops) == [None] * len(ops)
        last: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            last[(op.namespace, op.key)] = op
        for op in last.values():
            assert op.value is not None
            single.put(op.namespace, op.key, op.value, index=op.index, ttl=op.ttl)
        assert _listing(batched) == _listing(single)
        for namespace in (ANA, BO):
            assert _shape(tmp_path / "batch", batched_at, namespace) == _shape(
                tmp_path / "one", single_at, namespace
            )
        assert batched.items.get(ANA, "ttl") is not None
        assert batched.items.get(ANA, "ttl").expiry is not None  # type: ignore[union-attr]
        assert batched.items.get(ANA, "indexed").index is False  # type: ignore[union-attr]
    finally:
        batched.close()
        single.close()


def test_a_secret_in_a_batch_refuses_it_before_anything_is_written(
    tmp_path: Path, location: str
) -> None:
    store = MemquillStore(tmp_path, store=location)
    try:
        _seeded(store, ANA)
        before = _listing(store)
        ops = [
            PutOp(BO, "first", {"content": "Bo likes mate."}),  # another namespace, first
            PutOp(ANA, "old", {"content": "Ana drinks coffee now."}),
            PutOp(ANA, "leak", {"content": "a note", "token": SECRET_VALUE}),
            PutOp(ANA, "after", {"content": "Ana reads at night."}),
        ]
        with pytest.raises(SecretError):
            store.batch(ops)
        assert _listing(store) == before, "nothing of the batch was written"
        assert store.list_namespaces() == [ANA]
        if location == "file":
            assert not (tmp_path / "memories" / "bo").exists(), "no folder was made"
    finally:
        store.close()


@REFUSED
def test_a_lone_put_is_refused_by_its_own_write_as_a_batch_is_before_it(
    tmp_path: Path, location: str, value: dict[str, object], error: type[MemquillError]
) -> None:
    # A lone put into a namespace that exists is checked by its write alone, not ahead too:
    # it is refused as a batch checked ahead is, with the same message, and writes nothing.
    store = MemquillStore(tmp_path, store=location)
    try:
        _seeded(store, ANA)
        before = _listing(store)
        for key in ("old", "new"):  # a correction, a new item
            with pytest.raises(error) as alone:
                store.put(ANA, key, value)
            with pytest.raises(error) as ahead:
                store.batch([PutOp(ANA, key, value), PutOp(ANA, "fine", {"content": "Fine."})])
            assert str(alone.value) == str(ahead.value)
        assert _listing(store) == before, "nothing was written"
    finally:
        store.close()


def test_forgotten_words_in_a_batch_refuse_their_namespace_whole(
    tmp_path: Path, location: str
) -> None:
    store = MemquillStore(tmp_path, store=location)
    try:
        _seeded(store, ANA)
        store.put(ANA, "doomed", {"content": "Ana's old address is Rua Nova 5."})
        store.delete(ANA, "doomed")
        ops = [
            PutOp(BO, "first", {"content": "Bo likes mate."}),  # written first, kept
            PutOp(ANA, "new", {"content": "Ana reads at night."}),
            PutOp(ANA, "old", {"content": "Ana drinks coffee now."}),
            PutOp(ANA, "again", {"content": "Ana's old address is Rua Nova 5."}),
            PutOp(("memories", "cy"), "later", {"content": "Cy runs."}),  # after it: not
        ]
        with pytest.raises(BlockedError, match="forgotten at"):
            store.batch(ops)
        assert store.get(BO, "first") is not None
        assert store.get(ANA, "new") is None
        kept = store.get(ANA, "old")
        assert kept is not None and kept.value == {"content": "Ana drinks tea."}
        assert store.list_namespaces() == [ANA, BO]
    finally:
        store.close()


def test_a_namespace_past_its_capacity_keeps_none_of_the_batch(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path, capacity=1024 * 1024)
    try:
        _seeded(store, ANA)
        value = {"text": "x" * 15_000}
        with pytest.raises(CapacityError):
            store.batch([PutOp(ANA, f"k{index}", value) for index in range(100)])
        assert [item.key for item in store.search(ANA, limit=200)] == ["same", "old"]
    finally:
        store.close()
