"""``memquill index`` on a cache folder that is read-only, full or not a folder: the words and
code a search uses (``error[storage]``, exit 18), never a traceback; ``search`` keeps the index
in memory and says the same; ``doctor`` names it.

Read-only is real where it can be: ``chmod 0500`` for a user, ``chattr +i`` for root (whom
permissions do not bind); only where neither holds are the calls that write refused as a
read-only disk refuses them. A full disk is SQLite's own: ``max_page_count`` makes it answer
"database or disk is full" exactly as it does on ENOSPC. A file where the folder should be is a
file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.core.query_helpers import write

from memquill.cli import main
from memquill.errors import ERRORS, Messages
from memquill.index import _db as db_module

MODES = {
    "build": ("index",),
    "quiet": ("index", "--quiet"),
    "json": ("index", "--json"),
    "rebuild": ("index", "--rebuild", "--quiet"),
    "status": ("index", "--status"),
}
STORAGE = ERRORS["storage"].exit_status


def run(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> tuple[int, str, str]:
    status = main(["--workspace", str(root), *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@contextlib.contextmanager
def refusing_writes(folder: Path) -> Iterator[bool]:
    """``folder`` (and its files) accept no write, as on a read-only disk; yields whether that
    is real (``False``: only the calls memquill makes in Python are refused)."""
    if os.geteuid() != 0:
        files = [folder, *sorted(folder.iterdir())]
        for path in files:
            path.chmod(0o500 if path.is_dir() else 0o400)
        try:
            yield True
        finally:
            for path in files:
                path.chmod(0o700 if path.is_dir() else 0o600)
        return
    chattr = shutil.which("chattr")
    files = [folder, *sorted(folder.iterdir())]
    done = chattr is not None and all(
        subprocess.run([chattr, "+i", str(path)], capture_output=True, check=False).returncode == 0
        for path in files
    )
    try:
        if done:
            yield True
        else:  # a file system without the immutable flag: refuse where memquill asks
            with pytest.MonkeyPatch.context() as patch:
                _refuse(patch, folder)
                yield False
    finally:
        if chattr is not None:
            for path in files:
                subprocess.run([chattr, "-i", str(path)], capture_output=True, check=False)


def _refuse(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    inside = os.fspath(folder)

    def guard(real: Callable[..., object], writes: Callable[..., bool]) -> Callable[..., object]:
        def refused(path: str | os.PathLike[str], *args: object, **kwargs: object) -> object:
            if os.fspath(path).startswith(inside) and writes(*args):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS))
            return real(path, *args, **kwargs)

        return refused

    changing = os.O_WRONLY | os.O_RDWR | os.O_CREAT
    monkeypatch.setattr(os, "open", guard(os.open, lambda flags, *_: bool(flags & changing)))
    monkeypatch.setattr(os, "access", guard(os.access, lambda mode, *_: bool(mode & os.W_OK)))
    for name in ("mkdir", "remove", "unlink"):
        monkeypatch.setattr(os, name, guard(getattr(os, name), lambda *_: True))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = (tmp_path / "vault").resolve()
    write(root, "a.md", "pierogi with farmer cheese")
    write(root, "b.md", "a lighthouse keeper's log")
    return root


def expect_refused(
    capsys: pytest.CaptureFixture[str], root: Path, message: str, modes: dict[str, tuple[str, ...]]
) -> None:
    for mode, argv in modes.items():
        status, out, err = run(capsys, root, *argv)
        assert (status, out, err) == (STORAGE, "", f"error[storage]: {message}\n"), mode


def expect_search_in_memory(capsys: pytest.CaptureFixture[str], root: Path, message: str) -> None:
    status, out, err = run(capsys, root, "search", "pierogi")
    assert status == 0, err
    assert out.startswith(f"{Messages.INDEX_IN_MEMORY} {message}\n")
    assert "[a.md:1]" in out


def test_a_file_where_the_folder_should_be(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the index folder should be")
    monkeypatch.setenv("MEMQUILL_INDEX_DIR", str(blocker / "index"))
    expect_refused(capsys, vault, Messages.INDEX_NOT_A_FOLDER, MODES)
    expect_search_in_memory(capsys, vault, Messages.INDEX_NOT_A_FOLDER)
    status, out, _ = run(capsys, vault, "doctor")
    assert status == 1 and f"search index: {Messages.INDEX_NOT_A_FOLDER} (" in out


@pytest.mark.parametrize("built", [False, True], ids=["new", "built"])
def test_a_read_only_folder(
    tmp_path: Path,
    vault: Path,
    built: bool,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    monkeypatch.setenv("MEMQUILL_INDEX_DIR", str(folder))
    if built:
        assert run(capsys, vault, "index", "--quiet")[0] == 0
        write(vault, "c.md", "a new note the index must take in")
    with refusing_writes(folder) as real:
        if built and not real:
            pytest.skip("SQLite opens an existing index itself: only a real read-only folder")
        expect_refused(capsys, vault, Messages.INDEX_READ_ONLY, MODES)
        expect_search_in_memory(capsys, vault, Messages.INDEX_READ_ONLY)
        status, out, _ = run(capsys, vault, "doctor")
        assert status == 1 and f"search index: {Messages.INDEX_READ_ONLY} (" in out


def test_a_full_disk(
    tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMQUILL_INDEX_DIR", str(tmp_path / "index"))
    assert run(capsys, vault, "index", "--quiet")[0] == 0
    for number in range(40):
        # Words of its own in each note: more than the free room of a new file's pages holds.
        words = " ".join(f"tide{number}x{word}" for word in range(200))
        write(vault, f"more/n{number}.md", f"note {number} about tides {words}\n" * 4)
    prepare = db_module.IndexDatabase._prepare  # pyright: ignore[reportPrivateUsage]

    def full_disk(self: db_module.IndexDatabase) -> None:
        prepare(self)
        if self.path is None:
            return  # kept in memory: no disk to fill
        pages = self.connection.execute("PRAGMA page_count").fetchone()[0]
        self.connection.execute(f"PRAGMA max_page_count = {int(pages) + 1}")

    monkeypatch.setattr(db_module.IndexDatabase, "_prepare", full_disk)
    writing = {mode: argv for mode, argv in MODES.items() if mode != "status"}
    expect_refused(capsys, vault, Messages.INDEX_FULL, writing)
    status, out, err = run(capsys, vault, "index", "--status")
    assert status == 0 and err == "" and "freshness: " in out  # reading needs no space
    expect_search_in_memory(capsys, vault, Messages.INDEX_FULL)


def test_sqlite_says_full_as_the_message_expects(tmp_path: Path) -> None:
    """The full-disk simulation raises what SQLite raises for ENOSPC (SQLITE_FULL)."""
    with contextlib.closing(sqlite3.connect(tmp_path / "x.sqlite3")) as connection:
        connection.execute("CREATE TABLE t(x)")
        connection.execute("PRAGMA max_page_count = 2")
        with pytest.raises(sqlite3.OperationalError) as caught:
            connection.execute("INSERT INTO t VALUES (randomblob(100000))")
    assert caught.value.sqlite_errorname == "SQLITE_FULL"
    assert str(caught.value) == "database or disk is full"
