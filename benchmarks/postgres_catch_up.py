"""A LangGraph store's first search across many PostgreSQL namespaces, and one after a put.

    uv run python benchmarks/postgres_catch_up.py            # starts a throwaway cluster
    uv run python benchmarks/postgres_catch_up.py --url postgresql://... --namespaces 10000
    PYTHONPATH=/path/to/older/src uv run python benchmarks/postgres_catch_up.py   # an older one

Fills ``--namespaces`` namespaces of ``--per`` items each (``("memories", "uN")``, a few words
an item) through ``MemquillStore.batch``, then, ``--runs`` times: drops the search documents
of that base (``memquill.search_*`` rows, vacuumed) and times a new process's first search of
``("memories",)`` for two words, which brings every namespace's search documents up to date
(past 20,000 record versions a search asks the database). Then times six searches, each
after one put in one namespace. Prints the load average with each figure.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import postgres_cluster

if TYPE_CHECKING:
    from memquill_langchain import MemquillStore

WORDS = [
    "heron",
    "harbour",
    "deploy",
    "coffee",
    "tea",
    "river",
    "boat",
    "green",
    "anna",
    "lamp",
    "violin",
    "garden",
    "winter",
    "market",
    "bridge",
    "pepper",
]
QUERY = "heron violin"


def text(index: int) -> str:
    first, second, third = WORDS[index % 16], WORDS[(index * 7 + 3) % 16], WORDS[index // 16 % 16]
    return f"note {index} about {first} and {second} near the {third}"


def store(location: str, root: Path) -> MemquillStore:
    from memquill_langchain import MemquillStore

    return MemquillStore(root, store=location)


def fill(location: str, root: Path, namespaces: int, per: int) -> None:
    from langgraph.store.base import PutOp

    filled = store(location, root)
    ops: list[PutOp] = []
    for n in range(namespaces):
        for key in range(per):
            ops.append(PutOp(("memories", f"u{n}"), f"k{key}", {"content": text(n * per + key)}))
        if len(ops) >= 5000:
            filled.batch(ops)
            ops = []
    if ops:
        filled.batch(ops)


def forget_documents(url: str, base: str) -> None:
    with psycopg.connect(url, autocommit=True) as connection:
        for table in ("search_documents", "search_terms", "search_state"):
            connection.execute(
                f"DELETE FROM memquill.{table} WHERE workspace_id IN "
                "(SELECT workspace_id FROM memquill.workspaces WHERE workspace LIKE %s)",
                (base + "/%",),
            )
            connection.execute(f"VACUUM memquill.{table}")


def first_search(location: str, root: Path) -> None:
    searching = store(location, root)
    started = time.perf_counter()
    hits = searching.search(("memories",), query=QUERY, limit=10)
    took = time.perf_counter() - started
    print(f"  first search: {took:.2f} s ({len(hits)} hits), load {os.getloadavg()[0]:.1f}")


def after_puts(location: str, root: Path) -> None:
    searching = store(location, root)
    searching.search(("memories",), query=QUERY, limit=10)
    times: list[float] = []
    for n in range(6):
        searching.put(("memories", "u1"), "k0", {"content": text(n)})
        started = time.perf_counter()
        searching.search(("memories",), query=QUERY, limit=10)
        times.append((time.perf_counter() - started) * 1000)
    shown = " ".join(f"{value:.0f}" for value in times)
    print(f"  a search after one put: {shown} ms, load {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description="A first search across many namespaces.")
    parser.add_argument("--url", help="a database to use (default: a throwaway cluster)")
    parser.add_argument("--namespaces", type=int, default=10_000)
    parser.add_argument("--per", type=int, default=10, help="items per namespace")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--step", choices=("first", "puts"), help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.step:  # one measurement, in a new process
        location = f"{options.url}#workspace={options.base}"
        step = first_search if options.step == "first" else after_puts
        step(location, Path(options.root))
        return
    cluster = None
    url = options.url
    if url is None:
        cluster = postgres_cluster.start(Path(tempfile.mkdtemp(prefix="memquill-bench-")))
        url = cluster.url
    try:
        base = f"catch-up-{uuid.uuid4().hex[:8]}"
        root = Path(tempfile.mkdtemp())
        fill(f"{url}#workspace={base}", root, options.namespaces, options.per)
        print(f"{options.namespaces} namespaces of {options.per} items:", flush=True)
        command = [sys.executable, __file__, "--url", url, "--base", base, "--root", str(root)]
        for _ in range(options.runs):
            forget_documents(url, base)
            subprocess.run([*command, "--step", "first"], check=True)
        subprocess.run([*command, "--step", "puts"], check=True)
    finally:
        if cluster is not None:
            postgres_cluster.stop(cluster.data, cluster.bindir)


if __name__ == "__main__":
    main()
