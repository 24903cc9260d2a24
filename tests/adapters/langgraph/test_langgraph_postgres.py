"""MemquillStore on PostgreSQL: each namespace a row, so every host sees the same namespaces."""

from __future__ import annotations

import urllib.parse
import uuid
from pathlib import Path

import psycopg
import pytest
from langgraph.store.base import PutOp
from tests.conftest import Server

from memquill import InvalidInputError, RecordStore
from memquill.items import _store
from memquill.items._paths import namespace_of_row
from memquill_langchain.store import MemquillStore


def test_two_hosts_share_namespaces_items_and_history(
    tmp_path: Path, postgres_server: Server
) -> None:
    base = f"hosts-{uuid.uuid4().hex[:12]}"
    url = f"{postgres_server.url}#workspace={base}"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    host_a = MemquillStore(tmp_path / "a", store=url)
    host_b = MemquillStore(tmp_path / "b", store=url)
    try:
        host_a.put(("memories", "Ana"), "drink", {"content": "Ana drinks tea."})
        host_a.put(("memories", "bo"), "drink", {"content": "Bo drinks mate."})
        assert host_b.list_namespaces() == [("memories", "Ana"), ("memories", "bo")]
        assert [i.key for i in host_b.search(("memories",), query="tea")] == ["drink"]
        host_b.put(("memories", "Ana"), "drink", {"content": "Ana drinks coffee."})
        drink = host_a.get(("memories", "Ana"), "drink")
        assert drink is not None and drink.value == {"content": "Ana drinks coffee."}
        host_a.delete(("memories", "bo"), "drink")
        assert host_b.list_namespaces() == [("memories", "Ana")]
        with psycopg.connect(postgres_server.url, autocommit=True) as connection:
            rows = connection.execute(
                "SELECT workspace FROM memquill.records WHERE workspace LIKE %s ORDER BY 1",
                (base + "/%",),
            ).fetchall()
        assert [row[0] for row in rows] == [f"{base}/memories/%41na", f"{base}/memories/bo"]
        name = urllib.parse.quote(f"{base}/memories/%41na", safe="/")  # the row, as a URL says it
        row = RecordStore(tmp_path, location=f"{postgres_server.url}#workspace={name}")
        statuses = [record.status for record in row.snapshot().records]
        row.close()
        assert statuses == ["superseded", "active"], "the correction kept its history"
    finally:
        host_a.close()
        host_b.close()


def test_a_namespace_too_long_for_a_row_is_refused(tmp_path: Path, postgres_server: Server) -> None:
    store = MemquillStore(tmp_path, store=f"{postgres_server.url}#workspace=long")
    with pytest.raises(InvalidInputError, match="row name"):
        store.put(("memories", "x" * 200), "k", {"content": "x"})
    store.close()


def test_a_search_under_a_prefix_reads_only_the_rows_under_it(
    tmp_path: Path, postgres_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A search in one namespace listed every namespace's row and decoded each name: 40 ms at
    # 10,000 namespaces, for one. Rows whose names merely start alike ("u1", "u10") are listed
    # with the prefix's own and told apart by their labels.
    store = MemquillStore(tmp_path, store=f"{postgres_server.url}#workspace=pre-{uuid.uuid4()}")
    try:
        puts = [PutOp(("memories", f"u{n}"), "k", {"content": f"Heron {n}."}) for n in range(30)]
        store.batch([*puts, PutOp(("memories", "u3", "deep"), "k", {"content": "Deep heron."})])
        decoded: list[str] = []
        real = namespace_of_row

        def counted(base: str, name: str) -> tuple[str, ...] | None:
            decoded.append(name.rsplit("/", 1)[-1])
            return real(base, name)

        monkeypatch.setattr(_store, "namespace_of_row", counted)
        found = store.search(("memories", "u1"), query="heron")
        deep = store.search(("memories", "u3"), query="heron")
        everything = store.search(("memories",), query="heron", limit=100)
    finally:
        store.close()
    assert [(item.namespace, item.value) for item in found] == [
        (("memories", "u1"), {"content": "Heron 1."})
    ]
    assert sorted(item.namespace for item in deep) == [
        ("memories", "u3"),
        ("memories", "u3", "deep"),
    ]
    assert len(everything) == 31
    # u1 and u10 to u19; then u3 and u3/deep; then all 31 rows.
    assert len(decoded) == 11 + 2 + 31
