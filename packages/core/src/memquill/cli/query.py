"""``search``, ``get`` and ``recent``: the read tools, from a shell.

The plain output is exactly the text the tools return to a model (control characters
escaped: :mod:`memquill.foundation.controls`); ``--json`` prints the structured result instead. A
failure prints ``error[<code>]: <message>`` on stderr and exits with the code's status; under
``--json`` the structured result, with its ``error`` and ``error_code``, is printed first. A
default workspace that does not exist yet answers as an empty one does.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any, Final

from memquill.cli.context import Context, add_common, counted
from memquill.errors import InvalidInputError, MemquillError, Messages, NotFoundError
from memquill.query import SearchAnswer, render_search, search_request

__all__ = ["register"]

_LINES: Final = re.compile(r"(?P<start>[0-9]*)(?::(?P<end>[0-9]*))?")
_GET_WHAT: Final = "Give a workspace-relative path, or --key with a fact's key (not both)."
_EMPTY: Final = "(empty file)"


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
        parser.add_argument(
            "--no-server",
            action="store_true",
            help="answer in this process even when memquill serve serves the workspace",
        )


def _line_range(value: str) -> tuple[int | None, int | None]:
    match = _LINES.fullmatch(value)
    if match is None or not (match["start"] or match["end"]):
        raise argparse.ArgumentTypeError("expected A:B, A:, :B or A (line numbers)")
    start = int(match["start"]) if match["start"] else None
    if match["end"] is None:
        return start, start
    return start, int(match["end"]) if match["end"] else None


def _search(args: argparse.Namespace, context: Context) -> int:
    arguments: dict[str, Any] = {
        "query": args.query,
        "tags": list(args.tags),
        "file_type": args.file_type,
        "limit": args.limit,
    }
    request = search_request(**arguments)
    if request is None:
        # A refusal is the tool's own, worded by its argument model.
        return _call(context, "memory_search", arguments)
    with context.read_query() as (session, query):
        assert session.ranker is None  # the shell opens no model-assisted session
        # Checked without the tool's models and answered as plain data: a search from the
        # shell never loads pydantic (issue 36). The text and JSON are the tool's.
        try:
            answer = query.answer(request)
        except MemquillError as error:
            answer = SearchAnswer(error=error.message, error_code=error.code)
    return _answered(context, render_search(answer), answer.as_data(), answer.error is not None)


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
    return _call(context, "memory_get", arguments, _past_the_end)


def _past_the_end(text: str, structured: dict[str, Any]) -> str:
    """The tool's text, saying so when an empty page lies past the end of a source.

    The tool answers ``(empty file)`` for an empty file and for a range past its end alike,
    as the spec words it (6.6); a person asking for lines 50–60 of a 12-line note is told.
    """
    count = structured.get("line_count")
    if structured.get("content") or not isinstance(count, int) or not text.endswith(_EMPTY):
        return text
    path, first = structured.get("path"), int(structured.get("line_start") or 1)
    lines = counted(count, "line")
    if first > count > 0:
        note = f"(line {first} is past the end: {path} has {lines})"
    elif int(structured.get("char_start") or 0) > 0:
        note = f"(char_start {structured.get('char_start')} is past the end of those lines)"
    else:
        return text
    return text[: -len(_EMPTY)] + note


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


def _call(
    context: Context,
    tool: str,
    arguments: dict[str, Any],
    words: Callable[[str, dict[str, Any]], str] | None = None,
) -> int:
    # The read tools themselves: the text printed is what a model is shown (``words`` may
    # say more to a person, where the tool's text is the spec's).
    with context.read_tools() as tools:
        result = tools.call(tool, arguments)
    structured = result.structured or {}
    text = result.text if words is None or result.is_error else words(result.text, structured)
    return _answered(context, text, structured, result.is_error)


def _answered(context: Context, text: str, structured: dict[str, Any], is_error: bool) -> int:
    """Print a read tool's answer; a failure is raised with its code (JSON printed first)."""
    if not is_error:
        context.emit(text, structured)
        return 0
    if context.as_json:
        context.emit("", structured)
    message = structured.get("error")
    raise MemquillError.from_code(
        str(structured.get("error_code") or ""),
        message if isinstance(message, str) else text,
    )
