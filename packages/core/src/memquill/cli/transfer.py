"""``export`` and ``import``: the exact bytes of ``records.md`` out, an edited copy back in.

With a database store these are how a person reads and fixes memory as a file: ``export``
writes byte-identical ``records.md``; ``import --revision R FILE`` puts an edited copy back as
one validated compare-and-swap write (through the one write path, so the secret detectors
apply), refusing a copy that would drop a record or unforget a fact. Each edited fact becomes a
new version with source ``manual`` (a ``contentLength`` the edit made wrong is read as
``doctor --fix`` reads it), after a backup of the records replaced; ``--dry-run`` shows that
plan and writes nothing.

``import`` reads its file as every reader of memquill does (:func:`memquill.paths.read_regular`):
a regular file only (a FIFO, a device or a folder is refused at once, never waited on), at
most :data:`MAX_IMPORT_BYTES`, checked before a byte is read. The bound is the store's 2 MiB
capacity plus 1 MiB, so a copy a little over the capacity still reaches the store and gets its
``capacity`` answer, and nothing larger is ever read. Every refusal changes nothing.

``export --json`` prints ``{"revision", "size_bytes", "text"}`` (the store revision the bytes
have, their size, and the bytes as text); with ``--output`` the file gets the exact bytes and
the JSON names it (``"output"``) instead of repeating the text.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any, Final

from memquill.cli.context import Context, add_common, counted
from memquill.errors import (
    CapacityError,
    ConflictError,
    InvalidInputError,
    Messages,
    SourceError,
    StorageError,
)
from memquill.foundation.controls import escape_controls
from memquill.paths import read_regular, relative_inside
from memquill.store import MAX_STORE_BYTES, store_revision
from memquill.tools import WriteSource, import_records

__all__ = ["MAX_IMPORT_BYTES", "register"]

_HEX: Final = re.compile(r"[0-9a-f]{8,64}")
MAX_IMPORT_BYTES: Final = MAX_STORE_BYTES + 1024 * 1024
"""The largest file ``import`` reads (3 MiB): the store's capacity plus a margin."""


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
    store = context.session("read").store
    data = store.export()
    target = _export_target(args.output)
    if target is not None and store.backend.kind == "file":
        _warn_inside(context, target)
    if args.output:
        _write_output(Path(args.output), data)
        if context.as_json:
            revision = store_revision(store.backend.identity(), data)
            context.emit("", _export_json(revision, data, output=args.output))
        else:
            shown = escape_controls(f"exported {counted(len(data), 'byte')} to {args.output}")
            context.err.write(shown + "\n")
        return 0
    if context.as_json:
        context.emit("", _export_json(store_revision(store.backend.identity(), data), data))
        return 0
    context.out.flush()
    stream = getattr(context.out, "buffer", None) or sys.stdout.buffer
    stream.write(data)
    stream.flush()
    return 0


_INSIDE_WARNING: Final = (
    "warning: {path} is inside the workspace. A file in the records format is memquill's own, "
    "never a note: search, get, recent and the index skip it. Keep exports outside the "
    "workspace (memquill export --output ~/records.md)."
)


def _export_target(output: str | None) -> Path | None:
    """Where the export goes: ``--output``, or the file standard output is redirected to (read
    from ``/proc`` where there is one; else, for a redirect to a regular file, the current
    folder stands for it, as ``memquill export > records.md`` writes there)."""
    if output is not None:
        return Path(output).absolute()
    try:
        info = os.fstat(sys.stdout.fileno())
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    try:
        return Path(os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}"))
    except OSError:
        return Path.cwd() / "-"


def _warn_inside(context: Context, target: Path) -> None:
    """Warn on standard error when ``target`` lies inside the workspace (the export is made)."""
    workspace = context.workspace
    try:
        real = os.path.realpath(target)
        inside = relative_inside(Path(os.path.realpath(workspace)), real)
    except (OSError, ValueError):
        return
    if inside is not None:
        shown = inside if target.name != "-" else "standard output's file"
        context.err.write(escape_controls(_INSIDE_WARNING.format(path=shown)) + "\n")


def _export_json(revision: str, data: bytes, *, output: str | None = None) -> dict[str, object]:
    shown: dict[str, object] = {"revision": revision, "size_bytes": len(data)}
    if output is None:
        shown["text"] = data.decode("utf-8", "replace")
    else:
        shown["output"] = output
    return shown


def _write_output(path: Path, data: bytes) -> None:
    """Write the exported bytes to ``path``, saying what is wrong with it if that fails.

    Raises:
        InvalidInputError: ``path`` is a folder, or its folder does not exist.
        StorageError: the file cannot be written (permissions, a full disk).
    """
    try:
        # A new file is its owner's only, as records.md is (an existing one keeps its mode).
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except IsADirectoryError:
        raise InvalidInputError(Messages.OUTPUT_IS_FOLDER.format(path)) from None
    except FileNotFoundError:
        raise InvalidInputError(Messages.OUTPUT_NO_FOLDER.format(path)) from None
    except OSError as error:
        raise StorageError(
            Messages.OUTPUT_FAILED.format(path, os.strerror(error.errno or errno.EIO))
        ) from None


def _read_import(path: str) -> bytes:
    """The bytes of the file to import, read without blocking and within the bound.

    Raises:
        InvalidInputError: missing, unreadable, or not a regular file.
        CapacityError: larger than :data:`MAX_IMPORT_BYTES` (nothing is read).
    """
    try:
        return read_regular(os.path.realpath(path), MAX_IMPORT_BYTES)
    except SourceError as error:
        if error.message == Messages.TOO_LARGE:
            raise CapacityError(Messages.IMPORT_TOO_LARGE) from None
        raise InvalidInputError(Messages.IMPORT_NOT_REGULAR.format(path)) from None
    except FileNotFoundError:
        raise InvalidInputError(Messages.IMPORT_MISSING.format(path)) from None
    except OSError as error:
        raise InvalidInputError(
            Messages.IMPORT_READ_FAILED.format(path, os.strerror(error.errno or errno.EIO))
        ) from None


def _import(args: argparse.Namespace, context: Context) -> int:
    if not _HEX.fullmatch(args.revision):
        raise InvalidInputError(Messages.REVISION_FORMAT)
    data = _read_import(args.file)
    session = context.session()
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
