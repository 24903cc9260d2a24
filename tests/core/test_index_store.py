"""The index file: damage, outdated formats, crashes, several processes, a change watcher."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.core.index_helpers import indexed, populate, queries, reference
from tests.core.query_helpers import write

from memquill.errors import Messages
from memquill.index import _search_index as search_index_module
from memquill.index._location import index_path
from memquill.index._search_index import DAMAGED_WARNING, IndexSearcher, SearchIndex
from memquill.index._view import NoteTable
from memquill.query import SearchArgs

ROOT_DIR = Path(__file__).resolve().parents[2]


def built(root: Path, folder: Path) -> Path:
    """Index ``root`` into ``folder``; the index file."""
    searcher = IndexSearcher(folder, notice=None, racy_seconds=0)
    try:
        searcher.index(root).refresh()
    finally:
        searcher.close()
    return index_path(root, folder)


def answers_match(root: Path, folder: Path, seed: int = 1, rounds: int = 6) -> list[str]:
    """Search through a fresh searcher; every answer must equal the full scan's (but for a
    leading damage warning). The texts returned."""
    searcher = IndexSearcher(folder, notice=None)
    texts: list[str] = []
    try:
        for arguments in queries(random.Random(seed), rounds):
            expected = reference(root).search(**arguments)
            got = indexed(root, searcher).search(**arguments)
            texts.append(got.text)
            text = got.text
            for prefix in (DAMAGED_WARNING + "\n\n", DAMAGED_WARNING + "\n"):
                text = text.removeprefix(prefix)
            assert text == expected.text
            assert got.result.hits == expected.result.hits
    finally:
        searcher.close()
    return texts


@pytest.mark.parametrize("damage", ["garbage", "truncated", "blob", "notes"])
def test_a_damaged_index_is_rebuilt_with_a_warning_and_never_served(
    tmp_path: Path, damage: str
) -> None:
    root, folder = tmp_path / "vault", tmp_path / "index"
    populate(root, random.Random(3), 80)
    root = root.resolve()
    path = built(root, folder)
    if damage == "garbage":
        data = path.read_bytes()
        path.write_bytes(data[:4096] + random.Random(1).randbytes(len(data) - 4096))
    elif damage == "truncated":
        with path.open("r+b") as handle:
            handle.truncate(path.stat().st_size // 3)
    else:
        with sqlite3.connect(path) as connection:
            # Every postings block (whichever terms the first search reads), or one page of
            # notes (their figures: every search reads them all).
            table, key = (
                ("postings", "term || ' ' || lo") if damage == "blob" else ("pages", "page")
            )
            limit = -1 if damage == "blob" else 1
            found = connection.execute(f"SELECT {key}, data FROM {table} LIMIT {limit}")
            for row_key, blob in found.fetchall():
                flipped = bytearray(blob)
                flipped[10] ^= 0xFF
                connection.execute(
                    f"UPDATE {table} SET data = ? WHERE {key} = ?", (bytes(flipped), row_key)
                )
    assert IndexSearcher(folder, notice=None).index(root).check() != []
    texts = answers_match(root, folder)
    assert texts[0].startswith(DAMAGED_WARNING)
    assert not any(text.startswith(DAMAGED_WARNING) for text in texts[1:])
    assert IndexSearcher(folder, notice=None).index(root).check() == []


def test_an_index_of_another_format_is_rebuilt_silently(tmp_path: Path) -> None:
    root, folder = tmp_path / "vault", tmp_path / "index"
    populate(root, random.Random(4), 30)
    path = built(root.resolve(), folder)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE meta SET value = 'memquill-index 0' WHERE key = 'format'")
    texts = answers_match(root.resolve(), folder)
    assert not any(DAMAGED_WARNING in text for text in texts)


def test_an_unusable_index_folder_keeps_the_index_in_memory(tmp_path: Path) -> None:
    write(tmp_path, "vault/a.md", "pierogi with farmer cheese")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the index folder should be")
    searcher = IndexSearcher(blocker / "index", notice=None)
    try:
        first = indexed(tmp_path / "vault", searcher).search(query="pierogi")
        again = indexed(tmp_path / "vault", searcher).search(query="pierogi")
    finally:
        searcher.close()
    assert first.text.startswith(f"{Messages.INDEX_IN_MEMORY} {Messages.INDEX_NOT_A_FOLDER}\n")
    assert "1. [a.md:1]" in first.text
    assert again.text == reference(tmp_path / "vault").search(query="pierogi").text


def test_kill_9_during_memquill_index_leaves_a_usable_index(tmp_path: Path) -> None:
    root, folder = tmp_path.resolve() / "vault", tmp_path / "index"
    populate(root, random.Random(5), 2500)
    environment = {**os.environ, "MEMQUILL_INDEX_DIR": str(folder)}
    main = "import sys; from memquill.cli import main; sys.exit(main())"
    process = subprocess.Popen(
        [sys.executable, "-c", main, "--workspace", str(root), "index", "--quiet"],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    path = index_path(root, folder)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists() and _pages(path) >= 1:
            break
        time.sleep(0.05)
    assert process.poll() is None, "the build finished before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    index = IndexSearcher(folder, notice=None).index(root)
    assert index.check() == []
    status = index.status()
    assert status.exists and status.stale  # part of the vault was indexed, not all
    answers_match(root, folder, seed=6, rounds=4)
    # Notes read within the racy window of their last change (every note the killed build
    # read, and those just edited) are read again once they settle, so freshness is only
    # promised after it has passed (a short window here, 2 s by default).
    time.sleep(0.3)
    settled = IndexSearcher(folder, notice=None, racy_seconds=0.25).index(root)
    settled.refresh()
    assert settled.status().fresh


def _pages(path: Path) -> int:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as connection:
            return int(connection.execute("SELECT count(*) FROM pages").fetchone()[0])
    except sqlite3.Error:
        return 0


SHARER = """
import json, sys
from datetime import UTC, datetime
from pathlib import Path
from memquill.index._search_index import IndexSearcher
from memquill.query import MemoryQuery, SearchArgs

