"""Spec 12.3 (memory-service) translated: search, get and recent over a real workspace."""

from __future__ import annotations

from pathlib import Path

from tests.core.query_helpers import NOW, assert_no_leak, engine, remember, write

from memquill.store._codec import HEADER
from memquill.store._store import RecordStore


def test_body_only_term_is_found_and_edits_are_seen_at_once(tmp_path: Path) -> None:
    write(tmp_path, "notes.md", "# Meeting\n\nThe selected color is cerulean.")
    query = engine(tmp_path)
    response = query.search("cerulean")
    assert response.ok
    lines = response.text.split("\n")
    # The line is the matching line, and the excerpt does not repeat the heading shown above it.
    assert lines[0].startswith("1. [notes.md:3] (score: ") and lines[0].endswith(
        "; source: workspace-file)"
    )
    assert lines[1:] == ["Meeting", "The selected color is cerulean."]
    write(tmp_path, "notes.md", "# Meeting\n\nThe selected color is vermilion now.")
    assert query.search("vermilion").result.hits[0].path == "notes.md"
    assert query.search("cerulean").text == "No matching memories found."


def test_filters_before_limit_decay_before_selection_and_ties(tmp_path: Path) -> None:
    for index in range(25):
        write(tmp_path, f"decoy{index:02d}.md", "selected " * 10)
    write(tmp_path, "tagged.md", "---\ntags: [Selected]\n---\nselected")
    query = engine(tmp_path)
    assert [h.path for h in query.search("selected", tags=["#SELECTED"], limit=1).result.hits] == [
        "tagged.md"
    ]
    write(tmp_path, "memory/daily/2026-01-01.md", "release release release release")
    write(tmp_path, "memory/daily/2026-09-21.md", "release")
    daily = query.search("release", file_type="daily", limit=1).result.hits
    assert [h.path for h in daily] == ["memory/daily/2026-09-21.md"]
    write(tmp_path, "c.md", "twin words")
    write(tmp_path, "b.md", "twin words")
    assert [h.path for h in query.search("twin", limit=2).result.hits] == ["b.md", "c.md"]


def test_legacy_files_stay_queryable_when_records_md_is_foreign(tmp_path: Path) -> None:
    write(tmp_path, "memory.md", "Long-term: the team prefers tea.")
    write(tmp_path, "memory/records.md", "# My own memory\nraw private words\n")
    query = engine(tmp_path)
    search = query.search("tea")
    assert search.text.startswith("Managed memory unavailable: Existing records.md is not a")
    assert "1. [memory.md:1]" in search.text
    assert query.get("memory.md").ok
    recent = query.recent().text
    assert "## Long-term Memory\nSource: memory.md\n" in recent
    assert "Managed memory unavailable: Existing records.md" in recent
    for text in (search.text, recent, query.search("raw private").text):
        assert "raw private words" not in text
    denied = query.get("memory/records.md")
    assert (
        denied.text
        == "Memory read failed: Access denied: internal memory history is not query content."
    )


def test_line_ranges_are_one_based_inclusive_beyond_line_200(tmp_path: Path) -> None:
    write(tmp_path, "memory.md", "\n".join(f"line-{i}" for i in range(1, 251)))
    query = engine(tmp_path)
    assert (
        query.get("memory.md", line_start=210, line_end=211).text
        == "Source: memory.md:210 (workspace-file)\nline-210\nline-211"
    )
    reversed_range = query.get("memory.md", line_start=5, line_end=4)
    assert not reversed_range.ok and "line_end" in reversed_range.text
    assert query.get("memory.md", line_start=0).text.startswith("Memory read failed: ")
    write(tmp_path, "cjk.md", "记" * 10_000)
    long = query.get("cjk.md").text
    assert len(long) < 3200 and "[...truncated; next_char_start=3000; keep the same" in long


