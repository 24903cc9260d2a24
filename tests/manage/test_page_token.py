"""Issue 32, item 1: the management page answers only a browser that brought the token.

A real ``memquill manage`` process; the requests come from another local user (``nobody``,
when the test may switch to it) over loopback.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from tests.core.other_user import request
from tests.core.store_helpers import CHILD_TIMEOUT, manual, raw

from memquill import RecordStore

MEMQUILL = str(Path(sys.executable).parent / "memquill")


@contextmanager
def manage_page(home: Path, workspace: Path, *args: str) -> Generator[str]:
    """``memquill manage`` for ``workspace``; yields the address it printed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMQUILL_", "XDG_"))}
    env.update(HOME=str(home), MEMQUILL_DISABLE_PLUGIN_AUTOLOAD="1")
    command = [MEMQUILL, "manage", "--workspace", str(workspace), *args]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as process:
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
            assert first.startswith("memquill manage: http://127.0.0.1:"), first
            yield first.split()[-1]
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(CHILD_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def page_get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    # The server prints its address before it listens: retry only a refused connection.
    for _ in range(int(CHILD_TIMEOUT * 20)):
        try:
            answer = request("GET", url, headers)
        except (subprocess.CalledProcessError, ConnectionRefusedError):
            time.sleep(0.05)
            continue
        return answer.status, answer.headers, answer.body
    raise AssertionError(f"{url} never answered")


def test_no_page_and_no_records_without_the_token(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    RecordStore(workspace).save([manual("The alarm code is on the fridge note.")])
    before = raw(workspace)
    with manage_page(tmp_path / "home", workspace) as printed:
        address = urlsplit(printed)
        root = f"http://{address.netloc}/"
        for path in ("", "api/memory", "assets/page.js", "?token=guess"):
            status, _, body = page_get(root + path)
            assert status == 401, (path, status, body)
            assert b"alarm code" not in body
        refused = request(
            "POST",
            root + "api/memory",
            {"Origin": root.rstrip("/"), "Content-Type": "application/json"},
            json.dumps({"action": "remember", "content": "Owned.", "idempotencyKey": "x"}).encode(),
        )
        assert refused.status == 401
        assert address.path == "/" and address.query.startswith("token=")
        token = address.query.removeprefix("token=")
        # The printed address trades the token for a cookie scoped to the page.
        status, headers, _ = page_get(printed)
        assert status == 303 and headers["location"] == "/"
        cookie = headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        pair = cookie.split(";")[0]
        status, _, body = page_get(root + "api/memory", Cookie=pair)
        assert status == 200 and b"alarm code" in body
        status, _, body = page_get(root + "api/memory", Authorization=f"Bearer {token}")
        assert status == 200
    assert raw(workspace) == before
    token_file = tmp_path / "home" / ".local" / "share" / "memquill" / "http-token"
    assert token_file.read_text("utf-8").strip() == token
    if os.name == "posix":
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    with manage_page(tmp_path / "home", workspace) as again:
        assert again == printed.replace(address.netloc, urlsplit(again).netloc)  # reused


def test_no_token_is_an_explicit_choice(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with manage_page(tmp_path / "home", workspace, "--no-token") as printed:
        assert "token=" not in printed
        status, _, _ = page_get(printed + "api/memory")
        assert status == 200
