"""Runs a docs shell block as a reader would type it, command by command, and probes servers.

The reader's machine is a temporary ``HOME``: ``~/notes`` (a workspace with a long-term note and
a daily note), ``~/chat.jsonl`` (a transcript) and ``~/myapp`` (a model module, on
``PYTHONPATH`` as an installed one would be). This checkout's ``.venv/bin`` comes first on
``PATH``. Each command runs in ``bash -euo pipefail``; what it exports carries over to the next.
A command that serves until stopped is started, probed by a real client, and stopped.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from datetime import date
from pathlib import Path

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent
from tests.core.lifecycle_helpers import write_transcript
from tests.doc_blocks import ROOT, Block
from tests.meta.doc_checks import ALL_TOOLS
from tests.meta.snippet_kinds import Shell

VENV_BIN = Path(sys.executable).parent
CEILING = 120.0
"""Seconds a command or a server start may take: a hang guard, never a speed test."""

# `_mq id TEXT` / `_mq rev TEXT`: the 8-character id / record revision of the active fact TEXT;
# `_mq store`: the store revision's first 8. What a reader copies from `memquill list`.
LOOKUP = r"""_mq() { memquill list --json | python3 -c 'import json, sys
state = json.load(sys.stdin)
if sys.argv[1] == "store":
    print(state["revision"][:8]); raise SystemExit
(record,) = [r for r in state["records"] if r["status"] == "active" and r["content"] == sys.argv[2]]
print((record["id"] if sys.argv[1] == "id" else record["record_revision"])[:8])' "$@"; }
"""
# A reader's own model module: a TextModel that quotes each user message as a fact (light: the
# `--model` option imports it in every command that names it).
MODELS = """import json

from memquill.enhance import ModelIdentity


class QuotingModel:
    identity = ModelIdentity("custom", "doc-quoting", b"doc-key")

    async def generate(self, prompt, *, max_tokens):
        turns = json.loads(prompt.user)["turns"]
        return json.dumps([
            {"messageId": t["messageId"], "content": "The user said: " + t["user"],
             "evidence": " ".join(t["user"].split()[:4])}
            for t in turns
        ])


extractor = QuotingModel()
"""


def make_home(home: Path) -> Path:
    """A reader's home folder: notes, a transcript, a model module."""
    notes = home / "notes"
    (notes / "memory" / "daily").mkdir(parents=True)
    (notes / "memory.md").write_text("# Long-term memory\n\n- Deploys are on Tuesdays.\n")
    daily = notes / "memory" / "daily" / f"{date.today().isoformat()}.md"
    daily.write_text("# Today\n\n- Reviewed the deploy checklist.\n")
    write_transcript(home / "chat.jsonl")
    (home / "myapp").mkdir()
    (home / "myapp" / "__init__.py").write_text(MODELS)
    (home / "myapp" / "models.py").write_text(MODELS)
    yesterday = time.time() - 86_400  # a reader's notes were not written a second ago
    for path in notes.rglob("*"):
        os.utime(path, (yesterday, yesterday))
    return home


def environment(home: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """A login shell's variables for ``home``: none of the test run's ``MEMQUILL_*`` settings."""
    kept = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMQUILL_", "XDG_", "VIRTUAL_ENV", "PYTEST")) and k != "HOME"
    }
    uv_cache = subprocess.run(
        [os.environ.get("UV", "uv"), "cache", "dir"], capture_output=True, text=True, check=False
    ).stdout.strip()
    env = {
        **kept,
        "HOME": str(home),
        "PATH": os.pathsep.join([str(VENV_BIN), kept.get("PATH", "")]),
        "PYTHONPATH": os.pathsep.join([str(home), str(ROOT)]),
        "BROWSER": "true",  # `--open` asks the browser to show the page: a no-op here
    }
    if uv_cache:
        env["UV_CACHE_DIR"] = uv_cache
    env.update({k: v.format(home=home) for k, v in extra.items()})
    return env


def commands(text: str) -> list[str]:
    """The block's commands: continuation lines joined, blank and comment lines left out."""
    joined = text.replace("\\\n", " ")
    return [line for line in joined.splitlines() if line.strip() and not line.startswith("#")]


def free_port() -> int:
    """A loopback TCP port that is free right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_log(process: subprocess.Popen[bytes], log: Path, text: str) -> None:
    """Wait until ``process`` wrote ``text`` to ``log`` (fails if it exits or hangs first)."""
    deadline = time.monotonic() + CEILING
    while time.monotonic() < deadline:
        if text in log.read_text("utf-8", "replace"):
            return
        if process.poll() is not None:
            raise AssertionError(f"it exited:\n{log.read_text('utf-8', 'replace')}")
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never came:\n{log.read_text('utf-8', 'replace')}")


class Session:
    """One reader at one machine: a home, its environment and the variables exported so far."""

    def __init__(self, home: Path, spec: Shell) -> None:
        self.home = home
        self.spec = spec
        self.env = environment(home, spec.env)
        self.state = home / ".snippet-exports"
        self.cwd = ROOT if spec.cwd == "repo" else home
        self.output: list[str] = []

    def script(self, command: str, *, serve: bool = False) -> str:
        state = shlex.quote(str(self.state))
        restore = f"if [ -f {state} ]; then source {state}; fi\n"
        if serve:
            return f"set -euo pipefail\n{restore}{LOOKUP}exec {command}"
        return f"set -euo pipefail\n{restore}{LOOKUP}{command}\nexport -p > {state}"

    def run(self, command: str) -> None:
        done = subprocess.run(
            ["bash", "-c", self.script(command)],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=CEILING,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        self.output.append(done.stdout + done.stderr)
        assert done.returncode == 0, (
            f"`{command}` exited {done.returncode}:\n{done.stdout}{done.stderr}"
        )

    def exported(self, name: str) -> str | None:
        probe = subprocess.run(
            ["bash", "-c", self.script(f'printf %s "${{{name}:-}}"')],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return probe.stdout or None

    def serve(self, command: str, probe: str, rest: list[str]) -> None:
        if probe == "manage":
            self._manage(command)
        elif probe == "mcp-http":
            self._mcp_http(command)
        else:
            parameters = StdioServerParameters(
                command="bash",
                args=["-c", self.script(command, serve=True)],
                env=self.env,
                cwd=self.cwd,
            )
            names, writes = asyncio.run(
                self._mcp_stdio(parameters, rest if probe == "plan-mode" else [])
            )
            assert names == list(ALL_TOOLS), names
            if probe == "plan-mode":
                assert writes == [True, False], f"after each command, a write was refused: {writes}"

    async def _mcp_stdio(
        self, parameters: StdioServerParameters, rest: list[str]
    ) -> tuple[list[str], list[bool]]:
        refused: list[bool] = []
        async with Client(stdio_client(parameters), mode="legacy") as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            for n, command in enumerate(rest):
                self.run(command)
                result = await client.call_tool(
                    "memory_remember", {"content": f"Plan-mode check {n}."}
                )
                refused.append(bool(result.is_error))
        return names, refused

    def _start(
        self, command: str, pattern: str
    ) -> tuple[subprocess.Popen[bytes], re.Match[str], str]:
        """Start ``command``; returns it, the match and its output once that shows ``pattern``."""
        log = self.home / f".server-{time.monotonic_ns()}.log"
        with log.open("wb") as output:
            server = subprocess.Popen(
                ["bash", "-c", self.script(command, serve=True)],
                cwd=self.cwd,
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + CEILING
        while time.monotonic() < deadline and server.poll() is None:
            shown = log.read_text("utf-8", "replace")
            found = re.search(pattern, shown)
            if found:
                return server, found, shown
            time.sleep(0.05)
        _stop(server)
        raise AssertionError(f"`{command}` did not start:\n{log.read_text('utf-8', 'replace')}")

    def _manage(self, command: str) -> None:
        server, found, _ = self._start(command, r"http://127\.0\.0\.1:(\d+)/\S*")
        # The printed address carries the token, which the page trades for a cookie.
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        try:
            accepting(int(found.group(1)), server)
            with browser.open(found.group(0), timeout=30) as answer:
                page = answer.read().decode("utf-8")
            assert answer.status == 200 and "<h1>Memory</h1>" in page
        finally:
            _stop(server)

    def _mcp_http(self, command: str) -> None:
        pattern = r"serving \S+ at http://\S+?:(\d+)(/\S*)\n.*(?:Bearer|no token)"
        server, found, shown = self._start(command, pattern)
        url = f"http://127.0.0.1:{found.group(1)}{found.group(2)}"
        headers: dict[str, str] = {}
        allowed = re.search(r"--allowed-host (\S+)", command)
        if allowed:
            headers["Host"] = allowed.group(1)
        token = self.exported("MEMQUILL_MCP_TOKEN") or printed_token(shown)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            accepting(int(found.group(1)), server)
            names = asyncio.run(_http_tools(url, headers))
        finally:
            _stop(server)
        assert names == list(ALL_TOOLS), names


def printed_token(output: str) -> str | None:
    """The token ``memquill-mcp`` printed in its host configuration (one it generated)."""
    found = re.search(r'"Authorization": "Bearer ([^"<]+)"', output)
    return found.group(1) if found else None


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=CEILING)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def accepting(port: int, server: subprocess.Popen[bytes]) -> None:
    """Wait until ``port`` accepts connections: servers print their URL before they listen."""
    deadline = time.monotonic() + CEILING
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port}")


async def _http_tools(url: str, headers: dict[str, str]) -> list[str]:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as web,
        Client(streamable_http_client(url, http_client=web), mode="legacy") as client,
    ):
        tools = (await client.list_tools()).tools
        result = await client.call_tool("memory_search", {"query": "deploy"})
    assert not result.is_error, [b.text for b in result.content if isinstance(b, TextContent)]
    return [tool.name for tool in tools]


def run_block(block: Block, spec: Shell, home: Path) -> str:
    """Run ``block`` in ``home``; returns everything its commands printed."""
    session = Session(home, spec)
    port = str(free_port())
    listed = commands(block.text)
    for n, original in enumerate(listed):
        if any(original.startswith(prefix) for prefix in spec.skip):
            continue
        command = original
        for shown, real in spec.swaps.items():
            command = command.replace(shown, real.replace("{port}", port))
        probe = next((p for prefix, p in spec.servers.items() if original.startswith(prefix)), None)
        if probe is None:
            session.run(command)
            continue
        rest = listed[n + 1 :] if probe == "plan-mode" else []
        session.serve(command, probe, rest)
        if rest:
            break
    output = "".join(session.output)
    for text in spec.expect:
        assert text in output, f"{text!r} not in the output:\n{output}"
    return output
