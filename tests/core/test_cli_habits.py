"""The command line behaves as people expect a command to (issue 23, item 4).

``export --json`` prints JSON; ``where`` and ``doctor`` describe a PostgreSQL store as one (the
database, never its password; no lock file); ``postgres://`` works like ``postgresql://``;
``remember -`` reads standard input; ``--model module:attr`` finds a module in the current
folder; a bad ``--store`` option is named; ``get --lines`` past the end says so.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import psycopg
import pytest
from tests.core.cli_helpers import cli_env, run_cli, tree
from tests.core.conftest import Backing, Server, database_backing
from tests.core.store_helpers import manual

from memquill import RecordStore
from memquill.errors import Messages

PASSWORD = "pw-never-shown-5531"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cli_env(tmp_path)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def _ok(done: subprocess.CompletedProcess[bytes]) -> bytes:
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_export_json_is_json_with_the_revision_and_the_exact_text(
    env: dict[str, str], tmp_path: Path, workspace: Path
) -> None:
    RecordStore(workspace).save([manual("Café opens at 8.")])
    store = RecordStore(workspace)
    exported = store.export()
    data = json.loads(_ok(run_cli(env, "--workspace", str(workspace), "export", "--json")))
    assert data == {
        "revision": store.snapshot().revision,
        "size_bytes": len(exported),
        "text": exported.decode(),
    }
    copy = tmp_path / "copy.md"
    shown = json.loads(
        _ok(run_cli(env, "--workspace", str(workspace), "export", "--output", str(copy), "--json"))
    )
    assert shown == {
        "revision": store.snapshot().revision,
        "size_bytes": len(exported),
        "output": str(copy),
    }
    assert copy.read_bytes() == exported
    # Without --json, the bytes themselves, as before.
    assert _ok(run_cli(env, "--workspace", str(workspace), "export")) == exported


def test_where_names_the_database_never_its_password(env: dict[str, str], workspace: Path) -> None:
    url = f"postgres://alice:{PASSWORD}@db.example:5433/memory?sslpassword={PASSWORD}"
    ws = ("--workspace", str(workspace))
    text = _ok(run_cli(env, *ws, "--store", f"{url}#workspace=team&mirror=1", "where")).decode()
    assert PASSWORD not in text
    lines = text.splitlines()
    assert "store:     PostgreSQL postgres://alice@db.example:5433/memory (from --store)" in lines
    assert "  row:     workspace 'team'; writes lock the row, no lock file" in lines
    assert f"  mirror:  {workspace / 'memory' / '.records-mirror.md'}" in lines
    assert not [line for line in lines if line.startswith(("records:", "lock:"))]
    data = json.loads(_ok(run_cli({**env, "MEMQUILL_STORE": url}, *ws, "where", "--json")))
    assert PASSWORD not in json.dumps(data)
    assert (data["store"], data["database"], data["row"]) == (
        "postgres",
        "postgres://alice@db.example:5433/memory",
        "default",
    )
    assert (data["records"], data["lock"], data["mirror"]) == (None, None, None)
    file_store = json.loads(_ok(run_cli(env, *ws, "where", "--json")))
    assert file_store["store"] == "file"
    assert file_store["records"] == str(workspace / "memory" / "records.md")


def test_a_bad_store_option_is_named(env: dict[str, str], workspace: Path) -> None:
    ws = ("--workspace", str(workspace))
    url = f"postgresql://alice:{PASSWORD}@db.example/memory"
    for option, message in (
        ("#mirorr=1", Messages.STORE_OPTION_UNKNOWN.format("mirorr")),
        ("#idle_timeout=soon", Messages.STORE_OPTION_IDLE),
        ("#workspace=", Messages.STORE_OPTION_WORKSPACE),
    ):
        done = run_cli(env, *ws, "--store", url + option, "list")
        assert done.returncode == 11
        assert done.stderr == f"error[invalid]: {message}\n".encode()
        assert PASSWORD.encode() not in done.stderr
    assert tree(workspace) == {}


@pytest.fixture
def db(workspace: Path, postgres_server: Server) -> Backing:
    return database_backing(workspace, postgres_server)


def test_postgres_urls_work_like_postgresql_and_doctor_reports_no_lock_file(
    env: dict[str, str], db: Backing
) -> None:
    assert db.location is not None and db.location.startswith("postgresql://")
    short = "postgres://" + db.location.removeprefix("postgresql://")
    ws = ("--workspace", str(db.workspace), "--store", short)
    _ok(run_cli(env, *ws, "remember", "The team deploys on Tuesdays."))
    listed = json.loads(_ok(run_cli(env, *ws, "list", "--json")))
    assert [r["content"] for r in listed["records"]] == ["The team deploys on Tuesdays."]
    # The same row through the long spelling.
    long = ("--workspace", str(db.workspace), "--store", db.location)
    assert "Tuesdays" in _ok(run_cli(env, *long, "search", "deploys")).decode()
    doctor = _ok(run_cli(env, *ws, "doctor")).decode()
    assert "lock: none (the database locks the row for each write)" in doctor
    assert "lock: free" not in doctor and ".records-lock" not in doctor
    report = json.loads(_ok(run_cli(env, *ws, "doctor", "--json")))
    assert (report["store"], report["lock_held"], report["lock_holder"]) == ("postgres", None, None)
    assert not (db.workspace / "memory").exists()  # no records.md, no lock file


def test_doctor_says_a_database_workspace_without_a_quota_has_none(
    env: dict[str, str], db: Backing
) -> None:
    """No quota is no capacity to show a percentage of: the text and the JSON say so, and a
    quota the operator sets is shown as the file store shows its capacity."""
    assert db.url is not None and db.name is not None and db.location is not None
    ws = ("--workspace", str(db.workspace), "--store", db.location)
    _ok(run_cli(env, *ws, "remember", "The team deploys on Tuesdays."))
    used = len(db.raw())
    doctor = _ok(run_cli(env, *ws, "doctor")).decode()
    assert f"capacity: used {used:,} bytes; no quota set\n" in doctor
    assert "TiB" not in doctor and f"of {1 << 40:,}" not in doctor
    report = json.loads(_ok(run_cli(env, *ws, "doctor", "--json")))
    assert (report["used_bytes"], report["max_bytes"], report["percent_used"]) == (used, None, None)
    with psycopg.connect(db.url, autocommit=True) as connection:
        connection.execute(
            "UPDATE memquill.workspaces SET quota_bytes = %s WHERE workspace = %s",
            (4 * used, db.name),
        )
    doctor = _ok(run_cli(env, *ws, "doctor")).decode()
    assert f"capacity: {used:,} of {4 * used:,} bytes (25.0%)\n" in doctor
    report = json.loads(_ok(run_cli(env, *ws, "doctor", "--json")))
    assert (report["max_bytes"], report["percent_used"]) == (4 * used, 25.0)


def test_remember_dash_reads_the_fact_from_standard_input(
    env: dict[str, str], workspace: Path
) -> None:
    ws = ("--workspace", str(workspace))
    fact = "Line one of a piped fact.\nLine two, with a tab:\there."
    _ok(run_cli(env, *ws, "remember", "-", stdin=(fact + "\n\n").encode()))
    _ok(run_cli(env, *ws, "remember", "-", stdin=b"A Windows line\r\nending.\r\n"))
    contents = [r.content for r in RecordStore(workspace).snapshot().records]
    assert contents == [fact, "A Windows line\nending."]
    before = tree(workspace)
    for stdin, code in ((b"\xff\xfe not UTF-8", "invalid"), (b"\n\n", "invalid")):
        done = run_cli(env, *ws, "remember", "-", stdin=stdin)
        assert done.returncode == 11 and done.stderr.startswith(f"error[{code}]: ".encode())
    too_long = run_cli(env, *ws, "remember", "-", stdin=b"x" * 70_000)
    assert too_long.stderr == f"error[invalid]: {Messages.CONTENT}\n".encode()
    assert tree(workspace) == before


MODEL = textwrap.dedent(
    """
    from memquill.enhance import ModelIdentity

    class Here:
        identity = ModelIdentity("custom", "here", b"key")

        async def generate(self, prompt, *, max_tokens):
            return "[]"
    """
)


def test_model_modules_are_found_in_the_current_folder(
    env: dict[str, str], tmp_path: Path, workspace: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "my_models.py").write_text(MODEL)
    state = ("--state-dir", str(tmp_path / "state"))
    status = run_cli(env, "enhance", "status", "--model", "my_models:Here", *state, cwd=project)
    assert b"model: custom:here" in _ok(status)
    transcript = project / "chat.jsonl"
    transcript.write_text(
        '{"id": "u1", "role": "user", "content": "I live in Porto."}\n'
        '{"id": "a1", "role": "assistant", "content": "Nice city."}\n'
    )
    done = run_cli(
        env, "--workspace", str(workspace), "extract", "chat.jsonl", "--model", "my_models:Here",
        *state, cwd=project,
    )  # fmt: skip
    assert b"model calls: 1" in _ok(done)
    # Elsewhere, the module is not found, and the command says so as a usage error.
    elsewhere = run_cli(env, "enhance", "status", "--model", "my_models:Here", *state, cwd=tmp_path)
    assert elsewhere.returncode == 2
    assert elsewhere.stderr == b"error[usage]: No module named 'my_models'\n"


def test_get_past_the_end_says_so(env: dict[str, str], workspace: Path) -> None:
    (workspace / "notes.md").write_text("".join(f"line {n}\n" for n in range(1, 13)))
    (workspace / "empty.md").write_text("")
    ws = ("--workspace", str(workspace))
    past = _ok(run_cli(env, *ws, "get", "notes.md", "--lines", "50:60")).decode()
    assert past == (
        "Source: notes.md:50 (workspace-file)\n(line 50 is past the end: notes.md has 12 lines)\n"
    )
    inside = _ok(run_cli(env, *ws, "get", "notes.md", "--lines", "12")).decode()
    assert inside.endswith("\nline 12\n")
    empty = _ok(run_cli(env, *ws, "get", "empty.md", "--lines", "5")).decode()
    assert empty.endswith("\n(empty file)\n")  # an empty file is still called one
    data = json.loads(_ok(run_cli(env, *ws, "get", "notes.md", "--lines", "50:60", "--json")))
    assert (data["content"], data["line_count"]) == ("", 12)
