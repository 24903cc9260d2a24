"""The management API: every action, and every refusal leaves records.md byte-identical."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.core.store_helpers import raw, records_path
from tests.manage.manage_helpers import (
    JSON_HEADERS,
    ORIGIN,
    FakeJobs,
    client,
    post,
    record_revision,
    revision,
    seed,
)

from memquill import RecordStore
from memquill.errors import Messages
from memquill.manage import JobView
from memquill.manage._app import HTTP_STATUS, MAX_BODY_BYTES


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def test_get_returns_revision_every_status_with_provenance_and_no_store(workspace: Path) -> None:
    first, second = seed(workspace, "The deploy port is 5434", "Editor is Helix")
    store = RecordStore(workspace)
    store.correct(first, "The deploy port is 15434", revision(workspace))
    store.revoke(second, revision(workspace))
    response = client(workspace).get("/api/memory")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    data = response.json()
    assert data["revision"] == revision(workspace)
    statuses = sorted(record["status"] for record in data["records"])
    assert statuses == ["active", "revoked", "superseded"]
    by_status = {record["status"]: record for record in data["records"]}
    active = by_status["active"]
    assert active["content"] == "The deploy port is 15434"
    assert active["provenance"] == "added by hand"
    assert active["supersedes"] == first
    assert active["recordRevision"] == record_revision(workspace, active["id"])
    assert data["enhancement"] == {"error": "unavailable"}
    assert data["doctor"]["ok"] is True


def test_get_shows_the_jobs_status_or_unavailable_when_the_ledger_is_unreadable(
    workspace: Path,
) -> None:
    jobs = FakeJobs([JobView("turn-1", "failed", "request_failed", retry_at=1_800_000_000_000)])
    data = client(workspace, jobs).get("/api/memory").json()
    assert data["enhancement"]["jobs"][0] == {
        "id": "turn-1",
        "status": "failed",
        "reason": "request_failed",
        "updatedAt": None,
        "retryAt": 1_800_000_000_000,
        "requiresConfigurationChange": False,
        "canRetry": True,
    }
    jobs.broken = True
    assert client(workspace, jobs).get("/api/memory").json()["enhancement"] == {
        "error": "unavailable"
    }


def test_an_exhausted_job_cannot_be_retried(workspace: Path) -> None:
    jobs = FakeJobs([JobView("turn-1", "unavailable", "retry_exhausted")])
    data = client(workspace, jobs).get("/api/memory").json()
    assert data["enhancement"]["canRetry"] is False


def test_remember_saves_a_manual_fact_once_per_key(workspace: Path) -> None:
    page = client(workspace)
    body = {
        "action": "remember",
        "content": "Standup is at 9:30",
        "expectedRevision": revision(workspace),
        "idempotencyKey": "draft-1",
    }
    first = post(page, body)
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "saved"
    snapshot = RecordStore(workspace).snapshot()
    (record,) = snapshot.records
    assert record.content == "Standup is at 9:30"
    assert record.source["kind"] == "manual"
    assert first.json() == {
        "status": "saved",
        "recordId": record.id,
        "recordRevision": snapshot.record_revision(record),
        "revision": snapshot.revision,
    }
    again = post(page, {**body, "expectedRevision": snapshot.revision})
    assert again.json()["status"] == "duplicate"
    assert again.json()["recordId"] == record.id


def test_correct_keeps_the_old_version_and_accepts_the_record_revision(workspace: Path) -> None:
    (record_id,) = seed(workspace, "Lunch at noon")
    seed(workspace, "An unrelated fact saved later")
    response = post(
        client(workspace),
        {
            "action": "correct",
            "id": record_id,
            "content": "Lunch at one",
            "expectedRevision": record_revision(workspace, record_id),
        },
    )
    assert response.status_code == 200, response.text
    snapshot = RecordStore(workspace).snapshot()
    new = snapshot.find(response.json()["recordId"])
    assert new is not None and new.content == "Lunch at one" and new.supersedes == record_id
    assert new.source["kind"] == "manual"
    old = snapshot.find(record_id)
    assert old is not None and old.status == "superseded"


def test_forget_revokes_every_version(workspace: Path) -> None:
    (record_id,) = seed(workspace, "Old address: 1 Main St")
    response = post(
        client(workspace),
        {"action": "forget", "id": record_id, "expectedRevision": revision(workspace)},
    )
    assert response.status_code == 200
    assert response.json()["status"] == "saved"
    assert b"1 Main St" not in raw(workspace)
    assert [r.status for r in RecordStore(workspace).snapshot().records] == ["revoked"]


def test_retry_resumes_jobs_after_a_revision_check(workspace: Path) -> None:
    seed(workspace, "a fact")
    jobs = FakeJobs([JobView("turn-1", "failed", "request_failed")])
    page = client(workspace, jobs)
    response = post(page, {"action": "retry", "expectedRevision": revision(workspace)})
    assert response.status_code == 202
    assert response.json()["retryRequested"] is True
    assert jobs.resumed == 1
    stale = post(page, {"action": "retry", "expectedRevision": "0" * 64})
    assert stale.status_code == 409
    assert stale.json()["message"] == "Workspace or memory changed."
    assert jobs.resumed == 1


def test_retry_without_an_extraction_lifecycle_says_unavailable(workspace: Path) -> None:
    response = post(client(workspace), {"action": "retry", "expectedRevision": revision(workspace)})
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"


def test_a_stale_edit_shows_the_latest_version_of_that_fact(workspace: Path) -> None:
    (record_id,) = seed(workspace, "Port 5434")
    seen = record_revision(workspace, record_id)
    newer = RecordStore(workspace).correct(record_id, "Port 6543", seen)
    before = raw(workspace)
    response = post(
        client(workspace),
        {"action": "correct", "id": record_id, "content": "Port 7000", "expectedRevision": seen},
    )
    assert response.status_code == 409
    data = response.json()
    assert (data["error"], data["message"]) == ("conflict", Messages.STALE)
    assert data["revision"] == revision(workspace)
    assert data["latest"]["id"] == newer.record_id
    assert data["latest"]["content"] == "Port 6543"
    assert raw(workspace) == before


STATUS_CASES: list[tuple[str, dict[str, Any], int, str]] = [
    (
        "unknown id",
        {"action": "forget", "id": "0" * 8 + "-0000-0000-0000-" + "0" * 12},
        404,
        "not_found",
    ),
    (
        "blank content",
        {"action": "remember", "content": "   ", "idempotencyKey": "k"},
        400,
        "invalid",
    ),
    (
        "a secret",
        {"action": "remember", "content": "token = ghp_" + "a1B2" * 9, "idempotencyKey": "k"},
        400,
        "secret",
    ),
]


@pytest.mark.parametrize(("case", "body", "status", "code"), STATUS_CASES, ids=lambda c: str(c))
def test_store_errors_get_clear_statuses_and_words(
    workspace: Path, case: str, body: dict[str, Any], status: int, code: str
) -> None:
    seed(workspace, "a fact")
    before = raw(workspace)
    response = post(client(workspace), {**body, "expectedRevision": revision(workspace)})
    assert (response.status_code, response.json()["error"]) == (status, code), case
    assert response.json()["message"]
    assert raw(workspace) == before


def test_a_corrupt_store_is_422_and_names_the_record(workspace: Path) -> None:
    seed(workspace, "first fact", "second fact")
    path = records_path(workspace)
    path.write_bytes(path.read_bytes().replace(b"second fact", b"second fact, edited"))
    before = raw(workspace)
    page = client(workspace)
    state = page.get("/api/memory").json()
    assert state["revision"] is None
    assert state["error"]["code"] == "corrupt"
    assert state["error"]["recordIndex"] == 1
    response = post(
        page,
        {"action": "remember", "content": "x", "expectedRevision": "a" * 64, "idempotencyKey": "k"},
    )
    assert response.status_code == 422
    assert response.json()["recordIndex"] == 1
    assert raw(workspace) == before


def _hand_edited(workspace: Path, edit: bytes = b"second fact, edited") -> bytes:
    seed(workspace, "first fact", "second fact")
    path = records_path(workspace)
    path.write_bytes(path.read_bytes().replace(b"second fact", edit))
    return raw(workspace)


def test_a_hand_edit_is_repaired_as_shown_with_a_backup(workspace: Path) -> None:
    before = _hand_edited(workspace)
    page = client(workspace)
    doctor = page.get("/api/memory").json()["doctor"]
    assert doctor["diagnosis"]["recordIndex"] == 1
    assert "contentLength" in doctor["diagnosis"]["reason"]
    plan = doctor["repair"]
    assert plan["refused"] is None and plan["changes"]
    response = post(page, {"action": "repair", "expectedRevision": plan["revision"]})
    assert response.status_code == 200, response.json()
    answer = response.json()
    assert answer["changes"] == plan["changes"]
    assert (workspace / answer["backup"]).read_bytes() == before
    state = page.get("/api/memory").json()
    assert state["revision"] == answer["revision"] == revision(workspace)
    active = [r["content"] for r in state["records"] if r["status"] == "active"]
    assert active == ["first fact", "second fact, edited"]
    edited = next(r for r in state["records"] if r["content"] == "second fact, edited")
    assert edited["source"]["kind"] == "manual"


def test_a_repair_of_a_file_changed_since_the_page_showed_it_is_a_conflict(
    workspace: Path,
) -> None:
    _hand_edited(workspace)
    page = client(workspace)
    shown = page.get("/api/memory").json()["doctor"]["repair"]["revision"]
    path = records_path(workspace)
    path.write_bytes(path.read_bytes().replace(b"first fact", b"first fact, edited too"))
    before = raw(workspace)
    response = post(page, {"action": "repair", "expectedRevision": shown})
    assert (response.status_code, response.json()["error"]) == (409, "conflict")
    assert raw(workspace) == before
    assert not list(records_path(workspace).parent.glob(".records-backup-*"))


def test_a_repair_that_would_guess_is_refused_in_words(workspace: Path) -> None:
    before = _hand_edited(workspace, b"   ")  # a blank fact: keep it, or drop it?
    page = client(workspace)
    plan = page.get("/api/memory").json()["doctor"]["repair"]
    assert plan["refused"] and not plan["changes"]
    response = post(page, {"action": "repair", "expectedRevision": plan["revision"]})
    assert (response.status_code, response.json()["error"]) == (422, "corrupt")
    assert "without guessing" in response.json()["message"]
    assert response.json()["recordIndex"] == 1
    assert raw(workspace) == before


def test_a_repair_of_a_readable_store_is_a_conflict(workspace: Path) -> None:
    seed(workspace, "a fact")
    before = raw(workspace)
    response = post(
        client(workspace), {"action": "repair", "expectedRevision": revision(workspace)}
    )
    assert (response.status_code, response.json()["error"]) == (409, "conflict")
    assert raw(workspace) == before


# -- refusals: nothing changes, byte for byte ------------------------------------------------


def _remember(workspace: Path) -> dict[str, Any]:
    return {
        "action": "remember",
        "content": "should never be saved",
        "expectedRevision": revision(workspace),
        "idempotencyKey": "refused",
    }


REFUSALS: list[tuple[str, dict[str, str], int, str]] = [
    ("foreign origin", {"Origin": "http://evil.example"}, 403, "forbidden"),
    ("origin on another port", {"Origin": "http://127.0.0.1:9999"}, 403, "forbidden"),
    ("null origin", {"Origin": "null"}, 403, "forbidden"),
    ("cross-site fetch", {"Sec-Fetch-Site": "cross-site"}, 403, "forbidden"),
    ("same-site fetch", {"Sec-Fetch-Site": "same-site"}, 403, "forbidden"),
    (
        "rebound host name",
        {"Host": "evil.example:8765", "Origin": "http://evil.example:8765"},
        403,
        "forbidden",
    ),
    (
        "LAN address",
        {"Host": "192.168.1.20:8765", "Origin": "http://192.168.1.20:8765"},
        403,
        "forbidden",
    ),
    (
        "host on another port",
        {"Host": "127.0.0.1:9999", "Origin": "http://127.0.0.1:9999"},
        403,
        "forbidden",
    ),
    ("form content type", {"Content-Type": "application/x-www-form-urlencoded"}, 415, "invalid"),
    ("text content type", {"Content-Type": "text/plain"}, 415, "invalid"),
    ("other charset", {"Content-Type": "application/json; charset=latin-1"}, 415, "invalid"),
]


@pytest.mark.parametrize(("case", "headers", "status", "code"), REFUSALS, ids=lambda c: str(c))
def test_header_refusals_change_nothing(
    workspace: Path, case: str, headers: dict[str, str], status: int, code: str
) -> None:
    seed(workspace, "a fact")
    before = raw(workspace)
    response = post(client(workspace), _remember(workspace), **headers)
    assert (response.status_code, response.json()["error"]) == (status, code), case
    assert response.json()["message"]
    assert response.headers["cache-control"] == "no-store"
    assert raw(workspace) == before


def test_a_post_without_origin_is_refused(workspace: Path) -> None:
    seed(workspace, "a fact")
    before = raw(workspace)
    page = client(workspace)
    response = page.post(
        "/api/memory",
        content=json.dumps(_remember(workspace)),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 403
    assert "Origin" in response.json()["message"]
    assert raw(workspace) == before


def test_reads_from_another_site_or_host_are_refused(workspace: Path) -> None:
    seed(workspace, "a private fact")
    page = client(workspace)
    for headers in (
        {"Origin": "http://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Host": "evil.example:8765"},
        {"Host": "localhost.evil.example:8765"},
    ):
        for path in ("/", "/api/memory", "/assets/page.js"):
            response = page.get(path, headers=headers)
            assert response.status_code == 403, (path, headers)
            assert "a private fact" not in response.text
    assert page.get("/api/memory", headers={"Sec-Fetch-Site": "none"}).status_code == 200
    for host in ("localhost:8765", "[::1]:8765", "127.0.0.1:8765"):
        assert page.get("/api/memory", headers={"Host": host}).status_code == 200, host


def test_any_port_is_accepted_when_the_app_does_not_know_its_own(workspace: Path) -> None:
    page = client(workspace, port=None)
    assert page.get("/api/memory", headers={"Host": "localhost:1234"}).status_code == 200
    assert page.get("/api/memory", headers={"Host": "localhost"}).status_code == 200


BAD_BODIES: list[tuple[str, bytes, str]] = [
    ("malformed JSON", b'{"action": "remember",', "Invalid request."),
    ("not an object", b'["remember"]', "Invalid request."),
    ("invalid UTF-8", b'{"action": "\xff"}', "Invalid request."),
    ("deep nesting", b"[" * 100_000 + b"]" * 100_000, "Request is too large."),
    (
        "duplicate key",
        b'{"action": "retry", "action": "retry", "expectedRevision": "' + b"a" * 64 + b'"}',
        "Invalid request.",
    ),
]


@pytest.mark.parametrize(("case", "body", "message"), BAD_BODIES, ids=lambda c: str(c)[:20])
def test_bad_bodies_are_refused(workspace: Path, case: str, body: bytes, message: str) -> None:
    seed(workspace, "a fact")
    before = raw(workspace)
    response = client(workspace).post("/api/memory", content=body, headers=JSON_HEADERS)
    assert response.status_code in (400, 413), case
    assert response.json()["message"] == message
    assert raw(workspace) == before


def test_deep_json_within_the_limit_is_invalid_not_a_crash(workspace: Path) -> None:
    body = b"[" * 30_000 + b"]" * 30_000
    response = client(workspace).post("/api/memory", content=body, headers=JSON_HEADERS)
    assert (response.status_code, response.json()["error"]) == (400, "invalid")


def test_a_body_over_the_limit_is_refused_even_without_content_length(workspace: Path) -> None:
    seed(workspace, "a fact")
    before = raw(workspace)
    body = _remember(workspace)
    body["content"] = "x" * MAX_BODY_BYTES
    page = client(workspace)
    response = post(page, body)
    assert (response.status_code, response.json()["message"]) == (413, "Request is too large.")

    def chunks() -> Any:
        data = json.dumps(body).encode()
        for start in range(0, len(data), 4096):
            yield data[start : start + 4096]

    streamed = page.post("/api/memory", content=chunks(), headers=JSON_HEADERS)
    assert "content-length" not in {k.lower() for k in streamed.request.headers}
    assert streamed.status_code == 413
    assert raw(workspace) == before


def test_the_largest_fact_fits_the_body_limit(workspace: Path) -> None:
    content = "記" * 16_000  # 16,000 UTF-16 units, 48,000 UTF-8 bytes
    body = {**_remember(workspace), "content": content}
    response = post(client(workspace), body)
    assert response.status_code == 200, response.text
    assert RecordStore(workspace).snapshot().records[0].content == content


EXTRA_KEYS: list[tuple[str, dict[str, Any], str]] = [
    ("workspace path", {"workspace": "/etc"}, "Invalid request."),
    ("provenance", {"source": {"kind": "tool", "sessionId": "s"}}, "Invalid request."),
    ("id on remember", {"id": "0" * 36}, "Invalid request."),
]


@pytest.mark.parametrize(("case", "extra", "message"), EXTRA_KEYS, ids=lambda c: str(c))
def test_extra_keys_are_refused(
    workspace: Path, case: str, extra: dict[str, Any], message: str
) -> None:
    seed(workspace, "a fact")
    before = raw(workspace)
    response = post(client(workspace), {**_remember(workspace), **extra})
    assert (response.status_code, response.json()["message"]) == (400, message), case
    assert raw(workspace) == before


def test_field_problems_are_named(workspace: Path) -> None:
    (record_id,) = seed(workspace, "a fact")
    before = raw(workspace)
    page = client(workspace)
    cases = [
        (
            {"action": "remember", "content": "x", "idempotencyKey": "k"},
            "expectedRevision must be the 64-character revision the page showed.",
        ),
        (
            {**_remember(workspace), "expectedRevision": revision(workspace)[:16]},
            "expectedRevision must be the 64-character revision the page showed.",
        ),
        (
            {**_remember(workspace), "expectedRevision": revision(workspace).upper()},
            "expectedRevision must be the 64-character revision the page showed.",
        ),
        ({"action": "forget", "expectedRevision": revision(workspace)}, "Memory ID is required."),
        ({"action": "compact", "expectedRevision": revision(workspace)}, "Unknown action."),
        ({"expectedRevision": revision(workspace)}, "Unknown action."),
        (
            {
                "action": "forget",
                "id": record_id,
                "expectedRevision": revision(workspace),
                "content": "x",
            },
            "Invalid request.",
        ),
        (
            {
                "action": "remember",
                "content": 5,
                "expectedRevision": revision(workspace),
                "idempotencyKey": "k",
            },
            "Invalid request.",
        ),
    ]
    for body, message in cases:
        response = post(page, body)
        assert (response.status_code, response.json()["message"]) == (400, message), body
    assert raw(workspace) == before


def test_a_stale_revision_changes_nothing(workspace: Path) -> None:
    (record_id,) = seed(workspace, "a fact")
    stale = revision(workspace)
    seed(workspace, "another fact")
    before = raw(workspace)
    page = client(workspace)
    for body in (
        {**_remember(workspace), "expectedRevision": stale},
        {"action": "forget", "id": record_id, "expectedRevision": "f" * 64},
        {"action": "correct", "id": record_id, "content": "new", "expectedRevision": "f" * 64},
    ):
        response = post(page, body)
        assert (response.status_code, response.json()["error"]) == (409, "conflict"), body
    assert raw(workspace) == before


def test_other_methods_and_paths(workspace: Path) -> None:
    page = client(workspace)
    assert page.put("/api/memory", headers=JSON_HEADERS).status_code == 405
    assert page.get("/assets/../records.md").status_code == 404
    assert page.get("/assets/secrets.txt").status_code == 404
    response = page.get("/assets/page.js")
    assert response.headers["content-type"].startswith("text/javascript")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert ORIGIN.startswith("http://127.0.0.1")


def test_the_docs_list_every_status_the_api_gives() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "manage.md").read_text("utf-8")
    for code, status in HTTP_STATUS.items():
        assert re.search(rf"^\| {status} [^|]*`{code}`", text, re.MULTILINE), (code, status)


def test_only_the_http_packages_import_the_web_extra() -> None:
    """The page (``manage``) and the HTTP guard both servers share (``web``) alone."""
    core = Path(__file__).resolve().parents[2] / "packages" / "core" / "src" / "memquill"
    offenders = [
        str(path.relative_to(core))
        for path in core.rglob("*.py")
        if re.search(r"^\s*(from|import) (starlette|uvicorn)\b", path.read_text("utf-8"), re.M)
        and path.parent.name not in {"manage", "web"}
    ]
    assert offenders == []
    assert "memquill.manage" not in (core / "__init__.py").read_text("utf-8")
