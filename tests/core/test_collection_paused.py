"""``collection_paused``: no cyclic collection while a whole workspace is decoded, counted across
threads, and a process that disabled collection keeps it disabled."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memquill.foundation.collection import collection_paused
from memquill.store import _memo
from memquill.store._codec import HEADER, StoreImage, decode_store


@pytest.fixture(autouse=True)
def collecting() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_collection_resumes_only_when_the_last_overlapping_pause_ends() -> None:
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def second() -> None:
        first_in.wait()
        with collection_paused():
            second_in.set()
            first_out.wait()
            seen.append(gc.isenabled())  # the first left: still paused for this one

    thread = threading.Thread(target=second)
    thread.start()
    with collection_paused():
        first_in.set()
        second_in.wait()
    first_out.set()
    thread.join()
    assert seen == [False]
    assert gc.isenabled()


def test_a_process_that_disabled_collection_keeps_it_disabled() -> None:
    gc.disable()
    with collection_paused(), collection_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_a_pause_ends_when_its_block_raises() -> None:
    with pytest.raises(RuntimeError), collection_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_whole_records_file_is_decoded_without_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A workspace's records decoded whole make many objects and no cycles: collecting meanwhile
    # cost a third of a first write into 100,000 records.
    seen: list[bool] = []

    def decode(text: str, intact: list[int] | None = None) -> StoreImage:
        seen.append(gc.isenabled())
        return decode_store(text, intact)

    monkeypatch.setattr(_memo, "decode_store", decode)
    _memo.decode_snapshot(str(tmp_path).encode(), HEADER.encode())
    assert seen == [False]
    assert gc.isenabled()
