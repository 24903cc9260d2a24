"""``memquill manage`` as a user runs it: a real process on a free loopback port."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.core.plugin_helpers import write_distribution
from tests.core.store_helpers import CHILD_TIMEOUT, manual, raw

from memquill import RecordStore

MEMQUILL = str(Path(sys.executable).parent / "memquill")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MEMQUILL_", "XDG_", "BROWSER"))
    }
    environment.update(HOME=str(tmp_path / "home"), MEMQUILL_DISABLE_PLUGIN_AUTOLOAD="1")
    return environment


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@contextmanager
def _start(env: dict[str, str], *args: str) -> Generator[tuple[subprocess.Popen[str], str]]:
    """``memquill manage ARGS``; yields the process and the page's address (without the token,
    which :func:`_authorised` then sends as a bearer token)."""
    with subprocess.Popen(
        [MEMQUILL, "manage", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
            assert first.startswith("memquill manage: http://127.0.0.1:"), first
            printed = first.split()[-1]
            base, _, query = printed.partition("?")
            _TOKENS[base] = query.removeprefix("token=")
            _PRINTED[base] = printed
            yield process, base
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(CHILD_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


_TOKENS: dict[str, str] = {}
_PRINTED: dict[str, str] = {}


def _authorised(request: urllib.request.Request) -> urllib.request.Request:
    """``request`` with the bearer token of the page it goes to."""
    for base, token in _TOKENS.items():
        if request.full_url.startswith(base):
            request.add_header("Authorization", f"Bearer {token}")
    return request


def _get(url: str, deadline: float = CHILD_TIMEOUT) -> dict[str, object]:
    """GET JSON, retrying while the freshly printed server comes up."""
    until = time.monotonic() + deadline
    while True:
        try:
            request = _authorised(urllib.request.Request(url))
            with urllib.request.urlopen(request, timeout=CHILD_TIMEOUT) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > until:
                raise
            time.sleep(0.05)


def test_manage_serves_the_workspace_on_a_free_loopback_port(
    env: dict[str, str], workspace: Path
) -> None:
    with _start(env, "--workspace", str(workspace)) as (process, url):
        state = _get(url + "api/memory")
        assert state["records"] == []
        body = json.dumps(
            {
                "action": "remember",
                "content": "Saved through the served page",
                "expectedRevision": state["revision"],
                "idempotencyKey": "cli-test",
            }
        ).encode()
        request = urllib.request.Request(
            url + "api/memory",
            data=body,
            headers={"Content-Type": "application/json", "Origin": url.rstrip("/")},
        )
        with urllib.request.urlopen(_authorised(request), timeout=CHILD_TIMEOUT) as response:
            assert json.loads(response.read())["status"] == "saved"
        assert process.poll() is None
    records = RecordStore(workspace).snapshot().records
    assert [r.content for r in records] == ["Saved through the served page"]
    assert records[0].source["kind"] == "manual"


def test_open_hands_the_url_to_the_browser(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    opened = tmp_path / "opened.txt"
    fake = tmp_path / "fake-browser"
    fake.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    fake.chmod(0o755)
    env["BROWSER"] = f"{fake} %s"
    with _start(env, "--workspace", str(workspace), "--open") as (_process, url):
        until = time.monotonic() + CHILD_TIMEOUT
        while not opened.exists() or not opened.read_text():
            assert time.monotonic() < until, "the browser was never opened"
            time.sleep(0.05)
        assert opened.read_text().strip() == _PRINTED[url]  # the address with the token


def test_a_busy_port_and_a_missing_workspace_are_reported(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    with _start(env, "--workspace", str(workspace)) as (_process, url):
        port = url.rsplit(":", 1)[1].strip("/")
        busy = subprocess.run(
            [MEMQUILL, "manage", "--workspace", str(workspace), "--port", port],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert busy.returncode == 2
        assert f"cannot listen on 127.0.0.1:{port}" in busy.stderr
    missing = subprocess.run(
        [MEMQUILL, "manage", "--workspace", str(tmp_path / "nowhere")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert missing.returncode != 0
    assert missing.stderr.startswith("error[")
    assert not (tmp_path / "nowhere").exists()


def test_without_the_web_extra_it_says_how_to_install_it(env: dict[str, str]) -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["starlette"] = None  # as if the web extra were not installed
        sys.modules["uvicorn"] = None
        from memquill.cli import main
        sys.exit(main(["manage", "--workspace", sys.argv[1]]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(Path.cwd())],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 2
    assert "pip install 'memquill[web]'" in done.stderr


CANARY_PLUGIN = """
import re

from memquill.plugins import RegexDetector
from memquill import hookimpl


@hookimpl
def memquill_register_secret_detectors(register):
    register(RegexDetector("canary", re.compile(r"hunter2-canary")))
"""


def test_plugin_detectors_guard_the_page_writes(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    site = write_distribution(
        tmp_path / "site",
        {"memquill_tmp_canary": CANARY_PLUGIN},
        {"tmp-canary": "memquill_tmp_canary"},
        name="memquill-tmp-canary",
    )
    env.pop("MEMQUILL_DISABLE_PLUGIN_AUTOLOAD")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    RecordStore(workspace).save([manual("The team deploys on Tuesdays.")])
    before = raw(workspace)
    with _start(env, "--workspace", str(workspace)) as (_process, url):
        state = _get(url + "api/memory")
        body = json.dumps(
            {
                "action": "remember",
                "content": "the vault code is hunter2-canary, keep it",
                "expectedRevision": state["revision"],
                "idempotencyKey": "canary",
            }
        ).encode()
        request = urllib.request.Request(
            url + "api/memory",
            data=body,
            headers={"Content-Type": "application/json", "Origin": url.rstrip("/")},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(_authorised(request), timeout=CHILD_TIMEOUT)
        assert refused.value.code == 400
        assert json.loads(refused.value.read())["error"] == "secret"
        refused.value.close()
    assert raw(workspace) == before
