"""``MemquillStore(capacity=...)``: each namespace's records file takes the capacity given
(issue 33: capacity is a setting)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memquill.errors import CapacityError
from memquill_langchain import MemquillStore

MIB = 1024 * 1024


def test_each_namespace_takes_the_capacity_given(tmp_path: Path) -> None:
    small = MemquillStore(tmp_path, capacity=1 * MIB)
    value = {"text": "x" * 15_000}
    with pytest.raises(CapacityError) as caught:
        for index in range(200):
            small.put(("profile",), f"k{index}", value)
    assert "its 1 MiB limit" in caught.value.message

    large = MemquillStore(tmp_path, capacity=4 * MIB)
    large.put(("profile",), "one-more", value)
    assert large.get(("profile",), "one-more") is not None
