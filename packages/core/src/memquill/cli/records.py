"""``remember``, ``list``, ``update``, ``forget`` and ``compact`` (``doctor``: :mod:`.doctor`)."""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime
from typing import Any, Final

from memquill.cli.context import Context, add_common, counted, read_stdin_text
from memquill.errors import BlockedError, InvalidInputError, Messages, NotFoundError
from memquill.store import Record, Snapshot
from memquill.tools import WriteOutcome, WriteSource, compact, correct, forget, remember

__all__ = ["register"]

_HEX: Final = re.compile(r"[0-9a-f]{8,64}")
_SHORT: Final = 8


def register(subparsers: Any) -> None:
    """Add this module's subcommands to ``memquill``."""
    remember = subparsers.add_parser("remember", help="save a fact to memory/records.md")
    remember.add_argument("text", help="the fact to remember (-: read it from standard input)")
    remember.add_argument(
        "--key", help="idempotency key (default: derived from the text, so a repeat is a no-op)"
    )
    remember.set_defaults(handler=_remember)

    listing = subparsers.add_parser("list", help="list remembered facts, newest last")
    listing.add_argument(
        "--all", action="store_true", help="include superseded and forgotten versions"
    )
    listing.set_defaults(handler=_list)

    update = subparsers.add_parser("update", help="correct a fact (the old version is kept)")
    update.add_argument("id", help="record id (a unique prefix is enough)")
    update.add_argument("text", help="the corrected fact")
    update.add_argument("--revision", required=True, help="the record's or the store's revision")
    update.set_defaults(handler=_update)

    forget = subparsers.add_parser("forget", help="forget a fact and all its versions")
    forget.add_argument("id", help="record id (a unique prefix is enough)")
    forget.add_argument("--revision", required=True, help="the record's or the store's revision")
    forget.set_defaults(handler=_forget)

    compact = subparsers.add_parser(
        "compact", help="drop superseded versions' text, keeping every tombstone"
    )
    compact.add_argument("--revision", required=True, help="the current store revision")
    compact.set_defaults(handler=_compact)

    for parser in (remember, listing, update, forget, compact):
        add_common(parser)


def _remember(args: argparse.Namespace, context: Context) -> int:
    context.ensure_workspace()
    text = read_stdin_text() if args.text == "-" else args.text
    outcome = remember(
        context.session(), text, source=WriteSource.manual(), idempotency_key=args.key
    )
    context.emit(_describe(outcome), _result_json(outcome))
    if outcome.status == "blocked":
        raise BlockedError(Messages.BLOCKED)
    return 0


def _list(args: argparse.Namespace, context: Context) -> int:
    if context.workspace_is_default and not context.workspace.exists():
        context.emit("(no remembered facts yet)", {"revision": None, "records": []})
        return 0
    snapshot = context.session("read").store.snapshot()
    shown = [r for r in snapshot.records if args.all or r.status == "active"]
    now = datetime.now(UTC)
    lines = [f"store revision {snapshot.revision}  ({_summary(snapshot)})"]
    for record in shown:
        status = "" if record.status == "active" else f" [{record.status}]"
        first_line = record.content.split("\n", 1)[0]
        lines.append(
            f"{record.id[:_SHORT]}  {_age(record, now):>4}  "
            f"rev {snapshot.record_revision(record)[:_SHORT]}{status}  {first_line}"
        )
    if not shown:
        lines.append("(no remembered facts)")
    data = {
        "revision": snapshot.revision,
        "records": [_record_json(snapshot, record) for record in shown],
    }
    context.emit("\n".join(lines), data)
    return 0


def _update(args: argparse.Namespace, context: Context) -> int:
    session = context.session()
    revision = _revision_format(args.revision)
    _refuse_old_version(session.store.snapshot(), args.id, command="update")
    outcome = correct(session, args.id, args.text, revision, source=WriteSource.manual())
    context.emit(_describe(outcome), _result_json(outcome))
    return 0


def _forget(args: argparse.Namespace, context: Context) -> int:
    session = context.session()
    revision = _revision_format(args.revision)
    _refuse_old_version(session.store.snapshot(), args.id, command="forget")
    outcome = forget(session, args.id, revision, source=WriteSource.manual())
    context.emit(_describe(outcome), _result_json(outcome))
    return 0


def _compact(args: argparse.Namespace, context: Context) -> int:
    session = context.session()
    outcome = compact(session, _revision_format(args.revision), source=WriteSource.manual())
    context.emit(f"{outcome.status}: store revision {outcome.revision}", _result_json(outcome))
    return 0


def _refuse_old_version(snapshot: Snapshot, given: str, *, command: str) -> None:
    """Refuse an id that names only an old version, saying which version is current.

    An id (or prefix) that names an active record passes; the write path resolves it. One that
    names only a corrected version points at the current one with the command to run; for
    ``update``, one that names a forgotten fact says there is nothing to update.

    Raises:
        NotFoundError: with that explanation.
    """
    matches = [r for r in snapshot.records if given and r.id.startswith(given)]
    if not matches or any(r.status == "active" for r in matches) or len(matches) > 1:
        return  # the write path resolves it (or refuses it as ambiguous or unknown)
    record = matches[0]
    current = next(
        (r for r in snapshot.records if r.root_id == record.root_id and r.status == "active"), None
    )
    if record.status == "superseded" and current is not None:
        revision = snapshot.record_revision(current)[:16]
        text = " TEXT" if command == "update" else ""
        raise NotFoundError(
            f"Record {record.id[:_SHORT]} was corrected; its current version is "
            f"{current.id[:_SHORT]} (record revision {revision}). Run: memquill {command} "
            f"{current.id[:_SHORT]}{text} --revision {revision}"
        )
    if command == "update":
        raise NotFoundError(
            f"Record {record.id[:_SHORT]} was forgotten; there is nothing to update."
        )


def _revision_format(given: str) -> str:
    """``given``, if it is a revision or a prefix of one (at least 8 hex digits).

    The write path resolves the prefix against the current revisions, and the store still
    compares the full value under its lock, so a prefix never weakens compare-and-swap.
    """
    if not _HEX.fullmatch(given):
        raise InvalidInputError(Messages.REVISION_FORMAT)
    return given


def _describe(outcome: WriteOutcome) -> str:
    target = f" {outcome.record_id}" if outcome.record_id else ""
    record = f" (record revision {outcome.record_revision})" if outcome.record_revision else ""
    return f"{outcome.status}{target}{record}\nstore revision {outcome.revision}"


def _result_json(outcome: WriteOutcome) -> dict[str, object]:
    return {
        "status": outcome.status,
        "record_id": outcome.record_id,
        "record_revision": outcome.record_revision,
        "revision": outcome.revision,
    }


def _record_json(snapshot: Snapshot, record: Record) -> dict[str, object]:
    return {
        "id": record.id,
        "status": record.status,
        "content": record.content,
        "source": dict(record.source),
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "record_revision": snapshot.record_revision(record),
    }


def _summary(snapshot: Snapshot) -> str:
    active = sum(1 for record in snapshot.records if record.status == "active")
    versions, size = counted(len(snapshot.records), "version"), counted(snapshot.size_bytes, "byte")
    return f"{active} active, {versions}, {size}"


def _age(record: Record, now: datetime) -> str:
    try:
        then = datetime.fromisoformat(record.updated_at.replace("Z", "+00:00"))
    except ValueError:
        return "?"
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
