"""One memory on every machine, without a server (``docs/sync.md``).

A workspace kept in git, Syncthing, Dropbox, Nextcloud/ownCloud or OneDrive ends up with two
machines' versions of ``memory/records.md``. The merge itself is the store's
(:func:`memquill.store.merge_files`, :meth:`memquill.store.RecordStore.merge`), and every
change goes through the one write path (:func:`memquill.tools.merge_copy`,
:func:`~memquill.tools.resolve_conflict_copies`, :func:`~memquill.tools.keep_version`). This
package sets git up to use it (:func:`set_up_git`) and says where a workspace stands
(:func:`sync_status`).
"""

from memquill.sync._git import (
    ATTRIBUTE_LINE,
    IGNORE_LINES,
    GitSetup,
    driver_command,
    git_setup,
    set_up_git,
)
from memquill.sync._status import SyncStatus, sync_status

__all__ = [
    "ATTRIBUTE_LINE",
    "IGNORE_LINES",
    "GitSetup",
    "SyncStatus",
    "driver_command",
    "git_setup",
    "set_up_git",
    "sync_status",
]
