"""The ``Dockerfile``: its install step, and the image built and run as the MCP page says.

- Everywhere: the build stage's ``uv sync`` runs outside a container on exactly the files the
  Dockerfile copies, and the installed server starts with the image's entry point (plus a
  ``--port``, as ``docker run IMAGE --port N`` would add) and serves a real MCP client over
  HTTP with a bearer token.
- Where a container engine answers ``docker info``: the image is built with the page's
  ``docker build`` line and run with each of its ``docker run`` lines (names, the published port
  and the home folder swapped for the test's own), then used through the published port by a
  real MCP client. Without an engine the test is skipped, saying so.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent
from tests.doc_blocks import ROOT
from tests.dockerfile import doc_blocks, env, only, stages
from tests.packaging.conftest import uv_command

from memquill.tools import CATALOGUE
from memquill_mcp.cli import TOKEN_ENV

pytestmark = pytest.mark.packaging

BUILD, RUNTIME = stages()
ENTRYPOINT = only(RUNTIME, "ENTRYPOINT").json()
CEILING = 900.0
"""Seconds a build or a start may take: a hang guard, not a speed test."""
FACT = "The container keeps memory in the mounted workspace."


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int, alive: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + CEILING
    while time.monotonic() < deadline:
        if alive.poll() is not None:
            raise AssertionError("the server exited before it served")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listens on port {port}")


async def _use(url: str, token: str) -> tuple[list[str], str]:
    """``tools/list`` and a remember through streamable HTTP with the bearer token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as web,
        Client(streamable_http_client(url, http_client=web), mode="legacy") as client,
    ):
        names = [tool.name for tool in (await client.list_tools()).tools]
        saved = await client.call_tool("memory_remember", {"content": FACT})
    text = "".join(block.text for block in saved.content if isinstance(block, TextContent))
    return names, text


def _network() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}


def test_the_build_stage_installs_a_server_that_serves_the_entry_point(
    clone: Path, tmp_path: Path
) -> None:
    # What the build stage sees: the files it copies, as a clone has them (no caches).
    source = tmp_path / "src"
    source.mkdir()
    for instruction in (i for i in BUILD if i.keyword == "COPY"):
        *paths, _destination = instruction.value.split()
        for path in paths:
            copy = shutil.copytree if (clone / path).is_dir() else shutil.copy2
            copy(clone / path, source / path)
    (sync,) = [i.value for i in BUILD if i.keyword == "RUN" and i.value.startswith("uv sync")]
    target = tmp_path / "opt"
    settings = {**env(BUILD), "UV_PROJECT_ENVIRONMENT": str(target)}
    path = os.pathsep.join([str(Path(uv_command()).parent), os.environ.get("PATH", "")])
    done = subprocess.run(
        ["bash", "-c", sync],
        cwd=source,
        env={**_network(), **settings, "PATH": path},
        capture_output=True,
        text=True,
        timeout=CEILING,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    installed = sorted(p.name for p in (target / "bin").iterdir() if p.name.startswith("memq"))
    assert installed == ["memquill", "memquill-mcp"]

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    port, token = _free_port(), secrets.token_urlsafe(32)
    argv = [str(workspace) if arg == "/workspace" else arg for arg in ENTRYPOINT[1:]]
    runtime = {k: v for k, v in env(RUNTIME).items() if k.startswith("XDG_")}
    with (tmp_path / "server.log").open("wb") as log:
        server = subprocess.Popen(
            [str(target / "bin" / ENTRYPOINT[0]), *argv, "--port", str(port)],
            env={
                **_network(),
                **{k: str(tmp_path / v.strip("/")) for k, v in runtime.items()},
                TOKEN_ENV: token,
            },
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        _wait_for(port, server)
        names, saved = asyncio.run(_use(f"http://127.0.0.1:{port}/mcp", token))
    finally:
        server.terminate()
        server.wait(timeout=60)
    assert names == [spec.name for spec in CATALOGUE], (tmp_path / "server.log").read_text()
    assert '"status":"saved"' in saved
    assert FACT in (workspace / "memory" / "records.md").read_text("utf-8")
    assert (tmp_path / "data" / "memquill" / "record-key.v1").is_file(), "the key is in /data"


def _engine() -> str:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no container engine here: the docker command is not installed")
    info = subprocess.run([docker, "info"], capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        last = (info.stderr.strip().splitlines() or ["no answer"])[-1]
        pytest.skip(f"no container engine here: `docker info` failed ({last})")
    return docker


def _serving(docker: str, name: str) -> str:
    """The container's log once the server says it serves (it fails the test if it stops)."""
    deadline = time.monotonic() + CEILING
    while time.monotonic() < deadline:
        logs = subprocess.run([docker, "logs", name], capture_output=True, text=True, timeout=60)
        if "memquill-mcp: serving" in logs.stderr:
            return logs.stderr
        state = subprocess.run(
            [docker, "inspect", "-f", "{{.State.Running}}", name],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert state.stdout.strip() == "true", f"the container stopped:\n{logs.stderr}"
        time.sleep(0.5)
    raise AssertionError(f"the container did not start serving in {CEILING:.0f} s")


@contextmanager
def _cleanup(docker: str, *argvs: list[str]) -> Iterator[None]:
    try:
        yield
    finally:
        for argv in argvs:
            subprocess.run([docker, *argv], capture_output=True, timeout=CEILING, check=False)


def test_the_documented_image_builds_and_serves(tmp_path: Path) -> None:
    docker = _engine()
    tag = f"memquill-mcp-test-{secrets.token_hex(4)}"
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / ".config" / "memquill").mkdir(parents=True)
    token = secrets.token_urlsafe(32)
    token_file = home / ".config" / "memquill" / "token"
    token_file.write_text(token + "\n", "utf-8")
    token_file.chmod(0o600)
    runs = [block for block in doc_blocks() if "docker run" in block.text]
    assert "docker build -t memquill-mcp ." in runs[0].text, "the first one builds the image"
    with _cleanup(docker, ["image", "rm", "-f", tag]):
        for n, block in enumerate(runs):
            name, port = f"{tag}-{n}", _free_port()
            script = re.sub(r"(?<![\w/-])memquill-mcp(?![\w-])", tag, block.text)
            script = script.replace("--name memquill ", f"--name {name} ")
            script = script.replace("127.0.0.1:8765:8765", f"127.0.0.1:{port}:8765")
            for volume in ("memquill-workspace", "memquill-data"):
                script = script.replace(f"{volume}:", f"{name}-{volume}:")
            volumes = [f"{name}-memquill-workspace", f"{name}-memquill-data"]
            with _cleanup(docker, ["rm", "-f", name], ["volume", "rm", "-f", *volumes]):
                started = subprocess.run(
                    ["bash", "-euo", "pipefail", "-c", script],
                    cwd=ROOT,
                    env={**_network(), "HOME": str(home)},
                    capture_output=True,
                    text=True,
                    timeout=CEILING,
                    check=False,
                )
                assert started.returncode == 0, started.stderr
                logs = _serving(docker, name)  # the published port opens before the server
                names, saved = asyncio.run(_use(f"http://127.0.0.1:{port}/mcp", token))
                assert names == [spec.name for spec in CATALOGUE], logs
                assert '"status":"saved"' in saved, saved
    # The run as the user's own: the fact is in their notes folder, the key beside theirs.
    assert FACT in (home / "notes" / "memory" / "records.md").read_text("utf-8")
    assert (home / ".local" / "share" / "memquill" / "record-key.v1").is_file()
