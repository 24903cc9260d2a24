"""The page's health panel shows what fills the store (issue 33, item 6): capacity in use,
history depth, compacted versions and the bytes they still hold, tombstones."""

from __future__ import annotations

from pathlib import Path

from tests.manage.manage_helpers import client, revision, seed

from memquill import RecordStore
from memquill.manage._page import doctor_panel
from memquill.store._doctor import history_figures


def test_the_health_panel_shows_history_depth_compaction_and_capacity(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    first, second = seed(workspace, "The deploy port is 5434", "Editor is Helix")
    store = RecordStore(workspace)
    first = store.correct(first, "The deploy port is 15434", revision(workspace)).record_id or ""
    store.correct(first, "The deploy port is 25434", revision(workspace))
    store.compact(revision(workspace))
    store.revoke(second, revision(workspace))
    figures = history_figures(store.snapshot().records)
    page = client(workspace)

    doctor = page.get("/api/memory").json()["doctor"]
    assert doctor["percentUsed"] == store.doctor().percent_used
    assert doctor["history"] == {
        "live": 1,
        "superseded": 2,
        "compacted": 2,
        "families": 1,
        "versions": 3,
        "deepest": 3,
        "meanDepth": 3.0,
        "tombstones": 1,
        "liveBytes": figures.live_bytes,
        "historyBytes": 0,
        "compactedBytes": figures.compacted_bytes,
        "tombstoneBytes": figures.tombstone_bytes,
    }

    html = page.get("/").text
    assert (
        "<li>Facts: 1 live, 2 earlier versions (2 compacted: their text dropped, "
        f"{figures.compacted_bytes / 1024:,.1f} KiB of metadata kept), 1 forgotten fact</li>"
    ) in html
    assert "<li>History depth: up to 3 versions of a fact, 3 on average</li>" in html


def test_the_health_panel_says_a_store_without_a_quota_has_none() -> None:
    """A database workspace without a quota has no capacity (``maxBytes`` null): the panel
    gives the space used and says there is no quota, with no meter of a made-up bound."""
    doctor: dict[str, object] = {"ok": True, "usedBytes": 2048, "maxBytes": None}
    html = doctor_panel(doctor)
    assert "<li>Space used: 2.0 KiB; no quota set</li>" in html
    assert "<meter" not in html
    bounded = doctor_panel({**doctor, "maxBytes": 4096, "percentUsed": 50.0})
    assert "Space used</span>: 2.0 KiB of 4.0 KiB (50.0%) <meter" in bounded
