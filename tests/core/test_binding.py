"""The binding store: explicit binding only, canonical scope, one-time migration, authorisation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import portalocker
import pytest

from memquill.errors import BindingError, BusyError, Messages, StorageError
from memquill.tools._binding import (
    BindingStore,
    LegacySession,
    default_bindings_path,
    write_authorizer,
)
from memquill.tools._session import MemorySession


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "vault"
    path.mkdir()
    return path


@pytest.fixture
def store(tmp_path: Path) -> BindingStore:
    return BindingStore(tmp_path / "data" / "bindings.json", lock_timeout=5.0)


def document(store: BindingStore) -> dict[str, Any]:
    return json.loads(store.path.read_text(encoding="utf-8"))


def rows(store: BindingStore) -> dict[str, Any]:
    return document(store)["bindings"]


def test_bind_stores_the_canonical_workspace_and_resolve_returns_it(
    store: BindingStore, workspace: Path, tmp_path: Path
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    assert store.bind("s1", alias) == workspace.resolve()
    assert rows(store) == {"s1": {"version": 1, "workspace": str(workspace.resolve())}}
    assert store.resolve("s1") == workspace.resolve()
    assert store.resolve("s1", workspace) == workspace.resolve()
    assert store.resolve("s1", str(alias)) == workspace.resolve()  # same canonical path


def test_binding_is_explicit_only_a_shared_directory_is_not_intent(
    store: BindingStore, workspace: Path
) -> None:
    # Two host sessions both run in the workspace folder; only one was bound on purpose.
    store.bind("assistant", workspace)
    assert store.resolve("assistant", workspace) == workspace.resolve()
    assert store.resolve("ordinary-same-cwd", workspace) is None
    assert store.resolve("ordinary-same-cwd") is None
    assert not store.authorizer("ordinary-same-cwd", workspace)()


def test_a_task_session_is_refused_and_nothing_is_written(
    store: BindingStore, workspace: Path
) -> None:
    with pytest.raises(BindingError) as refused:
        store.bind("task-1", workspace, session_kind="task")
    assert refused.value.code == "scope_mismatch"
    assert refused.value.message == Messages.BINDING_TASK
    assert not store.path.parent.exists()
    assert store.resolve("task-1", workspace) is None


@pytest.mark.parametrize("kind", ["relative", "missing", "file"])
def test_a_bad_workspace_is_refused(store: BindingStore, tmp_path: Path, kind: str) -> None:
    target = {"relative": Path("vault"), "missing": tmp_path / "nowhere", "file": tmp_path / "f"}
    target["file"].write_text("not a folder")
    with pytest.raises(BindingError) as refused:
        store.bind("s1", target[kind])
    assert refused.value.message == Messages.BINDING_WORKSPACE
    assert not store.path.exists()


@pytest.mark.parametrize("session_id", ["", "   "])
def test_a_blank_session_id_is_refused(
    store: BindingStore, workspace: Path, session_id: str
) -> None:
    with pytest.raises(BindingError, match="session id is required"):
        store.bind(session_id, workspace)


def test_unbind_removes_exactly_its_own_row(
    store: BindingStore, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    store.bind("s1", workspace)
    store.bind("s2", workspace)
    store.bind("s3", other)
    assert store.unbind("s2") is True
    assert set(rows(store)) == {"s1", "s3"}
    assert store.resolve("s2") is None
    assert store.resolve("s1") == workspace.resolve()
    before = store.path.read_bytes()
    assert store.unbind("s2") is False  # nothing to remove: the file is left alone
    assert store.path.read_bytes() == before


def test_rebinding_moves_the_session_to_the_new_workspace(
    store: BindingStore, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    store.bind("s1", workspace)
    store.bind("s1", other)
    assert store.resolve("s1") == other.resolve()
    assert store.resolve("s1", workspace) is None


def test_resolve_with_a_different_requested_workspace_is_none(
    store: BindingStore, workspace: Path, tmp_path: Path
) -> None:
    sibling = tmp_path / "vault-sibling"
    sibling.mkdir()
    store.bind("s1", workspace)
    assert store.resolve("s1", sibling) is None
    assert store.resolve("s1", workspace / "memory") is None  # a subfolder is not the workspace
    assert store.resolve("s1", "vault") is None  # relative: never canonical
    assert store.resolve("s1", tmp_path / "missing") is None


@pytest.mark.parametrize("change", ["renamed", "deleted", "replaced-by-symlink"])
def test_a_moved_workspace_no_longer_resolves(
    store: BindingStore, workspace: Path, tmp_path: Path, change: str
) -> None:
    store.bind("s1", workspace)
    elsewhere = tmp_path / "elsewhere"
    if change == "renamed":
        workspace.rename(elsewhere)
    elif change == "deleted":
        workspace.rmdir()
    else:
        workspace.rename(elsewhere)
        workspace.symlink_to(elsewhere)  # the old path now leads somewhere else
    assert store.resolve("s1") is None
    assert store.resolve("s1", elsewhere if change != "deleted" else tmp_path) is None
    assert not store.authorizer("s1", workspace)()


def test_reads_never_write(store: BindingStore, workspace: Path) -> None:
    assert store.resolve("s1", workspace) is None
    assert store.migrated_sessions() is None
    assert not store.authorizer("s1", workspace)()
    assert not store.path.parent.exists()  # not even the folder

    store.bind("s1", workspace)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in store.path.parent.iterdir()}
    for _ in range(3):
        store.resolve("s1", workspace)
        store.authorizer("s1", workspace)()
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in store.path.parent.iterdir()}
    assert after == before


def test_the_file_is_private_and_no_staging_file_is_left(
    store: BindingStore, workspace: Path
) -> None:
    store.bind("s1", workspace)
    store.bind("s2", workspace)
    store.unbind("s1")
    assert sorted(p.name for p in store.path.parent.iterdir()) == [
        "bindings.json",
        "bindings.json.lock",
    ]
    assert store.path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"[]",
        b'{"version": 2, "bindings": {}}',
        b'{"version": 1, "bindings": []}',
        b"\xff\xfe\x00garbage",
    ],
)
def test_an_invalid_file_binds_nothing_and_is_never_overwritten(
    store: BindingStore, workspace: Path, content: bytes
) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_bytes(content)
    assert store.resolve("s1", workspace) is None
    for change in (
        lambda: store.bind("s1", workspace),
        lambda: store.unbind("s1"),
        lambda: store.migrate_legacy([], workspace),
    ):
        with pytest.raises(BindingError) as refused:
            change()
        assert refused.value.message == Messages.BINDINGS_INVALID
    assert store.path.read_bytes() == content


@pytest.mark.parametrize(
    "row",
    [{"version": 2, "workspace": "W"}, {"version": 1}, {"version": 1, "workspace": 7}, "W"],
)
def test_an_invalid_row_resolves_to_none(store: BindingStore, workspace: Path, row: object) -> None:
    store.bind("keep", workspace)
    raw = document(store)
    row = json.loads(json.dumps(row).replace('"W"', json.dumps(str(workspace.resolve()))))
    raw["bindings"]["odd"] = row
    store.path.write_text(json.dumps(raw))
    assert store.resolve("odd", workspace) is None
    assert store.resolve("keep", workspace) == workspace.resolve()


def test_unknown_top_level_keys_survive_a_rewrite(store: BindingStore, workspace: Path) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_text('{"version": 1, "bindings": {}, "hostNote": {"kept": true}}')
    store.bind("s1", workspace)
    assert document(store)["hostNote"] == {"kept": True}


def test_migration_binds_old_same_directory_sessions_once(
    store: BindingStore, workspace: Path, tmp_path: Path
) -> None:
    sibling = tmp_path / "vault-project"
    sibling.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    other = tmp_path / "other"
    other.mkdir()
    store.bind("explicit-elsewhere", other)
    legacy = [
        LegacySession("old-user", str(workspace)),
        LegacySession("old-user-trailing-slash", str(workspace) + os.sep),
        LegacySession("old-via-symlink", str(alias), "user"),
        LegacySession("old-bridge", str(workspace), "bridge"),
        LegacySession("old-task", str(workspace), "task"),
        LegacySession("old-sibling", str(sibling)),
        LegacySession("old-parent", str(tmp_path)),
        LegacySession("old-no-dir", None),
        LegacySession("old-relative", "vault"),
        LegacySession("explicit-elsewhere", str(workspace)),  # already bound: left alone
        LegacySession("old-user", str(workspace)),  # listed twice: bound once
    ]
    assert store.migrate_legacy(legacy, workspace) == 4
    canonical = str(workspace.resolve())
    migrated = {"version": 1, "workspace": canonical, "source": "legacy_upgrade"}
    assert rows(store) == {
        "explicit-elsewhere": {"version": 1, "workspace": str(other.resolve())},
        "old-bridge": migrated,
        "old-user": migrated,
        "old-user-trailing-slash": migrated,
        "old-via-symlink": migrated,
    }
    assert document(store)["legacyMigration"] == {"version": 1, "migratedSessions": 4}
    assert store.migrated_sessions() == 4
    assert store.resolve("old-user", workspace) == workspace.resolve()
    assert store.resolve("old-sibling", sibling) is None

    # A second run (say, the next start-up) binds nobody, not even a new same-cwd session.
    before = store.path.read_bytes()
    later = [LegacySession("created-after-upgrade", str(workspace)), *legacy]
    assert store.migrate_legacy(later, workspace) == 0
    assert store.path.read_bytes() == before
    assert store.resolve("created-after-upgrade", workspace) is None


def test_migration_of_an_offline_workspace_binds_its_path(
    store: BindingStore, tmp_path: Path
) -> None:
    offline = tmp_path / "usb" / "vault"
    assert store.migrate_legacy([LegacySession("s1", str(offline))], offline) == 1
    assert store.resolve("s1") is None  # not there now
    offline.mkdir(parents=True)
    assert store.resolve("s1", offline) == offline.resolve()  # back online: bound


def test_migration_with_nothing_to_bind_still_writes_the_marker(
    store: BindingStore, workspace: Path
) -> None:
    assert store.migrate_legacy([], workspace) == 0
    assert store.migrated_sessions() == 0
    assert store.migrate_legacy([LegacySession("s1", str(workspace))], workspace) == 0
    assert store.resolve("s1") is None


def test_migration_refuses_a_relative_workspace(store: BindingStore) -> None:
    with pytest.raises(BindingError):
        store.migrate_legacy([LegacySession("s1", "vault")], "vault")
    assert store.migrated_sessions() is None


def test_the_authorizer_rechecks_mode_and_binding_at_every_call(
    store: BindingStore, workspace: Path, tmp_path: Path
) -> None:
    plan_mode = False
    store.bind("s1", workspace)
    authorize = store.authorizer("s1", workspace, lambda: plan_mode)
    session = MemorySession(workspace, "s1", "read_write", authorize)
    assert authorize() is True
    assert session.write_allowed() is True

    plan_mode = True
    assert authorize() is False
    assert session.write_allowed() is False
    plan_mode = False
    assert session.write_allowed() is True

    other = tmp_path / "other"
    other.mkdir()
    store.bind("s1", other)  # switched workspace
    assert session.write_allowed() is False
    store.bind("s1", workspace)
    assert session.write_allowed() is True
    store.unbind("s1")
    assert session.write_allowed() is False


def test_the_authorizer_refuses_without_a_session_id(store: BindingStore, workspace: Path) -> None:
    store.bind("s1", workspace)
    assert store.authorizer(None, workspace)() is False
    assert store.authorizer("", workspace)() is False


class HostSessions:
    """A host's own session table standing in for the JSON store (a BindingBackend)."""

    def __init__(self) -> None:
        self.bound: dict[str, Path] = {}

    def resolve(
        self, session_id: str, requested_workspace: str | os.PathLike[str] | None = None
    ) -> Path | None:
        bound = self.bound.get(session_id)
        if bound is None or requested_workspace is None:
            return bound
        return bound if Path(requested_workspace).resolve() == bound else None


