"""Every file and folder memquill creates is its owner's only (``0600``/``0700``), whatever the
umask: a full session, run in a fresh process under a permissive umask, then every path it
made is walked.

The session uses the default places (a fresh ``$HOME``: the default workspace, the user data
folder, the user cache folder with the search index), and touches everything that writes:
remember, search through the index, ``memquill index``, recent, update, forget, a hand edit
repaired by ``doctor --fix`` (its backup), extraction from a transcript (the job ledger, its
lock and runner files, the install key), a re-ranking model whose credentials are refused (its
receipt), a session binding, ``export --output``, and a PostgreSQL store with its file mirror.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from tests.core.conftest import Server
from tests.core.lifecycle_helpers import USERS, write_transcript

SESSION = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from pathlib import Path

    os.umask(int(sys.argv[1], 8))
    home, transcript, mirrored, store = Path(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    sys.path.insert(0, str(home.parent / "models"))

    import io, contextlib
    from memquill import open_session
    from memquill.enhance import ModelIdentity
    from memquill.tools import BindingStore
    from memquill.cli import main
    from memquill.testing._models import scripted_failure
    from memquill import MemoryToolset

    def run(*argv):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = main(list(argv))
        assert status == 0, (argv, status, out.getvalue())
        return out.getvalue()

    run("remember", "the lighthouse keeper logs the weather")
    run("remember", "the lamp needs oil every week")
    workspace = Path(json.loads(run("where", "--json"))["workspace"])
    (workspace / "notes").mkdir()
    (workspace / "notes" / "lighthouse.md").write_text("# Lighthouse\\n\\nThe keeper's log.\\n")
    run("search", "lighthouse keeper")
    run("index", "--quiet")
    # An index of another format is set aside under its lock file, then built again.
    import sqlite3
    with sqlite3.connect(json.loads(run("where", "--json"))["index"]) as connection:
        connection.execute("UPDATE meta SET value = 'memquill-index 0' WHERE key = 'format'")
    run("search", "lighthouse keeper")
    run("recent")
    facts = json.loads(run("list", "--json"))["records"]
    lamp = next(f for f in facts if "lamp" in f["content"])
    keeper = next(f for f in facts if "keeper" in f["content"])
    run("update", keeper["id"], "the lighthouse keeper logs the weather at dawn",
        "--revision", keeper["record_revision"])
    run("forget", lamp["id"], "--revision", lamp["record_revision"])
    records = workspace / "memory" / "records.md"
    records.write_bytes(records.read_bytes().replace(b"at dawn", b"at sunrise"))
    assert "backup" in run("doctor", "--fix")
    run("search", "keeper sunrise")
    with contextlib.redirect_stderr(io.StringIO()):
        run("export", "--output", str(home.parent / "exported.md"))

    run("extract", transcript, "--model", "private_models:quoting")

    class Refused:
        identity = ModelIdentity("custom", "refused", b"key")

        async def generate(self, prompt, *, max_tokens):
            raise scripted_failure("http_401")

    session = open_session(workspace, "s-1", access="read", model=Refused())
    answer = MemoryToolset(session).call("memory_search", {"query": "lighthouse keeper"})
    assert "credentials" in answer.text, answer.text
    BindingStore().bind("s-1", workspace)

    run("--workspace", mirrored, "--store", store, "remember", "a mirrored fact about tides")
    run("--workspace", mirrored, "--store", store, "search", "tides")
    # While the session's index is open: SQLite's -wal and -shm files exist only then.
    live = {}
    for root in (home, Path(mirrored)):
        for folder, folders, files in os.walk(root):
            for name in [*folders, *files]:
                path = os.path.join(folder, name)
                live[path] = os.lstat(path).st_mode & 0o7777
    print(json.dumps({"workspace": str(workspace), "live": live}))
    """
)

MODELS = textwrap.dedent(
    """
    import json
    from memquill.enhance import ModelIdentity

    class Quoting:
        identity = ModelIdentity("custom", "quoting", b"key")

        async def generate(self, prompt, *, max_tokens):
            turns = json.loads(prompt.user)["turns"]
            return json.dumps([
                {"messageId": t["messageId"], "content": "The user said: " + t["user"],
                 "evidence": t["user"]}
                for t in turns
            ])

    def quoting():
        return Quoting()
    """
)


def tree(*roots: Path) -> dict[Path, int]:
    """Every path under ``roots`` (themselves included) with its permission bits."""
    found: dict[Path, int] = {}
    for root in roots:
        if not root.exists():
            continue
        found[root] = stat.S_IMODE(root.lstat().st_mode)
        for folder, folders, files in os.walk(root):
            for name in [*folders, *files]:
                path = Path(folder) / name
                found[path] = stat.S_IMODE(path.lstat().st_mode)
    return found


@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask-022", "umask-000"])
def test_a_full_session_creates_only_owner_only_files(
    tmp_path: Path, umask: int, postgres_server: Server
) -> None:
    home = tmp_path / "home"  # made by memquill: the data and cache folders inside it too
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "private_models.py").write_text(MODELS)
    transcript = write_transcript(tmp_path / "chat.jsonl", USERS[:3])
    mirrored = tmp_path / "mirrored"
    mirrored.mkdir()
    store = f"{postgres_server.url}#workspace=private-{uuid.uuid4()}&mirror=1"
    before = tree(tmp_path)
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("XDG_", "MEMQUILL_"))
    }
    environment.update(HOME=str(home), MEMQUILL_DISABLE_PLUGIN_AUTOLOAD="1")
    done = subprocess.run(
        [sys.executable, "-c", SESSION, f"{umask:o}", str(home), str(transcript), str(mirrored),
         store],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[-1])
    notes = Path(answer["workspace"]) / "notes"
    seen = {Path(path): mode for path, mode in answer["live"].items()} | tree(tmp_path)
    # The notes are the test's own (written under the same umask); all else is memquill's.
    made = {
        path: mode
        for path, mode in seen.items()
        if path not in before and notes not in (path, *path.parents)
    }
    # The session did reach every kind of file.
    names = {path.name for path in made}
    expected = {
        "records.md",
        ".records-lock",
        ".records-mirror.md",
        "record-key.v1",
        "install-key.v1",
        "bindings.json",
        "bindings.json.lock",
        "memory-jobs.json",
        "memory-jobs.json.lock",
        "memory-jobs.json.runner",
        "index",
        "exported.md",
    }
    assert expected <= names, expected - names
    suffixes = {name.partition(".")[2] for name in names}
    assert {"sqlite3", "sqlite3-wal", "sqlite3-shm", "sqlite3.lock"} <= suffixes, suffixes
    assert any(name.startswith(".records-backup-") for name in names)
    assert any(name.startswith("block-") for name in names), names  # the credential receipt
    wide = {
        str(path.relative_to(tmp_path)): f"{mode:04o}"
        for path, mode in made.items()
        if mode & 0o077
    }
    assert not wide, "not owner-only:\n" + "\n".join(f"{m} {p}" for p, m in sorted(wide.items()))
