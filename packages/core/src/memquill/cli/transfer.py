"""``export`` and ``import``: the exact bytes of ``records.md`` out, an edited copy back in.

With a database store these are how a person reads and fixes memory as a file: ``export``
writes byte-identical ``records.md``; ``import --revision R FILE`` puts an edited copy back as
one validated compare-and-swap write (through the one write path, so the secret detectors
apply), refusing a copy that would drop a record or unforget a fact. Each edited fact becomes a
new version with source ``manual`` (a ``contentLength`` the edit made wrong is read as
``doctor --fix`` reads it), after a backup of the records replaced; ``--dry-run`` shows that
plan and writes nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any, Final

from memquill.cli.context import Context, add_common
from memquill.errors import ConflictError, InvalidInputError, Messages, StorageError
from memquill.tools import WriteSource, import_records

__all__ = ["register"]

_HEX: Final = re.compile(r"[0-9a-f]{8,64}")


def register(subparsers: Any) -> None:
    """Add this module's subcommands to ``memquill``."""
    export = subparsers.add_parser(
        "export", help="write the exact bytes of records.md (to stdout or --output)"
    )
    export.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")
    export.set_defaults(handler=_export)

    restore = subparsers.add_parser(
        "import", help="put an edited copy of records.md back (one validated write)"
    )
    restore.add_argument("file", metavar="FILE", help="the edited records.md")
    restore.add_argument("--revision", required=True, help="the store revision it was made from")
    restore.add_argument(
        "--dry-run", action="store_true", help="show what the import would change; write nothing"
    )
    restore.set_defaults(handler=_import)

    for parser in (export, restore):
        add_common(parser)


def _export(args: argparse.Namespace, context: Context) -> int:
    if context.workspace_is_default and not context.workspace.exists():
        context.ensure_workspace()
    data = context.session("read").store.export()
    if args.output:
        try:
            # A new file is its owner's only, as records.md is (an existing one keeps its mode).
            fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        except OSError as error:
            raise StorageError(Messages.SAVE_FAILED) from error
        context.err.write(f"exported {len(data):,} bytes to {args.output}\n")
        return 0
    context.out.flush()
    stream = getattr(context.out, "buffer", None) or sys.stdout.buffer
    stream.write(data)
    stream.flush()
    return 0


def _import(args: argparse.Namespace, context: Context) -> int:
    try:
        data = Path(args.file).read_bytes()
    except OSError as error:
        raise StorageError(Messages.READ_FAILED) from error
    session = context.session()
    if not _HEX.fullmatch(args.revision):
        raise InvalidInputError(Messages.REVISION_FORMAT)
    current = session.store.snapshot().revision
    if not current.startswith(args.revision):
        raise ConflictError(Messages.STALE)
    plan = session.store.plan_import(data, current)  # the same checks the import makes
    changes = list(plan.changes)
    if args.dry_run:
        lines = (
            ["import would write a backup of the records, then:"]
            + [f"  - {change}" for change in changes]
            if changes
            else ["import would change nothing"]
        )
        lines.append(f"store revision {current}")
        data_out = {"dry_run": True, "changes": changes, "revision": current}
        context.emit("\n".join(lines), data_out)
        return 0
    outcome = import_records(session, data, current, source=WriteSource.manual())
    backup = outcome.result.backup
    lines = [f"backup: the records as they were are in {backup}"] if backup else []
    lines += [f"imported: {change}" for change in changes if outcome.status == "saved"]
    lines.append(f"{outcome.status}: store revision {outcome.revision}")
    context.emit(
        "\n".join(lines),
        {
            "status": outcome.status,
            "revision": outcome.revision,
            "changes": changes if outcome.status == "saved" else [],
            "backup": backup,
        },
    )
    return 0
