"""Helpers shared by the records-store tests: candidates, workspace images, child processes."""

from __future__ import annotations

import hashlib
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from memquill.errors import MemoryRecordError
from memquill.store._record import JSONValue
from memquill.store._results import Candidate

CHILD_TIMEOUT = 120.0
"""A ceiling that only stops a hung child from hanging the suite; never a speed assertion."""


def manual(content: str, key: str | None = None, **extra: JSONValue) -> Candidate:
    """A manual candidate; the key defaults to the content."""
    return Candidate(content, {"kind": "manual", **extra}, key or f"key:{content}")


def conversation(
    content: str, key: str, session: str = "session-1", message: str = "message-1", **extra: Any
) -> Candidate:
    """A candidate extracted from one chat message."""
    source = {"kind": "conversation", "sessionId": session, "messageId": message, **extra}
    return Candidate(content, source, key)


def tool(content: str, key: str, session: str = "tool-session") -> Candidate:
    """A candidate a tool call saved."""
    return Candidate(content, {"kind": "tool", "sessionId": session}, key)


def records_path(workspace: Path) -> Path:
    return workspace / "memory" / "records.md"


def raw(workspace: Path) -> bytes:
    """The records file's bytes (empty when missing)."""
    path = records_path(workspace)
    return path.read_bytes() if path.exists() else b""


def revision_of(workspace: Path, data: bytes) -> str:
    """The store revision as the format defines it, computed independently of the store."""
    return hashlib.sha256(os.fsencode(os.path.realpath(workspace)) + b"\0" + data).hexdigest()


def tree(root: Path) -> dict[str, bytes]:
    """Every entry under ``root`` (symlinks not followed) with its bytes, for before/after checks.

    Directories show as ``<dir>``, symlinks as ``-> target``. Only the lock file's presence
    counts, not its bytes: a writer that takes an existing lock rewrites its holder diagnostics
    by design, but a refused write must never create it (or ``memory/``).
    """
    image: dict[str, bytes] = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(directory, name)
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                image[relative] = b"-> " + os.fsencode(os.readlink(path))
            elif path.is_dir():
                image[relative] = b"<dir>"
            elif relative == "memory/.records-lock":
                image[relative] = b"<lock>"
            else:
                image[relative] = path.read_bytes()
    return image


def expect_error(
    code: str, message: str, call: Callable[..., object], *args: Any, **kwargs: Any
) -> MemoryRecordError:
    """Run ``call`` and check it raises the store error with exactly ``code`` and ``message``."""
    with pytest.raises(MemoryRecordError) as info:
        call(*args, **kwargs)
    assert (info.value.code, info.value.message) == (code, message)
    return info.value


def expect_unchanged(
    root: Path, code: str, message: str, call: Callable[..., object], *args: Any, **kwargs: Any
) -> MemoryRecordError:
    """Like :func:`expect_error`, and nothing under ``root`` was created, changed or removed."""
    before = tree(root)
    error = expect_error(code, message, call, *args, **kwargs)
    assert tree(root) == before
    return error


# -- child processes ------------------------------------------------------------------------


class Child:
    """A Python child process that talks to the test in lines over stdin/stdout.

    The pipes are unbuffered, so a line read here never leaves later output stranded in a
    buffer that :meth:`finish` would not see.
    """

    def __init__(self, script: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
        )
        self.pid = self.process.pid

    def expect(self, want: str) -> str:
        """Read the next line, which must start with ``want``; return the rest of it."""
        line = self.readline()
        if not line:  # the child exited: what it printed on stderr says why
            _, err = self.process.communicate(timeout=CHILD_TIMEOUT)
            pytest.fail(f"child exited ({self.process.returncode}) before {want!r}: {err.decode()}")
        assert line.startswith(want), f"child said {line!r}"
        return line[len(want) :].strip()

    def readline(self, timeout: float = CHILD_TIMEOUT) -> str:
        stdout = self.process.stdout
        assert stdout is not None
        fd = stdout.fileno()
        line = bytearray()
        deadline = time.monotonic() + timeout
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                self.kill()
                pytest.fail(f"child {self.pid} said nothing for {timeout} s")
            chunk = os.read(fd, 1)
            if not chunk:
                break  # the child exited
            line += chunk
        return line.decode()

    def send(self, line: str) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(line.encode() + b"\n")

    def finish(self) -> str:
        """Close stdin, wait for a clean exit, and return the remaining stdout."""
        out, err = self.process.communicate(timeout=CHILD_TIMEOUT)
        assert self.process.returncode == 0, f"child failed ({self.process.returncode}): {err!r}"
        return out.decode()

    def kill(self) -> None:
        """SIGKILL the child and reap it (its kernel locks are free once this returns)."""
        if self.process.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
        self.process.communicate(timeout=CHILD_TIMEOUT)


@contextmanager
def children(*scripts: tuple[str, tuple[str, ...]]) -> Generator[list[Child]]:
    """Start one child per ``(script, args)``; every child still running at exit is killed."""
    started: list[Child] = []
    try:
        for script, args in scripts:
            started.append(Child(script, *args))
        yield started
    finally:
        for child in started:
            if child.process.poll() is None:
                child.kill()
            for stream in (child.process.stdin, child.process.stdout, child.process.stderr):
                if stream is not None:
                    stream.close()


# Pauses a writer inside the transaction right after the staged file is written and fsynced:
# transaction.py publishes with ``os.replace(staging, file)``. A save into an existing file is
# an append (no staging file), so this writer's save is made to take the whole-file way a
# correction or a forget takes (``Draft.rewritten``), which is what these tests pause.
TWO_MESSAGES = """
from memquill.store import _postgres as _two

def _two_messages(self, operation, timeout, *, mode, _attempt=_two.PostgresBackend._attempt):
    if mode == "held":
        raise _two._Unsure
    return _attempt(self, operation, timeout, mode=mode)

_two.PostgresBackend._attempt = _two_messages
"""
"""Put first in a child script that pauses a PostgreSQL writer inside its transaction: an
append on the rows held is one message, with no moment inside its transaction to pause in,
so the child's appends take the path of two messages (as after a refusal)."""

PAUSE_BEFORE_RENAME = """
import os, sys
from memquill import RecordStore
from memquill.store._results import Candidate
from memquill.store import _transaction

_transaction.Draft.rewritten = True

real_replace = os.replace

def paused_replace(src, dst, *args, **kwargs):
    if str(src).endswith(".tmp"):
        print("staged", src, flush=True)
        if sys.stdin.readline().strip() != "go":
            raise SystemExit(3)
    return real_replace(src, dst, *args, **kwargs)

os.replace = paused_replace
store = RecordStore(sys.argv[1], lock_timeout=30)
result = store.save([Candidate(sys.argv[2], {"kind": "manual"}, sys.argv[2])])
print("saved", result.revision, result.record_id, flush=True)
"""

# Holds the writer lock (the real one, through WriterLock) until told to let go.
HOLD_LOCK = """
import sys
from pathlib import Path
from memquill.store._lock import WriterLock

with WriterLock(Path(sys.argv[1]), timeout=30):
    print("locked", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""
