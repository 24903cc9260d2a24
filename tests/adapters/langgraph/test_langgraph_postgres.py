"""MemquillStore on PostgreSQL: each namespace a row, so every host sees the same namespaces."""

from __future__ import annotations

import urllib.parse
import uuid
from pathlib import Path

import psycopg
import pytest
from tests.conftest import Server

from memquill import InvalidInputError, RecordStore
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
