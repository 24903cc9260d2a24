"""Search at vault scale: memquill's index beside SQLite FTS5, tantivy, bm25s and a plain scan.

Usage::

    uv run python benchmarks/vault_scale.py [--sizes 512,5000,20000,100000]
        [--data ../shared/bench-data/locomo10.json] [--work DIR] [--queries 200]
        [--before OTHER/packages/core/src] [--peers tantivy,bm25s]

For each size it generates a seeded vault of Markdown notes from LoCoMo conversation turns
(one note = a run of turns of one session, with frontmatter tags, a title and section
headings; about 4 KB each) plus one note about pierogi, then measures, each in its own
process:

- build: ``memquill index`` (files/s, index size, peak RSS) and, over the same files, an FTS5
  table (``porter unicode61``, one row per note), a tantivy index (``en_stem`` tokenizer, one
  document per note, one writer thread) and a bm25s index (its English stop words, no
  stemmer, saved to a folder and memory-mapped when loaded);
- warm search p50/p95 over LoCoMo questions: memquill through its index (change watcher on;
  asked as ``memquill serve`` asks, without the pydantic argument and result models),
  FTS5 (the question's non-stop words OR-ed, ``ORDER BY bm25``), tantivy (the same words
  OR-ed, its BM25 top 5, no match count: block-max WAND) and bm25s (its top 5), and
  memquill's plain full scan (no index, warm document cache);
- the first search in a fresh process (import timed apart);
- a search right after editing one note (memquill: the watcher sees the edit; FTS5: the row
  is replaced first; tantivy: the document is replaced and committed; bm25s has no update, so
  none; plain scan: it re-reads the file);
- whether the pierogi note is the top hit for "pierogi farmer cheese";
- the cold path, whole process: ``memquill search QUESTION`` from a shell against a Python script
  that imports ``sqlite3``, opens the FTS5 index, searches and prints the top five paths (and
  the same script for tantivy and bm25s), interleaved run by run (``--cold-runs`` of each, wall
  and CPU time, and memquill ÷ each peer). The same ``memquill search`` is timed twice: in its
  own process (``MEMQUILL_SERVER=0``) and answered by a ``memquill serve`` started for the vault
  beforehand (``memquill (server)``; Linux; its CPU time is the command's plus the server's
  for the answer, read from ``/proc``, in clock ticks). ``--cold-only`` measures only this (and the
  builds it needs); ``--build-only`` measures only the builds and the index sizes;
- the ratios memquill ÷ each peer: build CPU, index size, cold search CPU, warm p50 CPU, peak
  RSS (warm).

``--peers`` names the peers beside FTS5 (default ``tantivy,bm25s``; empty: FTS5 only).

Children may write their bytecode cache (``PYTHONDONTWRITEBYTECODE`` is dropped) and each cold
command runs once untimed first: an installed package has its bytecode, so a cold start never
compiles.

``--before`` measures another version of memquill (its ``memquill`` package folder first on
the path) beside this one in the same run, each with its own index. Every figure is given in
wall time and, beside it, in CPU time (user + system, worker processes of a build included):
on a shared machine the wall time grows with the load, the CPU time much less. The LoCoMo file
is read from where it lies and never copied; the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SEED = 20261130
NEEDLE = "pierogi farmer cheese"
NEEDLE_NOTE = "kitchen/pierogi.md"
NOW = datetime(2026, 9, 22, 12, tzinfo=UTC)
# The stop words memquill drops from queries, dropped for FTS5 too (spelled out here so that a
# child process measuring FTS5 never imports memquill).
_STOP_TEXT = (
    "the a an is are was were be been being have has had do does did will would shall "
    "should may might can could of at by for with about against between through during "
    "before after above below to from up down in out on off over under again further then "
    "once and but or nor not so if this that these those it its i me my we our you your he "
    "his she her they their what which who whom how when where why"
)
STOP = frozenset(_STOP_TEXT.split(" "))
PEERS = ("tantivy", "bm25s")
"""The engines measured beside FTS5 (``--peers``)."""


# -- the vault ---------------------------------------------------------------------------------


def sessions(data: Path) -> list[tuple[str, list[tuple[str, str]]]]:
    found: list[tuple[str, list[tuple[str, str]]]] = []
    for conversation in json.loads(data.read_text("utf-8")):
        turns = conversation["conversation"]
        number = 1
        while f"session_{number}" in turns:
            said = [(turn["speaker"], turn["text"]) for turn in turns[f"session_{number}"]]
            if said:
                found.append((turns[f"session_{number}_date_time"], said))
            number += 1
    return found


def questions(data: Path, count: int) -> list[str]:
    asked = [
        item["question"] for conv in json.loads(data.read_text("utf-8")) for item in conv["qa"]
    ]
    random.Random(SEED).shuffle(asked)
    return asked[:count]


def generate(root: Path, notes: int, data: Path) -> None:
    """Write ``notes`` seeded notes (and the pierogi note) under ``root`` unless present."""
    marker = root / ".generated"
    if marker.exists() and marker.read_text() == f"{SEED} {notes}":
        return
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(SEED + notes)
    pool = sessions(data)
    words = sorted(
        {w.lower() for _, said in pool for _, text in said for w in text.split() if w.isalpha()}
    )
    words = [w for w in words if len(w) > 4]
    areas = max(1, notes // 1000)
    for index in range(notes):
        date, said = rng.choice(pool)
        start = rng.randrange(len(said))
        picked = [said[(start + i) % len(said)] for i in range(rng.randint(16, 42))]
        tags = rng.sample(words, 2)
        parts = [f"---\ntags: [{tags[0]}, {tags[1]}]\n---\n# {' '.join(rng.sample(words, 3))}\n\n"]
        parts.append(f"_{date}_\n\n")
        for position, (speaker, text) in enumerate(picked):
            if position and position % 12 == 0:
                parts.append(f"\n## {' '.join(rng.sample(words, 2))}\n\n")
            parts.append(f"**{speaker}:** {text}\n")
        folder = root / f"area-{index % areas:03d}" / f"topic-{(index // areas) % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{index:06d}.md").write_text("".join(parts), encoding="utf-8")
    needle = root / NEEDLE_NOTE
    needle.parent.mkdir(parents=True, exist_ok=True)
    needle.write_text(
        "# Family recipes\n\nThe pierogi recipe uses farmer cheese, potato and fried onion.\n",
        encoding="utf-8",
    )
    marker.write_text(f"{SEED} {notes}")


def note_files(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*.md"))


# -- child processes ---------------------------------------------------------------------------


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def fts_terms(question: str) -> str:
    words = [w for w in re.findall(r"\w+", question.lower()) if w not in STOP]
    return " OR ".join(f'"{w}"' for w in words) or '"none"'


def cpu_seconds(*, children: bool = False) -> float:
    """CPU time (user + system) of this process, and of its waited-for children if asked."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    total = own.ru_utime + own.ru_stime
    if children:
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        total += kids.ru_utime + kids.ru_stime
    return total


