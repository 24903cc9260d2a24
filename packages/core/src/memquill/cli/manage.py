"""``memquill manage``: serve the workspace's management page on this computer only."""

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
    add_common(manage)
    manage.set_defaults(handler=_manage)


def _manage(args: argparse.Namespace, context: Context) -> int:
    try:
        from memquill.manage import Backend, LedgerJobs, ManageServer  # the optional web extra
    except ImportError:
        context.err.write(_NEEDS_EXTRA)
        return 2
    port: int = args.port
    if not 0 <= port <= 65535:
        context.err.write("error[usage]: --port must be between 0 and 65535\n")
        return 2
    context.ensure_workspace()
    backend = Backend.open(context.session(), jobs=LedgerJobs(context.workspace))
    try:
        server = ManageServer(backend, port=port)
    except OSError as error:
        context.err.write(f"error[usage]: cannot listen on 127.0.0.1:{port}: {error.strerror}\n")
        return 2
    context.emit(
        f"memquill manage: {server.url}\nworkspace {context.workspace}; Ctrl+C stops the page",
        {"url": server.url, "workspace": str(context.workspace)},
    )
    context.out.flush()

    def open_browser() -> None:
        webbrowser.open(server.url)

    server.serve(on_started=open_browser if args.open else None)
    return 0
