"""``serve``: answer one workspace's ``search``, ``get`` and ``recent`` from a warm process.

A shell command pays its imports and a walk of the workspace on every call. ``memquill
serve`` holds one read session and one search index whose watcher learns of changes from the
operating system (:class:`memquill.index.IndexSearcher`), and answers those three commands
over a Unix socket; ``memquill search|get|recent`` asks it first
(:mod:`memquill.cli._ask_server`) and answers in its own process when it cannot.

The rules:

- One implementation of the answer: the server parses the command line with the command's
  own parser and runs the command's own handler (:func:`memquill.cli.context.run`), capturing
  stdout and stderr; the client prints those bytes and exits with that status.
- Only the three read commands: a command line that names another command, fails to parse or
  asks for help (its width is the terminal's), names another workspace, store or capacity, or
  comes from an environment whose memquill settings or time zone differ, is declined, and the
  client answers it itself. Writes never reach the server.
- The socket lives beside the workspace's index file, named like it with ``.sock``, in the
  index folder, which must be the user's own and owner-only (``0700``); the socket is
  ``0600``, every connection's peer must be the same user (``SO_PEERCRED``: Linux only), and it
  is never a network socket. A connection carries one JSON request, at most
  :data:`MAX_REQUEST` bytes, and gets one JSON reply; a malformed request gets an error reply
  and the server keeps serving.
- Freshness is the searcher's: what the watcher cannot vouch for is walked, and the records
  are read at their current revision on every answer.
- SIGTERM or SIGINT stops the server and removes its socket. A socket left by a server that
  was killed refuses connections; a new server replaces it. One that answers is another
  server's: starting a second fails with ``busy``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import socket
import stat
import struct
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Final, NoReturn

from memquill.cli.context import Context, add_common, run
from memquill.errors import BusyError, InvalidInputError, StorageError

if TYPE_CHECKING:
    from memquill.query import MemoryQuery
    from memquill.tools import MemorySession

    Warm = tuple[MemorySession, MemoryQuery]

__all__ = ["MAX_REQUEST", "peer_is_owner", "register"]

MAX_REQUEST: Final = 64 * 1024
"""The largest request read, in bytes (a command line is far smaller)."""

_READ_SECONDS: Final = 2.0  # a client that sends nothing in this long is dropped
_READ_COMMANDS: Final = frozenset({"search", "get", "recent"})
_PEERCRED: Final = struct.Struct("3i")  # struct ucred: pid, uid, gid
_STOPPING: Final = (signal.SIGTERM, signal.SIGINT)


def register(subparsers: Any) -> None:
    """Add this module's subcommand to ``memquill``."""
    serve = subparsers.add_parser(
        "serve",
        help="answer search, get and recent for one workspace from this process (Unix socket)",
        description="Keep one workspace's search index warm and watched, and answer the "
        "search, get and recent commands of the same user from it until stopped (Ctrl-C or "
        "SIGTERM). Linux only.",
    )
    add_common(serve)
    serve.set_defaults(handler=_serve)


def peer_is_owner(connection: socket.socket, uid: int | None = None) -> bool:
    """Whether the process at the other end of the Unix ``connection`` runs as ``uid``
    (default: this process's user), by the kernel's word (``SO_PEERCRED``)."""
    raw = connection.getsockopt(socket.SOL_SOCKET, _peercred_option(), _PEERCRED.size)
    _pid, peer, _gid = _PEERCRED.unpack(raw)
    return peer == (os.getuid() if uid is None else uid)


def _peercred_option() -> int:
    option = getattr(socket, "SO_PEERCRED", None)
    if not isinstance(option, int):
        raise InvalidInputError(
            "memquill serve needs Unix sockets with peer credentials (Linux); search, get and "
            "recent answer in their own process here."
        )
    return option


class _Stop(BaseException):
    """SIGTERM or SIGINT: leave the loop (a handler's ``except Exception`` never catches it)."""


def _stop(_signal: int, _frame: FrameType | None) -> NoReturn:
    raise _Stop


def _serve(args: argparse.Namespace, context: Context) -> int:
    from memquill.index import IndexSearcher
    from memquill.paths import canonical_workspace
    from memquill.query import MemoryQuery, search_request

    _peercred_option()
    root = canonical_workspace(context.workspace)
    searcher = IndexSearcher(watch=True)
    index = searcher.index(root).path
    if index is None:
        raise InvalidInputError(
            "Indexes are kept in memory ($MEMQUILL_INDEX_DIR=:memory:): there is no folder for "
            "the server's socket."
        )
    path = index.with_suffix(".sock")
    session = context.session("read")
    query = MemoryQuery(session.workspace, store=session.store, searcher=searcher)
    warm_up = search_request(query="memquill", tags=[], file_type="all", limit=1)
    assert warm_up is not None
    query.answer(warm_up)  # builds or updates the index and starts watching, before serving
    warm: Warm = (session, query)
    listener = _listen(path)
    bound = os.stat(path)
    # Both set here: a process started from a script's background job inherits SIGINT
    # ignored, and Python then leaves it ignored, so Ctrl-C's signal would never stop it.
    previous = {number: signal.signal(number, _stop) for number in _STOPPING}
    try:
        context.emit(
            f"memquill serve: answering search, get and recent for {root} "
            "(stop with Ctrl-C or SIGTERM)",
            {"workspace": str(root), "socket": str(path)},
        )
        context.out.flush()
        while True:
            connection, _address = listener.accept()
            with connection:
                _handle(connection, root, context, warm)
    except _Stop:
        return 0
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        listener.close()
        with contextlib.suppress(OSError):
            now = os.stat(path)
            if (now.st_dev, now.st_ino) == (bound.st_dev, bound.st_ino):
                os.unlink(path)  # ours still: a successor's socket is left alone
        searcher.close()


