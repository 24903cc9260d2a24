"""The jobs panel on a real extraction ledger: ``LedgerJobs`` (what ``memquill manage`` uses)."""

from __future__ import annotations

from pathlib import Path

from tests.core.lifecycle_helpers import ExtractModel, new_setup
from tests.manage.manage_helpers import client, post, revision

from memquill.manage import LedgerJobs


async def _failed_workspace(tmp_path: Path) -> Path:
    setup = new_setup(tmp_path)
    extraction = setup.extraction(ExtractModel(["not JSON"]))
    setup.record_all(extraction)
    await extraction.aresume()
    assert setup.job().status == "failed"
    return setup.workspace


async def test_the_panel_shows_the_ledgers_jobs_and_retry_clears_their_wait(tmp_path) -> None:
    workspace = await _failed_workspace(tmp_path)
    page = client(workspace, LedgerJobs(workspace))
    data = page.get("/api/memory").json()["enhancement"]
    (job,) = data["jobs"]
    assert (job["status"], job["reason"], job["canRetry"]) == (
        "failed",
        "extraction_or_storage_failed",
        True,
    )
    assert job["retryAt"] is not None and data["pendingTurns"] == 0

    response = post(page, {"action": "retry", "expectedRevision": revision(workspace)})
    assert response.status_code == 202, response.text
    (after,) = page.get("/api/memory").json()["enhancement"]["jobs"]
    assert after["retryAt"] is None and after["status"] == "failed"


def test_an_unused_workspace_shows_no_jobs_and_stays_untouched(tmp_path) -> None:
    page = client(tmp_path, LedgerJobs(tmp_path))
    data = page.get("/api/memory").json()["enhancement"]
    assert data == {"jobs": [], "capacityReached": False, "pendingTurns": 0, "canRetry": False}
    assert not (tmp_path / ".assistant").exists()


def test_a_corrupt_ledger_is_shown_as_unavailable(tmp_path) -> None:
    (tmp_path / ".assistant").mkdir()
    (tmp_path / ".assistant" / "memory-jobs.json").write_text("{")
    page = client(tmp_path, LedgerJobs(tmp_path))
    assert page.get("/api/memory").json()["enhancement"] == {"error": "unavailable"}
