"""The shell's fast path: ask the workspace's ``memquill serve`` for a read command's answer.

A ``memquill search``, ``get`` or ``recent`` process pays its imports and, without a watcher,
a walk of the workspace on every call. When ``memquill serve`` runs for the workspace, the
command sends its command line to that warm process over a Unix socket and prints the answer
instead: the same bytes on stdout and stderr and the same exit status, because the server runs
the command's own code (:mod:`memquill.cli.serve`).

The rules:

- The workspace is the command's own choice (``--workspace``, else ``$MEMQUILL_WORKSPACE``,
  else the default), resolved here with the same rules but without importing them; its socket
  is the workspace's index file with the suffix ``.sock`` (:func:`socket_path`). The server
  parses the command line itself and declines one that names another workspace or store, so
  a spelling this module reads differently can only cost the fast path, never the answer.
- Anything but a well-formed answer within :data:`TIMEOUT` seconds from a server of this
  user's (no socket, a refused connection, a server another user runs, a server that
  declines, a malformed reply) means ``None``: the caller answers in
  this process, which prints the same bytes.
- ``--no-server`` anywhere on the command line, or ``MEMQUILL_SERVER=0``, never asks.

This module imports only the standard library's smallest parts and :mod:`memquill.jsondoc` (it
runs before the command's own imports, which are what it saves).
"""

from __future__ import annotations

import _socket  # the C module itself: ``socket`` adds enum and selectors, unused here
import importlib
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any, Final

from memquill.jsondoc import parse_json

SERVER_ENV: Final = "MEMQUILL_SERVER"
"""Set to ``0`` (or ``false``, ``no``, ``off``) to answer every command in its own process."""

NO_SERVER: Final = "--no-server"

TIMEOUT: Final = 2.0
"""Seconds for connecting and answering together. A warm server answers in milliseconds and a
cold command takes a quarter of a second at 20,000 notes, so a server that needs more than
eight times the cold path is stuck or rebuilding, and answering here costs no more."""

MAX_ANSWER: Final = 64 * 1024 * 1024
"""The largest reply read (a page of ``get`` is far smaller): more is malformed."""

# What the server compares with its own environment: every memquill setting, and the time zone
# (``recent`` counts days locally). Not the ones that only find the server or pick how it
# stays fresh.
_UNCOMPARED: Final = frozenset(
    {"MEMQUILL_WORKSPACE", SERVER_ENV, "MEMQUILL_INDEX_DIR", "MEMQUILL_INDEX_WATCH"}
)


def compared_environment() -> dict[str, str]:
    """The environment variables an answer may depend on (the server declines a request whose
    values differ from its own)."""
    return {
        name: value
        for name, value in os.environ.items()
        if (name.startswith("MEMQUILL_") and name not in _UNCOMPARED) or name == "TZ"
    }


def ask(arguments: list[str]) -> int | None:
    """Print the server's answer to ``arguments`` (a ``search``, ``get`` or ``recent`` command
    line) and return its exit status; ``None`` when no server answered (nothing printed)."""
    if sys.platform == "win32" or NO_SERVER in arguments:
        return None  # no Unix sockets there: no server either
    if os.environ.get(SERVER_ENV, "").lower() in _OFF:
        return None
    path = socket_path(_workspace(arguments))
    if path is None or not os.path.exists(path):
        return None
    request = {"argv": arguments, "cwd": os.getcwd(), "env": compared_environment()}
    reply = _exchange(path, json.dumps(request).encode())
    answer = _answer(reply) if reply is not None else None
    if answer is None:
        return None
    status, out, err = answer
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if callable(reconfigure):
        reconfigure(errors="backslashreplace")  # as the command itself prints
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.stderr.write(err)
    sys.stderr.flush()
    return status


_OFF: Final = frozenset({"0", "false", "no", "off"})


