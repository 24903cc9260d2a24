"""``merge`` and ``sync``: one memory on several machines, through git or a file-sync tool.

- ``memquill merge BASE OURS THEIRS``: the record-level three-way merge, as git's merge driver
  runs it (``%O %A %B``): the result replaces OURS; the exit status is 0 unless a side is not
  a records file (git then leaves the conflict to a person). OURS may also be a workspace's
  ``memory/records.md``: the merge then runs as a store write, under the writer lock.
- ``memquill sync setup`` / ``status`` / ``resolve`` / ``keep`` (``docs/sync.md``).

What each does is :mod:`memquill.sync`'s; this module reads the arguments and words the answers
(``doctor`` shows what waits in the same words).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from memquill.cli.context import Context, add_common
from memquill.errors import InvalidInputError, Messages
from memquill.plugins import open_session
from memquill.store import Record, Snapshot
from memquill.sync import (
    ATTRIBUTE_LINE,
    Divergence,
    KeyRename,
    MergeReport,
    SyncStatus,
    keep_version,
    merge_driver,
    resolve_conflict_copies,
    set_up_git,
    sync_status,
)
from memquill.tools import WriteSource

__all__ = ["register"]

_SHORT: Final = 8
_HEX: Final = re.compile(r"[0-9a-f]{8,64}")


def register(subparsers: Any) -> None:  # argparse keeps its subparsers type private
    """Add ``merge`` and ``sync`` to ``memquill``."""
    merge = subparsers.add_parser(
        "merge", help="merge two copies of records.md record by record (git's merge driver)"
    )
    merge.add_argument("base", metavar="BASE", help="their common ancestor (empty: none)")
    merge.add_argument("ours", metavar="OURS", help="this copy; the result replaces it")
    merge.add_argument("theirs", metavar="THEIRS", help="the other copy")
    add_common(merge)
    merge.set_defaults(handler=_merge, needs_workspace=False)

    sync = subparsers.add_parser("sync", help="keep one memory on several machines")
    actions = sync.add_subparsers(dest="action", metavar="ACTION", required=True)
    setup = actions.add_parser(
        "setup", help="make git merge memory/records.md record by record (once per clone)"
    )
    setup.set_defaults(handler=_setup)
    status = actions.add_parser(
        "status", help="git's set-up, conflict copies, diverged facts, record keys"
    )
    status.set_defaults(handler=_status)
    resolve = actions.add_parser(
        "resolve", help="merge the conflict copies a file-sync tool left, then remove them"
    )
    resolve.set_defaults(handler=_resolve)
    keep = actions.add_parser("keep", help="settle a diverged fact on one of its versions")
    keep.add_argument("id", help="the version to keep (a unique prefix is enough)")
    keep.add_argument("--revision", required=True, help="the record's or the store's revision")
    keep.set_defaults(handler=_keep)
    for parser in (setup, status, resolve, keep):
        add_common(parser)


def _merge(args: argparse.Namespace, context: Context) -> int:
    report, changed = merge_driver(
        Path(args.base),
        Path(args.ours),
        Path(args.theirs),
        open_workspace=lambda workspace: open_session(workspace, store="file"),
    )
    lines = report.lines() or ["nothing new"]
    for line in lines:
        context.err.write(f"memquill merge: {line}\n")
    if context.as_json:
        context.emit("", {"changed": changed, "report": _report_json(report)})
    return 0


def _setup(args: argparse.Namespace, context: Context) -> int:
    del args
    setup, changes = set_up_git(context.workspace)
    lines = [*changes] or ["already set up: nothing changed"]
    lines.append(f"repository: {setup.repository}")
    if ".gitattributes: added" in " ".join(changes):
        lines.append("commit .gitattributes (and .gitignore) so every clone merges alike")
    lines.extend(_untrack_hint(setup.tracked))  # only what git refused to stop tracking
    context.emit(
        "\n".join(lines),
        {"changes": list(changes), "ready": setup.ready, "repository": str(setup.repository)},
    )
    return 0


def _untrack_hint(tracked: tuple[str, ...]) -> list[str]:
    if not tracked:
        return []
    return [f"committed already, stop tracking it: git rm --cached {path}" for path in tracked]


def _status(args: argparse.Namespace, context: Context) -> int:
    del args
    session = context.session("read")
    status = sync_status(session.store)
    snapshot = None if status.error else session.store.snapshot()
    context.emit("\n".join(status_lines(status, snapshot)), status_json(status))
    return 0


def status_lines(status: SyncStatus, snapshot: Snapshot | None) -> list[str]:
    """``memquill sync status`` in words (``doctor`` shows the same findings)."""
    git = status.git
    lines: list[str] = []
    if status.backend != "file":
        lines.append("store: a database shared by every host; nothing to sync")
    elif git.repository is None:
        lines.append("git: the workspace is not in a git repository")
    else:
        state = "set up" if git.ready else "NOT set up: run `memquill sync setup`"
        lines.append(f"git: {state} ({git.repository})")
        lines.append(f"  .gitattributes {ATTRIBUTE_LINE}: {'yes' if git.attribute else 'no'}")
        driver = git.driver or "not set"
        runs = "" if git.driver is None or git.driver_runs else " (its program is missing)"
        lines.append(f"  merge driver: {driver}{runs}")
        lines.extend(f"  not ignored: {line}" for line in git.unignored)
        lines.extend(f"  {hint}" for hint in _untrack_hint(git.tracked))
    lines.extend(
        waiting_lines(
            status.conflict_copies,
            status.diverged,
            status.renamed_keys,
            status.other_keys,
            snapshot,
        )
    )
    key = status.key_id or "none yet (the first write creates one)"
    lines.append(f"record key: {key}")
    return lines


def waiting_lines(
    conflict_copies: Sequence[str],
    diverged: Sequence[Divergence],
    renamed_keys: Sequence[KeyRename],
    other_keys: Mapping[str, int],
    snapshot: Snapshot | None = None,
) -> list[str]:
    """What a workspace kept on several machines waits for, one line each (``doctor`` and
    ``sync status``; with ``snapshot``, each diverged version's text and revision too)."""
    lines = [
        f"conflict copy {path}: facts from another machine wait; run `memquill sync resolve`"
        for path in conflict_copies
    ]
    for found in diverged:
        others = ", ".join(i[:_SHORT] for i in found.other_ids)
        lines.append(
            f"diverged: fact {found.active_id[:_SHORT]} was corrected on two machines (kept "
            f"{found.active_id[:_SHORT]}, also {others}); choose with `memquill sync keep ID "
            "--revision R`"
        )
        for record_id in (found.active_id, *found.other_ids):
            record = snapshot.find(record_id) if snapshot is not None else None
            if snapshot is not None and record is not None:
                revision = snapshot.record_revision(record)[:16]
                lines.append(f"  {record_id[:_SHORT]} (revision {revision}): {_first_line(record)}")
    lines.extend(
        f"renamed key: {item.key!r} was taken on two machines; fact {item.root_id[:_SHORT]} "
        f"now has {item.renamed!r}"
        for item in renamed_keys
    )
    lines.extend(
        f"record key: {count} record(s) were written under key {key}, which this machine does "
        "not hold (their duplicates and tombstones are not recognised here); on the machine "
        "that has it, run `memquill key export --stdout | ssh THIS-HOST memquill key import -`"
        for key, count in other_keys.items()
    )
    return lines


def waiting_json(
    diverged: Sequence[Divergence], renamed_keys: Sequence[KeyRename]
) -> dict[str, object]:
    """The diverged facts and renamed keys of ``--json`` (``doctor``, ``sync status`` and a
    merge's report: one shape)."""
    return {
        "diverged": [
            {"root_id": d.root_id, "active_id": d.active_id, "other_ids": list(d.other_ids)}
            for d in diverged
        ],
        "renamed_keys": [
            {"key": r.key, "root_id": r.root_id, "renamed": r.renamed} for r in renamed_keys
        ],
    }


def _first_line(record: Record) -> str:
    return record.content.split("\n", 1)[0][:80]


def status_json(status: SyncStatus) -> dict[str, object]:
    """``memquill sync status --json``."""
    git = status.git
    return {
        "backend": status.backend,
        "git": {
            "repository": str(git.repository) if git.repository is not None else None,
            "ready": git.ready,
            "attribute": git.attribute,
            "driver": git.driver,
            "driver_runs": git.driver_runs,
            "unignored": list(git.unignored),
            "tracked": list(git.tracked),
        },
        "conflict_copies": list(status.conflict_copies),
        **waiting_json(status.diverged, status.renamed_keys),
        "key_id": status.key_id,
        "other_keys": dict(status.other_keys),
        "error": status.error,
    }


def _resolve(args: argparse.Namespace, context: Context) -> int:
    del args
    outcome = resolve_conflict_copies(context.session(), source=WriteSource.manual())
    lines: list[str] = []
    if outcome.backup is not None:
        lines.append(f"backup: records.md as it was is in {outcome.backup}")
    for copy in outcome.copies:
        if copy.report is None:
            lines.append(f"left {copy.path}: {copy.problem}")
            continue
        found = "; ".join(copy.report.lines()) or "nothing new"
        lines.append(f"merged and removed {copy.path}: {found}")
    if not outcome.copies:
        lines.append("no conflict copies")
    lines.append(f"store revision {outcome.revision}")
    data = {
        "backup": outcome.backup,
        "revision": outcome.revision,
        "copies": [
            {
                "path": copy.path,
                "merged": copy.report is not None,
                "problem": copy.problem,
                "report": _report_json(copy.report) if copy.report is not None else None,
            }
            for copy in outcome.copies
        ],
    }
    context.emit("\n".join(lines), data)
    return 1 if any(copy.report is None for copy in outcome.copies) else 0


def _keep(args: argparse.Namespace, context: Context) -> int:
    if not _HEX.fullmatch(args.revision):  # as `update` and `forget` check it
        raise InvalidInputError(Messages.REVISION_FORMAT)
    outcome = keep_version(context.session(), args.id, args.revision, source=WriteSource.manual())
    text = (
        f"{outcome.status}: {outcome.record_id} stands for the fact"
        f" (record revision {outcome.record_revision})\nstore revision {outcome.revision}"
    )
    data = {
        "status": outcome.status,
        "record_id": outcome.record_id,
        "record_revision": outcome.record_revision,
        "revision": outcome.revision,
    }
    context.emit(text, data)
    return 0


def _report_json(report: MergeReport) -> dict[str, object]:
    return {
        "added": report.added,
        "folded": report.folded,
        **waiting_json(report.diverged, report.renamed_keys),
        "both_edited": list(report.both_edited),
    }
