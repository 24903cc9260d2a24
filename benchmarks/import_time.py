"""The import time users pay: ``import memquill``, ``memquill --version``, each adapter.

Usage::

    uv run python benchmarks/import_time.py [--runs 7] [--before OTHER/packages/core/src]

Each figure is measured in fresh interpreters, ``--runs`` times, and the median is printed:
the wall time of the whole process (what a user waits for) and the time ``python -X
importtime`` counts for every module imported, each less the same for an interpreter that
imports nothing. ``--before`` measures another version of the core (its ``memquill`` package folder
first on the path; the adapters are this checkout's) beside this one, interleaved run by run so
that both see the same load. The load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

CASES: tuple[tuple[str, str], ...] = (
    ("import memquill", "import memquill"),
    ("memquill --version", "from memquill.cli import main; raise SystemExit(main(['--version']))"),
    ("a keyword search's imports", "from memquill import MemoryToolset, open_session"),
    ("import memquill.enhance (model assistance)", "import memquill.enhance"),
    ("import memquill_langchain", "import memquill_langchain"),
    ("  + MemquillToolkit (LangChain itself)", "from memquill_langchain import MemquillToolkit"),
    ("import memquill_llamaindex", "import memquill_llamaindex"),
    ("  + memory tools (LlamaIndex itself)", "from memquill_llamaindex import MemquillToolSpec"),
    ("import memquill_mcp", "import memquill_mcp"),
    ("  + server (the MCP SDK)", "from memquill_mcp import build_server"),
)
_IMPORTTIME = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \| (\S.*)$")


def run_once(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds of one fresh interpreter running ``code``, and the seconds ``-X
    importtime`` counts for its top-level imports (a lazy name's modules are top-level too)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode not in (0,):
        raise SystemExit(f"{code!r} failed:\n{done.stderr[-2000:]}")
    total = 0.0
    for line in done.stderr.splitlines():
        match = _IMPORTTIME.match(line)
        if match and not match.group(2).startswith(" "):  # cumulative: nested ones included
            total += int(match.group(1)) / 1e6
    return wall, total


def measure(runs: int, before: Path | None) -> list[tuple[str, list[float | None]]]:
    envs = {"after": dict(os.environ)}
    if before is not None:
        path = os.pathsep.join(filter(None, [str(before), os.environ.get("PYTHONPATH")]))
        envs = {"before": {**os.environ, "PYTHONPATH": path}, **envs}
    rows: list[tuple[str, list[float | None]]] = []
    for label, code in CASES:
        walls: dict[str, list[float]] = {name: [] for name in envs}
        counted: dict[str, list[float]] = {name: [] for name in envs}
        for _ in range(runs):
            for name, env in envs.items():  # interleaved: both see the same load
                bare_wall, bare_counted = run_once("pass", env)
                wall, total = run_once(code, env)
                walls[name].append(wall - bare_wall)
                counted[name].append(total - bare_counted)
        cells: list[float | None] = []
        for name in envs:
            cells.append(statistics.median(walls[name]))
            cells.append(statistics.median(counted[name]))
        rows.append((label, cells))
        print(f"measured {label}", file=sys.stderr, flush=True)
    return rows


def report(rows: list[tuple[str, list[float | None]]], before: bool, runs: int) -> None:
    def ms(value: float | None) -> str:
        return "—" if value is None else f"{value * 1000:,.0f} ms"

    names = ["before", "after"] if before else ["now"]
    heads = [f"{name}: process, -X importtime" for name in names]
    print(f"| statement (median of {runs} fresh processes) | " + " | ".join(heads) + " |")
    print("|---|" + "---|" * len(names))
    for label, cells in rows:
        pairs = [f"{ms(cells[i])}, {ms(cells[i + 1])}" for i in range(0, len(cells), 2)]
        print(f"| {label} | " + " | ".join(pairs) + " |")
    load = os.getloadavg()
    print(f"\nload average: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per figure")
    parser.add_argument(
        "--before",
        type=Path,
        help="a folder holding another version's memquill package (its packages/core/src)",
    )
    args = parser.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    rows = measure(args.runs, args.before)
    report(rows, args.before is not None, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
