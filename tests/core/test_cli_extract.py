"""``memquill extract``, ``memquill jobs`` and ``memquill jobs retry`` on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.core.lifecycle_helpers import USERS, write_transcript

from memquill import MemorySession
from memquill.cli import main
from memquill.lifecycle._ledger import LedgerFile

MODEL_MODULE = textwrap.dedent(
    """
    import json
    from pathlib import Path
    from memquill.enhance import ModelIdentity

    CALLS = Path(__file__).with_name("calls.log")

    class Quoting:
        '''Quotes the first four words of each user message as its fact.'''

        identity = ModelIdentity("custom", "quoting", b"key")

        async def generate(self, prompt, *, max_tokens):
            with CALLS.open("a") as handle:
                handle.write("call\\n")
            turns = json.loads(prompt.user)["turns"]
            return json.dumps([
                {"messageId": t["messageId"], "content": "The user said: " + t["user"],
                 "evidence": " ".join(t["user"].split()[:4])}
                for t in turns
            ])

    class Prose:
        identity = ModelIdentity("custom", "prose", b"key")

        async def generate(self, prompt, *, max_tokens):
            return "Sure! The user moved to Lisbon."

    def quoting():
        return Quoting()
    """
)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "cli_models.py").write_text(MODEL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path / "models"))
    monkeypatch.setenv("MEMQUILL_DISABLE_PLUGIN_AUTOLOAD", "1")
    root = tmp_path / "ws"
    root.mkdir()
    write_transcript(tmp_path / "chat.jsonl", (*USERS, "I also play the cello."), (
        "Welcome!", "Nice.", "Noted.", "Lovely."))  # fmt: skip
    return root


def _run(workspace: Path, *args: str) -> int:
    state = workspace.parent / "state"
    extra = ["--state-dir", str(state)] if args[0] == "extract" or "--model" in args else []
    return main(["--workspace", str(workspace), *args, *extra])


def test_extract_saves_the_transcripts_facts_once(workspace, capsys) -> None:
    transcript = str(workspace.parent / "chat.jsonl")
    status = _run(workspace, "extract", transcript, "--model", "cli_models:quoting")
    out = capsys.readouterr().out
    assert status == 0, out
    assert "transcript: 4 finished turns" in out
    assert "batches closed now: 2; model calls: 2" in out
    assert "The user said: I also play the cello." in out
    records = MemorySession(workspace).store.snapshot().records
    assert len(records) == 4 and {str(r.source["kind"]) for r in records} == {"conversation"}

    assert _run(workspace, "extract", transcript, "--model", "cli_models:quoting") == 0
    again = capsys.readouterr().out
    assert "batches closed now: 0; model calls: 0" in again
    assert len(MemorySession(workspace).store.snapshot().records) == 4
    calls = (workspace.parent / "models" / "calls.log").read_text().splitlines()
    assert len(calls) == 2


def test_no_flush_leaves_the_last_turn_waiting(workspace, capsys) -> None:
    transcript = str(workspace.parent / "chat.jsonl")
    assert (
        _run(workspace, "extract", transcript, "--model", "cli_models:Quoting", "--no-flush") == 0
    )
    assert "batches closed now: 1" in capsys.readouterr().out
    assert _run(workspace, "jobs", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pendingTurns"] == 1 and data["capacityReached"] is False
    assert [job["status"] for job in data["jobs"]] == ["completed"]


def test_a_bad_answer_fails_the_command_and_jobs_shows_why(workspace, capsys) -> None:
    transcript = str(workspace.parent / "chat.jsonl")
    assert _run(workspace, "extract", transcript, "--model", "cli_models:Prose") == 1
    capsys.readouterr()
    assert _run(workspace, "jobs") == 0
    out = capsys.readouterr().out
    assert out.count("failed (extraction_or_storage_failed) attempts 1/3 retry after") == 2
    assert "turns waiting for a batch: 0" in out

    assert _run(workspace, "jobs", "retry") == 0
    assert "jobs made eligible now: 2; model calls: 0" in capsys.readouterr().out
    assert _run(workspace, "jobs", "retry", "--transcript", transcript, "--model",
                "cli_models:quoting") == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "model calls: 2" in out and out.count("completed") == 2
    assert len(MemorySession(workspace).store.snapshot().records) == 4


def test_jobs_on_an_unused_workspace_creates_nothing(workspace, capsys) -> None:
    assert _run(workspace, "jobs") == 0
    assert "(no jobs)" in capsys.readouterr().out
    assert list(workspace.iterdir()) == []


def test_usage_errors(workspace, capsys) -> None:
    transcript = str(workspace.parent / "chat.jsonl")
    assert _run(workspace, "extract", transcript, "--model", "nowhere:model") == 2
    assert "error[usage]" in capsys.readouterr().err
    assert _run(workspace, "jobs", "retry", "--transcript", transcript) == 2
    assert "go together" in capsys.readouterr().err


def test_a_corrupt_ledger_exits_with_its_code(workspace, capsys) -> None:
    ledger = LedgerFile.of(workspace)
    ledger.directory.mkdir()
    ledger.path.write_text("[]")
    assert _run(workspace, "jobs") == 22
    assert capsys.readouterr().err.startswith("error[job_corrupt]: The extraction job ledger")


def test_the_installed_command(workspace) -> None:
    env = {**os.environ, "PYTHONPATH": str(workspace.parent / "models")}
    transcript = str(workspace.parent / "chat.jsonl")
    command = [str(Path(sys.executable).parent / "memquill"), "--workspace", str(workspace)]
    state = ["--state-dir", str(workspace.parent / "state")]
    done = subprocess.run(
        [*command, "extract", transcript, "--model", "cli_models:quoting", "--json", *state],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["turns"], data["calls"], len(data["facts"])) == (4, 2, 4)
    assert [job["status"] for job in data["jobs"]] == ["completed", "completed"]
