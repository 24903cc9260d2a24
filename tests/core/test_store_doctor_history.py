"""``doctor``'s history figures (issue 33, item 6): capacity in use, history depth, compacted
versions and the bytes they still hold, tombstones; computed from the records alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.core.store_helpers import manual, raw

from memquill import RecordStore
from memquill.store._codec import HEADER_V3, decode_store, encode_block, encode_store
from memquill.store._doctor import HistoryFigures, history_figures
from memquill.store._tombstones import TEXT_HASH_FIELD

MIB = 1024 * 1024
MEMQUILL = str(Path(sys.executable).parent / "memquill")


def cli_env(tmp_path: Path, workspace: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMQUILL_", "XDG_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        MEMQUILL_DISABLE_PLUGIN_AUTOLOAD="1",
        MEMQUILL_WORKSPACE=str(workspace),
    )
    return env


def run_cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([MEMQUILL, *args], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _store_with_history(workspace: Path) -> RecordStore:
    """Three facts; ``a`` corrected twice then compacted, ``b`` corrected once after that,
    ``c`` forgotten: 2 live, 3 superseded (2 compacted), depth 3 and 2, 1 tombstone."""
    store = RecordStore(workspace, capacity=4 * MIB)
    saved = store.save([manual("fact a", "a"), manual("fact b", "b"), manual("fact c", "c")])
    a, b, c = (record_id or "" for record_id in saved.record_ids)
    a = store.correct(a, "fact a, second", store.snapshot().revision).record_id or ""
    store.correct(a, "fact a, third", store.snapshot().revision)
    store.revoke(c, store.snapshot().revision)
    store.compact(store.snapshot().revision)
    store.correct(b, "fact b, second", store.snapshot().revision)
    return store


def test_doctor_reports_depth_compaction_tombstones_and_capacity_in_use(tmp_path: Path) -> None:
    store = _store_with_history(tmp_path)
    report = store.doctor()
    history = report.history
    assert (history.live, history.superseded, history.compacted) == (2, 3, 2)
    assert (history.families, history.versions, history.deepest) == (2, 5, 3)
    assert history.mean_depth == 2.5
    assert history.tombstones == 1

    records = decode_store(raw(tmp_path).decode()).records
    size = {record.id: len(encode_block(record).encode()) for record in records}
    compacted = [r for r in records if r.status == "superseded" and not r.content]
    assert len(compacted) == 2 and all(TEXT_HASH_FIELD in r.meta for r in compacted)
    assert history.compacted_bytes == sum(size[r.id] for r in compacted)
    assert history.tombstone_bytes == sum(size[r.id] for r in records if r.status == "revoked")
    parts = history.live_bytes + history.history_bytes + history.compacted_bytes
    # The parts are measured as a rewrite writes them: fact b's correction was appended, so
    # its old version still says "active" in the file, 4 bytes shorter than "superseded".
    rewritten = encode_store(decode_store(raw(tmp_path).decode())).encode()
    assert rewritten.startswith(HEADER_V3.encode())
    assert len(HEADER_V3.encode()) + parts + history.tombstone_bytes == len(rewritten)
    assert report.used_bytes == len(raw(tmp_path)) == len(rewritten) - 4
    assert report.max_bytes == 4 * MIB
    assert report.percent_used == round(100 * report.used_bytes / (4 * MIB), 1)


def test_the_figures_depend_only_on_the_records(tmp_path: Path) -> None:
    _store_with_history(tmp_path)
    records = decode_store(raw(tmp_path).decode()).records
    assert history_figures(records) == history_figures(reversed(records))
    assert history_figures(()) == HistoryFigures() and HistoryFigures().mean_depth == 0.0


def test_an_unreadable_store_reports_no_history(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save([manual("one", "1")])
    (tmp_path / "memory" / "records.md").write_bytes(raw(tmp_path) + b"stray")
    report = store.doctor()
    assert report.error is not None and report.history == HistoryFigures()


def test_the_doctor_command_shows_the_figures_in_text_and_json(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    _store_with_history(workspace)
    (workspace / ".assistant").mkdir()
    (workspace / ".assistant" / "config.json").write_text('{"store": {"capacityMiB": 4}}')
    report = RecordStore(workspace, capacity=4 * MIB).doctor()
    h = report.history
    env = cli_env(tmp_path, workspace)
    text = run_cli(env, "doctor").splitlines()
    assert (
        f"capacity: {report.used_bytes:,} of {4 * MIB:,} bytes ({report.percent_used:.1f}%)"
    ) in text
    assert (
        "history: 2 live facts, 3 superseded versions (2 compacted), 1 forgotten fact; "
        "deepest history 3 versions, mean 2.5 per fact"
    ) in text
    assert (
        f"bytes: live facts {h.live_bytes:,}, history {h.history_bytes:,}, "
        f"compacted {h.compacted_bytes:,} (text dropped), tombstones {h.tombstone_bytes:,}"
    ) in text
    data = json.loads(run_cli(env, "doctor", "--json"))
    assert data["percent_used"] == report.percent_used and data["max_bytes"] == 4 * MIB
    assert data["history"] == {
        "live": 2,
        "superseded": 3,
        "compacted": 2,
        "families": 2,
        "versions": 5,
        "deepest": 3,
        "mean_depth": 2.5,
        "tombstones": 1,
        "live_bytes": h.live_bytes,
        "history_bytes": h.history_bytes,
        "compacted_bytes": h.compacted_bytes,
        "tombstone_bytes": h.tombstone_bytes,
    }