def test_write_authorizer_works_over_a_host_supplied_backend(workspace: Path) -> None:
    host = HostSessions()
    authorize = write_authorizer(host, "s1", workspace)
    assert authorize() is False
    host.bound["s1"] = workspace.resolve()
    assert authorize() is True
    assert write_authorizer(host, "s1", workspace, lambda: True)() is False
    del host.bound["s1"]
    assert authorize() is False


def test_a_held_lock_makes_a_change_busy_and_changes_nothing(
    store: BindingStore, workspace: Path
) -> None:
    store.bind("s1", workspace)
    before = store.path.read_bytes()
    quick = BindingStore(store.path, lock_timeout=0.05)
    with portalocker.Lock(str(store.path) + ".lock", mode="a", timeout=1):
        with pytest.raises(BusyError):
            quick.bind("s2", workspace)
        with pytest.raises(BusyError):
            quick.unbind("s1")
        assert quick.resolve("s1", workspace) == workspace.resolve()  # reads need no lock
    assert store.path.read_bytes() == before


def test_an_unwritable_bindings_path_is_a_storage_error(tmp_path: Path, workspace: Path) -> None:
    store = BindingStore(tmp_path / "bindings.json")
    store.path.mkdir()  # a folder where the file should be
    with pytest.raises(StorageError):
        store.bind("s1", workspace)
    assert store.resolve("s1") is None


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG layout is for other systems")
def test_the_default_path_is_in_the_user_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_bindings_path() == tmp_path / "xdg" / "memquill" / "bindings.json"
    assert BindingStore().path == default_bindings_path()
    assert not (tmp_path / "xdg").exists()


CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from memquill.tools._binding import BindingStore

    path, workspace, worker, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = BindingStore(Path(path), lock_timeout=60)
    for index in range(count):
        store.bind(f"{worker}-{index}", workspace)
    """
)


@pytest.mark.slow
def test_concurrent_processes_keep_every_row(store: BindingStore, workspace: Path) -> None:
    workers, each = 6, 15
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(store.path), str(workspace), f"w{n}", str(each)]
        )
        for n in range(workers)
    ]
    for child in children:
        assert child.wait(timeout=120) == 0
    assert len(rows(store)) == workers * each
    assert all(store.resolve(f"w{n}-{i}") for n in range(workers) for i in range(each))
