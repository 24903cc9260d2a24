"""memquill-mcp under load: concurrent MCP clients over streamable HTTP against one workspace.

Usage::

    .venv/bin/python benchmarks/mcp_load.py [--clients 16] [--calls 100] [--notes 200]
        [--seed 7] [--mode legacy|auto] [--dir DIR]

What it does:

* builds a workspace of ``--notes`` generated Markdown notes (from ``--seed``) under ``--dir``
  (default a temporary folder), and starts a real ``memquill-mcp --transport http`` process on a
  free loopback port, exactly as a host would (plugins load; start-up is reported apart);
* connects ``--clients`` MCP clients (the SDK's ``Client``; ``legacy`` mode keeps one HTTP
  session each, so each gets its own derived session id), then starts them together;
* each client makes ``--calls`` calls, drawn from its own seeded generator: 50 % search, 20 %
  get (of a note), 20 % remember (a new fact) and 10 % update (of one of the eight facts
  acknowledged most recently by any client, at the revision that client was told). Two clients
  correcting the same fact at once is the one expected failure: the later one gets
  ``conflict``. Anything else that fails is an error;
* runs the same calls (same seeds) through the core's tools directly in this process, with no
  protocol and no server, in a second copy of the workspace: the baseline printed beside the
  MCP figures, so the cost of JSON-RPC, HTTP and one server process shows as a ratio;
* reports throughput, latency percentiles (overall and per tool) and failures, and finally
  decodes ``memory/records.md`` with the core and checks that every acknowledged write (every
  ``saved`` receipt) is there with exactly the content sent.

It exits 1 when there is an unexpected failure or a missing write. Timings depend on the
machine, the disk (every write is fsync'ed) and the clients, which run in this one process:
compare runs on one machine only. This is a measurement, never a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.types import CallToolResult, Implementation, TextContent

from memquill import MemorySession, MemoryToolset, RecordStore
from memquill_mcp import server_command

_VOCABULARY = (
    "memory project deadline prefers tabs spaces python release review meeting tuesday "
    "coffee design store record lock revision window editor keyboard layout theme dark "
    "light backup deploy staging server database schema migration index query cache "
    "latency budget garden basil kettle invoice travel museum ticket"
)
WORDS = tuple(_VOCABULARY.split())


@dataclass
class Shared:
    """What the clients share: recently acknowledged facts (for updates) and every receipt."""

    current: list[dict[str, str]] = field(default_factory=list[dict[str, str]])
    acknowledged: list[dict[str, str]] = field(default_factory=list[dict[str, str]])


@dataclass
class Tally:
    """Every call's latency, and every failure by kind."""

    latencies: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    expected: Counter[str] = field(default_factory=Counter[str])
    errors: list[str] = field(default_factory=list[str])


def sentence(rng: random.Random, words: int) -> str:
    """A generated sentence of ``words`` words."""
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def build_workspace(root: Path, notes: int, seed: int) -> list[str]:
    """Write ``notes`` notes; returns their workspace-relative paths."""
    rng = random.Random(seed)
    paths: list[str] = []
    for index in range(notes):
        relative = f"notes/topic-{index % 10}/note-{index:04d}.md"
        body = "\n\n".join(sentence(rng, rng.randint(8, 30)) for _ in range(rng.randint(3, 12)))
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {index}\n\n{body}\n", "utf-8")
        paths.append(relative)
    return paths


def free_port() -> int:
    """A loopback TCP port that is free right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(workspace: Path, port: int, log: Path) -> tuple[subprocess.Popen[bytes], float]:
    """Start ``memquill-mcp`` over HTTP and wait until it accepts; returns it and start-up time."""
    command = [*server_command(), "--workspace", str(workspace), "--transport", "http"]
    started = time.perf_counter()
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [*command, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=stderr
        )
    while True:
        if process.poll() is not None:
            raise SystemExit(f"memquill-mcp exited:\n{log.read_text('utf-8', 'replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                return process, time.perf_counter() - started
        except OSError:
            time.sleep(0.05)


def text_of(result: CallToolResult) -> str:
    """The text content of a tool result."""
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


class DirectClient:
    """The baseline: a client whose calls go straight to the core's tools, in this process."""

    def __init__(self, toolset: MemoryToolset) -> None:
        self._toolset = toolset

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        result = await self._toolset[name].ainvoke(arguments)
        return CallToolResult(
            content=[TextContent(type="text", text=result.text)],
            structured_content=None if result.is_error else result.structured,
            is_error=result.is_error,
        )


