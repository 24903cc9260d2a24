"""``remember``, ``list``, ``update``, ``forget``, ``compact`` and ``doctor``."""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime
from typing import Any, Final

from memquill.cli.context import Context, add_common
from memquill.errors import (
    CorruptError,
    InvalidInputError,
    MemoryRecordError,
    Messages,
)
from memquill.index import IndexSearcher
from memquill.paths import canonical_workspace
from memquill.store import DoctorReport, Record, Snapshot
from memquill.tools import WriteOutcome, WriteSource, compact, correct, forget, remember

__all__ = ["register"]

_HEX: Final = re.compile(r"[0-9a-f]{8,64}")
_SHORT: Final = 8


def register(subparsers: Any) -> None:
    """Add this module's subcommands to ``memquill``."""
    remember = subparsers.add_parser("remember", help="save a fact to memory/records.md")
    remember.add_argument("text", help="the fact to remember")
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

    doctor = subparsers.add_parser("doctor", help="check the records store")
    doctor.add_argument("--fix", action="store_true", help="remove stale staging files")
    doctor.set_defaults(handler=_doctor)

    for parser in (remember, listing, update, forget, compact, doctor):
        add_common(parser)


def _remember(args: argparse.Namespace, context: Context) -> int:
    context.ensure_workspace()
    outcome = remember(
        context.session(), args.text, source=WriteSource.manual(), idempotency_key=args.key
    )
    hint = (
        "\nThis fact (or its key) was corrected or forgotten before; pass --key to save it anew."
        if outcome.status == "blocked"
        else ""
    )
    context.emit(_describe(outcome) + hint, _result_json(outcome))
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
    outcome = correct(session, args.id, args.text, revision, source=WriteSource.manual())
    context.emit(_describe(outcome), _result_json(outcome))
    return 0


def _forget(args: argparse.Namespace, context: Context) -> int:
    session = context.session()
    revision = _revision_format(args.revision)
    outcome = forget(session, args.id, revision, source=WriteSource.manual())
    context.emit(_describe(outcome), _result_json(outcome))
    return 0


def _compact(args: argparse.Namespace, context: Context) -> int:
    session = context.session()
    outcome = compact(session, _revision_format(args.revision), source=WriteSource.manual())
    context.emit(f"{outcome.status}: store revision {outcome.revision}", _result_json(outcome))
    return 0


def _doctor(args: argparse.Namespace, context: Context) -> int:
    if context.workspace_is_default and not context.workspace.exists():
        text = f"no workspace yet at {context.workspace}; the first `remember` creates it"
        context.emit(text, {"ok": True, "workspace": None})
        return 0
    report = context.session().store.doctor(fix=args.fix)
    index = _index_health(context, fix=args.fix)
    ok = report.ok and (not index["problems"] or index["fixed"])
    lines = _doctor_text(report).split("\n")[:-1]
    lines += [index["line"], "healthy" if ok else "problems found"]
    context.emit("\n".join(lines), {**_doctor_json(report), "ok": ok, "index": index})
    return 0 if ok else 1


def _index_health(context: Context, *, fix: bool) -> dict[str, Any]:
    """The search index's check: every page, row and blob read back."""
    searcher = IndexSearcher(notice=None, watch=False)
    try:
        index = searcher.index(canonical_workspace(context.workspace))
        where = "in memory" if index.path is None else str(index.path)
        problems = index.check()
        fixed = False
        if problems and fix:
            index.discard()
            fixed = True
        if problems:
            state = "discarded; the next search rebuilds it" if fixed else "; ".join(problems)
            line = f"search index: {state} ({where})"
        elif index.path is not None and not index.path.exists():
            line = f"search index: not built yet ({where})"
        else:
            status = index.status(freshness=False)
            line = f"search index: ok, {status.documents:,} notes ({where})"
        return {"path": where, "problems": problems, "fixed": fixed, "line": line}
    finally:
        searcher.close()


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
    return f"{active} active, {len(snapshot.records)} versions, {snapshot.size_bytes:,} bytes"


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


def _doctor_text(report: DoctorReport) -> str:
    lines: list[str] = []
    if report.error is not None:
        index = _record_index(report.error)
        where = f" (record index {index})" if index is not None else ""
        lines.append(f"store: error[{report.error.code}]{where}: {report.error.message}")
    else:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(report.counts.items()))
        lines.append(f"store: ok ({counts or 'empty'}); revision {report.revision}")
    percent = 100 * report.used_bytes / report.max_bytes
    lines.append(f"capacity: {report.used_bytes:,} of {report.max_bytes:,} bytes ({percent:.1f}%)")
    if report.lock_held:
        lines.append(f"lock: held by {report.lock_holder or 'an unknown writer'}")
    else:
        lines.append("lock: free")
    for path in report.temp_files:
        state = "removed" if path in report.removed else "stale (run doctor --fix)"
        lines.append(f"staging file {path}: {state}")
    for finding in report.secret_findings:
        lines.append(
            f"secret: record {finding.record_id} matches {', '.join(finding.kinds)}; "
            "forget it or update it without the credential"
        )
    lines.append("healthy" if report.ok else "problems found")
    return "\n".join(lines)


def _record_index(error: MemoryRecordError) -> int | None:
    return error.record_index if isinstance(error, CorruptError) else None


def _doctor_json(report: DoctorReport) -> dict[str, object]:
    error = report.error
    return {
        "ok": report.ok,
        "error": None
        if error is None
        else {
            "code": error.code,
            "message": error.message,
            "record_index": _record_index(error),
        },
        "revision": report.revision,
        "used_bytes": report.used_bytes,
        "max_bytes": report.max_bytes,
        "counts": dict(report.counts),
        "temp_files": list(report.temp_files),
        "removed": list(report.removed),
        "lock_held": report.lock_held,
        "lock_holder": report.lock_holder,
        "secret_findings": [
            {"record_id": f.record_id, "kinds": list(f.kinds)} for f in report.secret_findings
        ],
    }
