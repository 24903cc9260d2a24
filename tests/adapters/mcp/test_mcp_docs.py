"""``docs/adapters/mcp.md`` agrees with ``memquill-mcp``: its options, defaults and host configs."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

from tests.adapters.mcp.mcp_helpers import START_CEILING

import memquill
from memquill_mcp import server_command
from memquill_mcp.cli import _parser  # pyright: ignore[reportPrivateUsage]

DOC = (Path(__file__).resolve().parents[3] / "docs" / "adapters" / "mcp.md").read_text("utf-8")
FROM_CLONE = [
    *("run", "--directory", "/path/to/memquill", "--package", "memquill-mcp", "--no-dev"),
    "memquill-mcp",
]
HIDDEN = {"--help"}  # argparse's own; test-only switches are hidden from --help too


def option_rows() -> dict[str, list[str]]:
    """The Options table: first cell → the row's cells (``\\|`` is a pipe inside a cell)."""
    table = DOC[DOC.index("\n## Options\n") :].split("\n## ", 2)[1]
    rows = [re.split(r"(?<!\\)\|", line)[1:-1] for line in table.splitlines()]
    return {
        cells[0].strip(): cells for cells in rows if cells and cells[0].strip().startswith("`--")
    }


def test_the_options_table_lists_exactly_the_command_s_options() -> None:
    documented = {re.findall(r"--[a-z-]+", first)[0] for first in option_rows()}
    documented |= {o for first in option_rows() for o in re.findall(r"(--[a-z-]+)`", first)}
    actual = {
        option
        for action in _parser()._actions  # pyright: ignore[reportPrivateUsage]
        for option in action.option_strings
        if option.startswith("--") and action.help != argparse.SUPPRESS
    }
    assert documented == actual - HIDDEN


def test_the_stated_defaults_are_the_command_s_defaults() -> None:
    defaults = {
        action.dest: action.default
        for action in _parser()._actions  # pyright: ignore[reportPrivateUsage]
    }
    rows = {first: cells[1] for first, cells in option_rows().items()}
    assert f"`{defaults['access']}`" in rows["`--access read\\|read_write`"]
    assert f"`{defaults['lock_timeout']:g}`" in rows["`--lock-timeout SECONDS`"]
    assert f"`{defaults['log_level']}`" in rows["`--log-level`"]
    assert "`$MEMQUILL_WORKSPACE`, else `memquill/workspace`" in rows["`--workspace DIR`"]


def test_every_host_configuration_in_the_doc_parses() -> None:
    configs = re.findall(r"```json\n(\{.*?\})\n```", DOC, re.DOTALL)
    commands = [
        server
        for config in configs
        for server in json.loads(config).get("mcpServers", {}).values()
        if "command" in server
    ]
    # From a clone today (tests/packaging/test_from_a_clone.py starts it), from the index after
    # a release, and an installed command.
    assert {server["command"] for server in commands} >= {"uv", "uvx"}
    for server in commands:
        args = server["args"]
        if server["command"] == "uvx":  # uvx --from memquill-mcp memquill-mcp ARGS
            assert args[:3] == ["--from", "memquill-mcp", "memquill-mcp"]
            args = args[3:]
        elif server["command"] == "uv":  # uv run --directory CLONE … memquill-mcp ARGS
            assert args[: len(FROM_CLONE)] == FROM_CLONE
            args = args[len(FROM_CLONE) :]
        else:
            assert server["command"].endswith("/memquill-mcp")
        _parser().parse_args(args)  # SystemExit on anything the command does not take


def test_version() -> None:
    done = subprocess.run(
        [*server_command(), "--version"], capture_output=True, timeout=START_CEILING, check=False
    )
    assert done.returncode == 0
    assert done.stdout.decode() == f"memquill-mcp {memquill.__version__}\n"
    assert f"memquill-mcp --version                  # memquill-mcp {memquill.__version__}" in DOC
