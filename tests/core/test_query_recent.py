"""``recent`` (spec 6.7 and the recent cases of 12.5), with active records newest first."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.core.query_helpers import assert_no_leak, engine, write

from memquill.errors import Messages
from memquill.query import _engine
from memquill.query._models import RecentResult, RecentSection
from memquill.query._render import RESPONSE_UNITS, render_recent
from memquill.store._results import Candidate
from memquill.store._store import RecordStore


def test_sections_order_limits_and_truncation(tmp_path: Path) -> None:
    write(tmp_path, "Memory.md", "  \n" + "L" * 600 + "\n")
    for day in ("2026-09-18", "2026-09-19", "2026-09-20", "2026-09-21"):
        write(tmp_path, f"memory/daily/{day}.md", f"notes of {day}")
    write(tmp_path, "memory/daily/2026-09-22.md", "   ")
    write(tmp_path, "memory/daily/notes.md", "not a daily name")
    write(tmp_path, "daily/2026-09-23.md", "ignored: memory/daily exists")
    ticks = iter(range(1, 10))
    store = RecordStore(tmp_path, now=lambda: datetime(2026, 9, 22, 0, next(ticks), tzinfo=UTC))
    older = store.save([Candidate("older fact", {"kind": "manual"}, "k1")])
    newer = store.save([Candidate("newer fact " + "n" * 600, {"kind": "manual"}, "k2")])
    response = engine(tmp_path, store=store).recent(days=3)
    parts = response.text.split("\n\n")
    assert (
        parts[0] == "## Long-term Memory\nSource: Memory.md\n" + "L" * 500 + "\n[...truncated...]"
    )
    assert (
        parts[1]
        == "## Daily Memory: 2026-09-21.md\nSource: memory/daily/2026-09-21.md\nnotes of 2026-09-21"
    )
    assert parts[2].startswith("## Daily Memory: 2026-09-20.md")
    assert parts[3].startswith(f"## Active Memory\nSource: memory/records/{newer.record_id}.md (")
    # One heading for every remembered fact (a change from the spec, which repeats it).
    assert parts[4].startswith(f"Source: memory/records/{older.record_id}.md (")
    assert response.text.count("## Active Memory") == 1
    assert older.record_revision is not None
    assert f"revision:{older.record_revision[:16]})" in parts[4]  # the short form
    assert parts[3].endswith("n" * (500 - len("newer fact ")) + "\n[...truncated...]")
    assert len(parts) == 5
    kinds = [section.kind for section in response.result.sections]
    assert kinds == ["longterm", "daily", "daily", "record", "record"]


def test_daily_falls_back_to_daily_folder(tmp_path: Path) -> None:
    write(tmp_path, "daily/2026-09-21.md", "root daily")
    assert "Source: daily/2026-09-21.md\nroot daily" in engine(tmp_path).recent(days=1).text


def test_unsafe_daily_file_is_isolated_and_never_reveals_paths(tmp_path: Path) -> None:
    root = tmp_path / "work"
    write(root, "memory.md", "long-term fact")
    write(root, "memory/daily/2026-09-20.md", "valid daily")
    write(tmp_path, "outside.md", "OUTSIDE-CONTENT")
    (root / "memory/daily/2026-09-21.md").symlink_to(tmp_path / "outside.md")
    (root / "memory/daily/2026-09-19.md").symlink_to(tmp_path / "missing.md")
    text = engine(root).recent().text
    assert "## Long-term Memory\nSource: memory.md\nlong-term fact" in text
    assert "## Daily Memory: 2026-09-20.md" in text
    # Warnings first, as in search: the 12,000-unit cut can never drop them.
    assert text.startswith(
        "Partial recent memory: Skipped memory/daily/2026-09-21.md: Access denied: path "
        "resolves outside workspace (symlink).\nSkipped memory/daily/2026-09-19.md: Memory "
        "source not found.\n\n## Long-term Memory"
    )
    assert_no_leak(text, root, "OUTSIDE-CONTENT", str(tmp_path))


def test_longterm_symlinked_outside_reports_access_denied(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    write(tmp_path, "elsewhere.md", "ELSEWHERE")
    (root / "memory.md").symlink_to(tmp_path / "elsewhere.md")
    write(root, "MEMORY.md", "second candidate")
    text = engine(root).recent().text
    assert "Skipped memory.md: Access denied: path resolves outside workspace (symlink)." in text
    assert_no_leak(text, root, "ELSEWHERE")


def test_broken_longterm_link_counts_as_absent(tmp_path: Path) -> None:
    (tmp_path / "memory.md").symlink_to(tmp_path / "nowhere.md")
    write(tmp_path, "longterm/summary.md", "summary text")
    text = engine(tmp_path).recent().text
    assert text == "## Long-term Memory\nSource: longterm/summary.md\nsummary text"


def test_daily_directory_outside_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    write(tmp_path, "elsewhere/2026-09-21.md", "FOREIGN")
    (root / "daily").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    text = engine(root).recent().text
    assert text == (
        "Partial recent memory: Skipped daily memory: Access denied: daily directory resolves "
        "outside workspace."
    )


def test_corrupt_store_shows_a_plain_line(tmp_path: Path) -> None:
    write(tmp_path, "memory/records.md", "# Not managed\n")
    write(tmp_path, "memory.md", "kept")
    text = engine(tmp_path).recent().text
    assert text.startswith(f"Managed memory unavailable: {Messages.FOREIGN} ")
    assert text.endswith("\n\n## Long-term Memory\nSource: memory.md\nkept")


def test_no_more_records_than_the_text_can_show(tmp_path: Path, monkeypatch: Any) -> None:
    # Batches of 40 share a time, so ties are ordered too (the later in the file first).
    ticks = iter(range(60))
    store = RecordStore(tmp_path, now=lambda: datetime(2026, 9, 22, 0, next(ticks), tzinfo=UTC))
    for batch in range(12):
        store.save(
            [Candidate(f"fact {batch}.{n}", {"kind": "manual"}, f"k{batch}.{n}") for n in range(40)]
        )
    capped = engine(tmp_path, store=store).recent(days=1)
    assert _engine.RECENT_RECORDS == 375
    monkeypatch.setattr(_engine, "RECENT_RECORDS", 10**6)
    every = engine(tmp_path, store=store).recent(days=1)
    assert len(every.result.sections) == 480
    assert capped.result.sections == every.result.sections[:375]
    assert capped.text == every.text
    # The shortest part a record can have in the text, the bound's own reason.
    assert every.text.count("Source: memory/records/") < 375
    newest = [section.content for section in every.result.sections[:41]]
    assert newest[:2] == ["fact 11.39", "fact 11.38"] and newest[40] == "fact 10.39"


def test_the_bound_is_never_less_than_the_records_the_text_can_show() -> None:
    # The shortest part a record can have in the text: no id, no provenance, one character.
    def text(count: int) -> str:
        part = RecentSection(kind="record", path="memory/records/.md", content="x", source="")
        return render_recent(RecentResult(sections=(part,) * count))

    shortest = len(text(3)) - len(text(2))  # a part and the blank line before it
    assert shortest >= 32
    assert _engine.RECENT_RECORDS * shortest >= RESPONSE_UNITS
