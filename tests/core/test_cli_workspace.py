"""One workspace rule everywhere: ``memquill where`` says which folder and why, ``~`` works in
the Python API as on the command line, and old ids point to the current version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.core.store_helpers import manual

import memquill
from memquill import MemorySession, MemoryToolset, RecordStore, open_session
from memquill.errors import ERRORS
from memquill.query import MemoryQuery, SearchArgs

MEMQUILL = str(Path(sys.executable).parent / "memquill")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("MEMQUILL_", "XDG_"))
    }
    environment.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "data"))
    environment["MEMQUILL_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return environment


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMQUILL, *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def where(env: dict[str, str], *args: str) -> dict[str, object]:
    done = run(env, *args, "where", "--json")
    return json.loads(done.stdout) | {"status": done.returncode}


def test_where_names_the_workspace_and_the_rule_that_chose_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    default = tmp_path / "data" / "memquill" / "workspace"
    shown = where(env)
    assert shown["workspace"] == str(default) and shown["origin"] == "default"
    assert shown["why"] == "the default: neither --workspace nor $MEMQUILL_WORKSPACE is set"
    assert (shown["exists"], shown["problem"], shown["status"]) == (False, None, 0)
    assert shown["bindings"] == str(tmp_path / "data" / "memquill" / "bindings.json")
    assert shown["records"] == str(default / "memory" / "records.md")

    chosen = tmp_path / "notes"
    chosen.mkdir()
    env["MEMQUILL_WORKSPACE"] = str(chosen)
    shown = where(env)
    assert (shown["workspace"], shown["origin"], shown["status"]) == (str(chosen), "variable", 0)

    flagged = where(env, "--workspace", "~/elsewhere")  # the flag wins, ~ is the home folder
    assert flagged["workspace"] == str(tmp_path / "home" / "elsewhere")
    assert flagged["origin"] == "flag" and flagged["status"] == 1
    assert str(flagged["problem"]).endswith("does not exist. Create it first (mkdir -p "
                                            f"{tmp_path / 'home' / 'elsewhere'}) or pass an "
                                            "existing folder.")  # fmt: skip

    text = run(env, "where").stdout.splitlines()
    assert text[:3] == [
        f"workspace: {chosen}",
        "  why:     from $MEMQUILL_WORKSPACE",
        "  state:   exists",
    ]
    assert text[3] == f"records:   {chosen / 'memory' / 'records.md'}"
    assert [line.split(":")[0] for line in text[4:]] == ["lock", "index", "bindings", "sync", "key"]


def test_version(env: dict[str, str]) -> None:
    done = run(env, "--version")
    assert (done.returncode, done.stdout) == (0, f"memquill {memquill.__version__}\n")


def test_the_python_api_expands_the_home_folder_like_the_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "memory.md").write_text("# Notes\n\nTea at four.\n")
    monkeypatch.setenv("HOME", str(home))
    session = MemorySession("~/notes", "chat-1")
    assert session.workspace == home / "notes"
    saved = MemoryToolset(session).call("memory_remember", {"content": "Green tea, no sugar."})
    assert not saved.is_error, saved.text
    assert RecordStore("~/notes").snapshot().records[0].content == "Green tea, no sugar."
    found = MemoryQuery("~/notes").search(SearchArgs(query="tea"))
    assert {hit.path for hit in found.hits} == {
        f"memory/records/{RecordStore('~/notes').snapshot().records[0].id}.md",
        "memory.md",
    }
    assert open_session("~/notes", access="read").workspace == home / "notes"


def test_update_and_forget_on_an_old_version_name_the_current_one(
    tmp_path: Path, env: dict[str, str]
) -> None:
    store = RecordStore(tmp_path)
    first = store.save([manual("The port is 5434.")])
    old = first.record_id or ""
    store.correct(old, "The port is 15434.", first.revision)
    snapshot = store.snapshot()
    current = snapshot.records[-1]
    revision = snapshot.record_revision(current)[:16]
    env["MEMQUILL_WORKSPACE"] = str(tmp_path)
    expected = (
        f"error[not_found]: Record {old} was corrected; its current version is "
        f"{current.id} (record revision {revision}). Run: memquill {{}} {current.id[:8]}"
        f"{{}} --revision {revision}\n"
    )
    updated = run(env, "update", old[:8], "The port is 25434.", "--revision", "0" * 8)
    assert updated.returncode == ERRORS["not_found"].exit_status
    assert updated.stderr == expected.format("update", " TEXT")
    forgotten = run(env, "forget", old, "--revision", "0" * 8)
    assert forgotten.returncode == ERRORS["not_found"].exit_status
    assert forgotten.stderr == expected.format("forget", "")
    assert store.snapshot() == snapshot  # nothing changed
    # The suggested command works as printed.
    done = run(env, "update", current.id[:8], "The port is 25434.", "--revision", revision)
    assert done.returncode == 0, done.stderr
    again = run(env, "update", current.id[:8], "x", "--revision", "0" * 8)
    assert "was corrected; its current version is" in again.stderr
    store.revoke(store.snapshot().records[-1].id, store.snapshot().revision)
    gone = run(env, "update", old[:8], "x", "--revision", "0" * 8)
    assert (
        gone.stderr
        == f"error[not_found]: Record {old[:8]} was forgotten; there is nothing to update.\n"
    )
