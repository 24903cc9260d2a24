"""The ``memquill`` command: manage and query a workspace's memory from a shell.

Every subcommand prints text a person can read, or JSON with ``--json``. Failures print
``error[<code>]: <message>`` to stderr and exit with the code's status (``docs/errors.md``).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence
from typing import Final, NoReturn, TextIO

from memquill import __version__

_COMMAND_MODULES = (
    "records",
    "transfer",
    "doctor",
    "query",
    "index",
    "where",
    "sync",
    "key",
    "extract",
    "manage",
    "plugins",
    "enhance",
    "demo",
    "serve",
)
"""The subcommands' modules, imported when the parser is built (``--version`` needs none)."""

_COMMANDS: Final = {
    **dict.fromkeys(("remember", "list", "update", "forget", "compact"), "records"),
    **dict.fromkeys(("export", "import"), "transfer"),
    "doctor": "doctor",
    **dict.fromkeys(("search", "get", "recent"), "query"),
    "index": "index",
    "where": "where",
    **dict.fromkeys(("merge", "sync"), "sync"),
    "key": "key",
    **dict.fromkeys(("extract", "jobs"), "extract"),
    "manage": "manage",
    "plugins": "plugins",
    "enhance": "enhance",
    "demo": "demo",
    "serve": "serve",
}
"""Each subcommand's module: a command line naming one loads only that module (a meta test
checks this against what the modules register)."""

_ONE_ANSWER: Final = frozenset({"search", "get", "recent"})
"""The subcommands that print one answer and exit (a process running one collects no cycles)."""

_VALUED_OPTIONS: Final = frozenset({"--workspace", "--store", "--capacity"})
"""The top-level options that take a value (the word after them is not the subcommand)."""


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors in the one format: the usage, then ``error[usage]: …``."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"error[usage]: {message}\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``memquill`` with every subcommand registered, or only the module
    of ``command`` (a known subcommand's name): a ``memquill search`` imports no other
    subcommand, nor what they import."""
    parser = _Parser(
        prog="memquill",
        description="Agent memory a person can read: Markdown truth, safe writes, recall.",
    )
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help="workspace folder (default: $MEMQUILL_WORKSPACE, else memquill/workspace in the "
        "user data directory)",
    )
    parser.add_argument("--version", action="version", version=f"memquill {__version__}")
    parser.add_argument(
        "--store",
        metavar="URL",
        help="where the records live: file (the workspace's memory/records.md) or a "
        "postgresql:// URL (default: $MEMQUILL_STORE, else file); never printed",
    )
    parser.add_argument(
        "--capacity",
        metavar="MIB",
        type=int,
        help="the records file's capacity in MiB, 1 to 64 (default: store.capacityMiB in the "
        "workspace's .assistant/config.json, else 2)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    only = _COMMANDS.get(command or "")
    for name in _COMMAND_MODULES if only is None else (only,):
        importlib.import_module(f"memquill.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``memquill`` with ``argv`` (default: the process arguments); return the exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments == ["--version"]:
        # Answered before any subcommand (and what it imports) is loaded.
        print(f"memquill {__version__}")
        return 0
    command = _command_of(arguments)
    if argv is None and command in _ONE_ANSWER:
        # A process that answers once and exits holds nothing long enough for cycles to matter;
        # collecting while its imports and the index's freshness walk allocate costs about a
        # tenth of a first search at 20,000 notes.
        gc.disable()
        from memquill.cli._ask_server import ask

        status = ask(arguments)  # a server that serves the workspace answers, if one does
        if status is not None:
            return status
    from memquill.cli.context import run

    args = build_parser(command).parse_args(arguments)
    out: TextIO = sys.stdout
    reconfigure = getattr(out, "reconfigure", None)
    if callable(reconfigure):
        # A file name that is not UTF-8 is printed escaped, never as a crash.
        reconfigure(errors="backslashreplace")
    return run(args, out, sys.stderr)


def _command_of(arguments: Sequence[str]) -> str | None:
    """The subcommand ``arguments`` name, when that is certain without parsing them; ``None``
    (every subcommand is registered) for help, an unknown or abbreviated option, or none."""
    words = iter(arguments)
    for word in words:
        if word in _VALUED_OPTIONS:
            next(words, None)
        elif not (word.startswith("--") and word.partition("=")[0] in _VALUED_OPTIONS):
            return None if word.startswith("-") else word
    return None
