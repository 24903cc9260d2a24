"""Helpers shared by the management page tests: a workspace with facts, a client, requests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient
from tests.core.store_helpers import manual

from memquill import RecordStore, open_session
from memquill.manage import Backend, JobsSource, JobsView, JobView, create_app

PORT = 8765
ORIGIN = f"http://127.0.0.1:{PORT}"
JSON_HEADERS = {"Origin": ORIGIN, "Content-Type": "application/json"}
TOKEN = "page-token-for-the-tests"
"""The token every :func:`client` sends (as a bearer token)."""


@dataclass
class FakeJobs:
    """A jobs source with a scripted status that counts Retry presses."""

    jobs: Sequence[JobView] = ()
    broken: bool = False
    resumed: int = 0
    pending_turns: int = 0
    calls: list[str] = field(default_factory=list[str])

    def status(self) -> JobsView:
        if self.broken:
            raise OSError("the ledger cannot be read")
        return JobsView(self.jobs, pending_turns=self.pending_turns)

    def resume(self) -> None:
        self.resumed += 1


def seed(workspace: Path, *facts: str) -> list[str]:
    """Save ``facts`` (manual) and return their record ids."""
    result = RecordStore(workspace).save([manual(fact) for fact in facts])
    return [record_id for record_id in result.record_ids if record_id is not None]


def client(
    workspace: Path, jobs: JobsSource | None = None, *, port: int | None = PORT
) -> TestClient:
    """A test client of the page of ``workspace``, addressed as ``http://127.0.0.1:8765``."""
    app = create_app(Backend.open(open_session(workspace), jobs=jobs), token=TOKEN, port=port)
    return TestClient(app, base_url=ORIGIN, headers={"Authorization": f"Bearer {TOKEN}"})


def revision(workspace: Path) -> str:
    return RecordStore(workspace).snapshot().revision


def record_revision(workspace: Path, record_id: str) -> str:
    snapshot = RecordStore(workspace).snapshot()
    record = snapshot.find(record_id)
    assert record is not None
    return snapshot.record_revision(record)


def post(test_client: TestClient, payload: Any, **headers: str) -> Any:
    """POST ``payload`` as JSON with same-origin headers (overridable per test)."""
    return test_client.post("/api/memory", json=payload, headers={**JSON_HEADERS, **headers})