async def load_direct(
    args: argparse.Namespace, workspace: Path, notes: list[str]
) -> tuple[Tally, Shared, float]:
    """The same clients and calls through :class:`DirectClient` (one session each)."""
    shared, tally, start = Shared(), Tally(), asyncio.Event()
    host = MemorySession(workspace, "load-0")
    clients = [
        DirectClient(MemoryToolset(host.with_session_id(f"load-{i}"))) for i in range(args.clients)
    ]
    tasks = [
        asyncio.create_task(run_client(i, c, args, notes, shared, tally, start))
        for i, c in enumerate(clients)
    ]
    began = time.perf_counter()
    start.set()
    await asyncio.gather(*tasks)
    return tally, shared, time.perf_counter() - began


async def run_client(
    index: int,
    client: Client | DirectClient,
    args: argparse.Namespace,
    notes: list[str],
    shared: Shared,
    tally: Tally,
    start: asyncio.Event,
) -> None:
    """One client's calls, timed one by one."""
    rng = random.Random(args.seed * 1000 + index)
    await start.wait()
    for call in range(args.calls):
        draw = rng.random()
        target: dict[str, str] | None = None
        if draw < 0.5:
            name, arguments = "memory_search", {"query": " ".join(rng.sample(WORDS, 2))}
        elif draw < 0.7:
            name, arguments = "memory_get", {"file_path": rng.choice(notes)}
        elif draw < 0.9 or not shared.current:
            content = f"Client {index} fact {call}: {sentence(rng, 12)}"
            name, arguments = "memory_remember", {"content": content}
        else:
            target = rng.choice(shared.current[-8:])
            content = f"Client {index} correction {call}: {sentence(rng, 12)}"
            arguments = {
                "id": target["id"],
                "content": content,
                "expected_revision": target["revision"],
            }
            name = "memory_update"
        began = time.perf_counter()
        result = await client.call_tool(name, arguments)
        tally.latencies.setdefault(name, []).append(time.perf_counter() - began)
        record(name, arguments, result, target, shared, tally)


def record(
    name: str,
    arguments: dict[str, Any],
    result: CallToolResult,
    target: dict[str, str] | None,
    shared: Shared,
    tally: Tally,
) -> None:
    """Book a call's outcome: a receipt, an expected conflict, or an error."""
    text = text_of(result)
    if result.is_error:
        code = json.loads(text).get("code") if name == "memory_update" else None
        if code == "conflict":
            tally.expected["conflict"] += 1
        else:
            tally.errors.append(f"{name}: {text[:200]}")
        return
    if name not in ("memory_remember", "memory_update"):
        return
    receipt: dict[str, Any] = result.structured_content or {}
    if receipt.get("status") != "saved":
        tally.errors.append(f"{name}: not saved: {text[:200]}")
        return
    fact: dict[str, str] = {
        "id": receipt["recordId"],
        "revision": receipt["recordRevision"],
        "content": arguments["content"],
    }
    shared.acknowledged.append(fact)
    if target is not None and target in shared.current:
        shared.current.remove(target)  # superseded: its id can no longer be corrected
    shared.current.append(fact)


async def load(args: argparse.Namespace, url: str, notes: list[str]) -> tuple[Tally, Shared, float]:
    """Connect every client, start them together, and return the tally and the wall time."""
    shared, tally, start = Shared(), Tally(), asyncio.Event()
    clients = [
        Client(url, mode=args.mode, client_info=Implementation(name=f"load-{i}", version="1"))
        for i in range(args.clients)
    ]
    for client in clients:
        await client.__aenter__()
    try:
        tasks = [
            asyncio.create_task(run_client(i, c, args, notes, shared, tally, start))
            for i, c in enumerate(clients)
        ]
        began = time.perf_counter()
        start.set()
        await asyncio.gather(*tasks)
        wall = time.perf_counter() - began
    finally:
        for client in reversed(clients):
            await client.__aexit__(None, None, None)
    return tally, shared, wall


