"""``memquill where``: the workspace in use and why, and where memquill keeps its own files.

The same rules choose the workspace for ``memquill`` and ``memquill-mcp``: ``--workspace``,
else ``$MEMQUILL_WORKSPACE``, else ``memquill/workspace`` in the user's data directory. When a
command uses the wrong folder, this says which rule picked it.

With a PostgreSQL store (``--store`` or ``$MEMQUILL_STORE``) there is no ``records.md`` and no
writer lock file: ``where`` names the database (scheme, user, host, port and database name,
never the password or the query string) and the row, and says whether the local mirror file
is kept. Nothing is connected.
"""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from memquill.cli.context import Context, add_common
from memquill.errors import MemquillError
from memquill.store import STORE_ENV, RecordKey, is_database, parse_location, resolve_location
from memquill.sync import git_setup
from memquill.tools import default_bindings_path

__all__ = ["register"]


def register(subparsers: Any) -> None:  # argparse keeps its subparsers type private
    """Add ``where`` to ``memquill``."""
    where = subparsers.add_parser(
        "where", help="show the workspace in use and why, and where memquill keeps its files"
    )
    add_common(where)
    where.set_defaults(handler=_where, needs_workspace=False)


def _where(args: argparse.Namespace, context: Context) -> int:
    del args
    choice = context.choice
    problem = choice.problem()
    if problem is not None:
        state = f"PROBLEM: {problem}"
    elif choice.path.is_dir():
        state = "exists"
    else:
        state = "does not exist yet (the first `memquill remember` creates it)"
    records = choice.path / "memory" / "records.md"
    index = _index_path(choice.path)
    sync = _sync_state(choice.path) if choice.path.is_dir() else "no workspace yet"
    key = RecordKey()
    data: dict[str, object] = {
        "workspace": str(choice.path),
        "origin": choice.origin,
        "why": choice.why,
        "exists": choice.path.is_dir(),
        "problem": problem,
        "store": "file",
        "records": str(records),
        "lock": str(records.with_name(".records-lock")),
        "index": None if index is None else str(index),
        "bindings": str(default_bindings_path()),
        "sync": sync,
        "record_key": str(key.path),
    }
    lines = [
        f"workspace: {choice.path}",
        f"  why:     {choice.why}",
        f"  state:   {state}",
        f"records:   {records}",
        f"lock:      {data['lock']}",
    ]
    location = resolve_location(context.store)
    if is_database(location):
        data, lines = _database(location, context, data, lines[:3])
    lines += [
        f"index:     {index if index is not None else 'none (every search reads the files)'}",
        f"bindings:  {data['bindings']}",
        f"sync:      {sync}",
        f"key:       {key.path} (never in the workspace; `memquill key show`)",
    ]
    context.emit("\n".join(lines), data)
    return 1 if problem is not None else 0


def _database(
    location: str, context: Context, data: dict[str, object], lines: list[str]
) -> tuple[dict[str, object], list[str]]:
    """The store lines for a database location: which database and row, and the mirror."""
    parsed = parse_location(location)
    origin = "from --store" if context.store else f"from ${STORE_ENV}"
    mirror = context.choice.path / "memory" / ".records-mirror.md" if parsed.mirror else None
    data = {
        **data,
        "store": "postgres",
        "database": parsed.display,
        "row": parsed.workspace,
        "mirror": None if mirror is None else str(mirror),
        "records": None,
        "lock": None,
    }
    lines = [
        *lines,
        f"store:     PostgreSQL {parsed.display} ({origin})",
        f"  row:     workspace {parsed.workspace!r}; writes lock the row, no lock file",
        f"  mirror:  {mirror if mirror is not None else 'none (memquill export writes the file)'}",
    ]
    return data, lines


def _sync_state(workspace: Path) -> str:
    """Whether git merges this workspace's ``records.md`` record by record."""
    try:
        setup = git_setup(workspace)
    except MemquillError as error:
        return error.message
    if setup.repository is None:
        return "not in a git repository (docs/sync.md: git or a file-sync tool)"
    if setup.ready:
        return f"git merges memory/records.md record by record ({setup.driver})"
    return "git is NOT set up to merge memory/records.md: run `memquill sync setup`"


def _index_path(workspace: Path) -> Path | None:
    """The search index file of ``workspace``, when this installation keeps one."""
    try:
        index = importlib.import_module("memquill.index")
    except ModuleNotFoundError:
        return None
    locate = cast("Callable[[Path], Path] | None", getattr(index, "index_path", None))
    if locate is None:
        return None
    root = Path(os.path.realpath(workspace)) if workspace.is_dir() else workspace
    return locate(root)