def child(kind: str, root: Path, store: Path, queries: list[str], edits: int) -> dict[str, Any]:
    """One measurement in this (fresh) process: wall times, and CPU times beside them (the
    machine may be shared: CPU time shows the work done, whatever else runs)."""
    started = time.perf_counter()
    started_cpu = cpu_seconds()
    if kind == "memquill-build":
        from memquill.cli import main

        code = main(["--workspace", str(root), "index", "--quiet", "--json"])
        return {
            "seconds": time.perf_counter() - started,
            # Worker processes of a parallel build count too (they are waited for).
            "cpu": cpu_seconds(children=True) - started_cpu,
            "ok": code == 0,
            "rss": rss_mib(),
        }
    if kind == "fts-build":
        connection = sqlite3.connect(store)
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(
            "CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, body, "
            "tokenize='porter unicode61')"
        )
        with connection:
            connection.executemany(
                "INSERT INTO notes(path, body) VALUES (?, ?)",
                ((str(p), p.read_text("utf-8")) for p in note_files(root)),
            )
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
        return {
            "seconds": time.perf_counter() - started,
            "cpu": cpu_seconds() - started_cpu,
            "rss": rss_mib(),
        }
    if kind == "tantivy-build":
        import tantivy

        schema = tantivy_schema()
        store.mkdir(parents=True, exist_ok=True)
        index = tantivy.Index(schema, path=str(store))
        writer = index.writer(heap_size=64_000_000, num_threads=1)
        for path in note_files(root):
            writer.add_document(tantivy.Document(path=str(path), body=path.read_text("utf-8")))
        writer.commit()
        writer.wait_merging_threads()
        return {
            "seconds": time.perf_counter() - started,
            "cpu": cpu_seconds() - started_cpu,
            "rss": rss_mib(),
        }
    if kind == "bm25s-build":
        import bm25s

        paths = note_files(root)
        texts = [path.read_text("utf-8") for path in paths]
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(texts, show_progress=False), show_progress=False)
        retriever.save(str(store), show_progress=False)
        (store / "paths.json").write_text(json.dumps([str(path) for path in paths]))
        return {
            "seconds": time.perf_counter() - started,
            "cpu": cpu_seconds() - started_cpu,
            "rss": rss_mib(),
        }
    search, edit = searcher(kind, root, store)
    imported = time.perf_counter()
    imported_cpu = cpu_seconds()
    first_hit = search(queries[0])
    first = time.perf_counter() - imported
    result: dict[str, Any] = {
        "import": imported - started,
        "first": first,
        "first_cpu": cpu_seconds() - imported_cpu,
    }
    if kind == "bm25s":
        edits = 0  # bm25s has no update: an edit means a new index
    if len(queries) > 1:
        search(queries[1])
        timings: list[float] = []
        cpu: list[float] = []
        for question in queries[1:]:
            began, began_cpu = time.perf_counter(), cpu_seconds()
            search(question)
            timings.append(time.perf_counter() - began)
            cpu.append(cpu_seconds() - began_cpu)
        result["warm"] = timings
        result["warm_cpu"] = cpu
        # The searches' own peak, before the edits (an edit loads the write side; tantivy's
        # figure then holds its writer's heap).
        result["rss_searches"] = rss_mib()
        after: list[float] = []
        after_cpu: list[float] = []
        files = note_files(root)
        rng = random.Random(SEED)
        for _ in range(edits):
            path = rng.choice(files)
            began, began_cpu = time.perf_counter(), cpu_seconds()
            edit(path)
            search(rng.choice(queries))
            after.append(time.perf_counter() - began)
            after_cpu.append(cpu_seconds() - began_cpu)
        result["edited"] = after
        result["edited_cpu"] = after_cpu
    result["needle"] = search(NEEDLE) == NEEDLE_NOTE
    result["first_hit"] = first_hit
    result["rss"] = rss_mib()
    return result


