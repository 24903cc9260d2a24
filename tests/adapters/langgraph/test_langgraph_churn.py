"""LangGraph churn (issue 35, item 5; issue 33): keys put and deleted in turn in one namespace
never fill it: deleted items fold into compact tombstones that still block their words."""

from __future__ import annotations

from pathlib import Path

import pytest

from memquill.errors import BlockedError
from memquill_langchain import MemquillStore

MIB = 1024 * 1024
NS = ("churn",)


@pytest.mark.slow
def test_put_and_delete_in_turn_past_the_capacity(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path, capacity=1 * MIB)
    # Items that stay fill all but ~100 KB, so the churn reaches the capacity within ~200 cycles.
    for index in range(58):
        store.put(NS, f"keep-{index}", {"text": f"{index} ".ljust(15_800, "k")})
    for cycle in range(400):
        key = f"k{cycle % 10}"
        store.put(NS, key, {"text": f"value {cycle} for {key}"})
        store.delete(NS, key)

    records = (tmp_path / "churn" / "memory" / "records.md").read_bytes()
    assert len(records) <= 1 * MIB
    assert records.count(b'"tombstones":{') == 1  # one ledger holds the folded deletes
    assert records.count(b"<!-- memory-record ") < 58 + 400  # 400 deletes, fewer tombstones
    assert store.get(NS, "keep-3") is not None and store.get(NS, "k3") is None
    with pytest.raises(BlockedError):  # a re-put of deleted words: blocked, folded or not
        store.put(NS, "k3", {"text": "value 3 for k3"})
    store.put(NS, "k3", {"text": "value 400 for k3"})
    assert store.get(NS, "k3") is not None
