"""What every subcommand shares: the workspace, output (text or JSON), and error reporting.

Every failure is one line on stderr, ``error[<code>]: <message>``, and the code's exit status
(:data:`memquill.errors.ERRORS`; ``usage`` exits 2). Every text printed, on stdout or stderr,
has its control characters escaped (:func:`memquill.foundation.controls.escape_controls`), so a note
or a fact can never drive the terminal; JSON escapes them as ``\\uXXXX``, which decodes to the same
text.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO, cast

from memquill.errors import (
    ERRORS,
    CorruptError,
    InvalidInputError,
    MemquillError,
    Messages,
    UnsafePathError,
)
from memquill.foundation.controls import escape_controls
from memquill.foundation.text import LONE_SURROGATE
from memquill.paths import WorkspaceChoice, choose_workspace
from memquill.plugins import open_session
from memquill.query import MemoryQuery
from memquill.store import MAX_CONTENT_UNITS
from memquill.tools import Access, MemorySession, MemoryToolset

__all__ = [
    "Context",
    "Handler",
    "add_common",
    "counted",
    "exit_status",
    "read_stdin_text",
    "report",
    "run",
]

# What ``json.dumps(..., ensure_ascii=False)`` leaves raw although a terminal acts on it.
_JSON_RAW_CONTROLS: Final = re.compile("[\x7f-\x9f]")
# A fact is at most 16,000 UTF-16 units, at most 4 UTF-8 bytes each: more is never a fact.
_STDIN_LIMIT: Final = MAX_CONTENT_UNITS * 4


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 version``, ``2 versions``, ``1,024 notes``: a count and its noun, agreeing."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def exit_status(code: str | None) -> int:
    """The exit status of a failure with ``code`` (:data:`memquill.errors.ERRORS`).

    1 means "ran, but found a problem" (``doctor``, an unknown code); 2 is a usage error.
    """
    info = ERRORS.get(code or "")
    return info.exit_status if info is not None else 1


@dataclass(frozen=True, slots=True)
class Context:
    """The resolved invocation a handler works with."""

    workspace: Path
    workspace_is_default: bool
    as_json: bool
    out: TextIO
    err: TextIO
    choice: WorkspaceChoice
    store: str | None = None
    """``--store``: ``file`` or a ``postgresql://`` URL (``None``: ``$MEMQUILL_STORE``)."""
    capacity_mib: int | None = None
    """``--capacity``: the records file's capacity in MiB (``None``: the workspace's setting)."""
    warm: tuple[MemorySession, MemoryQuery] | None = None
    """A long-lived read session and query engine to answer with (``memquill serve``); ``None``:
    each read opens its own, for one answer."""

    @property
    def capacity(self) -> int | None:
        """``--capacity`` in bytes (``None``: the workspace's setting)."""
        return None if self.capacity_mib is None else self.capacity_mib * 1024 * 1024

    def ensure_workspace(self) -> None:
        """Create the default workspace on first write (an explicit one must already exist)."""
        if self.workspace_is_default:
            self.choice.create()

    @property
    def workspace_missing(self) -> bool:
        """The default workspace, not created yet (the first ``remember`` creates it)."""
        return self.workspace_is_default and not os.path.lexists(self.workspace)

    def session(self, access: Access = "read_write") -> MemorySession:
        """The session every command works in, opened through the plugin-aware factory."""
        return open_session(self.workspace, access=access, store=self.store, capacity=self.capacity)

    @contextmanager
    def read_tools(self) -> Generator[MemoryToolset]:
        """The read tools of the workspace (see :meth:`read_query`)."""
        with self.read_query() as (session, query):
            yield MemoryToolset(session, query=query)

    @contextmanager
    def read_query(self) -> Generator[tuple[MemorySession, MemoryQuery]]:
        """A read session on the workspace and the query engine its tools answer with; for a
        default workspace not created yet, those of an empty one (so ``search`` says nothing
        matches, exactly as an empty workspace does), without creating it. The stand-in is
        scanned, never indexed, and removed. A context given ``warm`` ones yields those."""
        if self.warm is not None:
            yield self.warm
            return
        if not self.workspace_missing:
            from memquill.index import IndexSearcher

            session = self.session("read")
            # One answer, then the process exits: watching every folder for later changes
            # (one inotify watch each) would only cost.
            searcher = IndexSearcher(watch=False)
            yield session, MemoryQuery(session.workspace, store=session.store, searcher=searcher)
            return
        import tempfile  # only a workspace not created yet needs a stand-in

        with tempfile.TemporaryDirectory(prefix="memquill-empty-") as empty:
            session = open_session(empty, access="read", store=self.store)
            yield session, MemoryQuery(empty, store=session.store)

    def emit(self, text: str, data: object) -> None:
        """Print ``text`` (control characters escaped), or ``data`` as JSON under ``--json``."""
        if self.as_json:
            encoded = json.dumps(data, ensure_ascii=False, indent=2)
            encoded = _JSON_RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)
            self.out.write(encoded + "\n")
        else:
            text = escape_controls(text)
            self.out.write(text if text.endswith("\n") else text + "\n")


