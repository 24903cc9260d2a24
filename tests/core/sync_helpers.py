"""Machines for the sync tests: real git clones with their own home, data folder and record key.

Each :class:`Machine` is one clone of a bare "origin" repository, with a home folder and a data
folder of its own (so its record key is its own until one is carried over), its own git
identity set in the clone's config (the global config is never touched: ``HOME`` points at the
machine's empty home), and the ``memquill`` command run as a real process with that
environment. Facts are written through the store in-process, keyed with the machine's key.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memquill import RecordStore
from memquill.store._record_key import RecordKey
from memquill.store._results import Candidate

MEMQUILL = str(Path(sys.executable).parent / "memquill")
TIMEOUT = 120.0
"""A ceiling that stops a hung child from hanging the suite; never a speed assertion."""


def base_environment(home: Path, data: Path) -> dict[str, str]:
    """The process environment with a private home and data folder, and no memquill settings."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MEMQUILL_", "XDG_", "GIT_"))
    }
    environment.update(
        HOME=str(home),
        XDG_DATA_HOME=str(data),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        MEMQUILL_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    return environment


def run(
    command: list[str], cwd: Path, env: dict[str, str], *, check: bool = True, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    if check:
        assert done.returncode == 0, f"{command}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


class Machine:
    """One clone of ``origin`` at ``root/name``, the workspace at ``subfolder`` inside it."""

    def __init__(self, root: Path, name: str, origin: Path, subfolder: str = "") -> None:
        self.name = name
        home, data = root / f"{name}-home", root / f"{name}-data"
        home.mkdir()
        self.env = base_environment(home, data)
        self.clone = root / name
        run(["git", "clone", "-q", str(origin), str(self.clone)], root, self.env)
        self.workspace = self.clone / subfolder if subfolder else self.clone
        self.workspace.mkdir(exist_ok=True)
        self.git("config", "user.name", f"Person on {name}")
        self.git("config", "user.email", f"{name}@example.org")
        self.env["MEMQUILL_WORKSPACE"] = str(self.workspace)
        self.key = RecordKey(data / "memquill")
        self.store = RecordStore(self.workspace, record_key=self.key)

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(["git", *args], self.workspace, self.env, check=check)

    def memquill(
        self, *args: str, check: bool = True, stdin: str = ""
    ) -> subprocess.CompletedProcess[str]:
        return run([MEMQUILL, *args], self.workspace, self.env, check=check, stdin=stdin)

    @property
    def records(self) -> Path:
        return self.workspace / "memory" / "records.md"

    def raw(self) -> bytes:
        return self.records.read_bytes() if self.records.exists() else b""

    def remember(self, text: str) -> str:
        result = self.store.save([Candidate(text, {"kind": "manual"}, f"manual:{text}")])
        assert result.record_id is not None
        return result.record_id

    def current(self, text: str) -> str:
        """The id of the active version holding ``text``."""
        return next(r.id for r in self.store.snapshot().records if r.content == text)

    def update(self, text: str, new_text: str) -> str:
        result = self.store.correct(self.current(text), new_text, self.store.snapshot().revision)
        assert result.record_id is not None
        return result.record_id

    def forget(self, text: str) -> None:
        target = next(r.id for r in self.store.snapshot().records if r.content == text)
        self.store.revoke(target, self.store.snapshot().revision)

    def commit(self, message: str = "memory") -> None:
        self.git("add", "-A")
        if self.git("diff", "--cached", "--quiet", check=False).returncode:
            self.git("commit", "-q", "-m", message)

    def pull(self) -> subprocess.CompletedProcess[str]:
        done = self.git("pull", "--no-rebase", check=False)
        assert done.returncode == 0, f"pull on {self.name}:\n{done.stdout}\n{done.stderr}"
        assert "CONFLICT" not in done.stdout + done.stderr
        return done

    def sync(self) -> str:
        """Commit, pull (merging), push: what a person runs on each machine; git's output."""
        self.commit()
        done = self.pull()
        self.git("push", "-q")
        return done.stdout + done.stderr

    def active_texts(self) -> set[str]:
        return {r.content for r in self.store.snapshot().records if r.status == "active"}


def bare_origin(root: Path) -> Path:
    origin = root / "origin.git"
    environment = base_environment(root, root / "origin-data")
    run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], root, environment)
    return origin


def carry_key(source: Machine, target: Machine) -> str:
    """``memquill key export --stdout | memquill key import -``, as a person pipes it."""
    exported = source.memquill("key", "export", "--stdout").stdout
    return target.memquill("key", "import", "-", stdin=exported).stdout
