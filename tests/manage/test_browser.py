"""The management page in headless Chromium: add, search, correct, forget, retry, by keyboard too.

Every change is read back from ``records.md`` itself, never only from the page. The conflict
is made by the ``memquill`` command in a real subprocess while the page has the fact open.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Generator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect
from tests.core.store_helpers import conversation, manual, raw, tool
from tests.manage.browser_helpers import browser, open_tab, serving
from tests.manage.manage_helpers import FakeJobs, record_revision, seed

from memquill import RecordStore, open_session
from memquill.lifecycle._ledger import turn_id
from memquill.manage import Backend, JobView, ManageServer

__all__ = ["browser"]

MEMQUILL = str(Path(sys.executable).parent / "memquill")
DOCS_IMAGE = Path(__file__).resolve().parents[2] / "docs" / "images" / "manage.png"
PHONE_IMAGE = DOCS_IMAGE.with_name("manage-phone.png")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def jobs() -> FakeJobs:
    return FakeJobs(
        [
            JobView("turn-7", "failed", "request_failed", "2026-11-30T10:00:00.000Z"),
            JobView("turn-3", "completed", None, "2026-11-30T09:00:00.000Z"),
        ],
        pending_turns=2,
    )


@pytest.fixture
def url(workspace: Path, jobs: FakeJobs) -> Generator[str]:
    yield from serving(Backend.open(open_session(workspace), jobs=jobs))


def _active(workspace: Path) -> list[str]:
    return [r.content for r in RecordStore(workspace).snapshot().records if r.status == "active"]


def test_add_search_correct_and_forget(browser: Browser, url: str, workspace: Path) -> None:
    tab = open_tab(browser, url)
    page = tab.page
    page.get_by_label("What should be remembered?").fill("The staging database listens on 5434")
    page.get_by_role("button", name="Remember").click()
    expect(page.locator("#status")).to_have_text("Remembered.")
    assert _active(workspace) == ["The staging database listens on 5434"]
    source = RecordStore(workspace).snapshot().records[0].source
    assert source["kind"] == "manual"

    seed(workspace, "Lunch is at noon")
    page.reload()
    page.get_by_label("Search memory").fill("staging database")
    page.get_by_label("Search memory").press("Enter")
    results = page.locator("#search-results")
    expect(results).to_contain_text("The staging database listens on 5434")
    expect(results).not_to_contain_text("Lunch is at noon")
    assert "q=staging+database" in page.url

    hit = results.locator("article.record").first
    hit.get_by_role("button", name="Edit").click()
    page.get_by_label("Corrected fact").fill("The staging database listens on 15434")
    page.get_by_role("button", name="Save correction").click()
    expect(page.locator("#status")).to_contain_text("Corrected.")
    assert sorted(_active(workspace)) == [
        "Lunch is at noon",
        "The staging database listens on 15434",
    ]

    fact = page.locator("#facts article.record", has_text="15434")
    fact.get_by_role("button", name="Forget").click()
    dialog = page.locator("#forget-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("It never comes back")
    expect(dialog.locator("blockquote")).to_have_text("The staging database listens on 15434")
    dialog.get_by_role("button", name="Forget for good").click()
    expect(page.locator("#status")).to_have_text("Forgotten. It will not come back.")
    assert _active(workspace) == ["Lunch is at noon"]
    # The text's words: its digits alone may occur by chance in a random id or revision.
    assert b"listens on" not in raw(workspace)
    expect(page.locator("#history")).to_contain_text("2 replaced or forgotten versions")
    assert tab.errors == []


def test_a_conflict_from_a_concurrent_cli_write_shows_both_and_retries_on_the_latest(
    browser: Browser, url: str, workspace: Path, tmp_path: Path
) -> None:
    (record_id,) = seed(workspace, "The API listens on port 5434")
    tab = open_tab(browser, url)
    page = tab.page
    page.locator(f"#record-{record_id}").get_by_role("button", name="Edit").click()
    page.get_by_label("Corrected fact").fill("The API listens on port 7000")

    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMQUILL_")}
    env.update(HOME=str(tmp_path / "home"), MEMQUILL_DISABLE_PLUGIN_AUTOLOAD="1")
    done = subprocess.run(
        [
            MEMQUILL,
            "update",
            record_id,
            "The API listens on port 6543",
            "--workspace",
            str(workspace),
            "--revision",
            record_revision(workspace, record_id),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    before = raw(workspace)

    page.get_by_role("button", name="Save correction").click()
    conflict = page.locator(".conflict")
    expect(conflict).to_be_visible()
    expect(conflict).to_contain_text("This fact changed after you opened it")
    expect(conflict.locator("section", has_text="Your edit")).to_contain_text("port 7000")
    expect(conflict.locator("section", has_text="Saved now")).to_contain_text("port 6543")
    assert raw(workspace) == before, "a refused edit wrote nothing"

    conflict.get_by_role("button", name="Save my edit over the latest version").click()
    expect(page.locator("#status")).to_contain_text("Corrected.")
    snapshot = RecordStore(workspace).snapshot()
    active = [r for r in snapshot.records if r.status == "active"]
    assert [r.content for r in active] == ["The API listens on port 7000"]
    previous = snapshot.find(active[0].supersedes or "")
    assert previous is not None and previous.content == "The API listens on port 6543"
    assert tab.errors == []


def test_retry_asks_the_lifecycle_to_resume(
    browser: Browser, url: str, workspace: Path, jobs: FakeJobs
) -> None:
    seed(workspace, "a fact")
    tab = open_tab(browser, url)
    page = tab.page
    panel = page.locator("#jobs")
    expect(panel).to_contain_text("the model request failed")
    expect(panel).to_contain_text("2 turns waiting for the next batch")
    panel.get_by_role("button", name="Retry extraction now").click()
    expect(page.locator("#status")).to_contain_text("Retry requested")
    assert jobs.resumed == 1
    assert tab.errors == []


def test_everything_works_from_the_keyboard(browser: Browser, url: str, workspace: Path) -> None:
    (record_id,) = seed(workspace, "Keep this fact")
    tab = open_tab(browser, url)
    page = tab.page
    page.keyboard.press("Tab")  # the first focusable element is the new-fact box
    expect(page.get_by_label("What should be remembered?")).to_be_focused()
    page.keyboard.type("Typed without a mouse")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_have_text("Remembered.")
    assert sorted(_active(workspace)) == ["Keep this fact", "Typed without a mouse"]

    forget = page.locator(f"#record-{record_id}").get_by_role("button", name="Forget")
    forget.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#forget-dialog")).to_be_visible()
    expect(page.get_by_role("button", name="Keep it")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator("#forget-dialog")).to_be_hidden()
    expect(forget).to_be_focused()
    assert "Keep this fact" in _active(workspace)

    edit = page.locator(f"#record-{record_id}").get_by_role("button", name="Edit")
    edit.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_label("Corrected fact")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.get_by_label("Corrected fact")).to_have_count(0)
    assert tab.errors == []


def test_closing_the_forget_dialog_never_takes_focus_back_from_where_it_moved(
    browser: Browser, url: str, workspace: Path
) -> None:
    # The dialog's close event is queued: focus may move (the next Tab, a script) before it
    # runs, and the handler must not pull focus back to Forget, where Enter would reopen it.
    (record_id,) = seed(workspace, "Keep this fact")
    tab = open_tab(browser, url)
    page = tab.page
    article = page.locator(f"#record-{record_id}")
    article.get_by_role("button", name="Forget").click()
    expect(page.locator("#forget-dialog")).to_be_visible()
    page.evaluate(
        """id => {
            document.getElementById("forget-dialog").close();
            document.querySelector(`#record-${id} [data-action=edit]`).focus();
        }""",
        record_id,
    )
    expect(page.locator("#forget-dialog")).to_be_hidden()
    page.evaluate("() => new Promise(done => setTimeout(done, 0))")  # the queued close event ran
    expect(article.get_by_role("button", name="Edit")).to_be_focused()
    assert "Keep this fact" in _active(workspace)
    assert tab.errors == []


def test_errors_are_shown_in_words(browser: Browser, url: str, workspace: Path) -> None:
    seed(workspace, "a fact")
    page = open_tab(browser, url).page
    page.get_by_label("What should be remembered?").fill("api_key = sk-" + "a1B2c3D4" * 5)
    page.get_by_role("button", name="Remember").click()
    status = page.locator("#status")
    expect(status).to_have_text(
        "Remove credential material before saving memory: it looks like an AI provider API key "
        "and a password, token or key assigned a value. (secret)"
    )
    expect(status).to_have_attribute("role", "alert")
    assert _active(workspace) == ["a fact"]


def test_readable_on_a_narrow_window(browser: Browser, url: str, workspace: Path) -> None:
    seed(workspace, "A fact with a very long unbroken token " + "x" * 300)
    page = open_tab(browser, url, width=360, height=740).page
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    box = page.get_by_role("button", name="Remember").bounding_box()
    assert box is not None and box["x"] + box["width"] <= 360


def test_a_hand_edited_store_names_the_record_and_blocks_changes(
    browser: Browser, url: str, workspace: Path
) -> None:
    seed(workspace, "first fact", "second fact")
    path = workspace / "memory" / "records.md"
    path.write_bytes(path.read_bytes().replace(b"second fact", b"second fact, edited by hand"))
    page = open_tab(browser, url).page
    problem = page.get_by_role("alert").filter(has_text="cannot be read")
    expect(problem).to_contain_text("record 2")
    expect(page.get_by_role("button", name="Remember")).to_be_disabled()


def test_a_repairable_hand_edit_gets_one_message_the_repair(
    browser: Browser, url: str, workspace: Path
) -> None:
    seed(workspace, "first fact", "second fact")
    path = workspace / "memory" / "records.md"
    path.write_bytes(path.read_bytes().replace(b"second fact", b"second fact, edited by hand"))
    problem = open_tab(browser, url).page.get_by_role("alert").filter(has_text="cannot be read")
    expect(problem).to_contain_text("record 2 (counting from 1): its text was edited")
    expect(problem).to_contain_text("memquill can repair that without guessing. (corrupt)")
    expect(problem).to_contain_text(f"memquill doctor --fix --workspace {workspace}")
    expect(problem).not_to_contain_text("restore")
    expect(problem).not_to_contain_text("undo the hand edit")
    expect(problem.get_by_role("button", name="Repair records.md")).to_be_enabled()


def test_an_unrepairable_hand_edit_says_how_to_undo_it(
    browser: Browser, url: str, workspace: Path
) -> None:
    seed(workspace, "first fact", "second fact")
    path = workspace / "memory" / "records.md"
    marker = b"<!-- memory-record {"
    path.write_bytes(path.read_bytes().replace(marker, b"<!-- memory-recrd {", 1))
    page = open_tab(browser, url).page
    problem = page.get_by_role("alert").filter(has_text="cannot be read")
    expect(problem).to_contain_text("record 1 (counting from 1)")
    expect(problem).to_contain_text("memquill cannot repair it without guessing (record 1: its")
    expect(problem).to_contain_text("undo the hand edit, or put back a copy of the file")
    expect(problem).not_to_contain_text("can repair that")
    expect(page.get_by_role("button", name="Repair records.md")).to_have_count(0)
    expect(page.get_by_role("button", name="Remember")).to_be_disabled()


def test_a_hand_edit_is_repaired_from_the_page_after_a_backup(
    browser: Browser, url: str, workspace: Path
) -> None:
    seed(workspace, "first fact", "second fact")
    path = workspace / "memory" / "records.md"
    edited = path.read_bytes().replace(b"second fact", b"second fact, edited by hand")
    path.write_bytes(edited)
    page = open_tab(browser, url).page
    problem = page.get_by_role("alert").filter(has_text="cannot be read")
    expect(problem).to_contain_text("contentLength says")
    expect(problem).to_contain_text("its edited text becomes a new version")
    page.get_by_role("button", name="Repair records.md").click()
    expect(page.locator("#status")).to_contain_text("Repaired. The file as it was is kept in")
    expect(page.locator("#facts article.record .content")).to_have_text(
        ["second fact, edited by hand", "first fact"]
    )
    assert _active(workspace) == ["first fact", "second fact, edited by hand"]
    (backup,) = path.parent.glob(".records-backup-*.md")
    assert backup.read_bytes() == edited


def _realistic(root: Path) -> Backend:
    """A workspace as a person has it after a few days: facts from every source, a correction,
    a forgotten fact, and extraction jobs with their real 64-hex ids."""
    start = datetime(2026, 11, 27, 9, 30, tzinfo=UTC)
    clock = iter(start + timedelta(hours=7 * n) for n in range(100))
    workspace = root / "notes"
    workspace.mkdir()
    store = RecordStore(workspace, now=lambda: next(clock))
    store.save([manual("The team's standup is at 9:30 on weekdays", key="a")])
    store.save([tool("Deploys go through the staging cluster first", "b", session="chat-42")])
    saved = store.save(
        [conversation("Prefers answers with code examples", "c", session="chat-42", role="user")]
    )
    port = store.save([manual("The staging database listens on port 5434", key="d")])
    store.correct(
        port.record_ids[0] or "", "The staging database listens on port 15434", port.revision
    )
    store.save([manual("Old office address: 1 Main St", key="e")])
    old = store.snapshot().records[-1]
    store.revoke(old.id, store.snapshot().revision)
    store.save([tool("Release notes are written in CHANGELOG.md", "f", session="chat-42")])
    assert saved.status == "saved"
    jobs = FakeJobs(
        [
            JobView(
                turn_id("chat-42", "a9"),
                "failed",
                "request_failed",
                "2026-11-29T18:02:11.000Z",
                retry_at=1_796_000_000_000,
            ),
            JobView(turn_id("chat-42", "a6"), "completed", None, "2026-11-29T17:40:03.000Z"),
            JobView(turn_id("chat-42", "a3"), "nothing", None, "2026-11-29T17:12:45.000Z"),
            JobView(turn_id("chat-41", "a3"), "completed", None, "2026-11-28T16:05:30.000Z"),
        ],
        pending_turns=1,
    )
    return Backend(
        open_session(workspace), jobs, now=lambda: datetime(2026, 11, 30, 12, tzinfo=UTC)
    )


PHONE = {"width": 390, "height": 844}
PHONE_HEIGHT_BOUND = 2_600
"""px: the realistic workspace (five facts, a history, four jobs) at phone width (2,354 px
now). It was 5,181 px while the jobs table wrapped 64-hex ids two characters a line."""


def test_readable_on_a_phone(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    backend = _realistic(tmp_path)
    with ManageServer(backend, token="browser-test-token").running() as url:
        tab = open_tab(browser, url, **PHONE)
        page = tab.page
        width, height = page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
        )
        assert width <= PHONE["width"], "no horizontal scrolling"
        assert height <= PHONE_HEIGHT_BOUND, f"the page is {height} px tall"
        # Job ids: eight characters shown, the whole id one tap away and selectable as one.
        full = turn_id("chat-42", "a9")
        job = page.locator("#jobs li.job").first
        expect(job).to_contain_text("failed: the model request failed.")
        expect(job).to_contain_text("Retry not before 2026-11-30 00:53 UTC.")
        expect(job).to_contain_text("Updated 2026-11-29 18:02 UTC.")
        expect(job.locator("summary")).to_have_text(f"job {full[:8]}")
        expect(job.locator("code.full")).to_be_hidden()
        job.locator("summary").click()
        expect(job.locator("code.full")).to_be_visible()
        expect(job.locator("code.full")).to_have_text(full)
        assert job.locator("code.full").evaluate("e => getComputedStyle(e).userSelect") == "all"
        # No column is left empty: a job without a reason says only what it has.
        expect(page.locator("#jobs li.job p").nth(1)).to_have_text(
            "saved facts. Updated 2026-11-29 17:40 UTC."
        )
        assert page.locator("#jobs table").count() == 0
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert tab.errors == []


def test_screenshot_for_the_docs(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The docs' screenshots. ``MEMQUILL_UPDATE_SCREENSHOT=1`` writes docs/images/manage.png
    (a desktop window) and docs/images/manage-phone.png (390 px wide)."""
    monkeypatch.setenv("HOME", str(tmp_path))  # the page shows the workspace as ~/notes
    with ManageServer(_realistic(tmp_path), token="browser-test-token").running() as url:
        images = {
            DOCS_IMAGE: open_tab(browser, url, width=900, height=1100).page,
            PHONE_IMAGE: open_tab(browser, url, **PHONE).page,
        }
        shots = {path: page.screenshot(full_page=True) for path, page in images.items()}
    for path, image in shots.items():
        assert image.startswith(b"\x89PNG") and re.search(rb"IHDR", image[:32])
        if os.environ.get("MEMQUILL_UPDATE_SCREENSHOT") == "1":
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(image)