def verify(workspace: Path, shared: Shared) -> list[str]:
    """Every acknowledged write, decoded back from ``records.md`` by the core."""
    snapshot = RecordStore(workspace).snapshot()
    missing: list[str] = []
    for fact in shared.acknowledged:
        stored = snapshot.find(fact["id"])
        if stored is None or stored.content != fact["content"]:
            missing.append(fact["id"])
    for fact in shared.current:  # the newest version of each fact is still active
        if snapshot.find(fact["id"], active_only=True) is None:
            missing.append(f"{fact['id']} (not active)")
    return missing


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile in milliseconds."""
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def report(
    tally: Tally, wall: float, startup: float, missing: list[str], acknowledged: int
) -> None:
    """Print the figures."""
    every = [value for values in tally.latencies.values() for value in values]
    print(f"server start-up: {startup:.2f} s (not part of the figures below)")
    print(f"calls: {len(every)} in {wall:.2f} s -> {len(every) / wall:.1f} calls/s")
    print(f"{'tool':<16} {'calls':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for name, values in [*sorted(tally.latencies.items()), ("all", every)]:
        print(
            f"{name:<16} {len(values):>6} {percentile(values, 50):>8.1f} "
            f"{percentile(values, 95):>8.1f} {percentile(values, 99):>8.1f} "
            f"{1000 * max(values):>8.1f}"
        )
    print(f"mean latency: {1000 * statistics.fmean(every):.1f} ms")
    print(f"expected conflicts (two clients correcting one fact): {tally.expected['conflict']}")
    print(f"unexpected errors: {len(tally.errors)}")
    for error in tally.errors[:10]:
        print(f"  {error}")
    print(f"acknowledged writes found in records.md: {acknowledged - len(missing)}/{acknowledged}")
    for fact_id in missing[:10]:
        print(f"  missing: {fact_id}")


def compare(tally: Tally, wall: float, direct: Tally, direct_wall: float) -> None:
    """The baseline (the core called directly) beside the MCP figures."""
    ours = [value for values in tally.latencies.values() for value in values]
    base = [value for values in direct.latencies.values() for value in values]
    print()
    print("baseline: the same calls on the core's tools in-process (no protocol, no server)")
    print(f"{'':<22}{'calls/s':>9}{'p50 ms':>9}{'p95 ms':>9}")
    for label, values, seconds in (
        ("memquill-mcp (HTTP)", ours, wall),
        ("core direct", base, direct_wall),
    ):
        print(
            f"{label:<22}{len(values) / seconds:>9.1f}"
            f"{percentile(values, 50):>9.1f}{percentile(values, 95):>9.1f}"
        )
    ratio = (len(ours) / wall) / (len(base) / direct_wall)
    print(
        f"MCP over HTTP / direct: throughput x{ratio:.2f}, "
        f"p50 latency x{percentile(ours, 50) / percentile(base, 50):.1f}"
    )
    print(f"baseline unexpected errors: {len(direct.errors)}")


def main() -> int:
    """Run the benchmark; 1 when something failed that must not."""
    parser = argparse.ArgumentParser(description="memquill-mcp under concurrent HTTP load.")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--calls", type=int, default=100, help="calls per client")
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mode", choices=("legacy", "auto"), default="legacy")
    parser.add_argument("--dir", type=Path, help="where to build the workspace (kept)")
    args = parser.parse_args()

    print("command:", shlex.join([Path(sys.executable).name, *sys.argv]))
    print(
        f"python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs; {args.clients} clients x {args.calls} calls, mode {args.mode}"
    )
    base = args.dir or Path(tempfile.mkdtemp(prefix="memquill-mcp-load-"))
    workspace = base / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    notes = build_workspace(workspace, args.notes, args.seed)
    port = free_port()
    process, startup = start_server(workspace, port, base / "server.log")
    try:
        tally, shared, wall = asyncio.run(load(args, f"http://127.0.0.1:{port}/mcp", notes))
    finally:
        process.terminate()
        process.wait(timeout=30)
    missing = verify(workspace, shared)
    report(tally, wall, startup, missing, len(shared.acknowledged))
    baseline_workspace = base / "baseline"
    baseline_workspace.mkdir(parents=True, exist_ok=True)
    build_workspace(baseline_workspace, args.notes, args.seed)
    direct, direct_shared, direct_wall = asyncio.run(load_direct(args, baseline_workspace, notes))
    missing += verify(baseline_workspace, direct_shared)
    compare(tally, wall, direct, direct_wall)
    if args.dir is None:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if tally.errors or direct.errors or missing else 0


if __name__ == "__main__":
    sys.exit(main())
