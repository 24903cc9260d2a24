"""Bad input gets a coded error, never a traceback: deep JSON, bytes that are not UTF-8 in an
argument, a disk that refuses writes, content made of zero-width characters."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.core.store_helpers import manual, raw, records_path, tree

from memquill import MemorySession, MemoryToolset, RecordStore
from memquill.errors import ERRORS, CorruptError, Messages, StorageError

MEMQUILL = os.fsencode(Path(sys.executable).parent / "memquill")
DEEP = b"[" * 1000 + b"]" * 1000  # deeper than Python's JSON parser can recurse
NOT_UTF8 = b"caf\xe9"


def cli(workspace: Path, *args: bytes | str) -> subprocess.CompletedProcess[bytes]:
    argv = [MEMQUILL, b"--workspace", os.fsencode(workspace)]
    argv += [os.fsencode(a) if isinstance(a, str) else a for a in args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMQUILL_")}
    env["MEMQUILL_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(argv, capture_output=True, env=env, timeout=120, check=False)


@pytest.fixture
def deep_store(tmp_path: Path) -> Path:
    RecordStore(tmp_path).save([manual("The deploy window is Tuesday.")])
    data = raw(tmp_path).replace(b'"status"', b'"deep":' + DEEP + b',"status"', 1)
    records_path(tmp_path).write_bytes(data)
    (tmp_path / "memory.md").write_text("# Notes\n\nThe deploy checklist lives here.\n")
    return tmp_path


def test_deeply_nested_metadata_is_corrupt_in_every_command(deep_store: Path) -> None:
    with pytest.raises(CorruptError):
        RecordStore(deep_store).snapshot()
    before = tree(deep_store)
    corrupt = ERRORS["corrupt"].exit_status
    for args in (("list",), ("remember", "x"), ("compact", "--revision", "0" * 64)):
        done = cli(deep_store, *args)
        assert done.returncode == corrupt, (args, done.stderr)
        assert done.stderr.decode() == (
            f"error[corrupt]: {Messages.EDITED}\nhint: {Messages.REPAIR_HINT}\n"
        )
    doctor = cli(deep_store, "doctor")
    assert doctor.returncode == 1
    assert b"in record 1: its metadata is nested too deeply to read" in doctor.stdout
    # Reads still answer from the notes, and say first what is missing and what to run.
    for args in (("search", "deploy"), ("recent",)):
        done = cli(deep_store, *args)
        assert done.returncode == 0 and b"Traceback" not in done.stderr
        first = done.stdout.decode().splitlines()[0]
        assert first == (f"Managed memory unavailable: {Messages.EDITED} {Messages.REPAIR_HINT}"), (
            args
        )
        assert "The deploy checklist lives here." in done.stdout.decode()
    assert tree(deep_store) == before


@pytest.mark.parametrize(
    "args",
    [
        ("remember", NOT_UTF8),
        ("remember", "a fact", "--key", NOT_UTF8),
        ("search", NOT_UTF8),
        ("get", NOT_UTF8),
        ("update", NOT_UTF8, "text", "--revision", "0" * 8),
        ("forget", NOT_UTF8, "--revision", "0" * 8),
        ("search", "tea", "--tag", NOT_UTF8),
    ],
    ids=["remember", "key", "search", "get", "update", "forget", "tag"],
)
def test_an_argument_that_is_not_utf8_is_invalid(
    tmp_path: Path, args: tuple[bytes | str, ...]
) -> None:
    done = cli(tmp_path, *args)
    assert done.returncode == ERRORS["invalid"].exit_status, done.stderr
    assert done.stderr.startswith(b"error[invalid]: The ")
    assert done.stderr.endswith(
        b" argument is not valid UTF-8 text (check the terminal's encoding).\n"
    )
    assert done.stdout == b""
    assert not (tmp_path / "memory").exists()


def test_a_workspace_path_that_is_not_utf8_is_a_path_like_any_other(tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path) + b"/" + NOT_UTF8
    os.mkdir(folder)
    done = subprocess.run(
        [MEMQUILL, b"--workspace", folder, b"where"], capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert b"why:     from --workspace" in done.stdout
    assert b"caf\\udce9" in done.stdout  # printed escaped, not a crash
    saved = subprocess.run(
        [MEMQUILL, b"--workspace", folder, b"remember", b"a fact"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert saved.returncode == 0, saved.stderr


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC])
def test_a_lock_file_the_disk_will_not_open_is_storage_not_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    store = RecordStore(tmp_path, lock_timeout=5)
    store.save([manual("first")])
    before = tree(tmp_path)
    real_open = os.open

    def refusing_open(path: str | os.PathLike[str], flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fspath(path).endswith(".records-lock"):
            raise OSError(code, os.strerror(code))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    with pytest.raises(StorageError) as caught:
        store.save([manual("second")])  # answered at once: no wait for a lock nobody holds
    assert caught.value.message == Messages.UNAVAILABLE
    monkeypatch.undo()
    assert tree(tmp_path) == before


ZERO_WIDTH = ["\u200b", "\u200b\u200c\u200d", "\ufeff", " \u2060 \u200b\n", "\u00ad\u200e"]


@pytest.mark.parametrize("content", ZERO_WIDTH)
def test_content_of_only_zero_width_characters_is_blank(tmp_path: Path, content: str) -> None:
    from memquill.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="1–16000"):
        RecordStore(tmp_path).save([manual(content, "k")])
    result = MemoryToolset(MemorySession(tmp_path, "s")).call(
        "memory_remember", {"content": content}
    )
    assert result.is_error and '"code":"invalid"' in result.text
    done = cli(tmp_path, "remember", content)
    assert done.returncode == ERRORS["invalid"].exit_status
    assert not (tmp_path / "memory").exists()
    # Zero-width characters inside real text are kept as they are.
    RecordStore(tmp_path).save([manual(f"tea{content}time", "k2")])
    assert RecordStore(tmp_path).snapshot().records[0].content == f"tea{content}time"
