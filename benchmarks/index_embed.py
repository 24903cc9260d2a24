"""Index time with and without an embedder: what embedding note chunks at index time costs.

Usage::

    uv run python benchmarks/index_embed.py [--notes 5000]
        [--data ../shared/bench-data/locomo10.json] [--work DIR] [--edits 10]

Generates the seeded vault of ``vault_scale.py`` (LoCoMo turns, about 4 KB a note), then
measures, side by side in one run, each build in a fresh process with a fresh index folder:

- ``memquill index`` (keyword only: no vectors);
- ``memquill index --embed memquill.testing:parity_embedder``: the same build, then every note
  chunk embedded by the deterministic trigram embedder (a stand-in for a real model: its cost
  per text is small and fixed, so the figures show memquill's own cost around the embedder —
  reading, cutting into chunks, batching, the vector file — not a model's);
- a second ``memquill index --embed`` (nothing new: what checking the cache costs);
- in one process, a session's refresh after ``--edits`` notes changed, without an embedder and
  with one (the refresh then embeds the changed chunks, bounded by the search budget).

Every figure is wall time and, beside it, CPU time (user + system, children included); the load
average is printed with them. The vector file's size and row count are given too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from vault_scale import generate, note_files  # the benchmarks folder's own module

SPEC = "memquill.testing:parity_embedder"


def cpu(children: bool) -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_cli(root: Path, env: dict[str, str], *extra: str) -> tuple[float, float, dict[str, Any]]:
    command = [sys.executable, "-m", "memquill.cli", "--workspace", str(root), "index"]
    started, before = time.perf_counter(), cpu(True)
    done = subprocess.run(
        [*command, "--quiet", "--json", *extra], env=env, capture_output=True, text=True, check=True
    )
    return time.perf_counter() - started, cpu(True) - before, json.loads(done.stdout)


def vector_file(folder: Path) -> tuple[int, int]:
    files = list(folder.glob("*.vectors.sqlite3"))
    if not files:
        return 0, 0
    with sqlite3.connect(files[0]) as connection:
        (rows,) = connection.execute("SELECT count(*) FROM vectors").fetchone()
    return files[0].stat().st_size, int(rows)


def refreshes(root: Path, edits: int) -> dict[str, tuple[float, float, int]]:
    """A session's refresh after ``edits`` notes changed: without an embedder, then with one."""
    from memquill import MemorySession
    from memquill.enhance._runner import AuxiliaryRunner
    from memquill.index._search_index import IndexSearcher
    from memquill.semantic import SemanticRanker
    from memquill.testing._models import parity_embedder

    notes = note_files(root)[:edits]
    found: dict[str, tuple[float, float, int]] = {}
    for label, embed in (("keyword", False), ("embedder", True)):
        session = MemorySession(root, "bench")
        searcher = session.query.searcher
        assert isinstance(searcher, IndexSearcher)
        index = searcher.index(root.resolve())
        embedder = parity_embedder()
        if embed:
            state = Path(tempfile.mkdtemp(prefix="memquill-bench-state-"))
            SemanticRanker(embedder, session.query, runner=AuxiliaryRunner(state_dir=state))
        index.refresh()  # settle: the edits below are all it sees
        time.sleep(2.1)  # past the racy window
        index.refresh()
        for number, path in enumerate(notes):
            path.write_text(path.read_text("utf-8") + f"\nEdited {label} {number}.\n", "utf-8")
        started, before = time.perf_counter(), cpu(False)
        index.refresh()
        texts = sum(count for kind, count in embedder.calls if kind == "document")
        found[label] = (time.perf_counter() - started, cpu(False) - before, texts)
        searcher.close()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(__file__).resolve().parents[3] / "shared" / "bench-data" / "locomo10.json",
    )
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--edits", type=int, default=10)
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="memquill-index-embed-"))
    root = work / "vault"
    if root.exists():
        shutil.rmtree(root)
    generate(root, args.notes, args.data)
    env = dict(os.environ, XDG_DATA_HOME=str(work / "data"))
    rows: list[tuple[str, float, float, str]] = []
    for label, extra in (("keyword", ()), ("with embedder", ("--embed", SPEC))):
        folder = work / f"index-{label.replace(' ', '-')}"
        shutil.rmtree(folder, ignore_errors=True)
        env["MEMQUILL_INDEX_DIR"] = str(folder)
        wall, used, data = run_cli(root, env, *extra)
        embedded = data.get("embedded") or {}
        size, count = vector_file(folder)
        rows.append(
            (
                f"memquill index, {label}",
                wall,
                used,
                f"{data['notes']:,} notes; {embedded.get('texts', 0):,} texts embedded; "
                f"vector file {size / 1e6:.1f} MB, {count:,} rows",
            )
        )
        if extra:
            wall, used, data = run_cli(root, env, *extra)
            rows.append(
                (
                    "memquill index --embed again",
                    wall,
                    used,
                    f"{data['embedded']['texts']:,} texts embedded",
                )
            )
    os.environ["MEMQUILL_INDEX_DIR"] = str(work / "index-with-embedder")
    for label, (wall, used, texts) in refreshes(root, args.edits).items():
        rows.append(
            (f"refresh after {args.edits} edits, {label}", wall, used, f"{texts} texts embedded")
        )
    print(f"{args.notes:,} notes, load average {os.getloadavg()[0]:.1f} (2 cores shared)")
    print(f"{'':44} {'wall':>9} {'cpu':>9}")
    for label, wall, used, note in rows:
        print(f"{label:44} {wall:8.2f}s {used:8.2f}s  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
