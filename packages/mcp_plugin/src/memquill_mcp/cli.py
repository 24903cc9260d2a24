"""The ``memquill-mcp`` command: serve a workspace's memory to MCP hosts over stdio or HTTP.

Typical host configurations (``docs/adapters/mcp.md`` has complete snippets)::

    memquill-mcp --workspace ~/notes                         # all six tools over stdio
    memquill-mcp --workspace ~/notes --access read           # beside it: read tools only ...
    memquill-mcp --workspace ~/notes --write-only            # ... and the write tools apart
    memquill-mcp --workspace ~/notes --transport http --port 8765

Over HTTP every request needs ``Authorization: Bearer <token>``, on loopback too: the token in
``--token-file``, else ``$MEMQUILL_MCP_TOKEN``, else one generated into memquill's user data
folder (``http-token``, owner-only, reused). The server prints the host configuration with its
header on stderr. ``--no-token`` (loopback only) serves without one, for a machine one person
uses.

Logs go to stderr only: over stdio, stdout carries nothing but the protocol. A failure to
start prints one line, ``error[<code>]: <message>``, on stderr and exits with the code's status
(the ``memquill`` command's table, ``memquill.errors.ERRORS``); a bad option is ``error[usage]``
(status 2).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import stat
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final, NoReturn

from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp

from memquill import (
    InvalidInputError,
    MemorySession,
    MemquillError,
    StorageError,
    UnsafePathError,
    __version__,
    open_session,
)
from memquill.errors import ERRORS, Messages
from memquill.paths import WORKSPACE_ENV, choose_workspace
from memquill.plugins import connect_telemetry, get_plugin_manager
from memquill.web import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_REQUEST_TIMEOUT,
    bounded_protocol,
    default_token_path,
    load_token,
)
from memquill_mcp.http_server import DEFAULT_PATH, MIN_REMOTE_TOKEN, http_app, is_loopback
from memquill_mcp.server import build_server

if TYPE_CHECKING:
    from memquill.semantic import Embedder

__all__ = ["DEFAULT_PORT", "TOKEN_ENV", "WORKSPACE_ENV", "main"]

DEFAULT_PORT: Final = 8765
"""The HTTP port when ``--port`` is not given."""

TOKEN_ENV: Final = "MEMQUILL_MCP_TOKEN"  # noqa: S105 - the variable's name, not a secret
"""Environment variable holding the HTTP bearer token (kept off the command line)."""

_DATABASE_DRIVER: Final = (
    "The PostgreSQL store needs the optional extra: install memquill-mcp[postgres]."
)
"""The core's message for a missing database driver, naming this distribution's extra."""


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors in memquill's one format: the usage, then ``error[usage]``."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"error[usage]: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``memquill-mcp``; returns the exit status (2 for usage errors)."""
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level,
        format="memquill-mcp %(levelname)s %(name)s: %(message)s",
    )
    try:
        # A plugin that prints while loading must not corrupt the stdio protocol stream.
        with contextlib.redirect_stdout(sys.stderr):
            session = _session(args)
            server = build_server(
                session,
                write_only=args.write_only,
                derive_session_ids=args.session_id is None and session.access == "read_write",
                client_model=args.rerank_with_client_model,
                rerank_timeout=args.testing_rerank_timeout,
            )
            if args.rerank_with_client_model:
                # Failures of the client's model reach the plugins' telemetry hook.
                connect_telemetry(get_plugin_manager())
            app = _http_app(server, args) if args.transport == "http" else None
    except MemquillError as error:
        return _report(error)
    except ValueError as error:
        parser.error(str(error))
    try:
        if app is None:
            server.run("stdio")
        else:
            _serve(app, args, server.name)
    except KeyboardInterrupt:
        return 130
    return 0