def searcher(
    kind: str, root: Path, store: Path
) -> tuple[Callable[[str], str | None], Callable[[Path], None]]:
    """A search function (returns the top hit's path) and an edit function."""

    def append(path: Path) -> None:
        with path.open("a", encoding="utf-8") as handle:
            handle.write("\nAn edit: the kayak trip moved to Thursday.\n")

    if kind in ("memquill", "scan"):
        # Asked as ``memquill serve`` asks (the request checked by hand, the answer as data):
        # memquill's own warm process never builds the argument and result models (pydantic).
        from memquill.index._search_index import IndexSearcher
        from memquill.query import MemoryQuery
        from memquill.query._plain import search_request

        engine = MemoryQuery(
            root,
            now=lambda: NOW,
            searcher=IndexSearcher(store, notice=None) if kind == "memquill" else None,
        )

        def search(question: str) -> str | None:
            request = search_request(query=question[:2000], limit=5)
            assert request is not None
            hits = engine.answer(request).hits
            return hits[0].path if hits else None

        return search, append
    if kind == "tantivy":
        import tantivy

        index = tantivy.Index.open(str(store))

        def tantivy_search(question: str) -> str | None:
            words = [w for w in re.findall(r"\w+", question.lower()) if w not in STOP]
            found = index.searcher()
            query = index.parse_query(" ".join(words) or "none", ["body"])
            # count=False: no total to count, so tantivy's block-max WAND may skip blocks.
            hits = found.search(query, 5, count=False).hits
            return None if not hits else os.path.relpath(found.doc(hits[0][1])["path"][0], root)

        def tantivy_edit(path: Path) -> None:
            append(path)
            writer = index.writer(heap_size=15_000_000, num_threads=1)
            writer.delete_documents_by_term("path", str(path))
            writer.add_document(tantivy.Document(path=str(path), body=path.read_text("utf-8")))
            writer.commit()
            writer.wait_merging_threads()
            index.reload()

        return tantivy_search, tantivy_edit
    if kind == "bm25s":
        import bm25s

        retriever = bm25s.BM25.load(str(store), mmap=True, show_progress=False)
        paths = json.loads((store / "paths.json").read_text("utf-8"))

        def bm25s_search(question: str) -> str | None:
            tokens = bm25s.tokenize(question, return_ids=False, show_progress=False)
            if not tokens[0]:
                return None
            found, scores = retriever.retrieve(tokens, k=5, show_progress=False)
            if scores[0][0] <= 0:
                return None
            return os.path.relpath(paths[int(found[0][0])], root)

        def no_edit(path: Path) -> None:
            raise AssertionError("bm25s has no update")

        return bm25s_search, no_edit
    connection = sqlite3.connect(store)

    def fts_search(question: str) -> str | None:
        row = connection.execute(
            "SELECT path FROM notes WHERE notes MATCH ? ORDER BY bm25(notes) LIMIT 5",
            (fts_terms(question),),
        ).fetchone()
        return None if row is None else os.path.relpath(row[0], root)

    def fts_edit(path: Path) -> None:
        append(path)
        with connection:
            connection.execute("DELETE FROM notes WHERE path = ?", (str(path),))
            connection.execute(
                "INSERT INTO notes(path, body) VALUES (?, ?)", (str(path), path.read_text("utf-8"))
            )

    return fts_search, fts_edit