Handler = Callable[[argparse.Namespace, Context], int]


def add_common(parser: argparse.ArgumentParser) -> None:
    """Options every subcommand takes (``--workspace`` may also come before the subcommand)."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--workspace", metavar="DIR", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    parser.add_argument("--store", metavar="URL", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    parser.add_argument(
        "--capacity", metavar="MIB", type=int, default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )


def read_stdin_text() -> str:
    """A text argument given as ``-``: standard input, as UTF-8, without its final newlines
    (as the shell's ``$(...)`` drops them), read to the end but never past what a fact holds.

    Raises:
        InvalidInputError: the input is not UTF-8 text, or longer than any fact can be.
    """
    data = sys.stdin.buffer.read(_STDIN_LIMIT + 1)
    if len(data) > _STDIN_LIMIT:
        raise InvalidInputError(Messages.CONTENT)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(Messages.STDIN_NOT_UTF8) from None
    return text.replace("\r\n", "\n").rstrip("\n")


def run(
    args: argparse.Namespace,
    out: TextIO,
    err: TextIO,
    *,
    warm: tuple[MemorySession, MemoryQuery] | None = None,
) -> int:
    """Resolve the context, run the chosen handler, and turn memquill errors into statuses.

    ``warm``: the read session and query engine a server keeps (:attr:`Context.warm`).

    A workspace named by ``--workspace`` or ``$MEMQUILL_WORKSPACE`` must exist (only the
    default is created, on first write); ``memquill where`` runs regardless, to say why.
    """
    handler: Handler = args.handler
    try:
        choice = choose_workspace(args.workspace)
        context = Context(
            choice.path,
            choice.origin == "default",
            bool(args.json),
            out,
            err,
            choice,
            args.store,
            args.capacity,
            warm,
        )
        _check_text_arguments(args)
        problem = choice.problem()
        if problem is not None and getattr(args, "needs_workspace", True):
            # Not a folder: the store's own code for it; missing: a bad argument.
            exists = os.path.lexists(choice.path)
            raise UnsafePathError(problem) if exists else InvalidInputError(problem)
        return handler(args, context)
    except MemquillError as error:
        return report(err, error)


def report(err: TextIO, error: MemquillError) -> int:
    """Print ``error[<code>]: <message>`` (and a ``corrupt`` store's hint); its exit status."""
    err.write(escape_controls(f"error[{error.code}]: {error.message}") + "\n")
    if isinstance(error, CorruptError) and not error.imported:  # doctor checks the store
        err.write(f"hint: {Messages.REPAIR_HINT}\n")
    return exit_status(error.code)


def _check_text_arguments(args: argparse.Namespace) -> None:
    """Refuse an argument that is not UTF-8 text (Python keeps its bytes as lone surrogates).

    A path may be such bytes (file names are bytes); facts, queries, ids and keys may not.

    Raises:
        InvalidInputError: naming the argument.
    """
    for name, value in vars(args).items():
        values: list[object] = (
            list(cast("list[object]", value)) if isinstance(value, list) else [value]
        )
        if name == "workspace" or not any(
            isinstance(v, str) and LONE_SURROGATE.search(v) for v in values
        ):
            continue
        raise InvalidInputError(
            f"The {name.replace('_', ' ')} argument is not valid UTF-8 text (check the terminal's "
            "encoding)."
        )
