"""``search``, ``get`` and ``recent``: the read tools, from a shell.

The plain output is exactly the text the tools return to a model; ``--json`` prints the
structured result instead. A failure prints the tool's failure text and exits non-zero.
"""

from __future__ import annotations

import argparse
import re
from typing import Any, Final

from memquill.cli.context import Context, add_common, exit_status
from memquill.errors import InvalidInputError, Messages, NotFoundError
from memquill.tools import MemoryToolset

__all__ = ["register"]

_LINES: Final = re.compile(r"(?P<start>[0-9]*)(?::(?P<end>[0-9]*))?")
_GET_WHAT: Final = "Give a workspace-relative path, or --key with a fact's key (not both)."


def register(subparsers: Any) -> None:
    """Add this module's subcommands to ``memquill``."""
    search = subparsers.add_parser("search", help="search notes and remembered facts")
    search.add_argument("query", help="keywords")
    search.add_argument(
        "--tag",
        dest="tags",
        action="append",
        default=[],
        metavar="TAG",
        help="keep notes with this tag (repeat for any of several)",
    )
    search.add_argument(
        "--type",
        dest="file_type",
        choices=("all", "daily", "longterm", "notes"),
        default="all",
        help="kind of source (default: all)",
    )
    search.add_argument("--limit", type=int, default=5, help="results shown, 1–20 (default 5)")
    search.set_defaults(handler=_search)

    get = subparsers.add_parser("get", help="read a note or a remembered fact, page by page")
    get.add_argument("path", nargs="?", help="workspace-relative path, as search or recent show it")
    get.add_argument("--key", help="read the remembered fact with this key instead (prefs/coffee)")
    get.add_argument(
        "--lines",
        type=_line_range,
        metavar="A:B",
        help="1-based inclusive line range (A:B, A:, :B or A)",
    )
    get.add_argument(
        "--char-start",
        type=int,
        default=0,
        metavar="N",
        help="continue at this offset (the next_char_start of the previous page)",
    )
    get.set_defaults(handler=_get)

    recent = subparsers.add_parser(
        "recent", help="long-term memory, recent daily notes and remembered facts"
    )
    recent.add_argument("--days", type=int, default=3, help="daily files shown, 1–7 (default 3)")
    recent.set_defaults(handler=_recent)

    for parser in (search, get, recent):
        add_common(parser)


def _line_range(value: str) -> tuple[int | None, int | None]:
    match = _LINES.fullmatch(value)
    if match is None or not (match["start"] or match["end"]):
        raise argparse.ArgumentTypeError("expected A:B, A:, :B or A (line numbers)")
    start = int(match["start"]) if match["start"] else None
    if match["end"] is None:
        return start, start
    return start, int(match["end"]) if match["end"] else None


def _search(args: argparse.Namespace, context: Context) -> int:
    arguments = {
        "query": args.query,
        "tags": list(args.tags),
        "file_type": args.file_type,
        "limit": args.limit,
    }
    return _call(context, "memory_search", arguments)


def _get(args: argparse.Namespace, context: Context) -> int:
    if (args.path is None) == (args.key is None):
        raise InvalidInputError(_GET_WHAT)
    path = args.path if args.key is None else _fact_path(context, args.key)
    start, end = args.lines if args.lines is not None else (None, None)
    arguments = {
        "file_path": path,
        "line_start": start,
        "line_end": end,
        "char_start": args.char_start,
    }
    return _call(context, "memory_get", arguments)


def _fact_path(context: Context, key: str) -> str:
    """The projection path of the fact named ``key`` (a key is never a note path: notes are
    read by path, facts by ``--key``).

    Raises:
        InvalidInputError: not a valid key. NotFoundError: no active fact has it.
    """
    record = context.session("read").store.find_key(key)
    if record is None:
        raise NotFoundError(Messages.KEY_NOT_FOUND.format(key=key))
    return record.projection_path


def _recent(args: argparse.Namespace, context: Context) -> int:
    return _call(context, "memory_recent", {"days": args.days})


def _call(context: Context, tool: str, arguments: dict[str, Any]) -> int:
    # The read tools themselves: the text printed is exactly what a model is shown.
    result = MemoryToolset(context.session("read")).call(tool, arguments)
    context.emit(result.text, result.structured)
    if not result.is_error:
        return 0
    return exit_status((result.structured or {}).get("error_code"))
