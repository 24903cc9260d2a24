"""An item put with a time to live shows its expiry where a person looks: ``memquill list``
(text and ``--json``) and the management page (its record JSON and its HTML)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tests.core.test_cli_records import as_json, env, memquill
from tests.manage.manage_helpers import client

from memquill.items import ItemStore

__all__ = ["env"]  # the private-home fixture of the CLI tests

ANA = ("memories", "ana")
EXPIRES = "2026-12-05T10:00Z"


def _workspace(root: Path) -> Path:
    """A namespace with one item put for 10 minutes at 09:50 UTC and one without a TTL."""
    root.mkdir()
    items = ItemStore(root, now=lambda: datetime(2026, 12, 5, 9, 50, tzinfo=UTC))
    items.put(ANA, "brief", {"content": "Ana is in Porto this week."}, ttl=10)
    items.put(ANA, "kept", {"content": "Ana likes tea."})
    return root / "memories" / "ana"


def test_memquill_list_shows_the_expiry_in_text_and_json(
    tmp_path: Path, env: dict[str, str]
) -> None:
    env["MEMQUILL_WORKSPACE"] = str(_workspace(tmp_path / "root"))
    lines = memquill(env, "list").stdout.splitlines()
    brief = next(line for line in lines if "Porto" in line)
    kept = next(line for line in lines if "tea" in line)
    assert f"expires {EXPIRES}" in brief
    assert "expires" not in kept
    records = {r["key"]: r for r in as_json(env, "list")["records"]}
    assert records["brief"]["expires_at"] == "2026-12-05T10:00:00.000Z"
    assert records["kept"]["expires_at"] is None


def test_the_page_carries_and_shows_the_expiry(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path / "root")
    page = client(workspace)
    records = {r["content"]: r for r in page.get("/api/memory").json()["records"]}
    assert records["Ana is in Porto this week."]["expiresAt"] == "2026-12-05T10:00:00.000Z"
    assert records["Ana likes tea."]["expiresAt"] is None
    html = page.get("/").text
    assert html.count("expires") == 1
    assert f'<time datetime="2026-12-05T10:00:00.000Z">{EXPIRES}</time>' in html
