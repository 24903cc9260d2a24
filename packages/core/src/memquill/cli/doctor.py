"""``memquill doctor``: check the store and the search index, say what is wrong, repair hand edits.

Without ``--fix`` nothing changes: the report names the record at fault, the reason, and what
``--fix`` would do (or why it cannot). With ``--fix`` it removes stale staging files and, when
the repair is unambiguous, writes a backup of ``records.md`` and repairs it.
"""

from __future__ import annotations

import argparse
from typing import Any

from memquill.cli.context import Context, add_common
from memquill.cli.sync import waiting_lines
from memquill.errors import CorruptError, MemoryRecordError
from memquill.index import IndexSearcher
from memquill.paths import canonical_workspace
from memquill.store import DoctorReport

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
    report = context.session().store.doctor(fix=args.fix)
    index = _index_health(context, fix=args.fix)
    ok = report.ok and (not index["problems"] or index["fixed"])
    lines = _text(report, fix=args.fix).split("\n")[:-1]  # the verdict comes last, below
    lines += [index["line"], "healthy" if ok else "problems found"]
    context.emit("\n".join(lines), {**_json(report), "ok": ok, "index": index})
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


def _text(report: DoctorReport, *, fix: bool) -> str:
    lines: list[str] = []
    if report.repaired and report.repair is not None:
        lines.append(f"backup: the file as it was is in {report.backup}")
        lines.extend(f"repaired: {change}" for change in report.repair.changes)
    lines.append(_store_line(report))
    if report.error is not None and report.repair is not None:
        lines.extend(_repair_lines(report, fix=fix))
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
    lines.extend(
        waiting_lines(
            report.conflict_copies, report.diverged, report.renamed_keys, report.other_keys
        )
    )
    lines.append("healthy" if report.ok else "problems found")
    return "\n".join(lines)


def _store_line(report: DoctorReport) -> str:
    error = report.error
    if error is None:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(report.counts.items()))
        return f"store: ok ({counts or 'empty'}); revision {report.revision}"
    diagnosis = report.diagnosis
    if isinstance(error, CorruptError) and diagnosis is not None:
        return f"store: error[{error.code}] in {diagnosis.where()}: {diagnosis.reason}"
    index = _record_index(error)
    where = f" (record index {index})" if index is not None else ""
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


def _json(report: DoctorReport) -> dict[str, object]:
    error, diagnosis, plan = report.error, report.diagnosis, report.repair
    return {
        "ok": report.ok,
        "error": None
        if error is None
        else {
            "code": error.code,
            "message": error.message,
            "record_index": _record_index(error),
        },
        "diagnosis": None
        if diagnosis is None
        else {
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
        "counts": dict(report.counts),
        "temp_files": list(report.temp_files),
        "removed": list(report.removed),
        "lock_held": report.lock_held,
        "lock_holder": report.lock_holder,
        "secret_findings": [
            {"record_id": f.record_id, "kinds": list(f.kinds)} for f in report.secret_findings
        ],
        "conflict_copies": list(report.conflict_copies),
        "diverged": [
            {"root_id": d.root_id, "active_id": d.active_id, "other_ids": list(d.other_ids)}
            for d in report.diverged
        ],
        "renamed_keys": [
            {"key": r.key, "root_id": r.root_id, "renamed": r.renamed} for r in report.renamed_keys
        ],
        "other_keys": dict(report.other_keys),
    }