# The FTS5 peer of ``memquill search``: a whole process that imports, opens, searches, prints.
FTS_SCRIPT = """
import re, sqlite3, sys
store, root, question = sys.argv[1:4]
stop = frozenset(sys.argv[4].split(" "))
words = [w for w in re.findall(r"\\w+", question.lower()) if w not in stop]
connection = sqlite3.connect(store)
rows = connection.execute(
    "SELECT path FROM notes WHERE notes MATCH ? ORDER BY bm25(notes) LIMIT 5",
    (" OR ".join(f'"{w}"' for w in words) or '"none"',),
).fetchall()
for (path,) in rows:
    print(path[len(root) + 1 :])
"""


# The tantivy and bm25s peers of the FTS5 script.
TANTIVY_SCRIPT = """
import re, sys, tantivy
store, root, question = sys.argv[1:4]
stop = frozenset(sys.argv[4].split(" "))
words = [w for w in re.findall(r"\\w+", question.lower()) if w not in stop]
index = tantivy.Index.open(store)
searcher = index.searcher()
query = index.parse_query(" ".join(words) or "none", ["body"])
for _, address in searcher.search(query, 5, count=False).hits:
    print(searcher.doc(address)["path"][0][len(root) + 1 :])
"""
BM25S_SCRIPT = """
import json, sys, bm25s
store, root, question = sys.argv[1:4]
retriever = bm25s.BM25.load(store, mmap=True, show_progress=False)
paths = json.loads(open(store + "/paths.json", encoding="utf-8").read())
tokens = bm25s.tokenize(question, return_ids=False, show_progress=False)
if tokens[0]:
    found, scores = retriever.retrieve(tokens, k=5, show_progress=False)
    for document, score in zip(found[0], scores[0]):
        if score > 0:
            print(paths[int(document)][len(root) + 1 :])
"""
PEER_SCRIPTS = {"fts": FTS_SCRIPT, "tantivy": TANTIVY_SCRIPT, "bm25s": BM25S_SCRIPT}


def tantivy_schema() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("path", stored=True, tokenizer_name="raw")
    builder.add_text_field("body", tokenizer_name="en_stem")
    return builder.build()


def cold_command(kind: str, root: Path, store: Path, question: str) -> list[str]:
    """The whole-process command of one cold search: ``memquill search`` or a peer's script."""
    if kind in PEER_SCRIPTS:
        script = PEER_SCRIPTS[kind]
        return [sys.executable, "-c", script, str(store), str(root), question, _STOP_TEXT]
    # The console script a shell runs (``PYTHONPATH`` picks the version measured).
    script = Path(sys.executable).with_name("memquill")
    return [str(script), "--workspace", str(root), "search", question]


