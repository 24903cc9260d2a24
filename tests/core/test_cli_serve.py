"""``memquill serve`` and the shell's fast path: real processes on a real Unix socket.

Every served answer is compared byte for byte with the same command run with ``--no-server``,
and each ask records whether the server answered (a process the server answered never imports
the command's own modules).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.core.cli_helpers import MEMQUILL, cli_env, run_cli

from memquill.cli._ask_server import (  # pyright: ignore[reportPrivateUsage]
    _workspace,  # pyright: ignore[reportPrivateUsage]
    socket_path,
)
from memquill.cli.serve import MAX_REQUEST, peer_is_owner
from memquill.errors import ERRORS
from memquill.index._search_index import IndexSearcher
from memquill.paths import canonical_workspace, choose_workspace

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="memquill serve needs SO_PEERCRED (Linux)"
)

# Runs ``memquill`` as its console script does, then notes which memquill modules it loaded.
_ASK = (
    "import json, sys\n"
    "mark = sys.argv.pop(1)\n"
    "from memquill.cli import main\n"
    "status = main()\n"
    "with open(mark, 'w') as mark:\n"
    "    json.dump(sorted(m for m in sys.modules if m.startswith('memquill')), mark)\n"
    "sys.exit(status)\n"
)


@dataclass
class Served:
    env: dict[str, str]
    workspace: Path
    socket: Path
    process: subprocess.Popen[bytes]
    marks: Path

    def ask(
        self, *args: str, env: dict[str, str] | None = None
    ) -> tuple[subprocess.CompletedProcess[bytes], bool]:
        """``memquill --workspace W ARGS…`` in a fresh process, and whether the server answered
        (a process it answered never imports the command's own modules)."""
        done, loaded = self.ask_loaded(*args, env=env)
        return done, "memquill.cli.context" not in loaded

    def ask_loaded(
        self, *args: str, env: dict[str, str] | None = None
    ) -> tuple[subprocess.CompletedProcess[bytes], list[str]]:
        """``memquill --workspace W ARGS…`` in a fresh process, and the memquill modules it
        loaded."""
        mark = self.marks / "loaded.json"
        done = subprocess.run(
            [sys.executable, "-c", _ASK, str(mark), "--workspace", str(self.workspace), *args],
            capture_output=True,
            env=env or self.env,
            timeout=60,
            check=False,
        )
        return done, json.loads(mark.read_text(encoding="utf-8"))

    def local(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        return run_cli(self.env, "--workspace", str(self.workspace), *args, "--no-server")

    def same(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        """The served answer, after checking the server gave it and it equals the local one."""
        served, by_server = self.ask(*args)
        local = self.local(*args)
        assert by_server, served.stderr
        assert (served.returncode, served.stdout, served.stderr) == (
            local.returncode,
            local.stdout,
            local.stderr,
        )
        return served


def index_file(root: Path, folder: Path | None = None) -> Path:
    """Where the index of ``root`` lives (in ``folder``, else the environment's place)."""
    path = IndexSearcher(folder, watch=False).index(root).path
    assert path is not None
    return path


# Runs the command with SIGINT ignored, which an exec keeps (a shell does this to a script's
# background job).
_SIGINT_IGNORED = (
    "import os, signal, sys\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)


def start(
    env: dict[str, str], workspace: Path, *, sigint_ignored: bool = False
) -> subprocess.Popen[bytes]:
    """``memquill serve``, once it says it answers (``sigint_ignored``: started as a script's
    background job is, with SIGINT ignored from its start)."""
    command = [MEMQUILL, "serve", "--workspace", str(workspace)]
    if sigint_ignored:
        command = [sys.executable, "-c", _SIGINT_IGNORED, *command]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith(b"memquill serve: answering"), process.stderr and process.stderr.read()
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(timeout=30)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "trips.md").write_text(
        "# Trips\n\nKayak trip to the lake in June.\nBring the blue tent.\n", encoding="utf-8"
    )
    (workspace / "memory.md").write_text("Long-term: prefers green tea.\n", encoding="utf-8")
    today = dt.datetime.now().astimezone().date().isoformat()
    (workspace / "memory" / f"{today}.md").write_text("Called the kayak shop.\n", "utf-8")
    # A socket's path has at most 107 bytes: the index folder is a short one.
    index = Path(tempfile.mkdtemp(prefix="mq", dir="/tmp"))
    env = {**cli_env(tmp_path), "MEMQUILL_INDEX_DIR": str(index)}
    process = start(env, workspace)
    try:
        path = index_file(canonical_workspace(workspace), index).with_suffix(".sock")
        it = Served(env, workspace, path, process, tmp_path)
        yield it
        process = it.process  # a test may have started another
    finally:
        stop(process)
        shutil.rmtree(index, ignore_errors=True)


def test_served_answers_are_the_in_process_bytes(served: Served) -> None:
    assert served.socket.is_socket() and served.socket.stat().st_mode & 0o777 == 0o600
    assert served.socket.parent.stat().st_mode & 0o777 == 0o700
    assert b"trips.md" in served.same("search", "kayak").stdout
    served.same("search", "kayak", "--json")
    served.same("search", "kayak", "--limit", "1", "--type", "notes")
    served.same("search", "nothing-matches-this")
    served.same("search", "kayak", "--limit", "0")  # the tool's refusal: an error status
    served.same("get", "trips.md", "--lines", "3:4")
    served.same("get", "trips.md", "--json")
    served.same("get", "missing.md")  # not_found
    served.same("get", ".env")  # access_denied
    served.same("recent", "--days", "1")
    served.same("recent", "--json")
    ws = ("--workspace", str(served.workspace))
    assert (
        run_cli(served.env, *ws, "remember", "tea is sencha", "--key", "prefs/tea").returncode == 0
    )
    served.same("get", "--key", "prefs/tea")
    served.same("get", "--key", "prefs/none")


def test_served_answers_follow_changes_made_by_other_processes(served: Served) -> None:
    ws = served.workspace
    served.same("search", "kayak")
    (ws / "trips.md").write_text("# Trips\n\nCanoe trip to the river.\n", encoding="utf-8")
    assert b"Canoe" in served.same("search", "canoe").stdout
    assert b"trips.md" not in served.same("search", "tent").stdout
    (ws / "notes").mkdir()
    (ws / "notes" / "new.md").write_text("A brand new zeppelin note.\n", encoding="utf-8")
    assert b"notes/new.md" in served.same("search", "zeppelin").stdout
    served.same("get", "notes/new.md")
    (ws / "notes" / "new.md").unlink()
    assert b"notes/new.md" not in served.same("search", "zeppelin").stdout
    remembered = run_cli(
        served.env, "--workspace", str(ws), "remember", "The boathouse opens at dawn.",
        "--key", "trips/boathouse",
    )  # fmt: skip
    assert remembered.returncode == 0, remembered.stderr
    assert b"boathouse" in served.same("search", "boathouse").stdout
    served.same("recent")
    forgotten = run_cli(served.env, "--workspace", str(ws), "forget", "trips/boathouse")
    assert forgotten.returncode == 0, forgotten.stderr
    assert b"boathouse" not in served.same("search", "boathouse").stdout
    served.same("recent")


def test_a_killed_server_leaves_a_socket_the_next_command_and_server_get_past(
    served: Served,
) -> None:
    served.process.send_signal(signal.SIGKILL)
    served.process.wait(timeout=30)
    assert served.socket.is_socket()  # stale: nobody answers on it
    done, by_server = served.ask("search", "kayak")
    assert not by_server
    local = served.local("search", "kayak")
    assert (done.returncode, done.stdout, done.stderr) == (0, local.stdout, local.stderr)
    stop(served.process)
    served.process = start(served.env, served.workspace)
    served.same("search", "kayak")


def test_a_second_server_for_the_workspace_is_busy(served: Served) -> None:
    second = run_cli(served.env, "serve", "--workspace", str(served.workspace))
    assert second.returncode == ERRORS["busy"].exit_status
    assert second.stderr.startswith(b"error[busy]: A memquill server already answers")
    served.same("search", "kayak")  # the first one still serves, from its socket


def test_sigterm_and_sigint_stop_the_server_and_remove_its_socket(served: Served) -> None:
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(timeout=30) == 0
    assert not os.path.lexists(served.socket)
    stop(served.process)
    # Ignored from the start, as in a script's background job: the server still stops on it.
    served.process = start(served.env, served.workspace, sigint_ignored=True)
    served.process.send_signal(signal.SIGINT)
    assert served.process.wait(timeout=30) == 0
    assert not os.path.lexists(served.socket)


def _exchange(path: Path, request: bytes) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(30)
        connection.connect(str(path))
        connection.sendall(request)
        connection.shutdown(socket.SHUT_WR)
        chunks: list[bytes] = []
        while chunk := connection.recv(1 << 16):
            chunks.append(chunk)
    return json.loads(b"".join(chunks))


def test_a_malformed_request_gets_an_error_and_the_server_keeps_serving(served: Served) -> None:
    assert "error" in _exchange(served.socket, b"not json")
    assert "error" in _exchange(served.socket, b'{"argv": "search kayak"}')
    assert "error" in _exchange(served.socket, b"[" + b" " * (MAX_REQUEST + 1))
    env = {k: v for k, v in served.env.items() if k.startswith("MEMQUILL_") or k == "TZ"}
    env.pop("MEMQUILL_INDEX_DIR")
    base = {"cwd": "/", "env": env}
    write = {**base, "argv": ["--workspace", str(served.workspace), "remember", "a fact"]}
    assert "declined" in _exchange(served.socket, json.dumps(write).encode())
    other = {**base, "argv": ["--workspace", "/", "search", "kayak"]}
    assert "declined" in _exchange(served.socket, json.dumps(other).encode())
    served.same("search", "kayak")


def test_a_command_from_another_environment_answers_itself(served: Served) -> None:
    env = {**served.env, "TZ": "Pacific/Kiritimati"}
    done, by_server = served.ask("recent", env=env)
    assert not by_server and done.returncode == 0
    done, by_server = served.ask("search", "kayak", env={**served.env, "MEMQUILL_SERVER": "0"})
    assert not by_server and done.returncode == 0


def test_a_served_command_loads_only_the_client(served: Served) -> None:
    done, loaded = served.ask_loaded("search", "kayak")
    assert done.returncode == 0 and b"trips.md" in done.stdout
    client = {"memquill", "memquill.cli", "memquill.cli._ask_server", "memquill.jsondoc"}
    assert set(loaded) - {"memquill.lazy"} == client


def test_the_client_finds_the_socket_the_server_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "ws")
    root = canonical_workspace(tmp_path / "ws")
    for folder in (str(tmp_path / "ix"), None):
        if folder is None:
            monkeypatch.delenv("MEMQUILL_INDEX_DIR")
            monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        else:
            monkeypatch.setenv("MEMQUILL_INDEX_DIR", folder)
        expected = str(index_file(root).with_suffix(".sock"))
        assert socket_path(str(tmp_path / "link")) == expected
    monkeypatch.setenv("MEMQUILL_INDEX_DIR", ":memory:")
    assert socket_path(str(root)) is None


def test_the_client_chooses_the_workspace_the_command_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Resolved without memquill.paths (its imports are what the fast path saves), by its rules.
    monkeypatch.delenv("MEMQUILL_WORKSPACE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert _workspace(["search", "tea"]) == str(choose_workspace(None).path)
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _workspace(["search", "tea"]) == str(choose_workspace(None).path)
    monkeypatch.setenv("MEMQUILL_WORKSPACE", str(tmp_path / "env"))
    assert _workspace(["search", "tea"]) == str(choose_workspace(None).path)
    monkeypatch.chdir(tmp_path)
    chosen = ["--workspace", "a", "search", "--workspace=b", "tea"]  # the last one counts
    assert _workspace(chosen) == str(choose_workspace("b").path)


def test_the_peer_check_refuses_another_user(tmp_path: Path) -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        assert peer_is_owner(left)
        assert not peer_is_owner(left, uid=os.getuid() + 1)


@pytest.mark.skipif(os.getuid() != 0, reason="running a client as another user needs root")
def test_the_server_answers_no_other_user(served: Served) -> None:
    # The socket's folder is closed to others; opened up, the server itself still refuses.
    nobody = 65534
    served.socket.parent.chmod(0o711)
    served.socket.chmod(0o666)
    probe = (
        "import os, socket, sys\n"
        f"os.setgid({nobody}); os.setuid({nobody})\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.settimeout(30)\n"
        "s.connect(sys.argv[1])\n"
        "try:\n"
        "    s.sendall(b'{}'); s.shutdown(socket.SHUT_WR)\n"
        "    print(repr(s.recv(1 << 16)))\n"
        "except (BrokenPipeError, ConnectionResetError):\n"
        "    print('refused')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(served.socket)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) in ((0, b"b''\n"), (0, b"refused\n")), done.stderr
    with contextlib.suppress(OSError):
        served.socket.parent.chmod(0o700)
    served.same("search", "kayak")


@pytest.mark.skipif(os.getuid() != 0, reason="running a server as another user needs root")
def test_a_command_never_takes_an_answer_from_another_users_socket(tmp_path: Path) -> None:
    # An index folder others can write to ($MEMQUILL_INDEX_DIR): another user puts a socket
    # where the client looks and answers with whatever it likes.
    nobody = 65534
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "trips.md").write_text("# Trips\n\nKayak trip to the lake.\n", "utf-8")
    index = Path(tempfile.mkdtemp(prefix="mq", dir="/tmp"))
    index.chmod(0o1777)
    env = {**cli_env(tmp_path), "MEMQUILL_INDEX_DIR": str(index)}
    tmp_path.chmod(0o755)  # the forger reaches nothing of the workspace, only its socket folder
    path = index_file(canonical_workspace(workspace), index).with_suffix(".sock")
    forger = (
        "import json, os, socket, sys\n"
        f"os.setgid({nobody}); os.setuid({nobody})\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "os.umask(0); s.bind(sys.argv[1]); s.listen(8)\n"
        "print('ready', flush=True)\n"
        "while True:\n"
        "    c, _ = s.accept()\n"
        "    with c:\n"
        "        c.settimeout(5)\n"
        "        try:\n"
        "            c.recv(1 << 16)\n"
        "            c.sendall(json.dumps({'status': 0, 'stdout': 'FORGED\\n', 'stderr': ''})"
        ".encode())\n"
        "        except OSError:\n"
        "            pass\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", forger, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"ready\n", process.stderr and process.stderr.read()
        asked = run_cli(env, "--workspace", str(workspace), "search", "kayak")
        local = run_cli(env, "--workspace", str(workspace), "search", "kayak", "--no-server")
        assert b"FORGED" not in asked.stdout
        assert (asked.returncode, asked.stdout) == (local.returncode, local.stdout)
        assert b"trips.md" in asked.stdout
    finally:
        process.kill()
        process.wait(timeout=30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        shutil.rmtree(index, ignore_errors=True)
