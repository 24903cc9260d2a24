"""Claude's memory tool on memquill beside the SDK's reference implementation: latency per
command, and what concurrent writers keep.

Usage::

    uv run python benchmarks/memory_tool_bench.py [--files 200] [--repeat 50]
        [--workers 4] [--inserts 25] [--dir DIR]

Scenarios (each in a fresh folder under ``--dir``, default a temporary one):

* One process, a memory directory already holding ``--files`` files of about 300 bytes in ten
  folders: the median and p90 wall time of ``view`` (a file; the root's listing), ``create``,
  ``str_replace`` and ``insert`` (each on its own file), ``--repeat`` times, through
  ``MemquillMemoryTool.call`` and ``BetaLocalFilesystemMemoryTool.call`` (the baseline,
  measured in the same run). memquill reads a snapshot of the whole store for each command
  (memoised by file bytes), takes the writer lock and fsyncs the records file and its folder
  for each write; the reference writes one file with no lock.
* ``--workers`` processes, each sending ``--inserts`` ``insert`` commands for one shared file
  at once, started together: the lines each tool kept (of workers × inserts) and the wall time
  of the writing (process start-up excluded).

The machine's load is printed before and after: compare runs on one machine only. This is a
measurement, never a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from anthropic.tools.memory import BetaLocalFilesystemMemoryTool

from memquill import MemorySession
from memquill_anthropic import MemquillMemoryTool

Tool = MemquillMemoryTool | BetaLocalFilesystemMemoryTool

WRITER = """
import sys, time
kind, where, name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if kind == "memquill":
    from memquill_anthropic import MemquillMemoryTool
    tool = MemquillMemoryTool.from_workspace(where, session_id=name)
else:
    from anthropic.tools.memory import BetaLocalFilesystemMemoryTool
    tool = BetaLocalFilesystemMemoryTool(where)
print("ready", flush=True)
sys.stdin.readline()
for n in range(count):
    tool.call({"command": "insert", "path": "/memories/log.md", "insert_line": 0,
               "insert_text": f"{name} line {n}"})
print("done", flush=True)
"""


def tools(base: Path) -> dict[str, Tool]:
    workspace = base / "memquill"
    workspace.mkdir(parents=True)
    return {
        "memquill": MemquillMemoryTool(MemorySession(workspace, "bench")),
        "reference": BetaLocalFilesystemMemoryTool(str(base / "reference")),
    }


def seed(tool: Tool, files: int) -> None:
    body = "# Notes\n" + "\n".join(f"- item {n}: something worth keeping" for n in range(8))
    for n in range(files):
        tool.call({"command": "create", "path": f"/memories/d{n % 10}/f{n}.md", "file_text": body})


def timed(call: Callable[[int], Any], repeat: int) -> list[float]:
    times: list[float] = []
    for index in range(repeat):
        start = time.perf_counter()
        call(index)
        times.append((time.perf_counter() - start) * 1000)
    return times


def commands(tool: Tool, repeat: int) -> dict[str, list[float]]:
    for n in range(repeat):
        tool.call({"command": "create", "path": f"/memories/edit/{n}.md", "file_text": "a\nb\n"})
    return {
        "view a file": timed(
            lambda n: tool.call({"command": "view", "path": "/memories/d0/f0.md"}), repeat
        ),
        "view the root": timed(
            lambda n: tool.call({"command": "view", "path": "/memories"}), repeat
        ),
        "create": timed(
            lambda n: tool.call(
                {"command": "create", "path": f"/memories/new/{n}.md", "file_text": "new\n"}
            ),
            repeat,
        ),
        "str_replace": timed(
            lambda n: tool.call(
                {
                    "command": "str_replace",
                    "path": f"/memories/edit/{n}.md",
                    "old_str": "a",
                    "new_str": "z",
                }
            ),
            repeat,
        ),
        "insert": timed(
            lambda n: tool.call(
                {
                    "command": "insert",
                    "path": f"/memories/edit/{n}.md",
                    "insert_line": 1,
                    "insert_text": "c",
                }
            ),
            repeat,
        ),
    }


def concurrent(kind: str, where: Path, workers: int, inserts: int) -> tuple[int, float]:
    """Lines kept of ``workers * inserts``, and the writing's wall time in seconds."""
    where.mkdir(parents=True)
    tool: Tool = (
        MemquillMemoryTool(MemorySession(where, "bench"))
        if kind == "memquill"
        else BetaLocalFilesystemMemoryTool(str(where))
    )
    target = str(where)
    tool.call({"command": "create", "path": "/memories/log.md", "file_text": "start\n"})
    children = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(WRITER), kind, target, f"w{i}", str(inserts)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(workers)
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    start = time.perf_counter()
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "done"
        child.wait(timeout=600)
    elapsed = time.perf_counter() - start
    shown = str(tool.call({"command": "view", "path": "/memories/log.md"}))
    lines = [line.split("\t", 1)[1] for line in shown.split("\n")[1:]]
    kept = sum(1 for line in lines if " line " in line)
    return kept, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--inserts", type=int, default=25)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="memquill-memory-bench-"))
    print(f"load average before: {os.getloadavg()}")
    print(f"\n{args.files} files in the memory directory, {args.repeat} calls each (ms):")
    print(f"  {'command':<14} {'memquill p50':>13} {'p90':>7} {'reference p50':>14} {'p90':>7}")
    measured = {}
    for kind, tool in tools(root / "commands").items():
        seed(tool, args.files)
        measured[kind] = commands(tool, args.repeat)
    for name in measured["memquill"]:
        ours, theirs = measured["memquill"][name], measured["reference"][name]
        print(
            f"  {name:<14} {statistics.median(ours):>13.2f} {_p90(ours):>7.2f} "
            f"{statistics.median(theirs):>14.2f} {_p90(theirs):>7.2f}"
        )
    total = args.workers * args.inserts
    print(f"\n{args.workers} processes × {args.inserts} inserts into one file ({total} lines):")
    for kind in ("memquill", "reference"):
        kept, elapsed = concurrent(kind, root / f"concurrent-{kind}", args.workers, args.inserts)
        print(f"  {kind:<10} kept {kept:>4} of {total}   {elapsed:6.2f} s writing")
    print(f"\nload average after: {os.getloadavg()}")


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


if __name__ == "__main__":
    main()
