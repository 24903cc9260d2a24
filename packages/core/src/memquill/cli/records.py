"""``remember``, ``list``, ``update``, ``forget`` and ``compact`` (``doctor``: :mod:`.doctor`).

``update`` and ``forget`` take one argument naming the fact: what looks like a record id or id
prefix (8–36 of ``0-9 a-f -``) is an id, anything else is a key (no key can look like an id).
By key, ``--revision`` may be left out: the command then reads the fact's current revision and
the store still checks it under its lock, so a write made in between is answered ``conflict``,
never overwritten. By id, ``--revision`` is required: an id names one version.
"""

from __future__ import annotations

import argparse
import contextlib
import re
from collections.abc import Generator
from datetime import UTC, datetime
from typing import Any, Final

from memquill.cli.context import Context, add_common, counted, read_stdin_text
from memquill.errors import BlockedError, InvalidInputError, Messages, NotFoundError
from memquill.items import expires_at, expiry_text
from memquill.store import FactKey, Record, Snapshot, Target, looks_like_id
from memquill.tools import (
    MemorySession,
    WriteOutcome,
    WriteSource,
    compact,
    correct,
    forget,
    remember as remember_fact,
)

__all__ = ["register"]

_HEX: Final = re.compile(r"[0-9a-f]{8,64}")
_SHORT: Final = 8
_REVISION_NEEDED: Final = (
    "--revision is required when the fact is named by its id (the revision you read it at, "
    "from list, search or get); a fact named by its key may leave it out."
)


def register(subparsers: Any) -> None:
    """Add this module's subcommands to ``memquill``."""
    remember = subparsers.add_parser("remember", help="save a fact to memory/records.md")
    remember.add_argument("text", help="the fact to remember (-: read it from standard input)")
    remember.add_argument(
        "--key", help="a name for the fact (prefs/coffee), kept when it is corrected"
    )
    remember.add_argument(
        "--idempotency-key",
        help="idempotency key (default: derived from the text and key, so a repeat is a no-op)",
    )
    remember.set_defaults(handler=_remember)

    listing = subparsers.add_parser(
        "list", help="list remembered facts (id, age, revision, key, first line), newest last"
    )
    listing.add_argument(
        "--all", action="store_true", help="include superseded and forgotten versions"
    )
    listing.set_defaults(handler=_list)

    target = "the fact's key, or a record id (a unique prefix of 8+ characters is enough)"
    revision = "the record's or the store's revision (by key: default, the fact's current revision)"
    update = subparsers.add_parser("update", help="correct a fact (the old version is kept)")
    update.add_argument("target", metavar="KEY_OR_ID", help=target)
    update.add_argument("text", help="the corrected fact")
    update.add_argument("--revision", help=revision)
    update.set_defaults(handler=_update)

    forget = subparsers.add_parser("forget", help="forget a fact and all its versions")
    forget.add_argument("target", metavar="KEY_OR_ID", help=target)
    forget.add_argument("--revision", help=revision)
    forget.set_defaults(handler=_forget)

    compact = subparsers.add_parser(
        "compact", help="drop superseded versions' text, keeping every tombstone"
    )
    compact.add_argument(
        "--revision",
        help="the store revision you read (default: the current one, checked under the lock)",
    )
    compact.set_defaults(handler=_compact)

    for parser in (remember, listing, update, forget, compact):
        add_common(parser)