def socket_path(workspace: str) -> str | None:
    """The socket of the server for ``workspace`` (an absolute folder): its index file's name
    with ``.sock``, in the index folder (``None``: indexes live in memory, so no server has a
    folder to listen in, or the folder cannot be resolved)."""
    folder = os.environ.get("MEMQUILL_INDEX_DIR")
    if folder == ":memory:":
        return None
    if folder:
        folder = os.path.expanduser(folder)
    else:
        folder = os.path.join(_user_cache_dir(), "memquill", "index")
    try:
        root = os.path.realpath(workspace, strict=True)
    except (OSError, ValueError):
        return None
    digest = _sha256()(os.fsencode(root)).hexdigest()[:32]
    return os.path.join(folder, f"{digest}.sock")


def _sha256() -> Callable[[bytes], Any]:
    """SHA-256 from CPython's own module, which loads no OpenSSL as ``hashlib`` does (the
    same digest: the index file's name, :func:`memquill.index.index_path`)."""
    try:
        module: Any = importlib.import_module("_sha2" if sys.version_info >= (3, 12) else "_sha256")
        return module.sha256
    except (ImportError, AttributeError):  # a build without it
        import hashlib

        return hashlib.sha256


def _workspace(arguments: list[str]) -> str:
    """The workspace ``arguments`` choose (the last ``--workspace``, else the environment's,
    else the default), absolute."""
    chosen: str | None = None
    words = iter(arguments)
    for word in words:
        if word == "--":
            break
        if word == "--workspace":
            chosen = next(words, None)
        elif word.startswith("--workspace="):
            chosen = word.partition("=")[2]
    if not chosen:
        chosen = os.environ.get("MEMQUILL_WORKSPACE") or os.path.join(
            _user_data_dir(), "memquill", "workspace"
        )
    return os.path.abspath(os.path.expanduser(chosen))


def _user_cache_dir() -> str:
    # memquill.paths.user_cache_dir's rule (a test holds them equal).
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches")
    return os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")


def _user_data_dir() -> str:
    # memquill.paths.user_data_dir's rule (a test holds them equal).
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support")
    return os.environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")


def _exchange(path: str, request: bytes) -> bytes | None:
    """Send ``request``, read the whole reply; ``None`` on any failure or past the deadline."""
    deadline = time.monotonic() + TIMEOUT
    try:
        connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            connection.settimeout(TIMEOUT)
            connection.connect(path)
            if not _served_by_this_user(connection):
                return None
            connection.sendall(request)
            connection.shutdown(_socket.SHUT_WR)
            chunks: list[bytes] = []
            size = 0
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                connection.settimeout(left)
                chunk = connection.recv(1 << 16)
                if not chunk:
                    return b"".join(chunks)
                size += len(chunk)
                if size > MAX_ANSWER:
                    return None
                chunks.append(chunk)
        finally:
            connection.close()
    except (OSError, ValueError):  # ValueError: a path the OS cannot take
        return None


def _served_by_this_user(connection: Any) -> bool:
    """Whether the server at the other end runs as this process's user, by the kernel's word
    (``SO_PEERCRED``). The folder is the user's own by default, but ``$MEMQUILL_INDEX_DIR`` may
    name one others can write to, and a socket another user made there could answer anything."""
    option = getattr(_socket, "SO_PEERCRED", None)
    if not isinstance(option, int):
        return False  # no peer credentials: no server either (it refuses to start)
    raw: bytes = connection.getsockopt(_socket.SOL_SOCKET, option, 12)  # struct ucred
    return int.from_bytes(raw[4:8], sys.byteorder) == os.getuid()


def _answer(reply: bytes) -> tuple[int, str, str] | None:
    """The exit status, stdout and stderr of a well-formed answer (``None``: anything else)."""
    try:
        data: Any = parse_json(reply)
    except ValueError:
        return None
    fields: dict[str, Any] = data if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    status, out, err = fields.get("status"), fields.get("stdout"), fields.get("stderr")
    if type(status) is not int or not isinstance(out, str) or not isinstance(err, str):
        return None
    return status, out, err
