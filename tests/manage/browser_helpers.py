"""A real browser for the page tests: Debian's Chromium driven by Playwright.

Playwright never downloads a browser here: it launches the system's ``chromium``. Without it the
browser tests are skipped locally, but fail under CI (``CI`` set), where ``.ci/run`` installs it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Generator
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from memquill.manage import Backend, ManageServer

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# The sandbox needs user namespaces a root CI job does not have; the page under test is ours.
FLAGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]
TIMEOUT_MS = 30_000
"""Only stops a hung browser from hanging the suite; never a speed assertion."""


def _require_chromium() -> None:
    if os.path.exists(CHROMIUM):
        return
    message = f"no Chromium at {CHROMIUM}: apt-get install chromium (.ci/run does)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Generator[Browser]:
    _require_chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@dataclass
class Tab:
    """A page in its own browser context, and every script error it reported."""

    page: Page
    errors: list[str] = field(default_factory=list[str])

    def console(self, note: ConsoleMessage) -> None:
        # The API answers refusals and conflicts with 4xx statuses on purpose; the browser
        # logs each one. Any other console error (a missing asset, a script error) counts.
        if note.type == "error" and not note.location.get("url", "").endswith("/api/memory"):
            self.errors.append(note.text)


def open_tab(browser: Browser, url: str, *, width: int = 1100, height: int = 900) -> Tab:
    """A fresh page (own storage) at ``url``; script errors and console errors are collected."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(TIMEOUT_MS)
    tab = Tab(context.new_page())
    tab.page.on("pageerror", lambda error: tab.errors.append(str(error)))
    tab.page.on("console", tab.console)
    tab.page.goto(url)
    return tab


def serving(backend: Backend) -> Generator[str]:
    """Serve ``backend`` on a free loopback port for the duration; yields the URL."""
    with ManageServer(backend, token="browser-test-token").running() as url:
        yield url
