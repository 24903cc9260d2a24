"""The management page shows what a workspace on several machines waits for, and settles a
diverged fact when a person chooses a version."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.core.store_helpers import raw
from tests.manage.manage_helpers import client, post, revision, seed

from memquill import RecordStore


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def diverge(workspace: Path, tmp_path: Path) -> None:
    """One fact, corrected one way here and another way on a second machine, then merged."""
    [first] = seed(workspace, "The cat is Miso")
    base = raw(workspace)
    other = tmp_path / "other"
    (other / "memory").mkdir(parents=True)
    (other / "memory" / "records.md").write_bytes(base)
    here, there = RecordStore(workspace), RecordStore(other)
    here.correct(first, "The cat is Mochi", revision(workspace))
    there.correct(first, "The cat is Momo", there.snapshot().revision)
    here.merge((other / "memory" / "records.md").read_bytes(), base)


def test_a_diverged_fact_is_shown_with_both_versions_and_settled_by_keep(
    workspace: Path, tmp_path: Path
) -> None:
    diverge(workspace, tmp_path)
    page = client(workspace)
    [found] = page.get("/api/memory").json()["doctor"]["diverged"]
    texts = {version["content"] for version in found["versions"]}
    assert texts == {"The cat is Mochi", "The cat is Momo"}
    html = page.get("/").text
    assert html.count('class="keep-version"') == 2 and "corrected differently" in html
    other = next(v for v in found["versions"] if v["id"] != found["activeId"])
    before = raw(workspace)
    stale = post(page, {"action": "keep", "id": other["id"], "expectedRevision": "0" * 64})
    assert (stale.status_code, stale.json()["error"]) == (409, "conflict")
    assert raw(workspace) == before
    kept = post(
        page, {"action": "keep", "id": other["id"], "expectedRevision": other["recordRevision"]}
    )
    assert kept.status_code == 200, kept.json()
    state = page.get("/api/memory").json()
    assert state["doctor"]["diverged"] == []
    active = [r["content"] for r in state["records"] if r["status"] == "active"]
    assert active == [other["content"]]


def test_a_conflict_copy_is_named_on_the_page(workspace: Path) -> None:
    seed(workspace, "a fact")
    copy = workspace / "memory" / "records (laptop's conflicted copy 2026-03-01).md"
    copy.write_bytes(raw(workspace))
    page = client(workspace)
    doctor = page.get("/api/memory").json()["doctor"]
    assert doctor["conflictCopies"] == [f"memory/{copy.name}"] and not doctor["ok"]
    html = page.get("/").text
    assert "memquill sync resolve" in html and "Needs attention." in html