def _remember(args: argparse.Namespace, context: Context) -> int:
    context.ensure_workspace()
    text = read_stdin_text() if args.text == "-" else args.text
    outcome = remember_fact(
        context.session(),
        text,
        source=WriteSource.manual(),
        idempotency_key=args.idempotency_key,
        key=args.key,
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
    # A key column only when some fact shown has a key, as wide as the longest.
    width = max((len(record.key) for record in shown if record.key), default=0)
    for record in shown:
        status = "" if record.status == "active" else f" [{record.status}]"
        first_line = record.content.split("\n", 1)[0]
        key = f"{record.key or '-':<{width}}  " if width else ""
        when = expires_at(record.extra)
        # An item put with a time to live (the LangGraph store's TTL) says when it goes.
        expiry = "" if when is None else f"  (expires {when.strftime('%Y-%m-%dT%H:%MZ')})"
        lines.append(
            f"{record.id[:_SHORT]}  {_age(record, now):>4}  "
            f"rev {snapshot.record_revision(record)[:_SHORT]}{status}  {key}{first_line}{expiry}"
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
    target = _target(args.target)
    revision = _revision(session, target, args.revision)
    _refuse_forgotten(session.store.snapshot(), target)
    with _pointing("update", target):
        outcome = correct(session, target, args.text, revision, source=WriteSource.manual())
    context.emit(_describe(outcome), _result_json(outcome))
    return 0


def _forget(args: argparse.Namespace, context: Context) -> int:
    session = context.session()
    target = _target(args.target)
    revision = _revision(session, target, args.revision)
    with _pointing("forget", target):
        outcome = forget(session, target, revision, source=WriteSource.manual())
    context.emit(_describe(outcome, _FORGET_WORDS), _result_json(outcome))
    return 0


def _compact(args: argparse.Namespace, context: Context) -> int:
    session = context.session()
    # Without --revision, compact what the store holds now: compaction changes no fact, so
    # there is no stale view of one to protect; the store still compares and swaps.
    given = args.revision if args.revision is not None else session.store.snapshot().revision
    outcome = compact(session, _revision_format(given), source=WriteSource.manual())
    context.emit(f"{outcome.status}: store revision {outcome.revision}", _result_json(outcome))
    return 0


def _target(given: str) -> Target:
    """A record id (prefix) when ``given`` has that shape, else a key.

    Raises:
        InvalidInputError: neither an id prefix nor a valid key.
    """
    return given if looks_like_id(given) else FactKey(given)


def _revision(session: MemorySession, target: Target, given: str | None) -> str:
    """The revision to write at: ``given`` (checked), or a key's current record revision.

    Raises:
        InvalidInputError: no revision for an id, or one that is not hexadecimal.
        NotFoundError: no active fact has the key.
    """
    if given is not None:
        return _revision_format(given)
    if not isinstance(target, FactKey):
        raise InvalidInputError(_REVISION_NEEDED)
    snapshot = session.store.snapshot()
    record = snapshot.by_key(target.value)
    if record is None:
        raise NotFoundError(_key_not_found(target.value))
    return snapshot.record_revision(record)


def _key_not_found(key: str) -> str:
    message = Messages.KEY_NOT_FOUND.format(key=key)
    if re.fullmatch(r"[0-9a-f-]+", key):  # meant as an id, surely: say why it was a key
        message += " (A record id prefix needs at least 8 characters.)"
    return message


@contextlib.contextmanager
def _pointing(command: str, target: Target) -> Generator[None]:
    """Add the command to run to a ``not_found`` that names a fact's current version, and the
    id-prefix hint to an unknown key that looks like a short id."""
    try:
        yield
    except NotFoundError as error:
        if error.current_id is not None and error.current_revision is not None:
            text = " TEXT" if command == "update" else ""
            raise NotFoundError(
                f"{error.message} Run: memquill {command} {error.current_id[:_SHORT]}{text} "
                f"--revision {error.current_revision[:16]}",
                error.current_id,
                error.current_revision,
            ) from None
        if isinstance(target, FactKey) and error.message != _key_not_found(target.value):
            raise NotFoundError(_key_not_found(target.value)) from None
        raise


def _refuse_forgotten(snapshot: Snapshot, target: Target) -> None:
    """Refuse, saying so, an update of an id (prefix) that names only a forgotten fact.

    Raises:
        NotFoundError: with that explanation.
    """
    if isinstance(target, FactKey):
        return
    matches = [r for r in snapshot.records if r.id.startswith(target)]
    if len(matches) == 1 and matches[0].status == "revoked":
        raise NotFoundError(
            f"Record {matches[0].id[:_SHORT]} was forgotten; there is nothing to update."
        )


def _revision_format(given: str) -> str:
    """``given``, if it is a revision or a prefix of one (at least 8 hex digits).

    The write path resolves the prefix against the current revisions, and the store still
    compares the full value under its lock, so a prefix never weakens compare-and-swap.
    """
    if not _HEX.fullmatch(given):
        raise InvalidInputError(Messages.REVISION_FORMAT)
    return given


# What a person reads after ``forget``; --json keeps the write's status (``saved``).
_FORGET_WORDS = {"saved": "forgotten", "duplicate": "already forgotten"}


def _describe(outcome: WriteOutcome, words: dict[str, str] | None = None) -> str:
    """The text line of a write: its status (in ``words``' terms, if given), id, key, revisions."""
    status = (words or {}).get(outcome.status, outcome.status)
    target = f" {outcome.record_id}" if outcome.record_id else ""
    key = f" key {outcome.key}" if outcome.key else ""
    record = f" (record revision {outcome.record_revision})" if outcome.record_revision else ""
    text = f"{status}{target}{key}{record}\nstore revision {outcome.revision}"
    if outcome.forgotten_at is not None and outcome.status != "blocked":
        text += "\n" + Messages.REMEMBERED_AGAIN.format(when=outcome.forgotten_at)
    return text


def _result_json(outcome: WriteOutcome) -> dict[str, object]:
    return {
        "status": outcome.status,
        "record_id": outcome.record_id,
        "key": outcome.key,
        "record_revision": outcome.record_revision,
        "revision": outcome.revision,
        "forgotten_at": outcome.forgotten_at,
    }


def _record_json(snapshot: Snapshot, record: Record) -> dict[str, object]:
    return {
        "id": record.id,
        "key": record.key,
        "status": record.status,
        "content": record.content,
        "source": dict(record.source),
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "record_revision": snapshot.record_revision(record),
        "expires_at": expiry_text(record.extra),
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