def run_cold(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one whole process."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read() if process.stderr else ""
    if process.returncode != 0:
        raise SystemExit(f"{command[:4]} failed ({process.returncode}):\n{error[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def measure_cold(
    engines: list[tuple[str, str, Path, dict[str, str]]],
    root: Path,
    questions: list[str],
    servers: dict[str, Callable[[], float]] | None = None,
) -> dict[str, dict[str, list[float]]]:
    """Each engine's whole-process search, interleaved question by question (all see the
    same load); one untimed run each first (bytecode written, files in the page cache).

    ``servers``: the CPU seconds so far of the server that answers an engine's commands; its
    mean over the runs is added to each run's CPU time (the answer's work is done there, and
    ``/proc`` counts it in clock ticks, too coarse for one run)."""
    servers = servers or {}
    for _, kind, store, env in engines:
        run_cold(cold_command(kind, root, store, questions[0]), env)
    found: dict[str, dict[str, list[float]]] = {
        name: {"wall": [], "cpu": []} for name, *_ in engines
    }
    started = {name: cpu_so_far() for name, cpu_so_far in servers.items()}
    for question in questions:
        for name, kind, store, env in engines:
            wall, cpu = run_cold(cold_command(kind, root, store, question), env)
            found[name]["wall"].append(wall)
            found[name]["cpu"].append(cpu)
    for name, cpu_so_far in servers.items():
        share = (cpu_so_far() - started[name]) / len(questions)
        found[name]["cpu"] = [cpu + share for cpu in found[name]["cpu"]]
    return found


@contextlib.contextmanager
def serving(root: Path, env: dict[str, str]) -> Iterator[Callable[[], float] | None]:
    """``memquill serve`` for ``root`` while the block runs: its CPU seconds so far, read from
    ``/proc`` (``None``: no server here)."""
    if not hasattr(socket, "SO_PEERCRED"):
        yield None
        return
    script = Path(sys.executable).with_name("memquill")
    process = subprocess.Popen(
        [str(script), "serve", "--workspace", str(root)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        if not process.stdout.readline().startswith(b"memquill serve: answering"):
            raise SystemExit("memquill serve did not start")
        stat = Path(f"/proc/{process.pid}/stat")
        tick = os.sysconf("SC_CLK_TCK")

        def cpu() -> float:
            fields = stat.read_text().rpartition(")")[2].split()
            return (int(fields[11]) + int(fields[12])) / tick  # utime, stime

        yield cpu
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        if process.stdout is not None:
            process.stdout.close()


def spawn(
    kind: str, root: Path, store: Path, queries: list[str], edits: int, env: dict[str, str]
) -> dict[str, Any]:
    payload = json.dumps({"queries": queries, "edits": edits})
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(root), str(store)],
        input=payload,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


# -- the report --------------------------------------------------------------------------------


def ms(value: float) -> str:
    return f"{value * 1000:,.1f} ms"


def size_of(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def measure(size: int, args: argparse.Namespace, queries: list[str]) -> dict[str, Any]:
    work: Path = args.work
    root = work / f"vault-{size}"
    generate(root, size, args.data)
    time.sleep(2.1)  # let the notes settle: a note changed in the last 2 s is read again
    index_folder = work / f"index-{size}"
    before_folder = work / f"index-before-{size}"
    fts = work / f"fts-{size}.sqlite3"
    peers = {name: work / f"{name}-{size}" for name in args.peer_names}
    built = [fts, *(next(f.glob("*.sqlite3"), None) for f in (index_folder, before_folder))]
    # --reuse: the indexes of an earlier run stand (a run measuring only the cold path).
    reuse = args.reuse and all(built[: 3 if args.before else 2])
    for folder in (index_folder, before_folder) if not reuse else ():
        shutil.rmtree(folder, ignore_errors=True)
    for stale in work.glob(fts.name + "*") if not reuse else ():
        stale.unlink()
    for folder in peers.values():
        if not reuse or not folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
    # Bytecode may be cached (as in an installed package): no child compiles what it imports.
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # In its own process, unless the engine is the server's (``served_env``).
    served_env = {**base_env, "MEMQUILL_INDEX_DIR": str(index_folder)}
    env = {**served_env, "MEMQUILL_SERVER": "0"}
    # The version measured beside this one: its own package first on the path, its own index.
    before_env = {
        **base_env,
        "MEMQUILL_INDEX_DIR": str(before_folder),
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(args.before), os.environ.get("PYTHONPATH")])
        ),
    }
    files = len(note_files(root))
    text_mb = sum(p.stat().st_size for p in note_files(root)) / 1e6
    load_before = os.getloadavg()[0]
    row: dict[str, Any] = {"size": size, "files": files, "text_mb": text_mb}
    if args.before and not reuse:
        row["before_build"] = spawn("memquill-build", root, before_folder, [], 0, before_env)
    if args.before:
        row["before_mb"] = size_of(next(before_folder.glob("*.sqlite3"))) / 1e6
    if not reuse:
        row["build"] = spawn("memquill-build", root, index_folder, [], 0, env)
        row["fts_build"] = spawn("fts-build", root, fts, [], 0, env)
    for name, folder in peers.items():
        if not folder.exists():
            row[f"{name}_build"] = spawn(f"{name}-build", root, folder, [], 0, env)
        row[f"{name}_mb"] = size_of(folder) / 1e6
    row["index_mb"] = size_of(next(index_folder.glob("*.sqlite3"))) / 1e6
    row["fts_mb"] = size_of(fts) / 1e6
    if args.build_only:
        row["load"] = (load_before, os.getloadavg()[0])
        return row
    many = queries[: args.queries]
    with serving(root, served_env) as server_cpu:
        cold_engines = [
            ("before", "memquill", before_folder, before_env),
            ("memquill", "memquill", index_folder, env),
            *((("served", "memquill", index_folder, served_env),) if server_cpu else ()),
            ("fts", "fts", fts, env),
            *((name, name, folder, env) for name, folder in peers.items()),
        ]
        row["cold"] = measure_cold(
            [engine for engine in cold_engines if engine[0] != "before" or args.before],
            root,
            many[1 : 1 + args.cold_runs],
            {"served": server_cpu} if server_cpu else None,
        )
    if args.cold_only:
        row["load"] = (load_before, os.getloadavg()[0])
        return row
    scan_queries = many[: max(3, args.queries // (1 + size // 2000))]
    engines = [
        ("before", "memquill", before_folder, many, before_env),
        ("memquill", "memquill", index_folder, many, env),
        ("fts", "fts", fts, many, env),
        *((name, name, folder, many, env) for name, folder in peers.items()),
        ("scan", "scan", index_folder, scan_queries if size <= args.scan_max else [], env),
    ]
    for name, kind, store, asked, environment in engines:
        if not asked or (name == "before" and not args.before):
            continue
        row[name] = spawn(kind, root, store, asked, args.edits, environment)
        firsts = [
            spawn(kind, root, store, [question], 0, environment)
            for question in many[1 : 1 + (args.fresh if kind != "scan" else 1)]
        ]
        row[name]["fresh"] = [first["first"] for first in firsts]
        row[name]["fresh_cpu"] = [first["first_cpu"] for first in firsts]
        row[name]["fresh_import"] = [first["import"] for first in firsts]
        row[name]["fresh_rss"] = max(first["rss"] for first in firsts)
    row["load"] = (load_before, os.getloadavg()[0])
    return row


def cold_cell(name: str) -> Callable[[dict[str, Any]], str]:
    def render(r: dict[str, Any]) -> str:
        found = r.get("cold", {}).get(name)
        if not found:
            return "—"
        return f"{ms(statistics.median(found['wall']))} ({ms(statistics.median(found['cpu']))})"

    return render


def cold_ratio(name: str, peer: str = "fts") -> Callable[[dict[str, Any]], str]:
    def render(r: dict[str, Any]) -> str:
        cold = r.get("cold", {})
        if name not in cold or peer not in cold:
            return "—"
        wall = statistics.median(cold[name]["wall"]) / statistics.median(cold[peer]["wall"])
        cpu = statistics.median(cold[name]["cpu"]) / statistics.median(cold[peer]["cpu"])
        return f"{wall:.2f}× ({cpu:.2f}×)"

    return render


def cold_rows(
    rows: list[dict[str, Any]], names: dict[str, str], *, load: bool = True
) -> list[tuple[str, Callable[[dict[str, Any]], str]]]:
    """The cold-path rows: each engine's whole-process search, and memquill ÷ FTS5."""
    table: list[tuple[str, Callable[[dict[str, Any]], str]]] = []
    for name in ("before", "memquill", "served", "fts", *PEERS):
        if any(name in row.get("cold", {}) for row in rows):
            table.append((f"{names[name]} cold search, whole process (CPU)", cold_cell(name)))
    for name in ("before", "memquill", "served"):
        for peer in ("fts", *PEERS):
            if any(name in row.get("cold", {}) and peer in row["cold"] for row in rows):
                table.append(
                    (
                        f"{names[name]} cold ÷ {names[peer]} script (CPU)",
                        cold_ratio(name, peer),
                    )
                )
    if load:
        table.append(
            ("load average (start / end)", lambda r: f"{r['load'][0]:.1f} / {r['load'][1]:.1f}")
        )
    return table


def peer_ratios(
    rows: list[dict[str, Any]], names: dict[str, str]
) -> list[tuple[str, Callable[[dict[str, Any]], str]]]:
    """memquill ÷ each peer: build CPU, index size, warm p50 CPU, fresh first search CPU, RSS."""

    def ratio(top: float | None, bottom: float | None) -> str:
        return "—" if not top or not bottom else f"{top / bottom:.2f}×"

    def figures(r: dict[str, Any], name: str) -> dict[str, float | None]:
        built = r.get(f"{name}_build" if name != "memquill" else "build")
        engine = r.get(name)
        return {
            "build CPU": built["cpu"] if built else None,
            "index size": r.get(f"{name}_mb" if name != "memquill" else "index_mb"),
            "warm p50 CPU": statistics.median(engine["warm_cpu"]) if engine else None,
            "first search, fresh process, CPU": (
                statistics.median(engine["fresh_cpu"]) if engine else None
            ),
            "peak RSS warm": engine["rss"] if engine else None,
        }

    table: list[tuple[str, Callable[[dict[str, Any]], str]]] = []
    for peer in ("fts", *PEERS):
        if not any(peer in row for row in rows):
            continue
        for figure in figures({}, "memquill"):
            table.append(
                (
                    f"memquill ÷ {names[peer]}: {figure}",
                    lambda r, p=peer, f=figure: ratio(figures(r, "memquill")[f], figures(r, p)[f]),
                )
            )
    return table


def build_rows(
    rows: list[dict[str, Any]], names: dict[str, str]
) -> list[tuple[str, Callable[[dict[str, Any]], str]]]:
    """The build rows: each engine's build (wall and CPU time), index size, and memquill ÷ each
    peer in build CPU and size."""
    before = any("before_build" in row for row in rows)
    table: list[tuple[str, Callable[[dict[str, Any]], str]]] = []

    def build(key: str, label: str) -> None:
        def render(r: dict[str, Any]) -> str:
            found = r.get(key)
            if not found:
                return "—"
            seconds, cpu = found["seconds"], found["cpu"]
            return (
                f"{seconds:.1f} s, {r['files'] / seconds:,.0f} files/s "
                f"(CPU {cpu:.1f} s, {r['files'] / cpu:,.0f} files/CPU-s)"
            )

        table.append((label, render))

    if before:
        build("before_build", "memquill before build")
    build("build", "memquill build")
    build("fts_build", "FTS5 build")
    for peer in PEERS:
        if any(f"{peer}_build" in row for row in rows):
            build(f"{peer}_build", f"{names[peer]} build")
    if before:
        table.append(("memquill before index size", lambda r: f"{r.get('before_mb', 0):.1f} MB"))
    table.append(("memquill index size", lambda r: f"{r['index_mb']:.1f} MB"))
    table.append(("FTS5 index size", lambda r: f"{r['fts_mb']:.1f} MB"))
    for peer in PEERS:
        if any(f"{peer}_mb" in row for row in rows):
            table.append(
                (f"{names[peer]} index size", lambda r, p=peer: f"{r.get(p + '_mb', 0):.1f} MB")
            )

    for name, key in (("before", "before_build"), ("memquill", "build")):
        if not any(key in row for row in rows):
            continue
        for peer in ("fts", *PEERS):
            if not any(f"{peer}_build" in row for row in rows):
                continue
            table.append(
                (
                    f"{names[name]} ÷ {names[peer]}: build CPU / index size",
                    lambda r, k=key, p=peer, n=name: build_ratio(r, k, p, n),
                )
            )
    return table


def build_ratio(r: dict[str, Any], key: str, peer: str, name: str) -> str:
    built, other = r.get(key), r.get(f"{peer}_build")
    if not built or not other:
        return "—"
    size = r.get("before_mb" if name == "before" else "index_mb", 0.0)
    return f"{built['cpu'] / other['cpu']:.2f}× / {size / r[f'{peer}_mb']:.2f}×"


def report(rows: list[dict[str, Any]]) -> None:
    """The table: wall time first, CPU time (user + system) beside it."""

    def line(label: str, cells: list[str]) -> str:
        return f"| {label} | " + " | ".join(cells) + " |"

    sizes = [f"{row['size']:,} notes ({row['text_mb']:.0f} MB)" for row in rows]
    print(line("figure", sizes))
    print("|" + "---|" * (len(rows) + 1))
    names = {
        "before": "memquill before",
        "memquill": "memquill (index)",
        "served": "memquill (server)",
        "fts": "FTS5",
        "tantivy": "tantivy",
        "bm25s": "bm25s",
        "scan": "plain scan",
    }
    present = [name for name in names if any(name in row for row in rows)]
    if not any("cold" in row for row in rows):  # --build-only: the builds and their sizes
        for label, render in build_rows(rows, names):
            print(line(label, [render(row) for row in rows]))
        return
    # The cold rows come first; a --cold-only run has no others.
    if not any("memquill" in row for row in rows):
        for label, render in cold_rows(rows, names):
            print(line(label, [render(row) for row in rows]))
        return
    table = build_rows(rows, names)

    def engine(name: str, label: str, render: Callable[[dict[str, Any]], str]) -> None:
        table.append((f"{names[name]} {label}", lambda r: render(r[name]) if name in r else "—"))

    table.extend(cold_rows(rows, names, load=False))
    for name in present:
        engine(
            name,
            "warm p50 / p95 (CPU)",
            lambda e: (
                f"{ms(statistics.median(e['warm']))} / {ms(percentile(e['warm'], 0.95))} "
                f"({ms(statistics.median(e['warm_cpu']))} / {ms(percentile(e['warm_cpu'], 0.95))})"
            ),
        )
    for name in present:
        engine(
            name,
            "first search, fresh process (CPU)",
            lambda e: (
                f"{ms(statistics.median(e['fresh']))} ({ms(statistics.median(e['fresh_cpu']))})"
            ),
        )
    for name in present:
        engine(
            name,
            "search right after an edit (extra over warm p50; CPU)",
            lambda e: (
                f"{ms(statistics.median(e['edited']))} "
                f"(+{ms(max(0.0, statistics.median(e['edited']) - statistics.median(e['warm'])))}; "
                f"CPU {ms(statistics.median(e['edited_cpu']))})"
                if e["edited"]
                else "—"
            ),
        )
    table.append(
        (
            "memquill import (apart)",
            lambda r: (
                ms(statistics.median(r["memquill"]["fresh_import"])) if "memquill" in r else "—"
            ),
        )
    )
    for name in present:
        engine(
            name,
            "peak RSS (warm searches / with edits / fresh)",
            lambda e: f"{e.get('rss_searches', 0):.0f} / {e['rss']:.0f} / {e['fresh_rss']:.0f} MiB",
        )
    table.append(
        (
            "peak RSS, memquill build",
            lambda r: f"{r['build']['rss']:.0f} MiB" if "build" in r else "—",
        )
    )
    table.append(
        (
            "pierogi note top hit (" + " / ".join(names[n] for n in present) + ")",
            lambda r: " / ".join(
                "yes" if r.get(n, {}).get("needle") else ("—" if n not in r else "no")
                for n in present
            ),
        )
    )
    table.append(
        ("load average (start / end)", lambda r: f"{r['load'][0]:.1f} / {r['load'][1]:.1f}")
    )
    table.extend(peer_ratios(rows, names))
    for label, render in table:
        print(line(label, [render(row) for row in rows]))
    if len(rows) >= 2:
        low, high = rows[1] if len(rows) > 2 else rows[0], rows[-1]
        ratio = high["size"] / low["size"]
        print(f"\ngrowth {low['size']:,} -> {high['size']:,} notes (x{ratio:.0f} notes):")
        for kind in ("memquill", "fts"):
            if kind in low and kind in high:
                warm = statistics.median(high[kind]["warm"]) / statistics.median(low[kind]["warm"])
                fresh = statistics.median(high[kind]["fresh"]) / statistics.median(
                    low[kind]["fresh"]
                )
                print(f"  {kind}: warm p50 x{warm:.1f}, first search x{fresh:.1f}")
        print(
            f"  memquill build time x{high['build']['seconds'] / low['build']['seconds']:.1f}, "
            f"index size x{high['index_mb'] / low['index_mb']:.1f}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    repo = Path(__file__).resolve().parents[1]
    parser.add_argument("--sizes", default="512,5000,20000,100000")
    parser.add_argument(
        "--data", type=Path, default=repo.parent / "shared" / "bench-data" / "locomo10.json"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/memquill-vault-scale"))
    parser.add_argument("--queries", type=int, default=200, help="warm queries per engine")
    parser.add_argument("--fresh", type=int, default=5, help="fresh processes per engine")
    parser.add_argument("--edits", type=int, default=10, help="searches right after an edit")
    parser.add_argument(
        "--cold-runs", type=int, default=7, help="whole-process searches per engine, interleaved"
    )
    parser.add_argument(
        "--cold-only", action="store_true", help="measure only the cold path (and the builds)"
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="measure only the builds and the index sizes (memquill ÷ each peer)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the indexes of an earlier run in --work (with --cold-only)",
    )
    parser.add_argument("--scan-max", type=int, default=20000, help="largest vault scanned")
    parser.add_argument(
        "--before",
        type=Path,
        help="a folder holding another version's memquill package (its packages/core/src), "
        "measured beside this one in the same run",
    )
    parser.add_argument(
        "--peers",
        default=",".join(PEERS),
        help="peers measured beside FTS5 (comma-separated: tantivy, bm25s; empty: none)",
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.peer_names = [name for name in args.peers.split(",") if name]
    if unknown := set(args.peer_names) - set(PEERS):
        parser.error(f"unknown peers: {', '.join(sorted(unknown))}")
    if args.child:
        kind, root, store = args.child
        payload = json.loads(sys.stdin.read() or "{}")
        result = child(
            kind, Path(root), Path(store), payload.get("queries", []), payload.get("edits", 0)
        )
        print(json.dumps(result))
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    queries = [NEEDLE, *questions(args.data, args.queries + 20)]
    rows: list[dict[str, Any]] = []
    for size in (int(value) for value in args.sizes.split(",")):
        rows.append(measure(size, args, queries))
        (args.work / "results.json").write_text(json.dumps(rows))
        print(f"measured {size:,} notes", file=sys.stderr, flush=True)
    report(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