def test_raw_history_is_never_served_and_only_active_records_project(tmp_path: Path) -> None:
    saved = remember(tmp_path, "Old choice: blue kayak", session="first-session")
    old_id = saved.record_id
    assert old_id is not None
    store = RecordStore(tmp_path)
    corrected = store.correct(
        old_id, "New choice: green canoe", saved.revision, {"kind": "tool", "sessionId": "fix"}
    )
    query = engine(tmp_path)
    assert query.search("kayak").text == "No matching memories found."
    hit = query.search("canoe").result.hits[0]
    assert hit.path.startswith("memory/records/") and hit.kind == "record"
    assert hit.record_id != old_id and hit.record_revision is not None
    assert f"revision:{hit.record_revision}" in hit.source
    assert query.get(f"memory/records/{old_id}.md").text.endswith("not query content.")
    assert query.get("memory/records.md").text.endswith("not query content.")
    page = query.get(hit.path)
    assert page.ok and page.result.content == "New choice: green canoe"
    assert "session:fix" in query.recent().text
    active = corrected.record_ids[0]
    assert active is not None
    store.revoke(
        active,
        corrected.revision if corrected.record_revision is None else corrected.record_revision,
    )
    assert query.search("canoe").text == "No matching memories found."
    assert query.search("kayak").text == "No matching memories found."
    assert query.get(hit.path).text.endswith("not query content.")
    assert "Active Memory" not in query.recent().text
    assert "canoe" not in (tmp_path / "memory/records.md").read_text(encoding="utf-8")


def test_record_hit_renders_provenance_with_the_record_revision(tmp_path: Path) -> None:
    saved = remember(tmp_path, "The user likes cerulean", session="sid-7")
    assert saved.record_id is not None and saved.record_revision is not None
    response = engine(tmp_path).search("cerulean")
    first = response.text.split("\n")[0]
    # The id once (in the path) and the revision's first 16 hex digits; data keeps both whole.
    assert first.startswith(f"1. [memory/records/{saved.record_id}.md:1] (score: ")
    assert first.endswith(
        "; source: memory-record; source-kind:tool; session:sid-7; "
        f"revision:{saved.record_revision[:16]})"
    )
    assert response.text.count(saved.record_id) == 1
    hit = response.result.hits[0]
    assert (hit.record_id, hit.record_revision) == (saved.record_id, saved.record_revision)
    assert hit.source.endswith(f"revision:{saved.record_revision}")
    assert saved.record_revision != saved.revision


def test_search_output_is_capped_at_12000_units(tmp_path: Path) -> None:
    for index in range(20):
        write(tmp_path, f"n{index:02d}.md", "# word " + "x" * 1000)  # headings are not cut
    response = engine(tmp_path).search("word", limit=20)
    assert response.text.endswith("\n[...truncated...]")
    assert len(response.text) == 12_000 + len("\n[...truncated...]")


def test_argument_bounds_fail_as_text(tmp_path: Path) -> None:
    query = engine(tmp_path)
    for response in (
        query.search(""),
        query.search("x" * 2001),
        query.search("x", limit=0),
        query.search("x", limit=21),
        query.search("x", tags=["a"] * 21),
        query.search("x", tags=[""]),
        query.search("x", file_type="other"),  # no such file type
    ):
        assert not response.ok and response.text.startswith("Memory search failed: ")
        assert response.result.error_code == "invalid"
    for bad in (query.recent(days=0), query.recent(days=8)):
        assert bad.text.startswith("Memory recent failed: days: Input should be ")
    assert query.get("a.md", char_start=-1).text.startswith("Memory read failed: char_start")
    assert query.get("").text.startswith("Memory read failed: file_path")


def test_no_terms_and_no_files(tmp_path: Path) -> None:
    query = engine(tmp_path)
    assert query.search("the of and").text == "No matching memories found."
    assert query.recent().text == "No recent memories found."
    assert not (tmp_path / "memory").exists()  # reads create nothing


def test_missing_workspace_fails_without_its_path(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    response = engine(gone).search("x")
    assert not response.ok
    assert_no_leak(response.text, gone)
    assert NOW.tzinfo is not None and HEADER
