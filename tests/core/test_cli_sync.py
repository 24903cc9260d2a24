"""``memquill merge``, ``sync setup``/``status``/``keep`` and ``key`` through the real command."""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
from pathlib import Path

import pytest
from tests.core.sync_helpers import MEMQUILL, base_environment, run

from memquill import RecordStore
from memquill.errors import ERRORS, Messages
from memquill.store._merge import merge_files
from memquill.store._record_key import RecordKey, key_id, key_text
from memquill.store._results import Candidate
from memquill.sync._git import driver_command, git_setup, set_up_git


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = base_environment(tmp_path / "home", tmp_path / "data")
    (tmp_path / "home").mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    environment["MEMQUILL_WORKSPACE"] = str(workspace)
    return environment


def memquill(
    env: dict[str, str], *args: str, status: int = 0, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    done = run([MEMQUILL, *args], Path(env["MEMQUILL_WORKSPACE"]), env, check=False, stdin=stdin)
    assert done.returncode == status, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def store_of(workspace: Path, data: Path) -> RecordStore:
    return RecordStore(workspace, record_key=RecordKey(data / "memquill"))


def save(store: RecordStore, text: str) -> None:
    store.save([Candidate(text, {"kind": "manual"}, f"manual:{text}")])


def two_copies(tmp_path: Path) -> tuple[bytes, bytes, bytes]:
    """A base and two sides that each added a fact, as three files' bytes."""
    one = store_of(tmp_path / "one", tmp_path / "data")
    (tmp_path / "one").mkdir()
    save(one, "shared")
    base = (tmp_path / "one" / "memory" / "records.md").read_bytes()
    (tmp_path / "two" / "memory").mkdir(parents=True)
    (tmp_path / "two" / "memory" / "records.md").write_bytes(base)
    two = store_of(tmp_path / "two", tmp_path / "data")
    save(one, "from one")
    save(two, "from two")
    return (
        base,
        (tmp_path / "one" / "memory" / "records.md").read_bytes(),
        (tmp_path / "two" / "memory" / "records.md").read_bytes(),
    )


def test_merge_writes_the_result_into_ours_the_same_both_ways(
    tmp_path: Path, env: dict[str, str]
) -> None:
    base, one, two = two_copies(tmp_path)
    paths = {name: tmp_path / f".merge_file_{name}" for name in ("O", "A", "B", "A2", "B2")}
    for name, data in (("O", base), ("A", one), ("B", two), ("A2", two), ("B2", one)):
        paths[name].write_bytes(data)
    done = memquill(env, "merge", str(paths["O"]), str(paths["A"]), str(paths["B"]))
    assert "memquill merge: 1 record(s) added" in done.stderr and done.stdout == ""
    memquill(env, "merge", str(paths["O"]), str(paths["A2"]), str(paths["B2"]))
    assert paths["A"].read_bytes() == paths["A2"].read_bytes() == merge_files(base, one, two)[0]
    assert not list(tmp_path.glob(".merge_file_A.*.tmp"))  # no staging file left


def test_merge_refuses_a_side_that_is_not_a_records_file_and_changes_nothing(
    tmp_path: Path, env: dict[str, str]
) -> None:
    base, one, _ = two_copies(tmp_path)
    ours, theirs, empty = tmp_path / "ours", tmp_path / "theirs", tmp_path / "empty"
    ours.write_bytes(one)
    theirs.write_text("<<<<<<< HEAD\n")
    empty.write_bytes(b"")
    done = memquill(
        env, "merge", str(empty), str(ours), str(theirs), status=ERRORS["corrupt"].exit_status
    )
    assert Messages.MERGE_THEIRS_CORRUPT in done.stderr
    assert ours.read_bytes() == one
    missing = memquill(
        env, "merge", str(tmp_path / "nope"), str(ours), str(theirs), status=18
    )  # storage
    assert Messages.COPY_UNREADABLE in missing.stderr
    del base


def test_merge_into_a_workspaces_records_file_is_a_locked_store_write(
    tmp_path: Path, env: dict[str, str]
) -> None:
    base, one, two = two_copies(tmp_path)
    theirs, ancestor = tmp_path / "theirs.md", tmp_path / "base.md"
    theirs.write_bytes(two)
    ancestor.write_bytes(base)
    records = tmp_path / "one" / "memory" / "records.md"
    memquill(env, "merge", str(ancestor), str(records), str(theirs))
    assert records.read_bytes() == merge_files(base, one, two)[0]
    assert (records.parent / ".records-lock").exists()  # it took the writer lock


def test_sync_setup_is_idempotent_and_shown_by_where(tmp_path: Path, env: dict[str, str]) -> None:
    workspace = Path(env["MEMQUILL_WORKSPACE"])
    refused = memquill(env, "sync", "setup", status=ERRORS["invalid"].exit_status)
    assert Messages.NOT_A_GIT_WORKSPACE in refused.stderr
    run(["git", "init", "-q", "-b", "main"], workspace, env)
    (workspace / ".gitignore").write_text("drafts/")  # a line without a newline at the end
    first = memquill(env, "sync", "setup").stdout
    assert "git config merge.memquill.driver" in first
    again = memquill(env, "sync", "setup").stdout
    assert again.startswith("already set up: nothing changed")
    assert (workspace / ".gitattributes").read_text() == (
        "memory/records.md merge=memquill -text diff\n"
    )
    assert (workspace / ".gitignore").read_text() == (
        "drafts/\nmemory/.records-*\n.assistant/memory-jobs.json*\n"
    )
    config = run(["git", "config", "--get", "merge.memquill.driver"], workspace, env).stdout
    assert config.strip() == driver_command()
    assert "git merges memory/records.md record by record" in memquill(env, "where").stdout
    status = json.loads(memquill(env, "sync", "status", "--json").stdout)
    assert status["git"]["ready"] and status["conflict_copies"] == []


def test_the_driver_command_quotes_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.executable", "/opt/my tools/bin/python3")
    command = driver_command()
    assert shlex.split(command) == [
        "/opt/my tools/bin/python3",
        "-m",
        "memquill.cli",
        "merge",
        "%O",
        "%A",
        "%B",
    ]


def _git_workspace_with_a_committed_lock(tmp_path: Path, env: dict[str, str]) -> Path:
    """A workspace kept in git before ``sync setup``: ``git add -A`` took the writer lock."""
    workspace = Path(env["MEMQUILL_WORKSPACE"])
    run(["git", "init", "-q", "-b", "main"], workspace, env)
    run(["git", "config", "user.email", "me@example.org"], workspace, env)
    run(["git", "config", "user.name", "Me"], workspace, env)
    save(store_of(workspace, tmp_path / "data"), "a fact")
    run(["git", "add", "-A"], workspace, env)
    run(["git", "commit", "-q", "-m", "notes"], workspace, env)
    assert run(["git", "ls-files", "memory/.records-lock"], workspace, env).stdout
    return workspace


def test_setup_stops_tracking_the_files_it_ignores_and_keeps_them(
    tmp_path: Path, env: dict[str, str]
) -> None:
    workspace = _git_workspace_with_a_committed_lock(tmp_path, env)
    done = memquill(env, "sync", "setup").stdout
    assert "git rm --cached: memory/.records-lock" in done, done
    assert "committed already" not in done  # done, not left to the reader
    assert run(["git", "ls-files", "memory/.records-lock"], workspace, env).stdout == ""
    assert (workspace / "memory" / ".records-lock").is_file()  # the working file stays
    status = json.loads(memquill(env, "sync", "status", "--json").stdout)
    assert status["git"]["ready"] and status["git"]["tracked"] == []
    # The README's next two lines commit the set-up, the untracking with it.
    run(["git", "add", ".gitattributes", ".gitignore"], workspace, env)
    run(["git", "commit", "-q", "-m", "memquill merges memory/records.md"], workspace, env)
    assert run(["git", "ls-tree", "-r", "--name-only", "HEAD"], workspace, env).stdout.split() == [
        ".gitattributes",
        ".gitignore",
        "memory/records.md",
    ]
    assert "nothing changed" in memquill(env, "sync", "setup").stdout


def test_status_names_a_tracked_file_in_conflict_once(tmp_path: Path, env: dict[str, str]) -> None:
    workspace = _git_workspace_with_a_committed_lock(tmp_path, env)
    lock = workspace / "memory" / ".records-lock"
    run(["git", "checkout", "-q", "-b", "other"], workspace, env)
    lock.write_text("other\n")
    run(["git", "commit", "-q", "-am", "other"], workspace, env)
    run(["git", "checkout", "-q", "main"], workspace, env)
    lock.write_text("main\n")
    run(["git", "commit", "-q", "-am", "main"], workspace, env)
    merged = run(["git", "merge", "other"], workspace, env, check=False)
    assert "CONFLICT (content): Merge conflict in memory/.records-lock" in merged.stdout
    done = memquill(env, "sync", "status").stdout
    assert done.count("memory/.records-lock") == 1, done
    status = json.loads(memquill(env, "sync", "status", "--json").stdout)
    assert status["git"]["tracked"] == ["memory/.records-lock"]
    memquill(env, "sync", "setup")  # in the middle of that merge: out of the index all the same
    assert run(["git", "ls-files", "memory/.records-lock"], workspace, env).stdout == ""


def test_a_per_machine_file_committed_after_setup_means_not_ready(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = _git_workspace_with_a_committed_lock(tmp_path, env)
    for name, value in env.items():  # git run in this process sees the test's home only
        monkeypatch.setenv(name, value)
    assert set_up_git(workspace)[0].ready
    # Set up in every other way; then the lock is forced past its ignore line and committed.
    run(["git", "add", ".gitattributes", ".gitignore"], workspace, env)
    run(["git", "add", "-f", "memory/.records-lock"], workspace, env)
    run(["git", "commit", "-q", "-m", "set up, the lock with it"], workspace, env)
    setup = git_setup(workspace)
    assert (setup.attribute, setup.driver_runs, setup.unignored) == (True, True, ())
    assert setup.tracked == ("memory/.records-lock",)
    assert not setup.ready


def test_key_export_to_a_new_private_file_only(tmp_path: Path, env: dict[str, str]) -> None:
    target = tmp_path / "carry" / "key.txt"
    target.parent.mkdir()
    done = memquill(env, "key", "export", "--output", str(target))
    key = RecordKey(tmp_path / "data" / "memquill").load()
    assert key_id(key) in done.stdout and key.hex() not in done.stdout
    assert target.stat().st_mode & 0o777 == 0o600
    assert target.read_text().startswith("memquill-record-key:v1:")
    again = memquill(env, "key", "export", "--output", str(target), status=11)
    assert Messages.KEY_FILE_EXISTS in again.stderr
    inside = Path(env["MEMQUILL_WORKSPACE"]) / "key.txt"
    refused = memquill(env, "key", "export", "--output", str(inside), status=11)
    assert Messages.KEY_IN_REPOSITORY in refused.stderr and not inside.exists()
    repository = tmp_path / "repo"
    repository.mkdir()
    run(["git", "init", "-q"], repository, env)
    refused = memquill(env, "key", "export", "--output", str(repository / "k"), status=11)
    assert Messages.KEY_IN_REPOSITORY in refused.stderr
    assert Messages.KEY_DESTINATION in memquill(env, "key", "export", status=11).stderr


def test_key_export_never_prints_on_a_terminal(env: dict[str, str]) -> None:
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [MEMQUILL, "key", "export", "--stdout"],
            env=env,
            stdout=follower,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
        os.set_blocking(leader, False)
        try:
            shown = os.read(leader, 4096)
        except BlockingIOError:
            shown = b""
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 11 and Messages.KEY_TO_TERMINAL in done.stderr
    assert b"memquill-record-key" not in shown


def test_key_import_installs_adds_and_switches(tmp_path: Path, env: dict[str, str]) -> None:
    laptop = base_environment(tmp_path / "laptop-home", tmp_path / "laptop-data")
    laptop["MEMQUILL_WORKSPACE"] = env["MEMQUILL_WORKSPACE"]
    exported = memquill(laptop, "key", "export", "--stdout").stdout
    laptop_key = RecordKey(tmp_path / "laptop-data" / "memquill").load()
    here = RecordKey(tmp_path / "data" / "memquill")
    assert "installed" in memquill(env, "key", "import", "-", stdin=exported).stdout
    assert here.current() == laptop_key
    assert "writes with it already" in memquill(env, "key", "import", "-", stdin=exported).stdout
    # A machine with a key of its own recognises the imported one, or switches to it.
    desktop = base_environment(tmp_path / "desktop-home", tmp_path / "desktop-data")
    desktop["MEMQUILL_WORKSPACE"] = env["MEMQUILL_WORKSPACE"]
    own = RecordKey(tmp_path / "desktop-data" / "memquill")
    mine = own.load()
    assert "added" in memquill(desktop, "key", "import", "-", stdin=exported).stdout
    assert own.current() == mine and laptop_key in own.known()
    switched = memquill(desktop, "key", "import", "-", "--use", stdin=exported).stdout
    assert "writes with it now" in switched
    assert own.current() == laptop_key and mine in own.known()
    shown = memquill(desktop, "key", "show").stdout
    assert key_id(laptop_key) in shown and key_id(mine) in shown
    damaged = exported.replace(exported[30], "A" if exported[30] != "A" else "B")
    refused = memquill(env, "key", "import", "-", stdin=damaged, status=11)
    assert Messages.KEY_TEXT in refused.stderr


def test_a_switched_key_still_recognises_what_the_old_one_wrote(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    keys = RecordKey(tmp_path / "keys")
    store = RecordStore(workspace, record_key=keys)
    save(store, "tea over coffee")
    revision = store.snapshot().records[0]
    store.revoke(revision.id, store.snapshot().revision)
    other = RecordKey(tmp_path / "other").load()
    assert keys.install(other, use=True) == "switched"
    blocked = store.save(
        [Candidate("tea over coffee", {"kind": "manual"}, "manual:tea over coffee")]
    )
    assert blocked.status == "blocked"  # the tombstone written under the old key still holds


def test_doctor_names_records_written_under_a_key_this_machine_lacks(
    tmp_path: Path, env: dict[str, str]
) -> None:
    workspace = Path(env["MEMQUILL_WORKSPACE"])
    save(store_of(workspace, tmp_path / "laptop-data"), "written on the laptop")
    laptop_key = RecordKey(tmp_path / "laptop-data" / "memquill").load()
    done = memquill(env, "doctor")  # a notice, not a fault
    assert f"1 record(s) were written under key {key_id(laptop_key)}" in done.stdout
    report = json.loads(memquill(env, "doctor", "--json").stdout)
    assert report["other_keys"] == {key_id(laptop_key): 1}
    memquill(env, "key", "import", "-", stdin=key_text(laptop_key))
    assert json.loads(memquill(env, "doctor", "--json").stdout)["other_keys"] == {}


def test_sync_keep_settles_a_diverged_fact(tmp_path: Path, env: dict[str, str]) -> None:
    workspace = Path(env["MEMQUILL_WORKSPACE"])
    store = store_of(workspace, tmp_path / "data")
    save(store, "the cat is Miso")
    base = (workspace / "memory" / "records.md").read_bytes()
    other = tmp_path / "other"
    (other / "memory").mkdir(parents=True)
    (other / "memory" / "records.md").write_bytes(base)
    elsewhere = store_of(other, tmp_path / "data")
    first = store.snapshot().records[0].id
    store.correct(first, "the cat is Mochi", store.snapshot().revision)
    elsewhere.correct(first, "the cat is Momo", elsewhere.snapshot().revision)
    store.merge((other / "memory" / "records.md").read_bytes(), base)
    [found] = store.doctor().diverged
    snapshot = store.snapshot()
    loser = snapshot.find(found.other_ids[0])
    assert loser is not None
    refused = memquill(env, "sync", "keep", first[:8], "--revision", snapshot.revision, status=11)
    assert Messages.NOT_DIVERGED in refused.stderr
    done = json.loads(
        memquill(
            env,
            "sync",
            "keep",
            loser.id[:8],
            "--revision",
            snapshot.record_revision(loser)[:16],
            "--json",
        ).stdout
    )
    after = store.snapshot()
    kept = after.find(done["record_id"], active_only=True)
    assert kept is not None and kept.content == loser.content
    assert store.doctor().diverged == ()
    assert all(
        r.meta.get("resolvedBy") == kept.id for r in after.records if r.id in found.other_ids
    )
