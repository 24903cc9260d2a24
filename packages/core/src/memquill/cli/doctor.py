"""``memquill doctor``: check the store and the search index, say what is wrong, repair hand edits.

Without ``--fix`` nothing changes: the report names the record at fault, the reason, and what
``--fix`` would do (or why it cannot). Records are numbered from 1 in the text, as a person
counts them in the file; the JSON gives the same number as ``record`` beside the 0-based
``record_index`` of :class:`~memquill.errors.CorruptError`. With ``--fix`` it removes stale
staging files and, when the repair is unambiguous, writes a backup of ``records.md`` and
repairs it. A PostgreSQL store has no lock file: its report says so instead of a lock line.
A store without a capacity (a database workspace without a quota) says so on the capacity
line, and its JSON has ``max_bytes`` and ``percent_used`` ``null``. Below the capacity line,
a readable store's ``history`` and ``bytes`` lines say what fills it
(:mod:`memquill.store._doctor`): live facts, superseded versions and how many are compacted,
forgotten facts, the deepest and mean history, and the bytes each kind takes.
"""

from __future__ import annotations

import argparse
from typing import Any

from memquill.cli.context import Context, add_common, counted
from memquill.cli.sync import waiting_json, waiting_lines
from memquill.errors import CorruptError, MemoryRecordError, StorageError
from memquill.index import IndexSearcher, SearchIndex, index_errors
from memquill.paths import canonical_workspace
from memquill.store import DoctorReport, HistoryFigures

__all__ = ["register"]


def register(subparsers: Any) -> None:  # argparse keeps its subparsers type private
    """Add ``doctor`` to ``memquill``."""
    doctor = subparsers.add_parser(
        "doctor", help="check the records store; --fix repairs what is unambiguous"
    )
    doctor.add_argument(
        "--fix",
        action="store_true",
        help="remove stale staging files and repair a hand edit (a backup is written first)",
    )
    add_common(doctor)
    doctor.set_defaults(handler=_doctor)


def _doctor(args: argparse.Namespace, context: Context) -> int:
    if context.workspace_is_default and not context.workspace.exists():
        text = f"no workspace yet at {context.workspace}; the first `remember` creates it"
        context.emit(text, {"ok": True, "workspace": None})
        return 0
    store = context.session().store
    report = store.doctor(fix=args.fix)
    file_lock = store.backend.kind == "file"
    index = _index_health(context, fix=args.fix)
    ok = report.ok and (not index["problems"] or index["fixed"])
    lines = _text(report, fix=args.fix, file_lock=file_lock).split("\n")[:-1]  # verdict: below
    lines += [index["line"], "healthy" if ok else "problems found"]
    data = {**_json(report), "ok": ok, "index": index, "store": store.backend.kind}
    if not file_lock:
        data.update(lock_held=None, lock_holder=None)
    context.emit("\n".join(lines), data)
    return 0 if ok else 1


def _index_health(context: Context, *, fix: bool) -> dict[str, Any]:
    """The search index's check: every page, row and blob read back."""
    searcher = IndexSearcher(notice=None, watch=False)
    try:
        index = searcher.index(canonical_workspace(context.workspace))
        where = "in memory" if index.path is None else str(index.path)
        try:
            with index_errors():
                return _index_line(index, where, fix=fix)
        except StorageError as error:
            # Searches keep working (the index in memory); `memquill index` cannot save it.
            line = f"search index: {error.message} ({where})"
            return {"path": where, "problems": [error.message], "fixed": False, "line": line}
    finally:
        searcher.close()


def _index_line(index: SearchIndex, where: str, *, fix: bool) -> dict[str, Any]:
    problems = index.check()
    fixed = False
    if problems and fix:
        index.discard()
        fixed = True
    if problems:
        state = "discarded; the next search rebuilds it" if fixed else "; ".join(problems)
        line = f"search index: {state} ({where})"
    else:
        status = index.status(freshness=False)
        if status.exists:
            line = f"search index: ok, {counted(status.documents, 'note')} ({where})"
        else:
            line = f"search index: not built yet ({where})"
    return {"path": where, "problems": problems, "fixed": fixed, "line": line}