root, folder, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
searcher = IndexSearcher(folder, notice=None)
query = MemoryQuery(root, now=lambda: datetime(2026, 9, 22, 12, tzinfo=UTC), searcher=searcher)
for _ in range(rounds):
    query.search(SearchArgs(query="alpha pierogi"))
line = sys.stdin.readline()  # the parent finished editing
result = query.search(SearchArgs(query="alpha pierogi cheese", limit=20))
print(json.dumps([(hit.path, hit.score, hit.snippet) for hit in result.hits]))
"""


@pytest.mark.parametrize("watch", ["1", "0"], ids=["watcher", "walk"])
def test_several_processes_share_one_index_while_notes_change(tmp_path: Path, watch: str) -> None:
    root, folder = tmp_path.resolve() / "vault", tmp_path / "index"
    rng = random.Random(8)
    populate(root, rng, 150)
    environment = {**os.environ, "MEMQUILL_INDEX_WATCH": watch}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", SHARER, str(root), str(folder), "25"],
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for step in range(15):
        write(root, f"churn/n{step}.md", f"pierogi alpha {step} " * (step + 1))
        victim = root / f"churn/n{step - 3}.md"
        if step >= 3 and step % 2:
            victim.unlink()
        time.sleep(0.05)
    expected = reference(root).query.search(SearchArgs(query="alpha pierogi cheese", limit=20))
    wanted = [[hit.path, hit.score, hit.snippet] for hit in expected.hits]
    for process in processes:
        out, err = process.communicate("done\n", timeout=300)
        assert process.returncode == 0, err
        assert json.loads(out) == wanted
    assert IndexSearcher(folder, notice=None).index(root).check() == []


def test_the_watcher_sees_a_same_size_rewrite_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMQUILL_INDEX_WATCH", raising=False)  # this test is the watcher's
    write(tmp_path, "a.md", "alpha bravo")
    index = SearchIndex(tmp_path.resolve(), location=":memory:", notice=None, racy_seconds=0)
    searcher_root = tmp_path.resolve()
    now = datetime(2026, 9, 22, tzinfo=UTC)
    try:
        assert [h.document.path for h in index.search("bravo", now=now)[0]] == ["a.md"]
        # Same size, same second: only the event tells the index the text changed.
        (searcher_root / "a.md").write_text("alpha delta")
        assert index.search("bravo", now=now)[0] == []
        assert [h.document.path for h in index.search("delta", now=now)[0]] == ["a.md"]
        (searcher_root / "sub").mkdir()
        write(searcher_root, "sub/b.md", "delta echo")
        (searcher_root / "a.md").rename(searcher_root / "sub" / "c.md")
        paths = sorted(h.document.path for h in index.search("delta", now=now)[0])
        assert paths == ["sub/b.md", "sub/c.md"]
        (searcher_root / "sub").rename(searcher_root / "moved")
        paths = sorted(h.document.path for h in index.search("delta", now=now)[0])
        assert paths == ["moved/b.md", "moved/c.md"]
    finally:
        index.close()


def test_the_first_search_of_a_large_vault_says_it_is_indexing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(search_index_module, "NOTICE_FROM", 20)
    populate(tmp_path, random.Random(9), 30)
    searcher = IndexSearcher(tmp_path / "index", racy_seconds=0)
    try:
        indexed(tmp_path, searcher).search(query="alpha")
        assert capsys.readouterr().err.startswith("Indexing 30 notes in ")
        indexed(tmp_path, searcher).search(query="alpha")
        assert capsys.readouterr().err == ""
    finally:
        searcher.close()


def test_only_a_large_write_holds_the_larger_page_cache(tmp_path: Path) -> None:
    # A search's connection keeps a small SQLite page cache; a build's large transactions get
    # a larger one, and give it back when they end, committed or rolled back.
    from memquill.index._db import IndexDatabase

    database = IndexDatabase(tmp_path / "index.sqlite3", str(tmp_path))

    def cache() -> int:
        return int(database.connection.execute("PRAGMA cache_size").fetchone()[0])

    try:
        reading = cache()
        with database.writing():
            assert cache() == reading
        with database.writing(large=True):
            assert cache() < reading  # negative: KiB, larger in magnitude
        assert cache() == reading
        with pytest.raises(RuntimeError), database.writing(large=True):
            raise RuntimeError
        assert cache() == reading
        with database.reading():
            assert cache() == reading
    finally:
        database.close()


def test_a_note_table_kept_current_holds_what_one_read_afresh_holds(tmp_path: Path) -> None:
    """A process's note table, brought up to date page by page through edits, removals, a
    rename, dated notes and notes on a new page, holds exactly what a table read afresh from
    the same index holds (every row, by path; the totals; the day and month counts)."""
    root = tmp_path.resolve() / "vault"
    for number in range(300):  # three pages of notes
        write(root, f"n/{number:03}.md", f"---\ntags: [t{number % 7}]\n---\nalpha {number}")
    write(root, "daily/2026-01-02.md", "a dated note")
    index = SearchIndex(
        root, location=tmp_path / "index.sqlite3", notice=None, racy_seconds=0, watch=False
    )
    try:
        index.refresh()
        for number in range(0, 300, 37):
            write(root, f"n/{number:03}.md", "bravo " * (number + 1))
        for number in range(5, 300, 41):
            (root / f"n/{number:03}.md").unlink()
        (root / "n/011.md").rename(root / "n/renamed.md")
        (root / "daily/2026-01-02.md").unlink()
        write(root, "daily/2026-02-03.md", "another dated note")
        for number in range(300, 330):
            write(root, f"n/{number:03}.md", f"charlie {number}")
        index.refresh()
        kept = index._notes  # pyright: ignore[reportPrivateUsage]
        afresh = NoteTable()
        with index._open().reading() as connection:  # pyright: ignore[reportPrivateUsage]
            afresh.refresh(connection)

        def state(notes: NoteTable) -> tuple[object, ...]:
            rows = {path: notes.row(doc_id) for path, doc_id in notes.ids.items()}
            figures = (notes.length_total, notes.bytes_total, notes.average_length)
            return rows, figures, notes.day_of, notes.days, notes.months, len(notes)

        assert state(kept) == state(afresh)
        assert len(kept) == 300 - 8 + 30 + 1 and list(kept.day_of.values()) == [739650]
        assert kept.get("n/renamed.md") is not None and kept.get("n/011.md") is None
    finally:
        index.close()
