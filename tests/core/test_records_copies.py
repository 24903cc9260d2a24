"""A file in the records format is memquill's own, never a note, wherever it lies.

``memquill export > records.md`` inside the notes folder made every old version (a corrected
fact's earlier text, with its ``<!-- memory-record`` markup) a searchable note. Such a copy is
skipped by search (through the index and the scan), ``get``, ``recent`` and the index, and an
export into the workspace warns.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.core.cli_helpers import MEMQUILL, cli_env, run_cli

from memquill import MemorySession, MemoryToolset
from memquill.private_paths import is_records_text


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    workspace = tmp_path / "notes"
    workspace.mkdir()
    (workspace / "memory.md").write_text("# Long-term memory\n\n- Standup notes live here.\n")
    environment = cli_env(tmp_path)
    environment["MEMQUILL_WORKSPACE"] = str(workspace)
    return environment


def ok(
    env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    done = run_cli(env, *args, cwd=cwd)
    assert done.returncode == 0, done.stderr.decode()
    return done


def test_an_export_inside_the_workspace_warns_and_is_never_served(
    tmp_path: Path, env: dict[str, str]
) -> None:
    workspace = Path(env["MEMQUILL_WORKSPACE"])
    ok(env, "remember", "--key", "team/standup", "Standup is at 9:30")
    ok(env, "update", "team/standup", "Standup is at 9:45")
    with (workspace / "records.md").open("wb") as out:
        done = subprocess.run(
            [MEMQUILL, "export"],
            stdout=out,
            stderr=subprocess.PIPE,
            env=env,
            cwd=workspace,
            check=False,
        )
    assert done.returncode == 0
    assert "workspace" in done.stderr.decode() and "never a note" in done.stderr.decode()
    copy = workspace / "archive" / "old.md"
    copy.parent.mkdir()
    copy.write_bytes((workspace / "records.md").read_bytes())  # moved anywhere: still memquill's
    assert is_records_text((workspace / "records.md").read_bytes())

    for query in ("9:30", "standup", "memory-record"):
        found = json.loads(ok(env, "search", query, "--json").stdout)
        paths = {hit["path"] for hit in found["hits"]}
        assert paths <= {"memory.md"} | {p for p in paths if p.startswith("memory/records/")}
        assert not [hit for hit in found["hits"] if "9:30" in hit["snippet"]], found
        assert not [hit for hit in found["hits"] if "memory-record" in hit["snippet"]], found
    recent = ok(env, "recent").stdout.decode()
    assert "9:30" not in recent and "old.md" not in recent and "\nrecords.md" not in recent
    refused = run_cli(env, "get", "records.md")
    assert refused.returncode != 0 and b"9:30" not in refused.stdout
    # The tools, in this process, answer alike.
    result = MemoryToolset(MemorySession(workspace, "chat-42", "read")).call(
        "memory_search", {"query": "9:30"}
    )
    assert "9:30" not in result.text, result.text


def test_the_records_format_is_told_by_its_opening() -> None:
    assert is_records_text(b"# Memory records\n\n<!-- memory-records:v1 -->\n\n")
    assert is_records_text(b"# CodePilot memory records\n\n<!-- memory-records:v1 -->\n\n")
    assert not is_records_text(
        b"# Notes\n\nThe records file starts with <!-- memory-records:v1 -->"
    )
    assert not is_records_text(b"# Memory records\n\nMy own list of records.\n")
