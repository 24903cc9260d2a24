"""What every subcommand shares: the workspace, output (text or JSON), and error reporting."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from memquill.errors import ERRORS, MemquillError
from memquill.paths import default_workspace
from memquill.plugins import open_session
from memquill.tools import Access, MemorySession

__all__ = ["Context", "Handler", "add_common", "exit_status", "run"]


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

    def ensure_workspace(self) -> None:
        """Create the default workspace on first write (an explicit one must already exist)."""
        if self.workspace_is_default:
            self.workspace.mkdir(parents=True, exist_ok=True)

    def session(self, access: Access = "read_write") -> MemorySession:
        """The session every command works in, opened through the plugin-aware factory."""
        return open_session(self.workspace, access=access)

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


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Resolve the context, run the chosen handler, and turn memquill errors into statuses."""
    explicit: str | None = args.workspace
    workspace = Path(explicit).expanduser().absolute() if explicit else default_workspace()
    context = Context(workspace, explicit is None, bool(args.json), out, err)
    handler: Handler = args.handler
    try:
        return handler(args, context)
    except MemquillError as error:
        err.write(f"error[{error.code}]: {error.message}\n")
        return exit_status(error.code)
