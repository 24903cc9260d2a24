"""Note chunks are embedded at index time: by the refresh that reads them, not the first search.

Real workspaces, real sessions and index refreshes (with the change watcher and without), the
real runner and vector file; the deterministic trigram embedder. A deleted or changed note's
vectors are looked for in the rows and in the raw bytes of the vector file (SQLite keeps deleted
content unless ``secure_delete`` overwrites it), as ``test_index_forgets`` does for the index.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest

from memquill import MemorySession, MemoryToolset
from memquill.cli import main
from memquill.enhance._runner import AuxiliaryRunner
from memquill.index._search_index import IndexSearcher, SearchIndex
from memquill.index._vectors_file import vectors_path
from memquill.paths import canonical_workspace
from memquill.semantic import Embedder, SemanticRanker
from memquill.semantic._vectors import VectorCache
from memquill.testing import TrigramEmbedder
from memquill.testing._models import FailingEmbedder

NOTES = {
    "garage.md": "# Garage\n\nThe automobile needs new tyres.\n",
    "kitchen.md": "# Kitchen\n\nBake bread on Sunday.\n\n# Pantry\n\nFlour, salt and yeast.\n",
    "tyres.md": "# Tyres\n\nTyres for the bicycle.\n",
}
UNITS = ["n:garage.md#0", "n:kitchen.md#0", "n:kitchen.md#1", "n:tyres.md#0"]


def _workspace(root: Path) -> Path:
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, "utf-8")
    return root


def _session(root: Path, embedder: Embedder, *, watch: bool) -> MemorySession:
    session = MemorySession(root, "s1")
    query = session.query
    # The session's own query engine, its index searcher with or without the change watcher.
    query.__dict__["_searcher"] = IndexSearcher(watch=watch)
    runner = AuxiliaryRunner(state_dir=root.with_name(root.name + "-state"))
    ranker = SemanticRanker(embedder, query, runner=runner, timeout=2.0)
    return session.with_ranker(ranker)


def _index(session: MemorySession) -> SearchIndex:
    searcher = vars(session.query)["_searcher"]  # the one _session gave it
    assert isinstance(searcher, IndexSearcher)
    return searcher.index(canonical_workspace(session.workspace))


def _vectors(root: Path) -> Path:
    path = vectors_path(canonical_workspace(root))
    assert path is not None
    return path


def _embed_by_search(session: MemorySession) -> dict[str, bytes]:
    """Every chunk embedded the way every version does it (a semantic search); the rows."""
    MemoryToolset(session).call("memory_search", {"query": "tyres"})
    rows = _rows(Path(session.workspace))
    assert sorted(rows) == UNITS
    return rows


def _rows(root: Path) -> dict[str, bytes]:
    """Every row of the vector file, read by a connection of its own (unit → vector bytes)."""
    assert _vectors(root).is_file(), "no vector file"
    with contextlib.closing(sqlite3.connect(_vectors(root))) as connection:
        return {str(u): bytes(v) for u, v in connection.execute("SELECT unit, vector FROM vectors")}


@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "walk"])
def test_a_refresh_embeds_the_chunks_before_any_search(tmp_path: Path, watch: bool) -> None:
    root = _workspace(tmp_path / "ws")
    embedder = TrigramEmbedder()
    session = _session(root, embedder, watch=watch)
    _index(session).refresh()
    assert sorted(_rows(root)) == UNITS
    assert embedder.calls == [("document", 4)]  # no query: no search ran
    (root / "shed.md").write_text("# Shed\n\nThe lawnmower lives here.\n", "utf-8")
    _index(session).refresh()
    assert sorted(_rows(root)) == sorted([*UNITS, "n:shed.md#0"])
    assert embedder.calls[1:] == [("document", 1)]  # the new note alone
    # The search that follows finds every chunk cached and embeds only its query.
    text = MemoryToolset(session).call("memory_search", {"query": "lawnmower"}).text
    assert "[shed.md:" in text
    assert embedder.calls[2:] == [("query", 1)]


@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "walk"])
def test_a_deleted_notes_vectors_go_at_the_refresh_that_sees_it(
    tmp_path: Path, watch: bool
) -> None:
    root = _workspace(tmp_path / "ws")
    session = _session(root, TrigramEmbedder(), watch=watch)
    blobs = _embed_by_search(session)
    (root / "kitchen.md").unlink()
    _index(session).refresh()
    rows = _rows(root)
    assert sorted(rows) == ["n:garage.md#0", "n:tyres.md#0"]
    data = _vectors(root).read_bytes()
    assert blobs["n:kitchen.md#0"] not in data and blobs["n:kitchen.md#1"] not in data
    assert blobs["n:garage.md#0"] in data  # the other notes' vectors stay


def test_a_changed_note_loses_the_old_chunks_and_keeps_the_same_ones(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    embedder = TrigramEmbedder()
    session = _session(root, embedder, watch=True)
    blobs = _embed_by_search(session)
    calls = len(embedder.calls)
    (root / "kitchen.md").write_text("# Kitchen\n\nBake rye bread on Sunday.\n", "utf-8")
    _index(session).refresh()
    rows = _rows(root)
    assert sorted(rows) == ["n:garage.md#0", "n:kitchen.md#0", "n:tyres.md#0"]
    assert embedder.calls[calls:] == [("document", 1)]  # the changed chunk alone
    data = _vectors(root).read_bytes()
    assert blobs["n:kitchen.md#1"] not in data  # the chunk the note no longer has
    assert blobs["n:kitchen.md#0"] not in data  # its old text's vector
    assert rows["n:garage.md#0"] == blobs["n:garage.md#0"]


def test_a_keyword_sessions_refresh_deletes_them_too(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    blobs = _embed_by_search(_session(root, TrigramEmbedder(), watch=True))
    plain = MemorySession(root, "s2")  # no embedder: another host, the CLI
    (root / "tyres.md").unlink()
    (root / "garage.md").write_text("# Garage\n\nThe automobile is sold.\n", "utf-8")
    assert "[kitchen.md:" in MemoryToolset(plain).call("memory_search", {"query": "bread"}).text
    assert sorted(_rows(root)) == ["n:kitchen.md#0", "n:kitchen.md#1"]
    data = _vectors(root).read_bytes()
    assert blobs["n:tyres.md#0"] not in data and blobs["n:garage.md#0"] not in data


def test_a_failing_embedder_never_breaks_indexing_or_keyword_search(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    blobs = _embed_by_search(_session(root, TrigramEmbedder(name="failing"), watch=True))
    session = _session(root, FailingEmbedder(RuntimeError("provider down")), watch=True)
    (root / "kitchen.md").unlink()
    (root / "garage.md").write_text("# Garage\n\nThe automobile is sold.\n", "utf-8")
    report = _index(session).refresh()
    assert report.analysed >= 1 and report.removed == 1  # indexing went on
    rows = _rows(root)
    # The deleted note's and the changed chunk's vectors went, though nothing was embedded.
    assert sorted(rows) == ["n:tyres.md#0"]
    assert blobs["n:garage.md#0"] not in _vectors(root).read_bytes()
    text = MemoryToolset(session).call("memory_search", {"query": "tyres"}).text
    assert "[tyres.md:" in text
    assert text.startswith("Memory ranking ")  # the fallback line: keyword order stays


def test_memquill_index_embed_precomputes_every_vector(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _workspace(tmp_path / "ws")
    argv = ["--workspace", str(root), "index", "--quiet", "--json"]
    assert main([*argv, "--embed", "memquill.testing:parity_embedder"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["embedded"]["texts"] == 4 and data["embedded"]["vectors"] == 4
    assert sorted(_rows(root)) == UNITS
    # Done already: nothing is embedded again.
    assert main([*argv, "--embed", "memquill.testing:parity_embedder"]) == 0
    assert json.loads(capsys.readouterr().out)["embedded"]["texts"] == 0
    assert sorted(VectorCache(_vectors(root)).units()) == UNITS


def test_memquill_index_embed_refuses_a_bad_spec_and_says_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _workspace(tmp_path / "ws")
    assert main(["--workspace", str(root), "index", "--embed", "no_such_module:x"]) == 2
    assert "error[usage]: --embed no_such_module:x" in capsys.readouterr().err
    assert not _vectors(root).exists()
    spec = "tests.core.test_semantic_index_time:failing"
    assert main(["--workspace", str(root), "index", "--quiet", "--embed", spec]) == 1
    out = capsys.readouterr().out
    assert "Indexed 3 notes" in out and "Not embedded: failed: request_failed." in out


def failing() -> FailingEmbedder:
    """An embedder that always fails (``--embed tests.core.test_semantic_index_time:failing``)."""
    return FailingEmbedder(RuntimeError("provider down"))