def _report(error: MemquillError) -> int:
    """Print ``error[<code>]: <message>`` on stderr; the code's exit status."""
    message = error.message
    if isinstance(error, StorageError) and message == Messages.DATABASE_DRIVER:
        message = _DATABASE_DRIVER
    print(f"error[{error.code}]: {message}", file=sys.stderr, flush=True)
    info = ERRORS.get(error.code)
    return info.exit_status if info is not None else 1


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="memquill-mcp",
        description="Serve a memquill workspace's memory tools to MCP hosts.",
    )
    parser.add_argument("--version", action="version", version=f"memquill-mcp {__version__}")
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help=(
            f"the workspace folder (default: ${WORKSPACE_ENV}, else memquill/workspace in the "
            "user data directory)"
        ),
    )
    parser.add_argument(
        "--session-id",
        metavar="ID",
        help="the host's session id for write attribution (default: derived per connection from "
        "the client's name and a fresh id; an empty ID means no trusted session: writes refused)",
    )
    parser.add_argument(
        "--access",
        choices=("read", "read_write"),
        default="read_write",
        help="read: search, get and recent only; read_write (default): also the write tools",
    )
    parser.add_argument(
        "--write-only",
        action="store_true",
        help="offer only remember, update and forget (run beside an --access read server)",
    )
    parser.add_argument(
        "--plan-mode-file",
        metavar="PATH",
        type=Path,
        help="refuse writes while PATH exists (a read-only switch the host can toggle)",
    )
    parser.add_argument(
        "--lock-timeout",
        metavar="SECONDS",
        type=float,
        default=5.0,
        help="how long a write waits for another writer before failing busy (default 5)",
    )
    parser.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default) or http (streamable HTTP)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1, loopback)"
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--path", default=DEFAULT_PATH, help=f"HTTP endpoint path (default {DEFAULT_PATH})"
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help=f"allow a non-loopback --host (a bearer token of at least {MIN_REMOTE_TOKEN} "
        f"characters in ${TOKEN_ENV} or --token-file is then required)",
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        type=Path,
        help=f"read the HTTP bearer token from PATH, a file only its owner can read (default "
        f"${TOKEN_ENV}, else one generated into memquill's user data folder)",
    )
    parser.add_argument(
        "--no-token",
        action="store_true",
        help="serve HTTP on loopback without a token: every local user (and container) can "
        "then read and change your memory; only for a machine one person uses",
    )
    parser.add_argument(
        "--request-timeout",
        metavar="SECONDS",
        type=float,
        default=DEFAULT_REQUEST_TIMEOUT,
        help="close an HTTP connection that sends no complete request within SECONDS (default "
        f"{DEFAULT_REQUEST_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-connections",
        metavar="N",
        type=int,
        default=DEFAULT_MAX_CONNECTIONS,
        help="HTTP connections open at once; a new one displaces the oldest still waiting for "
        f"its request (default {DEFAULT_MAX_CONNECTIONS})",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="another Host header clients may use (repeatable; DNS-rebinding protection)",
    )
    parser.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="an Origin allowed to call the server, such as https://app.example (repeatable)",
    )
    parser.add_argument(
        "--log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        default="WARNING",
        help="stderr log level (default WARNING)",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="where the records live: file or a postgresql:// URL (default: $MEMQUILL_STORE, "
        "else the workspace's memory/records.md); never logged",
    )
    parser.add_argument(
        "--rerank-with-client-model",
        action="store_true",
        help="re-rank search candidates with the client's own model through MCP sampling, for "
        "clients that declare it (each search then sends one sampling request); off by default",
    )
    parser.add_argument(
        "--embed",
        metavar="MODULE:ATTR",
        help="semantic recall with the host's embedder (a memquill Embedder, or a function "
        "returning one): search re-orders its keyword candidates by similarity "
        "(docs/ranking.md); off by default",
    )
    # For tests only: pins the clock (ISO 8601 with an offset) so outputs are reproducible.
    parser.add_argument("--testing-clock", metavar="ISO", help=argparse.SUPPRESS)
    # For tests only: the seconds a client's model has to rank (3 by default).
    parser.add_argument("--testing-rerank-timeout", type=float, help=argparse.SUPPRESS)
    return parser


def _session(args: argparse.Namespace) -> MemorySession:
    workspace = _workspace(args.workspace)
    if args.write_only and args.access != "read_write":
        raise ValueError("--write-only needs --access read_write")
    plan_mode: Path | None = args.plan_mode_file.expanduser() if args.plan_mode_file else None
    authorize: Callable[[], bool] | None = None
    if plan_mode is not None:
        authorize = lambda: not plan_mode.exists()  # noqa: E731 - re-checked at every write
    # Every detector the installed plugins register (built-ins included) guards writes.
    return open_session(
        workspace,
        args.session_id,
        args.access,
        authorize,
        lock_timeout=args.lock_timeout,
        now=_clock(args.testing_clock),
        store=args.store,
        embedder=_embedder(args.embed),
    )


def _embedder(spec: str | None) -> Embedder | None:
    if not spec:
        return None
    # Semantic recall is opt-in: a server without --embed never imports it (start-up time).
    from memquill.semantic import load_embedder

    return load_embedder(spec)


