"""What every subcommand shares: the workspace, output (text or JSON), and error reporting."""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable
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
from memquill.paths import WorkspaceChoice, choose_workspace
from memquill.plugins import open_session
from memquill.tools import Access, MemorySession

__all__ = ["Context", "Handler", "add_common", "exit_status", "run"]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


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

    def ensure_workspace(self) -> None:
        """Create the default workspace on first write (an explicit one must already exist)."""
        if self.workspace_is_default:
            self.choice.create()

    def session(self, access: Access = "read_write") -> MemorySession:
        """The session every command works in, opened through the plugin-aware factory."""
        return open_session(self.workspace, access=access, store=self.store)

    def emit(self, text: str, data: object) -> None:
        """Print ``text``, or ``data`` as JSON under ``--json``."""
        if self.as_json:
            self.out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        else:
            self.out.write(text if text.endswith("\n") else text + "\n")


Handler = Callable[[argparse.Namespace, Context], int]


def add_common(parser: argparse.ArgumentParser) -> None:
    """Options every subcommand takes (``--workspace`` may also come before the subcommand)."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--workspace", metavar="DIR", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    parser.add_argument("--store", metavar="URL", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Resolve the context, run the chosen handler, and turn memquill errors into statuses.

    A workspace named by ``--workspace`` or ``$MEMQUILL_WORKSPACE`` must exist (only the
    default is created, on first write); ``memquill where`` runs regardless, to say why.
    """
    choice = choose_workspace(args.workspace)
    context = Context(
        choice.path, choice.origin == "default", bool(args.json), out, err, choice, args.store
    )
    handler: Handler = args.handler
    try:
        _check_text_arguments(args)
        problem = choice.problem()
        if problem is not None and getattr(args, "needs_workspace", True):
            # Not a folder: the store's own code for it; missing: a bad argument.
            exists = os.path.lexists(choice.path)
            raise UnsafePathError(problem) if exists else InvalidInputError(problem)
        return handler(args, context)
    except MemquillError as error:
        err.write(f"error[{error.code}]: {error.message}\n")
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
            isinstance(v, str) and _SURROGATE.search(v) for v in values
        ):
            continue
        raise InvalidInputError(
            f"The {name.replace('_', ' ')} argument is not valid UTF-8 text (check the terminal's "
            "encoding)."
        )
