"""``memquill manage``: serve the workspace's management page on this computer only.

Every request needs the token (:mod:`memquill.web`): the printed address carries it, and the
page trades it for a cookie. ``--no-token`` opens the page to every local user, for a machine
only one person uses.
"""

from __future__ import annotations

import argparse
import webbrowser
from typing import Any

from memquill.cli.context import Context, add_common

__all__ = ["register"]

_NEEDS_EXTRA = (
    "error[usage]: memquill manage needs the web extra: pip install 'memquill[web]' (or uv add "
    "'memquill[web]')\n"
)


def register(subparsers: Any) -> None:
    """Add ``manage`` to ``memquill``."""
    manage = subparsers.add_parser(
        "manage", help="open a local page to see, correct and forget remembered facts"
    )
    manage.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)"
    )
    manage.add_argument("--open", action="store_true", help="open the page in a browser")
    manage.add_argument(
        "--no-token",
        action="store_true",
        help="serve without a token: every local user (and container) can then read and change "
        "your memory; only for a machine one person uses",
    )
    add_common(manage)
    manage.set_defaults(handler=_manage)


def _manage(args: argparse.Namespace, context: Context) -> int:
    try:
        from memquill.manage import Backend, LedgerJobs, ManageServer  # the optional web extra
        from memquill.web import load_token
    except ImportError:
        context.err.write(_NEEDS_EXTRA)
        return 2
    port: int = args.port
    if not 0 <= port <= 65535:
        context.err.write("error[usage]: --port must be between 0 and 65535\n")
        return 2
    context.ensure_workspace()
    token = None if args.no_token else load_token()
    backend = Backend.open(context.session(), jobs=LedgerJobs(context.workspace))
    try:
        server = ManageServer(backend, token=token, port=port)
    except OSError as error:
        context.err.write(f"error[usage]: cannot listen on 127.0.0.1:{port}: {error.strerror}\n")
        return 2
    access = (
        "no token: every local user can use this page"
        if token is None
        else "the address carries the page's token: keep it to yourself"
    )
    context.emit(
        f"memquill manage: {server.login_url}\nworkspace {context.workspace}; {access}; "
        "Ctrl+C stops the page",
        {"url": server.login_url, "workspace": str(context.workspace), "token": token is not None},
    )
    context.out.flush()

    def open_browser() -> None:
        webbrowser.open(server.login_url)

    server.serve(on_started=open_browser if args.open else None)
    return 0
