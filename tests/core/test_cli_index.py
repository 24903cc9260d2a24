"""``memquill index``: build with a progress bar or quietly, ``--status``, ``--rebuild``,
and ``doctor``'s line about the index."""

from __future__ import annotations

import functools
import io
import json
import random
import sqlite3
import time
from pathlib import Path

import pytest
from tests.core.index_helpers import populate
from tests.core.query_helpers import write

from memquill.cli import index as index_command, main
from memquill.index._location import index_dir, index_path
from memquill.index._search_index import IndexSearcher


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _racy_window(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """The racy window of the searchers the next ``memquill index`` runs open (2 s by default)."""
    monkeypatch.setattr(
        index_command, "IndexSearcher", functools.partial(IndexSearcher, racy_seconds=seconds)
    )


def _changed_ns(path: Path) -> int:
    info = path.stat()
    return max(info.st_mtime_ns, info.st_ctime_ns)


def test_index_builds_quietly_and_summarises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No racy window: whether a note counts as settled never depends on how fast this runs.
    _racy_window(monkeypatch, 0)
    populate(tmp_path, random.Random(1), 40)
    ws = ("--workspace", str(tmp_path))
    status, out, _ = run(capsys, *ws, "index", "--status")
    assert status == 0 and "not built yet" in out
    status, out, err = run(capsys, *ws, "index", "--quiet")
    assert status == 0 and err == ""
    notes = len(list(tmp_path.rglob("*.md")))
    assert out.startswith(f"Indexed {notes:,} notes: {notes:,} read, 0 removed, in ")
    assert str(index_path(tmp_path.resolve(), index_dir())) in out
    status, out, _ = run(capsys, *ws, "index", "--status", "--json")
    data = json.loads(out)
    assert data["exists"] and data["notes"] == notes and data["bytes"] > 0
    write(tmp_path, "fresh.md", "a fresh note")
    next(tmp_path.rglob("n*.md")).unlink()
    status, out, _ = run(capsys, *ws, "index", "--status")
    assert "freshness: 1 note to read, 1 to remove at the next search" in out
    status, out, _ = run(capsys, *ws, "index", "--json")
    assert (json.loads(out)["read"], json.loads(out)["removed"]) == (1, 1)
    status, out, _ = run(capsys, *ws, "index", "--status")
    assert "freshness: up to date" in out


def test_a_note_read_within_the_racy_window_is_read_once_more_after_it_settles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window is chosen from what the first run took, so a slow machine cannot move the
    read out of it: the run read the note before it ended, so less than ``window`` after the
    note changed."""
    ws = ("--workspace", str(tmp_path))
    note = write(tmp_path, "fresh.md", "a fresh note")
    _racy_window(monkeypatch, 0)
    status, out, _ = run(capsys, *ws, "index", "--json")
    assert status == 0 and json.loads(out)["read"] == 1
    window_ns = time.time_ns() - _changed_ns(note) + 1_000_000
    _racy_window(monkeypatch, window_ns / 1e9)
    time.sleep(window_ns / 1e9)  # let the note settle
    assert time.time_ns() - _changed_ns(note) > window_ns
    status, out, _ = run(capsys, *ws, "index", "--status")
    assert "freshness: 1 note to read, 0 to remove at the next search" in out
    status, out, _ = run(capsys, *ws, "index", "--json")
    assert json.loads(out)["read"] == 1  # read again: the first read was inside the window
    status, out, _ = run(capsys, *ws, "index", "--status")
    assert "freshness: up to date" in out  # this read was after the window: settled
    status, out, _ = run(capsys, *ws, "index", "--json")
    assert json.loads(out)["read"] == 0


def test_a_terminal_gets_a_progress_bar(tmp_path: Path) -> None:
    terminal = Terminal()
    bar = index_command._Bar.on(terminal)  # pyright: ignore[reportPrivateUsage]
    assert bar is not None and index_command._Bar.on(io.StringIO()) is None  # pyright: ignore[reportPrivateUsage]
    for done in (0, 50, 100):
        bar.update(done, 100)
    bar.finish()
    shown = terminal.getvalue()
    assert "[" in shown and "100/100 notes" in shown and "files/s" in shown and "ETA" in shown
    assert shown.endswith("\n")


def test_the_eta_counts_from_the_first_notes_done(monkeypatch: pytest.MonkeyPatch) -> None:
    # Workers take a second to start; then 100 notes a second: the bar must not promise
    # the pace of the first second.
    clock = iter([0.0, 1.0, 1.5])
    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    terminal = Terminal()
    bar = index_command._Bar.on(terminal)  # pyright: ignore[reportPrivateUsage]
    assert bar is not None
    bar.update(10, 160)
    bar.update(60, 160)
    shown = terminal.getvalue().split("\r")
    assert shown[1].endswith("10/160 notes  … files/s  ETA …")
    assert shown[2].endswith("60/160 notes  100 files/s  ETA 1.0 s")


def test_rebuild_and_doctor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    populate(tmp_path, random.Random(2), 10)
    ws = ("--workspace", str(tmp_path))
    assert run(capsys, *ws, "index", "--quiet")[0] == 0
    status, out, _ = run(capsys, *ws, "doctor")
    assert status == 0 and "search index: ok, " in out and out.endswith("healthy\n")
    path = index_path(tmp_path.resolve(), index_dir())
    with sqlite3.connect(path) as connection:
        page, blob = connection.execute("SELECT page, data FROM pages LIMIT 1").fetchone()
        damaged = bytes(blob[:-1]) + bytes([blob[-1] ^ 1])  # its checksum no longer matches
        connection.execute("UPDATE pages SET data = ? WHERE page = ?", (damaged, page))
    status, out, _ = run(capsys, *ws, "doctor")
    assert status == 1 and "search index: " in out and "checksum" in out
    assert out.endswith("problems found\n")
    status, out, _ = run(capsys, *ws, "doctor", "--fix")
    assert status == 0 and "search index: discarded; the next search rebuilds it" in out
    status, out, _ = run(capsys, *ws, "index", "--rebuild", "--quiet")
    assert status == 0 and "0 removed" in out
    assert run(capsys, *ws, "doctor")[0] == 0