def _listen(path: Path) -> socket.socket:
    """A listening socket at ``path`` (``0600``, in an owner-only folder), replacing a socket
    no server answers on.

    Raises:
        StorageError: the folder is not the user's own and owner-only, or the socket cannot be
            made there. BusyError: a server already answers there.
    """
    from memquill.owner_only import private_folder

    try:
        private_folder(path.parent)
        info = os.lstat(path.parent)
    except OSError as error:
        raise StorageError(f"The index folder cannot be used for a socket ({error}).") from error
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise StorageError(
            "The index folder must be a folder of this user's, closed to others (0700), for a "
            "socket to be served from it."
        )
    if os.path.lexists(path):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise StorageError(f"{path} is not a socket: it is left as it is.")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(os.fspath(path))
            except ConnectionRefusedError:
                os.unlink(path)  # a server that was killed left it
            except OSError as error:
                raise StorageError(f"The socket {path} cannot be checked ({error}).") from error
            else:
                raise BusyError(f"A memquill server already answers for this workspace ({path}).")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)  # the socket is made 0600, never wider even for a moment
    try:
        listener.bind(os.fspath(path))
        listener.listen(64)
    except OSError as error:
        listener.close()
        raise StorageError(f"The socket {path} cannot be made ({error}).") from error
    finally:
        os.umask(mask)
    return listener


def _handle(connection: socket.socket, root: Path, context: Context, warm: Warm) -> None:
    """Answer one connection: one request, one reply (a peer that is not this user gets none)."""
    connection.settimeout(_READ_SECONDS)
    try:
        if not peer_is_owner(connection):
            return
        request = _read(connection)
        reply = (
            {"error": "The request is larger than a command line can be."}
            if request is None
            else _reply(request, root, context, warm)
        )
        connection.sendall(json.dumps(reply).encode())
    except OSError:
        return  # the client left (or timed out): it answers itself


def _read(connection: socket.socket) -> bytes | None:
    """The request, read to the client's end of writing (``None``: larger than allowed)."""
    chunks: list[bytes] = []
    size = 0
    while chunk := connection.recv(1 << 16):
        size += len(chunk)
        if size > MAX_REQUEST:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _reply(request: bytes, root: Path, context: Context, warm: Warm) -> dict[str, object]:
    """The reply to one request: the command's status and output, a refusal to answer it
    (``declined``: the client answers itself), or an ``error`` for a malformed request."""
    from memquill.cli import build_parser
    from memquill.cli._ask_server import compared_environment
    from memquill.jsondoc import parse_json
    from memquill.paths import canonical_workspace, choose_workspace

    try:
        data: Any = parse_json(request)
    except ValueError:
        return {"error": "The request is not JSON."}
    fields: dict[str, Any] = data if isinstance(data, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    argv, cwd, env = fields.get("argv"), fields.get("cwd"), fields.get("env")
    if not (
        isinstance(argv, list)
        and all(isinstance(word, str) for word in argv)  # pyright: ignore[reportUnknownVariableType]
        and isinstance(cwd, str)
        and isinstance(env, dict)
    ):
        return {"error": "The request needs argv (a list of strings), cwd and env."}
    words: list[str] = list(argv)  # pyright: ignore[reportUnknownArgumentType]
    if env != compared_environment():
        return {"declined": "its memquill settings or time zone differ from the server's"}
    original = os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        os.chdir(cwd)  # a relative --workspace means what it means in the client's folder
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                args = build_parser("search").parse_args(words)
            except SystemExit:
                return {"declined": "it is not a search, get or recent the server can parse"}
            if args.command not in _READ_COMMANDS:
                return {"declined": "it is not a read command"}
            same = (args.store, args.capacity) == (context.store, context.capacity_mib)
            if not same or canonical_workspace(choose_workspace(args.workspace).path) != root:
                return {"declined": "it names another workspace, store or capacity"}
            status = run(args, out, err, warm=warm)
    except Exception as error:  # noqa: BLE001 - the client's own process answers it, as ever
        return {"declined": f"the server could not answer it ({type(error).__name__})"}
    finally:
        with contextlib.suppress(OSError):
            os.chdir(original)
    return {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}
