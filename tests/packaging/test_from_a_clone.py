"""What works before a release, from a clone: the commands the README and the MCP page give.

Each test takes its command from the docs themselves (so the doc and the test cannot drift),
swaps the placeholder paths (``/path/to/memquill``: a fresh copy of this repository without a
``.venv``; ``/Users/me/notes``: a temporary workspace) and runs it as a user or a host would:

- the README's ``uv build`` line, in the clone: the four wheels and sdists the README's ``pip
  install --find-links`` line installs from (``test_fresh_install.py`` runs that line);
- the MCP host configuration (README and ``docs/adapters/mcp.md``): its ``command`` and
  ``args`` started by the real ``mcp`` client over stdio from another folder, with only the
  environment a host passes, then ``initialize``, ``tools/list`` and a write.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent
from tests.doc_blocks import Block, find
from tests.packaging.conftest import uv_command

from memquill import __version__
from memquill.tools import CATALOGUE

pytestmark = pytest.mark.packaging

CLONE = "/path/to/memquill"
NOTES = "/Users/me/notes"
START_CEILING = 600.0
"""Seconds the first start may take (it installs the server into the clone's ``.venv``): a
hang guard, not a speed test."""


def build_line() -> str:
    block = find("README.md", lambda b: b.heading == "Install" and b.lang == "sh", "the build")
    (line,) = [line for line in block.text.splitlines() if line.startswith("uv build ")]
    return line


def host_config(doc: str) -> Block:
    return find(doc, lambda b: b.lang == "json" and '"--directory"' in b.text, "host config")


def test_the_readme_build_command_makes_every_distribution(clone: Path) -> None:
    done = subprocess.run(
        ["bash", "-c", build_line()],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=START_CEILING,
        env={**_without_venv(), "PATH": _path_with_uv()},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    built = sorted(path.name for path in (clone / "dist").iterdir() if path.name != ".gitignore")
    names = ("memquill", "memquill_adk", "memquill_anthropic", "memquill_langchain")
    names += ("memquill_llamaindex",)
    adapters = ("memquill_mcp", "memquill_openai_agents", "memquill_pydantic_ai")
    stems = [f"{name}-{__version__}" for name in (*names, *adapters)]
    assert built == sorted(
        name for stem in stems for name in (f"{stem}-py3-none-any.whl", f"{stem}.tar.gz")
    )


@pytest.mark.parametrize("doc", ["README.md", "docs/adapters/mcp.md"])
def test_a_host_starts_the_server_from_the_clone(clone: Path, tmp_path: Path, doc: str) -> None:
    text = host_config(doc).text
    assert CLONE in text and NOTES in text
    workspace = tmp_path / "notes"
    workspace.mkdir()
    config = json.loads(text.replace(CLONE, str(clone)).replace(NOTES, str(workspace)))
    (server,) = config["mcpServers"].values()
    elsewhere = tmp_path / "host"  # hosts start servers in a folder of their own
    elsewhere.mkdir()
    parameters = StdioServerParameters(
        command=server["command"],
        args=server["args"],
        env=_host_environment(tmp_path),
        cwd=elsewhere,
    )
    names, saved = asyncio.run(asyncio.wait_for(_session(parameters), START_CEILING))
    assert names == [spec.name for spec in CATALOGUE]
    assert json.loads(saved)["status"] == "saved", saved
    records = (workspace / "memory" / "records.md").read_text("utf-8")
    assert "The host config starts the server from the clone." in records
    assert (clone / ".venv" / "bin" / "memquill-mcp").exists(), "installed in the clone's .venv"


async def _session(parameters: StdioServerParameters) -> tuple[list[str], str]:
    async with Client(stdio_client(parameters), mode="legacy") as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool(
            "memory_remember", {"content": "The host config starts the server from the clone."}
        )
    text = "".join(block.text for block in result.content if isinstance(block, TextContent))
    return [tool.name for tool in tools], text


def _path_with_uv() -> str:
    return os.pathsep.join([str(Path(uv_command()).parent), os.environ.get("PATH", "")])


def _without_venv() -> dict[str, str]:
    # The tests run inside this checkout's .venv; a user's shell in the clone is not.
    return {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "UV_PROJECT"}}


def _host_environment(tmp_path: Path) -> dict[str, str]:
    """What a host passes on top of the SDK's inherited few (HOME, PATH, …): ``uv`` on the
    ``PATH``, and memquill's per-user folders kept out of the real ones."""
    cache = subprocess.run(
        [uv_command(), "cache", "dir"], capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()
    env = {
        "PATH": _path_with_uv(),
        "UV_CACHE_DIR": cache,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "MEMQUILL_INDEX_DIR": str(tmp_path / "index"),
    }
    return {**_network_settings(), **env}


def _network_settings() -> dict[str, str]:
    """How this machine reaches Python and the package index (uv settings, proxies, the CA
    bundle): a user's host has the same, from their session."""
    kept = {"SSL_CERT_FILE", "SSL_CERT_DIR"}
    return {
        name: value
        for name, value in os.environ.items()
        if name in kept
        or name.lower().endswith("_proxy")
        or (name.startswith("UV_") and not name.startswith("UV_PROJECT"))
    }


def test_the_build_line_is_what_ci_builds() -> None:
    """CI builds the files every packaging test checks with the README's command (quietly)."""
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text("utf-8")
    (ci_line,) = [line for line in ci.splitlines() if line.startswith("uv build ")]
    documented = shlex.split(build_line(), comments=True)
    built = shlex.split(ci_line)
    assert [a for a in built if a != "--quiet"][:-1] == documented[:-1]  # all but the folder
