"""A fact another machine forgot loses its vector at the sync that brings the forget.

``memquill merge BASE OURS THEIRS`` with OURS a workspace's ``records.md`` (written through the
store's lock), and ``memquill sync resolve`` of a file-sync tool's conflict copy: after either,
and before any search, the forgotten fact's row is gone from the vector file and its vector's
bytes are no longer in it; the other facts' vectors stay.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from memquill import MemorySession, MemoryToolset, WriteOutcome, WriteSource, forget, remember
from memquill.cli import main
from memquill.enhance._runner import AuxiliaryRunner
from memquill.index._vectors_file import vectors_path
from memquill.paths import canonical_workspace
from memquill.semantic import SemanticRanker
from memquill.testing import TrigramEmbedder
from memquill.testing._models import PARITY_ALIASES

MANUAL = WriteSource("manual")


def _rows(root: Path) -> dict[str, bytes]:
    path = vectors_path(canonical_workspace(root))
    assert path is not None and path.is_file()
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return {str(u): bytes(v) for u, v in connection.execute("SELECT unit, vector FROM vectors")}


def _vector_bytes(root: Path) -> bytes:
    path = vectors_path(canonical_workspace(root))
    assert path is not None
    return path.read_bytes()


def _two_facts(tmp_path: Path) -> tuple[Path, WriteOutcome, WriteOutcome, dict[str, bytes]]:
    """A workspace with two facts whose vectors a semantic search made; the rows."""
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / "note.md").write_text("# Note\n\nNothing about vehicles.\n", "utf-8")
    session = MemorySession(ours, "s1")
    runner = AuxiliaryRunner(state_dir=tmp_path / "state")
    embedder = TrigramEmbedder(aliases=PARITY_ALIASES)
    session = session.with_ranker(SemanticRanker(embedder, session.query, runner=runner))
    kept = remember(session, "Ben rides a red bicycle.", source=MANUAL)
    gone = remember(session, "Anna drives an old automobile.", source=MANUAL)
    MemoryToolset(session).call("memory_search", {"query": "car"})
    rows = _rows(ours)
    assert {f"r:{kept.record_id}", f"r:{gone.record_id}"} <= set(rows)
    return ours, kept, gone, rows


def _forgotten_elsewhere(tmp_path: Path, ours: Path, gone: WriteOutcome) -> bytes:
    """Another machine's copy of ``records.md``: the same, with ``gone`` forgotten there."""
    there = tmp_path / "there"
    (there / "memory").mkdir(parents=True)
    shutil.copyfile(ours / "memory" / "records.md", there / "memory" / "records.md")
    assert gone.record_id is not None
    elsewhere = MemorySession(there, "s2")
    snapshot = elsewhere.store.snapshot()
    (record,) = [r for r in snapshot.records if r.id == gone.record_id]
    forget(elsewhere, gone.record_id, snapshot.record_revision(record), source=MANUAL)
    return (there / "memory" / "records.md").read_bytes()


def test_a_merge_that_forgets_a_fact_deletes_its_vector_at_the_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ours, kept, gone, rows = _two_facts(tmp_path)
    records = ours / "memory" / "records.md"
    base, theirs = tmp_path / "base.md", tmp_path / "theirs.md"
    base.write_bytes(records.read_bytes())
    theirs.write_bytes(_forgotten_elsewhere(tmp_path, ours, gone))
    assert main(["merge", str(base), str(records), str(theirs)]) == 0
    capsys.readouterr()
    assert "Anna drives" not in records.read_text("utf-8")  # the merge forgot it here too
    after = _rows(ours)  # no search since the merge
    assert f"r:{gone.record_id}" not in after
    assert after[f"r:{kept.record_id}"] == rows[f"r:{kept.record_id}"]
    assert rows[f"r:{gone.record_id}"] not in _vector_bytes(ours)  # overwritten


def test_resolving_a_conflict_copy_that_forgets_deletes_the_vector(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ours, kept, gone, rows = _two_facts(tmp_path)
    copy = ours / "memory" / "records.sync-conflict-20260301-120000-ABCDEFG.md"
    copy.write_bytes(_forgotten_elsewhere(tmp_path, ours, gone))
    assert main(["--workspace", str(ours), "sync", "resolve"]) == 0
    capsys.readouterr()
    assert not copy.exists()
    after = _rows(ours)
    assert f"r:{gone.record_id}" not in after and f"r:{kept.record_id}" in after
    assert rows[f"r:{gone.record_id}"] not in _vector_bytes(ours)
