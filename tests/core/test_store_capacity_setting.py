"""Capacity is a setting (issue 33, item 2): default 2 MiB, up to 64 MiB per workspace, from
the workspace's config, the store, the session, the LangGraph store and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.core.store_helpers import manual, raw

from memquill import RecordStore, open_session
from memquill.errors import CapacityError, InvalidInputError, Messages
from memquill.store._codec import MAX_STORE_BYTES

MIB = 1024 * 1024
BIG = 16_000


def _fill_past(store: RecordStore, limit: int) -> int:
    """Save 40-record batches of 16,000 characters until the file passes ``limit``."""
    batch = 0
    while len(raw(Path(store.workspace))) <= limit:
        facts = [manual(f"b{batch}-{i} ".ljust(BIG, "x"), f"k{batch}-{i}") for i in range(40)]
        assert store.save(facts).status == "saved"
        batch += 1
    return len(raw(Path(store.workspace)))


@pytest.mark.slow
def test_a_workspace_config_raises_the_capacity(tmp_path: Path) -> None:
    config = tmp_path / ".assistant" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"store": {"capacityMiB": 4}}))
    store = RecordStore(tmp_path)
    assert store.capacity == 4 * MIB

    size = _fill_past(store, MAX_STORE_BYTES)

    assert size > MAX_STORE_BYTES
    assert store.preflight().max_bytes == 4 * MIB
    # A store that does not know the setting refuses the larger file on read, naming 2 MiB.
    with pytest.raises(CapacityError) as caught:
        RecordStore(tmp_path, capacity=2 * MIB).snapshot()
    assert caught.value.message == Messages.FULL


def test_the_limit_is_named_in_the_capacity_error(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, capacity=1 * MIB)
    with pytest.raises(CapacityError) as caught:
        _fill_past(store, 2 * MIB)
    assert (
        "its 1 MiB limit" in caught.value.message and "`memquill compact`" in caught.value.message
    )


@pytest.mark.parametrize("capacity", [0, MIB - 1, 65 * MIB, 2.5 * MIB, "2"])
def test_a_capacity_out_of_range_is_invalid(tmp_path: Path, capacity: object) -> None:
    with pytest.raises(InvalidInputError) as caught:
        # Out of range or not an int, on purpose.
        RecordStore(tmp_path, capacity=capacity)  # pyright: ignore[reportArgumentType]
    assert caught.value.message == Messages.CAPACITY_SETTING


def test_a_bad_config_value_is_invalid_and_a_broken_file_means_the_default(tmp_path: Path) -> None:
    config = tmp_path / ".assistant" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"store": {"capacityMiB": 128}}))
    with pytest.raises(InvalidInputError):
        RecordStore(tmp_path)
    config.write_text("{not json")
    assert RecordStore(tmp_path).capacity == MAX_STORE_BYTES


def test_sessions_and_the_command_line_take_it(tmp_path: Path) -> None:
    assert open_session(tmp_path, "s1", capacity=64 * MIB).store.capacity == 64 * MIB
    memquill = str(Path(sys.executable).parent / "memquill")
    done = subprocess.run(
        [memquill, "--workspace", str(tmp_path), "--capacity", "65", "list"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and Messages.CAPACITY_SETTING in done.stderr
    done = subprocess.run(
        [memquill, "--workspace", str(tmp_path), "--capacity", "8", "remember", "a fact"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_doctor_reads_a_store_past_2_mib_against_its_own_capacity(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, capacity=4 * MIB)
    size = _fill_past(store, MAX_STORE_BYTES)
    report = store.doctor()
    assert report.error is None
    assert (report.used_bytes, report.max_bytes) == (size, 4 * MIB)
