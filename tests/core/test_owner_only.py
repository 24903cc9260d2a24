"""``memquill.owner_only``: folders ``0700`` and files ``0600`` whatever the umask, never
following a symlink or waiting on a FIFO, and narrowing what an older version made wider."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from memquill.errors import SourceError
from memquill.owner_only import private_file, private_folder, tighten_file


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.mark.parametrize("mask", [0o000, 0o022, 0o777], ids=["000", "022", "777"])
def test_every_folder_made_is_0700_and_every_file_0600(tmp_path: Path, mask: int) -> None:
    folder = tmp_path / "a" / "b" / "c"
    with umask(mask):
        private_folder(folder)
        private_file(folder / "file")
    assert [mode(path) for path in (tmp_path / "a", tmp_path / "a" / "b", folder)] == [0o700] * 3
    assert mode(folder / "file") == 0o600


def test_an_existing_folder_is_left_alone_unless_it_is_memquills_own(tmp_path: Path) -> None:
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    for folder in (theirs, ours):
        folder.mkdir()
        folder.chmod(0o755)
    private_folder(theirs)
    private_folder(ours, tighten=True)
    assert (mode(theirs), mode(ours)) == (0o755, 0o700)


def test_without_parents_a_missing_parent_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        private_folder(tmp_path / "missing" / "memory", parents=False)
    assert not (tmp_path / "missing").exists()
    private_folder(tmp_path / "memory", parents=False)
    assert mode(tmp_path / "memory") == 0o700


def test_a_file_an_older_version_made_wider_is_narrowed(tmp_path: Path) -> None:
    made, side = tmp_path / "index.sqlite3", tmp_path / "index.sqlite3-wal"
    for path in (made, side):
        path.write_bytes(b"data")
        path.chmod(0o644)
    private_file(made)
    tighten_file(side)
    tighten_file(tmp_path / "absent")  # nothing to narrow, no error
    assert (mode(made), mode(side), made.read_bytes()) == (0o600, 0o600, b"data")


def test_a_fifo_or_a_symlink_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(SourceError):
        private_file(fifo)  # never waits for a writer
    target = tmp_path / "elsewhere"
    target.write_text("not memquill's")
    target.chmod(0o644)
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(OSError):
        private_file(tmp_path / "link")
    tighten_file(tmp_path / "link")
    assert mode(target) == 0o644
