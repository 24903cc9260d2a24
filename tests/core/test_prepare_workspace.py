"""``prepare_workspace``: a missing workspace is made private, an existing one left as it is."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memquill import StorageError, UnsafePathError
from memquill.foundation.messages import Messages
from memquill.paths import prepare_workspace


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_missing_workspace_and_its_parents_are_made_0700_whatever_the_umask(
    tmp_path: Path,
) -> None:
    target = tmp_path / "srv" / "memory" / "ana"
    previous = os.umask(0)
    try:
        assert prepare_workspace(target) == target.resolve()
    finally:
        os.umask(previous)
    for folder in (tmp_path / "srv", tmp_path / "srv" / "memory", target):
        assert _mode(folder) == 0o700, folder
    assert list(target.iterdir()) == []


def test_an_existing_folder_is_left_exactly_as_it_is(tmp_path: Path) -> None:
    shared = tmp_path / "notes"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    assert prepare_workspace(shared) == shared.resolve()
    assert _mode(shared) == 0o755


def test_what_cannot_be_used_is_refused_with_its_code(tmp_path: Path) -> None:
    with pytest.raises(StorageError) as missing:
        prepare_workspace(tmp_path / "nobody", create=False)
    assert missing.value.message == Messages.WORKSPACE_MISSING
    assert not (tmp_path / "nobody").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(UnsafePathError):
        prepare_workspace(tmp_path / "file")
    with pytest.raises(StorageError) as blocked:
        prepare_workspace(tmp_path / "file" / "ana")
    assert blocked.value.message == Messages.WORKSPACE_NOT_CREATED
    with pytest.raises(UnsafePathError):
        prepare_workspace("relative/ana")
    assert not Path("relative").exists()
