"""``memquill key``: carry the record key to another machine, safely, without a passphrase.

Machines sharing a workspace must key their operation hashes alike to agree on duplicates and
tombstones (``docs/sync.md``). The key is a secret (with it and a copy of ``records.md``, a
forgotten fact's guesses can be tested), so it is never printed unasked and never written
where it could be committed:

- ``export --stdout`` writes one line to a pipe, never to a terminal:
  ``memquill key export --stdout | ssh desktop memquill key import -``;
- ``export --output FILE`` writes a new file only its owner can read (``0600``, never over an
  existing file), and refuses a place inside the workspace or any git work tree;
- ``import FILE`` (or ``-`` for standard input) checks the line's fingerprint and installs
  the key: a machine with no key yet writes with it; one with its own key recognises it too,
  or, with ``--use``, writes with it from now on and still recognises its own;
- ``show`` prints only fingerprints (key ids), which tell nothing about a key.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

from memquill.cli.context import Context, add_common
from memquill.errors import InvalidInputError, Messages, StorageError
from memquill.foundation.atomic import atomic_write
from memquill.foundation.keyfiles import KEY_BYTES
from memquill.store import (
    RecordKey,
    is_database,
    key_from_text,
    key_id,
    key_text,
    resolve_location,
)

__all__ = ["register"]

_MAX_TEXT: Final = 4 * KEY_BYTES + 64  # one exported line, with room for a newline or two


def register(subparsers: Any) -> None:  # argparse keeps its subparsers type private
    """Add ``key`` to ``memquill``."""
    key = subparsers.add_parser(
        "key", help="carry the record key to another machine (docs/sync.md)"
    )
    actions = key.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser("export", help="write the record key to a new file or a pipe")
    where = export.add_mutually_exclusive_group()
    where.add_argument("--output", metavar="FILE", help="a new file, readable by you only")
    where.add_argument("--stdout", action="store_true", help="standard output (a pipe only)")
    export.set_defaults(handler=_export, needs_workspace=False)
    restore = actions.add_parser("import", help="install a record key another machine exported")
    restore.add_argument("file", metavar="FILE", help="the exported key, or - for stdin")
    restore.add_argument(
        "--use",
        action="store_true",
        help="write with it from now on (this machine's own key is still recognised)",
    )
    restore.set_defaults(handler=_import, needs_workspace=False)
    show = actions.add_parser("show", help="where the key is and its fingerprint")
    show.set_defaults(handler=_show, needs_workspace=False)
    for parser in (export, restore, show):
        add_common(parser)


def _file_store(context: Context) -> RecordKey:
    if is_database(resolve_location(context.store)):
        raise InvalidInputError(Messages.KEY_OF_DATABASE)
    return RecordKey()


def _export(args: argparse.Namespace, context: Context) -> int:
    source = _file_store(context)
    if args.stdout:
        if context.out.isatty():
            raise InvalidInputError(Messages.KEY_TO_TERMINAL)
        context.out.write(key_text(source.load()))
        context.out.flush()
        return 0
    if not args.output:
        raise InvalidInputError(Messages.KEY_DESTINATION)
    target = Path(args.output).absolute()
    _refuse_shared_place(target, context.workspace)
    key = source.load()
    try:
        atomic_write(target, key_text(key).encode("ascii"), exclusive=True)
    except FileExistsError:
        raise InvalidInputError(Messages.KEY_FILE_EXISTS) from None
    except OSError as error:
        raise StorageError(Messages.SAVE_FAILED) from error
    context.emit(
        f"record key {key_id(key)} written to {target} (readable by you only); import it on "
        "the other machine, then delete the file",
        {"key_id": key_id(key), "path": str(target)},
    )
    return 0


def _refuse_shared_place(target: Path, workspace: Path) -> None:
    """Refuse a place inside the workspace or inside a git work tree (it could be committed)."""
    folder = Path(os.path.realpath(target.parent))
    inside = (
        folder == Path(os.path.realpath(workspace))
        or Path(os.path.realpath(workspace)) in folder.parents
    )
    if inside or _in_git_work_tree(folder):
        raise InvalidInputError(Messages.KEY_IN_REPOSITORY)


def _in_git_work_tree(folder: Path) -> bool:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--is-inside-work-tree"],  # noqa: S607
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False  # no git here: nothing could commit it
    return done.returncode == 0 and done.stdout.strip() == "true"


def _import(args: argparse.Namespace, context: Context) -> int:
    source = _file_store(context)
    if args.file == "-":
        text = sys.stdin.read(_MAX_TEXT)
    else:
        try:
            with open(args.file, encoding="ascii") as handle:
                text = handle.read(_MAX_TEXT)
        except (OSError, UnicodeDecodeError) as error:
            raise StorageError(Messages.READ_FAILED) from error
    key = key_from_text(text)
    outcome = source.install(key, use=args.use)
    words = {
        "installed": "installed: this machine writes with it",
        "current": "this machine writes with it already",
        "known": "this machine recognises it already",
        "added": (
            "added: this machine recognises it; it keeps writing with its own key (pass --use "
            "to write with the imported one)"
        ),
        "switched": "this machine writes with it now and still recognises its own key",
    }
    hint = "" if args.file == "-" else f"\ndelete {args.file} now: it holds the key"
    context.emit(
        f"record key {key_id(key)}: {words[outcome]}{hint}",
        {"key_id": key_id(key), "outcome": outcome},
    )
    return 0


def _show(args: argparse.Namespace, context: Context) -> int:
    del args
    source = _file_store(context)
    current = source.current()
    known = [key_id(key) for key in source.known() if key != current]
    lines = [
        f"record key: {source.path}",
        f"  key id:   {key_id(current) if current is not None else 'none yet'}",
        *(f"  also recognises: {other}" for other in known),
    ]
    data = {
        "path": str(source.path),
        "key_id": key_id(current) if current is not None else None,
        "recognised": known,
    }
    context.emit("\n".join(lines), data)
    return 0
