"""Every failure of every surface is coded (issue 21, Why 11; issue 23, item 3).

Each runs the command as a user would, in a process of its own, and checks the one format:
nothing on stdout but what succeeded, ``error[<code>]: <message>`` on stderr, the code's exit
status, and nothing changed on disk.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from tests.core.cli_helpers import cli_env, coded_failure, run_cli, tree, without_driver
from tests.core.lifecycle_helpers import write_transcript
from tests.core.store_helpers import manual

from memquill import RecordStore
from memquill.errors import ERRORS, Messages
from memquill.lifecycle._ledger import LedgerFile

MODELS = textwrap.dedent(
    """
    import json
    from memquill.enhance import ModelIdentity

    class Quoting:
        identity = ModelIdentity("custom", "quoting", b"key")

        async def generate(self, prompt, *, max_tokens):
            turns = json.loads(prompt.user)["turns"]
            return json.dumps([
                {"messageId": t["messageId"], "content": t["user"], "evidence": t["user"]}
                for t in turns
            ])
    """
)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    models = tmp_path / "models"
    models.mkdir()
    (models / "coded_models.py").write_text(MODELS)
    return {**cli_env(tmp_path), "PYTHONPATH": str(models)}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


# -- issue 21, Why 11 -------------------------------------------------------------------------


def test_extract_of_a_missing_transcript_is_invalid(
    env: dict[str, str], tmp_path: Path, workspace: Path
) -> None:
    missing = tmp_path / "missing.jsonl"
    done = run_cli(
        env, "--workspace", str(workspace), "extract", str(missing), "--model",
        "coded_models:Quoting", "--state-dir", str(tmp_path / "state"),
    )  # fmt: skip
    coded_failure(done, "invalid", Messages.TRANSCRIPT_MISSING.format(missing))
    assert tree(workspace) == {}


def test_extract_on_the_default_workspace_creates_nothing_when_the_transcript_is_missing(
    env: dict[str, str], tmp_path: Path
) -> None:
    done = run_cli(
        env, "extract", str(tmp_path / "missing.jsonl"), "--model", "coded_models:Quoting",
        "--state-dir", str(tmp_path / "state"),
    )  # fmt: skip
    coded_failure(done, "invalid")
    assert not (tmp_path / "data" / "memquill" / "workspace").exists()


def test_a_second_extract_while_another_runs_is_job_busy(
    env: dict[str, str], tmp_path: Path, workspace: Path
) -> None:
    transcript = write_transcript(tmp_path / "chat.jsonl")
    (workspace / ".assistant").mkdir()
    # This process holds the runner, as a first `memquill extract` does while it runs.
    with LedgerFile.of(workspace).runner_claim() as claimed:
        assert claimed
        done = run_cli(
            env, "--workspace", str(workspace), "extract", str(transcript), "--model",
            "coded_models:Quoting", "--state-dir", str(tmp_path / "state"),
        )  # fmt: skip
    err = done.stderr.decode()
    assert done.returncode == ERRORS["job_busy"].exit_status == 25, err
    assert err.endswith(f"error[job_busy]: {Messages.JOBS_RUNNER_BUSY}\n"), err
    assert RecordStore(workspace).snapshot().records == ()  # nothing was extracted here
    # Once the other process is done, the same command settles the jobs.
    again = run_cli(
        env, "--workspace", str(workspace), "extract", str(transcript), "--model",
        "coded_models:Quoting", "--state-dir", str(tmp_path / "state"),
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert len(RecordStore(workspace).snapshot().records) == 3


def test_an_empty_workspace_option_is_invalid(tmp_path: Path, env: dict[str, str]) -> None:
    # memquill-mcp too: tests/adapters/mcp/test_mcp_coded_errors.py
    done = run_cli(env, "--workspace", "", "list")
    coded_failure(done, "invalid", Messages.WORKSPACE_EMPTY)
    assert not (tmp_path / "data").exists(), "the default workspace was not used"


def test_get_of_a_file_path_named_as_a_folder_is_refused(
    env: dict[str, str], workspace: Path
) -> None:
    (workspace / "memory.md").write_text("# Long-term memory\n\n- tea over coffee\n")
    for path in ("memory.md/", "memory.md/.", "memory.md\\"):
        done = run_cli(env, "--workspace", str(workspace), "get", path)
        coded_failure(done, "source", Messages.NOT_REGULAR)


def test_export_to_a_folder_names_the_folder(
    env: dict[str, str], tmp_path: Path, workspace: Path
) -> None:
    RecordStore(workspace).save([manual("a fact")])
    folder = tmp_path / "out"
    folder.mkdir()
    done = run_cli(env, "--workspace", str(workspace), "export", "--output", str(folder))
    coded_failure(done, "invalid", Messages.OUTPUT_IS_FOLDER.format(folder))
    assert list(folder.iterdir()) == []
    nowhere = tmp_path / "no" / "such" / "records.md"
    done = run_cli(env, "--workspace", str(workspace), "export", "--output", str(nowhere))
    coded_failure(done, "invalid", Messages.OUTPUT_NO_FOLDER.format(nowhere))


def test_without_the_driver_a_postgres_store_names_the_extra(
    env: dict[str, str], tmp_path: Path, workspace: Path
) -> None:
    # memquill-mcp names its own extra: tests/adapters/mcp/test_mcp_coded_errors.py
    url = "postgresql://memquill:s3cret-pw@127.0.0.1:9/memquill"
    without = without_driver(env, tmp_path)
    done = run_cli(without, "--workspace", str(workspace), "--store", url, "list")
    err = coded_failure(done, "storage", Messages.DATABASE_DRIVER)
    assert "s3cret-pw" not in err


# -- issue 23, item 3 -------------------------------------------------------------------------


def test_read_failures_print_the_coded_line_on_stderr(env: dict[str, str], workspace: Path) -> None:
    ws = ("--workspace", str(workspace))
    coded_failure(run_cli(env, *ws, "get", "missing.md"), "source", Messages.SOURCE_MISSING)
    coded_failure(run_cli(env, *ws, "get", "../x.md"), "access_denied", Messages.OUTSIDE)
    coded_failure(run_cli(env, *ws, "search", "x", "--limit", "99"), "invalid")
    done = run_cli(env, *ws, "get", "missing.md", "--json")
    assert done.returncode == 19 and json.loads(done.stdout)["error_code"] == "source"
    assert done.stderr == f"error[source]: {Messages.SOURCE_MISSING}\n".encode()


def test_usage_errors_are_coded_too(env: dict[str, str], workspace: Path) -> None:
    done = run_cli(env, "--workspace", str(workspace), "get", "x.md", "--lines", "a:b")
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().splitlines()[-1] == (
        "error[usage]: argument --lines: expected A:B, A:, :B or A (line numbers)"
    )


def test_manage_refusals_are_coded_and_create_nothing(env: dict[str, str], tmp_path: Path) -> None:
    done = run_cli(env, "manage", "--port", "70000")
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr == b"error[usage]: --port must be between 0 and 65535\n"
    assert not (tmp_path / "data").exists()  # the default workspace was not created for it


def test_a_fresh_default_workspace_answers_empty_and_stays_uncreated(
    env: dict[str, str], tmp_path: Path
) -> None:
    default = tmp_path / "data" / "memquill" / "workspace"
    search = run_cli(env, "search", "anything")
    assert (search.returncode, search.stdout, search.stderr) == (
        0,
        b"No matching memories found.\n",
        b"",
    )
    recent = run_cli(env, "recent")
    assert (recent.returncode, recent.stdout) == (0, b"No recent memories found.\n")
    hits = json.loads(run_cli(env, "search", "anything", "--json").stdout)
    assert (hits["hits"], hits["error"]) == ([], None)
    coded_failure(run_cli(env, "get", "memory.md"), "source", Messages.SOURCE_MISSING)
    assert run_cli(env, "list").returncode == 0
    jobs = run_cli(env, "jobs", "--json")
    assert jobs.returncode == 0 and json.loads(jobs.stdout)["jobs"] == []
    assert not default.exists()
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.sqlite3"))


def test_a_blocked_remember_exits_with_its_own_status(env: dict[str, str], workspace: Path) -> None:
    ws = ("--workspace", str(workspace))
    saved = json.loads(run_cli(env, *ws, "remember", "My PIN is 4821", "--json").stdout)
    forget = run_cli(env, *ws, "forget", saved["record_id"], "--revision", saved["record_revision"])
    assert forget.returncode == 0, forget.stderr
    before = tree(workspace)
    again = run_cli(env, *ws, "remember", "My PIN is 4821")
    assert again.returncode == ERRORS["blocked"].exit_status == 27
    assert again.stdout.startswith(b"blocked\nstore revision ")
    assert again.stderr == f"error[blocked]: {Messages.BLOCKED}\n".encode()
    assert {k: v for k, v in tree(workspace).items() if not k.endswith("-lock")} == {
        k: v for k, v in before.items() if not k.endswith("-lock")
    }
