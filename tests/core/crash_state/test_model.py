"""The file-system model keeps the promises its docstring makes, and no more (real calls,
recorded by the same recorder the crash-state test uses)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.core.crash_state.model import SECTOR, FileSystem, crash_states
from tests.core.crash_state.recorder import Call, Recorder, Unmodelled


def record(root: Path, actions: list[str]) -> tuple[list[Call], FileSystem]:
    """Run simple actions on ``root/f`` and ``root/g`` under the recorder."""
    real = os.path.realpath(root)
    model = FileSystem.from_disk(real)
    recorder = Recorder(real)
    fd = -1
    with recorder.active():
        for action in actions:
            verb, _, argument = action.partition(" ")
            if verb == "append":
                fd = os.open(root / "f", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                os.write(fd, b"a" * int(argument))
            elif verb == "create":
                fd = os.open(root / argument, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                os.write(fd, b"new")
            elif verb == "fsync":
                os.fsync(fd)
            elif verb == "close":
                os.close(fd)
            elif verb == "rename":
                source, target = argument.split()
                os.replace(root / source, root / target)
            elif verb == "unlink":
                os.unlink(root / argument)
            elif verb == "sync-folder":
                folder = os.open(root, os.O_RDONLY)
                os.fsync(folder)
                os.close(folder)
    return recorder.calls, model


def final_states(root: Path, actions: list[str]) -> set[tuple[tuple[str, bytes | None], ...]]:
    calls, model = record(root, actions)
    *_, (_, states) = crash_states(calls, os.path.realpath(root), model, limit=1000)
    return {state.tree for state in states}


def test_an_unsynced_append_tears_at_sector_boundaries(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"o" * 100)
    states = final_states(tmp_path, ["append 1300"])
    contents = {dict(tree)["f"] for tree in states}
    full = b"o" * 100 + b"a" * 1300
    prefixes = {full[:cut] for cut in (100, SECTOR, 2 * SECTOR, 1400)}
    zeros = {full[:cut].ljust(1400, b"\0") for cut in (SECTOR, 2 * SECTOR)}
    assert contents == prefixes | zeros


def test_fsync_makes_a_file_s_data_durable(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"o" * 100)
    states = final_states(tmp_path, ["append 1300", "fsync", "close"])
    assert {dict(tree)["f"] for tree in states} == {b"o" * 100 + b"a" * 1300}


def test_a_new_file_s_name_needs_the_folder_synced(tmp_path: Path) -> None:
    states = final_states(tmp_path, ["create g", "fsync", "close"])
    assert states == {(), (("g", b"new"),)}
    synced = final_states(tmp_path, ["create h", "fsync", "close", "sync-folder"])
    assert synced == {(("g", b"new"), ("h", b"new"))}


def test_a_rename_is_atomic_and_durable_once_the_folder_is_synced(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"old")
    steps = ["create g", "fsync", "close", "rename g f"]
    # The creation and the rename may persist in any combination, never a half rename.
    assert {dict(tree).get("f") for tree in final_states(tmp_path, steps)} == {b"old", b"new"}
    (tmp_path / "f").write_bytes(b"old")
    assert final_states(tmp_path, ["create g", "fsync", "close", "rename g f", "sync-folder"]) == {
        (("f", b"new"),)
    }


def test_a_rename_of_an_unsynced_file_can_leave_an_empty_file(tmp_path: Path) -> None:
    """The missing fsync the crash-state test's broken variant drops: the new name may persist
    before the data does."""
    (tmp_path / "f").write_bytes(b"old")
    states = final_states(tmp_path, ["create g", "close", "rename g f", "sync-folder"])
    assert {dict(tree)["f"] for tree in states} == {b"", b"new"}


def test_unsynced_removals_persist_in_any_subset(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"1")
    (tmp_path / "g").write_bytes(b"2")
    states = final_states(tmp_path, ["unlink f", "unlink g"])
    assert {tuple(name for name, _ in tree) for tree in states} == {
        ("f", "g"),
        ("f",),
        ("g",),
        (),
    }


def test_a_buffered_write_is_refused_not_missed(tmp_path: Path) -> None:
    recorder = Recorder(os.path.realpath(tmp_path))
    with recorder.active(), pytest.raises(Unmodelled, match="buffered write"):
        (tmp_path / "f").write_bytes(b"unseen")
