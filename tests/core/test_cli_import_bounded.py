"""``memquill import`` reads as every memquill reader does (issue 21, Why 4): a regular file
only, never waited on, at most the store's capacity plus a margin, checked before a byte is
read. Each refusal answers its code at once and changes nothing on disk.

The commands run in real processes whose address space is bounded (``cli_helpers``), so a
read without a bound fails instead of filling the machine's memory.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest
from tests.core.cli_helpers import cli_env, run_cli, tree
from tests.core.store_helpers import manual

from memquill import Record
from memquill.cli.transfer import MAX_IMPORT_BYTES
from memquill.errors import ERRORS, Messages
from memquill.store._codec import MAX_STORE_BYTES, encode_block
from memquill.store._record import JSONValue
from memquill.store._store import RecordStore

FAST = 30.0
"""Seconds a refusal may take at most, process start included (it takes about one)."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    RecordStore(root).save([manual("The office moved to Lyon.", "k1")])
    return root


def _import(tmp_path: Path, workspace: Path, file: str | Path) -> tuple[int, str, float]:
    revision = RecordStore(workspace).snapshot().revision
    started = time.monotonic()
    done = run_cli(
        cli_env(tmp_path),
        "--workspace",
        str(workspace),
        "import",
        "--revision",
        revision,
        str(file),
        timeout=FAST,
    )
    assert done.stdout == b""
    return done.returncode, done.stderr.decode(), time.monotonic() - started


def test_a_device_is_refused_at_once(tmp_path: Path, workspace: Path) -> None:
    before = tree(workspace)
    status, err, seconds = _import(tmp_path, workspace, "/dev/zero")
    assert status == ERRORS["invalid"].exit_status, err
    assert err == f"error[invalid]: {Messages.IMPORT_NOT_REGULAR.format('/dev/zero')}\n"
    assert seconds < FAST
    assert tree(workspace) == before


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path, workspace: Path) -> None:
    fifo = tmp_path / "records.md"
    os.mkfifo(fifo)
    before = tree(workspace)
    status, err, _ = _import(tmp_path, workspace, fifo)  # no writer ever comes
    assert status == ERRORS["invalid"].exit_status, err
    assert err == f"error[invalid]: {Messages.IMPORT_NOT_REGULAR.format(fifo)}\n"
    assert tree(workspace) == before


def test_a_link_to_a_fifo_is_refused_too(tmp_path: Path, workspace: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "copy.md").symlink_to(tmp_path / "pipe")
    status, err, _ = _import(tmp_path, workspace, tmp_path / "copy.md")
    assert status == ERRORS["invalid"].exit_status, err


def test_a_file_over_the_cap_is_capacity_before_anything_is_read(
    tmp_path: Path, workspace: Path
) -> None:
    huge = tmp_path / "huge.md"
    with huge.open("wb") as handle:  # 600 MB on paper, nothing on disk (sparse)
        handle.truncate(600 * 1024 * 1024)
    before = tree(workspace)
    status, err, _ = _import(tmp_path, workspace, huge)
    assert status == ERRORS["capacity"].exit_status, err
    assert err == f"error[capacity]: {Messages.IMPORT_TOO_LARGE}\n"
    assert tree(workspace) == before


def test_the_cap_is_the_capacity_plus_a_margin(tmp_path: Path, workspace: Path) -> None:
    assert MAX_IMPORT_BYTES == MAX_STORE_BYTES + 1024 * 1024
    just_over = tmp_path / "over.md"
    just_over.write_bytes(b"x" * (MAX_IMPORT_BYTES + 1))
    status, err, _ = _import(tmp_path, workspace, just_over)
    assert (status, err) == (16, f"error[capacity]: {Messages.IMPORT_TOO_LARGE}\n")
    # Within the margin the store reads the copy and answers with its own capacity check.
    within = tmp_path / "within.md"
    blocks = b"".join(encode_block(_new_record(n)).encode() for n in range(140))
    within.write_bytes(RecordStore(workspace).export() + blocks)
    assert MAX_STORE_BYTES < within.stat().st_size <= MAX_IMPORT_BYTES
    before = RecordStore(workspace).export()
    status, err, _ = _import(tmp_path, workspace, within)
    assert (status, err) == (16, f"error[capacity]: {Messages.FULL}\n")
    assert RecordStore(workspace).export() == before  # the writer's lock note aside, unchanged


def _new_record(number: int) -> Record:
    moment = "2026-01-01T00:00:00.000Z"
    record_id = str(uuid.UUID(int=number + 1))
    meta: dict[str, JSONValue] = {
        "id": record_id,
        "rootId": record_id,
        "source": {"kind": "manual"},
        "status": "active",
        "createdAt": moment,
        "updatedAt": moment,
        "operationHash": f"{number:064x}",
    }
    return Record(meta, f"fact {number} " + "x" * 15_000)


def test_a_missing_file_is_invalid_and_named(tmp_path: Path, workspace: Path) -> None:
    missing = tmp_path / "nothing-here.md"
    status, err, _ = _import(tmp_path, workspace, missing)
    assert (status, err) == (11, f"error[invalid]: {Messages.IMPORT_MISSING.format(missing)}\n")


def test_a_regular_copy_still_imports(tmp_path: Path, workspace: Path) -> None:
    copy = tmp_path / "copy.md"
    copy.write_bytes(RecordStore(workspace).export().replace(b"Lyon", b"Nice"))
    revision = RecordStore(workspace).snapshot().revision
    done = run_cli(
        cli_env(tmp_path), "--workspace", str(workspace), "import", "--revision", revision[:8],
        str(copy),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The edit is a new version; the old one stays, superseded, as after a correction.
    assert [(r.status, r.content) for r in RecordStore(workspace).snapshot().records] == [
        ("superseded", "The office moved to Lyon."),
        ("active", "The office moved to Nice."),
    ]