def _workspace(given: str | None) -> Path:
    # The same rules as the ``memquill`` command (``memquill where`` explains them): a folder
    # named by --workspace or $MEMQUILL_WORKSPACE must exist; only the default is created, on
    # first use, so a host configured without --workspace works out of the box.
    choice = choose_workspace(given)
    problem = choice.problem()
    if problem is not None:  # not a folder: the store's code for it; missing: a bad argument
        raise (
            UnsafePathError(problem) if os.path.lexists(choice.path) else InvalidInputError(problem)
        )
    if choice.origin == "default":
        choice.create()
    return choice.path


def _clock(value: str | None) -> Callable[[], datetime] | None:
    if value is None:
        return None
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError("--testing-clock needs a UTC offset")
    fixed = moment.astimezone(UTC)
    return lambda: fixed


def _token(args: argparse.Namespace) -> tuple[str | None, str]:
    """The bearer token and where it came from (for the start-up message)."""
    token_file: Path | None = args.token_file
    if token_file is not None:
        token, source = _read_token_file(token_file.expanduser()), "--token-file"
    else:
        token, source = os.environ.get(TOKEN_ENV, "").strip(), f"${TOKEN_ENV}"
    if not is_loopback(args.host):
        if not args.allow_remote:
            raise ValueError(f"--host {args.host} is not loopback: pass --allow-remote to mean it")
        if args.no_token:
            raise ValueError("--no-token is for loopback only")
        if len(token) < MIN_REMOTE_TOKEN:
            raise ValueError(
                f"a non-loopback server needs a bearer token of at least {MIN_REMOTE_TOKEN} "
                f"characters (${TOKEN_ENV} or --token-file)"
            )
    if token:
        if args.no_token:
            raise ValueError(f"--no-token contradicts the token in {source}")
        return token, source
    if args.no_token:
        return None, "--no-token"
    return load_token(), "generated"


def _read_token_file(path: Path) -> str:
    """The token in ``path``: a regular file (never waited on) only its owner can read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise ValueError(f"cannot read --token-file: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("--token-file must be a regular file")
        if os.name == "posix" and info.st_mode & 0o077:
            raise ValueError(
                f"--token-file is readable or writable by group or others (mode "
                f"{stat.S_IMODE(info.st_mode):03o}): run chmod 600 on it"
            )
        data = os.read(fd, 64 * 1024)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError("--token-file is not UTF-8 text") from None


def _http_app(server: MCPServer, args: argparse.Namespace) -> ASGIApp:
    token, source = _token(args)
    args.protocol = bounded_protocol(args.request_timeout, args.max_connections)
    args.token_hint = _token_hint(args, server.name, token, source)
    return http_app(
        server,
        host=args.host,
        path=args.path,
        token=token,
        allowed_hosts=args.allowed_host,
        allowed_origins=args.allowed_origin,
    )


def _url(args: argparse.Namespace) -> str:
    shown = f"[{args.host}]" if ":" in args.host else args.host
    return f"http://{shown}:{args.port}{args.path}"


def _token_hint(args: argparse.Namespace, name: str, token: str | None, source: str) -> str:
    """How a client passes the token: a host configuration with its header.

    A generated token is shown (its owner needs it, as Jupyter shows its own); a configured one
    is named by where it came from, never repeated.
    """
    if token is None:
        return "memquill-mcp: no token (--no-token): every local user can use this server"
    if source == "generated":
        where = f"the token is in {default_token_path()} (owner-only, reused at every start)"
        value = token
    else:
        where = f"the token is the one in {source}"
        value = f"<the token in {source}>"
    config = {
        "mcpServers": {name: {"url": _url(args), "headers": {"Authorization": f"Bearer {value}"}}}
    }
    return (
        f"memquill-mcp: every request needs Authorization: Bearer <token>; {where}\n"
        f"memquill-mcp: an MCP host configuration: {json.dumps(config)}"
    )


def _serve(app: ASGIApp, args: argparse.Namespace, name: str) -> None:
    import uvicorn  # only the HTTP transport needs it

    print(
        f"memquill-mcp: serving {name} at {_url(args)}\n{args.token_hint}",
        file=sys.stderr,
        flush=True,
    )
    # log_config=None keeps uvicorn on this process's stderr logging; no access log on stdout.
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_config=None,
        access_log=False,
        lifespan="on",
        http=args.protocol,  # idle and slow connections are dropped, their number capped
        ws="none",
    )
    uvicorn.Server(config).run()