def _text(report: DoctorReport, *, fix: bool, file_lock: bool = True) -> str:
    lines: list[str] = []
    if report.repaired and report.repair is not None:
        lines.append(f"backup: the file as it was is in {report.backup}")
        lines.extend(f"repaired: {change}" for change in report.repair.changes)
    lines.append(_store_line(report))
    if report.error is not None and report.repair is not None:
        lines.extend(_repair_lines(report, fix=fix))
    lines.append(_capacity_line(report))
    if report.error is None:
        lines.extend(_history_lines(report.history))
    if not file_lock:
        lines.append("lock: none (the database locks the row for each write)")
    elif report.lock_held:
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
    for control in report.control_findings:
        lines.append(
            f"control: record {control.record_id} holds {control.character} (saved before "
            "writes refused control characters); update it without them"
        )
    lines.extend(
        waiting_lines(
            report.conflict_copies, report.diverged, report.renamed_keys, report.other_keys
        )
    )
    lines.append("healthy" if report.ok else "problems found")
    return "\n".join(lines)


def _capacity_line(report: DoctorReport) -> str:
    """The bytes in use, against the capacity when the store has one."""
    if report.max_bytes is None or report.percent_used is None:
        return f"capacity: used {report.used_bytes:,} bytes; no quota set"
    return (
        f"capacity: {report.used_bytes:,} of {report.max_bytes:,} bytes "
        f"({report.percent_used:.1f}%)"
    )


def _history_lines(history: HistoryFigures) -> list[str]:
    """What fills the store: facts, history and its depth, tombstones, and their bytes."""
    return [
        f"history: {counted(history.live, 'live fact')}, "
        f"{counted(history.superseded, 'superseded version')} ({history.compacted:,} compacted), "
        f"{counted(history.tombstones, 'forgotten fact')}; deepest history "
        f"{counted(history.deepest, 'version')}, mean {history.mean_depth:g} per fact",
        f"bytes: live facts {history.live_bytes:,}, history {history.history_bytes:,}, "
        f"compacted {history.compacted_bytes:,} (text dropped), "
        f"tombstones {history.tombstone_bytes:,}",
    ]


def _store_line(report: DoctorReport) -> str:
    error = report.error
    if error is None:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(report.counts.items()))
        return f"store: ok ({counts or 'empty'}); revision {report.revision}"
    diagnosis = report.diagnosis
    if isinstance(error, CorruptError) and diagnosis is not None:
        return f"store: error[{error.code}] in {diagnosis.where()}: {diagnosis.reason}"
    index = _record_index(error)
    where = f" in record {index + 1}" if index is not None else ""
    return f"store: error[{error.code}]{where}: {error.message}"


def _repair_lines(report: DoctorReport, *, fix: bool) -> list[str]:
    plan = report.repair
    assert plan is not None
    if plan.refused is not None:
        return [
            f"fix: cannot repair this without guessing: {plan.refused}.",
            "fix: restore memory/records.md from a backup, or undo the edit by hand; "
            "`memquill doctor` checks it again.",
        ]
    if fix:  # planned, yet the file still does not read: say so plainly
        return ["fix: the repair did not give a readable file; nothing else was changed."]
    return [
        "fix: `memquill doctor --fix` will write a backup of memory/records.md, then:",
        *(f"  - {change}" for change in plan.changes),
    ]


def _record_index(error: MemoryRecordError) -> int | None:
    return error.record_index if isinstance(error, CorruptError) else None


def _number(index: int | None) -> int | None:
    """The 1-based record number the text shows for a 0-based ``index``."""
    return None if index is None else index + 1


def _json(report: DoctorReport) -> dict[str, object]:
    error, diagnosis, plan = report.error, report.diagnosis, report.repair
    return {
        "ok": report.ok,
        "error": None
        if error is None
        else {
            "code": error.code,
            "message": error.message,
            "record": _number(_record_index(error)),
            "record_index": _record_index(error),
        },
        "diagnosis": None
        if diagnosis is None
        else {
            "record": _number(diagnosis.record_index),
            "record_index": diagnosis.record_index,
            "record_id": diagnosis.record_id,
            "reason": diagnosis.reason,
        },
        "repair": None
        if plan is None
        else {"changes": list(plan.changes), "refused": plan.refused},
        "repaired": report.repaired,
        "backup": report.backup,
        "revision": report.revision,
        "used_bytes": report.used_bytes,
        "max_bytes": report.max_bytes,
        "percent_used": report.percent_used,
        "history": report.history.figures(),
        "counts": dict(report.counts),
        "temp_files": list(report.temp_files),
        "removed": list(report.removed),
        "lock_held": report.lock_held,
        "lock_holder": report.lock_holder,
        "secret_findings": [
            {"record_id": f.record_id, "kinds": list(f.kinds)} for f in report.secret_findings
        ],
        "control_findings": [
            {"record_id": f.record_id, "character": f.character} for f in report.control_findings
        ],
        "conflict_copies": list(report.conflict_copies),
        **waiting_json(report.diverged, report.renamed_keys),
        "other_keys": dict(report.other_keys),
    }
