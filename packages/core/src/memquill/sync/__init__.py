"""One memory on every machine, without a server (``docs/sync.md``): every sync name, here.

A workspace kept in git, Syncthing, Dropbox, Nextcloud/ownCloud or OneDrive ends up with two
machines' versions of ``memory/records.md``. This package is sync's home, and its facade is
where the CLI, the management page and memquill's adapters import everything sync offers (a
user needs only :func:`merge_files`, its ``__all__``; the rest is the core's own):

- the record-level merge (:func:`merge_files`, :class:`MergeReport`) and the git merge
  driver's side (:func:`merge_driver`, :func:`merge_into_file`, :func:`read_copy`,
  :func:`records_workspace`);
- the writes, each through the write path's one rule: :func:`merge_copy` (another copy into a
  workspace), :func:`resolve_conflict_copies` (the copies a file-sync tool left),
  :func:`keep_version` (a person's choice among a diverged fact's versions);
- what waits for a person (:class:`Divergence`, :class:`KeyRename`, :func:`conflict_notice`);
- git's set-up (:func:`set_up_git`) and where a workspace stands (:func:`sync_status`).

The rules: the record-level merge runs inside the store's locked transaction, so its code is
the store's (``RecordStore.merge``, ``keep_version``, ``resolve_conflict_copies`` and
``doctor`` use it, and the store may not import a layer above it), as are the conflict copies
the file backend finds beside its file and every search names; this facade answers for those
by name. This package owns the rest: the writes, the merge driver's side, git's set-up and
the status. Names are imported on first use (:func:`memquill.lazy.lazy_exports`): importing
this facade loads no merge code.
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.store import (
        Divergence as Divergence,
        KeyRename as KeyRename,
        MergeReport as MergeReport,
        MergeResult as MergeResult,
        ResolvedCopy as ResolvedCopy,
        ResolveReport as ResolveReport,
        conflict_notice as conflict_notice,
        merge_files,
    )
    from memquill.sync._git import (
        ATTRIBUTE_LINE as ATTRIBUTE_LINE,
        IGNORE_LINES as IGNORE_LINES,
        GitSetup as GitSetup,
        driver_command as driver_command,
        git_setup as git_setup,
        set_up_git as set_up_git,
    )
    from memquill.sync._merge import (
        keep_version as keep_version,
        merge_copy as merge_copy,
        merge_driver as merge_driver,
        merge_into_file as merge_into_file,
        read_copy as read_copy,
        records_workspace as records_workspace,
        resolve_conflict_copies as resolve_conflict_copies,
    )
    from memquill.sync._status import SyncStatus as SyncStatus, sync_status as sync_status

__all__ = [
    "merge_files",
]

__getattr__, __dir__ = _lazy_exports(__name__)
