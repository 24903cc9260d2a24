"""How long an MCP host waits for ``memquill-mcp``: spawn to initialised, beside a minimal server.

Usage::

    uv run python benchmarks/mcp_ready.py [--runs 15] [--notes 200] [--dir DIR]

What it does:

* builds a workspace of ``--notes`` generated Markdown notes and a few remembered facts under
  ``--dir`` (default a temporary folder);
* starts, in turn (interleaved, so load on the machine falls on both alike), ``memquill-mcp
  --workspace … `` over stdio exactly as a host configures it, and a minimal server of the same
  SDK (``MCPServer`` with one tool, in a fresh interpreter) — the floor any server of this SDK
  pays;
* for each start, speaks the protocol itself over the pipes (newline-delimited JSON-RPC, no
  client library in the timing): ``initialize`` (the time a host waits before anything works),
  then ``notifications/initialized`` and ``tools/list`` (ready to call a tool), then closes
  stdin and waits for the exit, and reads the process's CPU time from the kernel;
* prints median and 90th percentile wall time to the ``initialize`` answer and to the tool
  list, and the median CPU, for both servers, and memquill's ratio to the minimal server.

The issue's target is memquill ready at most 1.3× the minimal server. Timings depend on the
machine and its load: compare within one run. This is a measurement, never a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

MINIMAL_SERVER = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("minimal")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Say the text back.\"\"\"
    return text


server.run("stdio")
"""

PROTOCOL_VERSION = "2025-06-18"


def build_workspace(root: Path, notes: int) -> None:
    """``notes`` small Markdown notes in a few folders, and three facts in ``records.md``."""
    words = [
        "deploy",
        "river",
        "budget",
        "ticket",
        "garden",
        "lunch",
        "review",
        "retro",
        "coffee",
        "launch",
    ]
    for index in range(notes):
        folder = root / f"area-{index % 8}"
        folder.mkdir(parents=True, exist_ok=True)
        picked = [words[(index * 7 + n) % len(words)] for n in range(12)]
        (folder / f"note-{index:04d}.md").write_text(
            f"# Note {index}\n\n{' '.join(picked)}.\n", encoding="utf-8"
        )
    remember = [
        shutil.which("memquill") or "memquill",
        "--workspace",
        str(root),
        "remember",
    ]
    for fact in ("Ana drinks oat flat whites.", "The deploy runs on Fridays.", "Bo likes tea."):
        subprocess.run([*remember, fact], check=True, capture_output=True)


def send(stream: IO[bytes], message: dict[str, Any]) -> None:
    stream.write(json.dumps(message).encode() + b"\n")
    stream.flush()


def answer(stream: IO[bytes], wanted: int) -> dict[str, Any]:
    """The response with id ``wanted`` (notifications and logs before it are skipped)."""
    while True:
        line = stream.readline()
        if not line:
            raise RuntimeError("the server closed its output before answering")
        message = json.loads(line)
        if isinstance(message, dict) and message.get("id") == wanted:
            return message  # pyright: ignore[reportUnknownVariableType]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def start_once(command: Sequence[str]) -> tuple[float, float, float, int]:
    """Spawn, initialise, list tools, close: seconds to ``initialize``'s answer and to the
    tool list, the process's CPU seconds, and how many tools it offered."""
    cpu_before = children_cpu()
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None and process.stdout is not None
    send(
        process.stdin,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcp-ready-bench", "version": "1"},
            },
        },
    )
    initialised = answer(process.stdout, 1)
    at_initialize = time.perf_counter() - started
    if "error" in initialised:
        raise RuntimeError(f"initialize failed: {initialised['error']}")
    send(process.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    send(process.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    listed = answer(process.stdout, 2)
    at_tools = time.perf_counter() - started
    tools = len(listed.get("result", {}).get("tools", []))
    process.stdin.close()
    process.wait(timeout=30)
    return at_initialize, at_tools, children_cpu() - cpu_before, tools


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--dir", type=Path)
    args = parser.parse_args(argv)
    base = args.dir or Path(tempfile.mkdtemp(prefix="mcp-ready-"))
    workspace = base / "workspace"
    if not workspace.exists():
        workspace.mkdir(parents=True)
        build_workspace(workspace, args.notes)
    minimal = base / "minimal_server.py"
    minimal.write_text(MINIMAL_SERVER, encoding="utf-8")
    memquill_mcp = shutil.which("memquill-mcp") or "memquill-mcp"
    servers = {
        "memquill-mcp": [memquill_mcp, "--workspace", str(workspace)],
        "minimal MCPServer": [sys.executable, str(minimal)],
    }
    figures: dict[str, list[tuple[float, float, float, int]]] = {name: [] for name in servers}
    for name, command in servers.items():
        start_once(command)  # a first start warms the disk cache for both alike
        del name
    for _ in range(args.runs):
        for name, command in servers.items():
            figures[name].append(start_once(command))
    print(
        f"MCP server start over stdio, {args.runs} interleaved runs each, "
        f"{args.notes} notes; load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'server':<20}{'tools':>6}{'initialize p50':>16}{'p90':>9}"
        f"{'tools/list p50':>16}{'p90':>9}{'CPU p50':>10}"
    )
    medians: dict[str, tuple[float, float, float]] = {}
    for name, runs in figures.items():
        first = [run[0] * 1000 for run in runs]
        listed = [run[1] * 1000 for run in runs]
        cpu = [run[2] * 1000 for run in runs]
        medians[name] = (
            statistics.median(first),
            statistics.median(listed),
            statistics.median(cpu),
        )
        print(
            f"{name:<20}{runs[0][3]:>6}{medians[name][0]:>13.0f} ms"
            f"{percentile(first, 0.9):>6.0f} ms"
            f"{medians[name][1]:>13.0f} ms{percentile(listed, 0.9):>6.0f} ms"
            f"{medians[name][2]:>7.0f} ms"
        )
    mine, floor = medians["memquill-mcp"], medians["minimal MCPServer"]
    print(
        f"memquill ÷ minimal: initialize {mine[0] / floor[0]:.2f}×, tools/list "
        f"{mine[1] / floor[1]:.2f}×, CPU {mine[2] / floor[2]:.2f}× (target: ready ≤ 1.3×)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
