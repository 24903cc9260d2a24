"""``memquill sync status`` as data: git's set-up, and what waits for a person.

One read of everything a workspace kept on several machines needs looked at: whether git
merges ``records.md`` record by record, conflict copies a file-sync tool left, facts that
diverged, named keys a merge renamed, this machine's record key, and records written under a
key it does not hold. Nothing is changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memquill.errors import StorageError
from memquill.paths import canonical_workspace
from memquill.store import Divergence, KeyRename, RecordKey, RecordStore, key_id
from memquill.sync._git import GitSetup, git_setup


@dataclass(frozen=True, slots=True)
class SyncStatus:
    """Where a workspace kept on several machines stands.

    Attributes:
        backend: ``file`` or ``postgres`` (a database needs no sync).
        git: how its git repository merges ``records.md`` (``repository`` ``None``: no git).
        conflict_copies: copies a file-sync tool left beside ``records.md``.
        diverged: facts corrected differently on two machines, waiting for a choice.
        renamed_keys: named keys a merge renamed because two families took them.
        key_id: this machine's record key id (``None``: it has none yet).
        other_keys: records per key id this machine does not hold.
        error: why ``records.md`` could not be read (then the lists above are empty).
    """

    backend: str
    git: GitSetup
    conflict_copies: tuple[str, ...] = ()
    diverged: tuple[Divergence, ...] = ()
    renamed_keys: tuple[KeyRename, ...] = ()
    key_id: str | None = None
    other_keys: Mapping[str, int] = field(default_factory=dict[str, int])
    error: str | None = None

    @property
    def waiting(self) -> bool:
        """Something waits for a person: a conflict copy, a diverged fact or a renamed key."""
        return bool(self.conflict_copies or self.diverged or self.renamed_keys)


def sync_status(store: RecordStore) -> SyncStatus:
    """The sync status of ``store``'s workspace (see the module docstring).

    Raises:
        InvalidInputError: the ``git`` program is missing.
        UnsafePathError, StorageError: the workspace itself cannot be used.
    """
    workspace = canonical_workspace(store.workspace)
    git = git_setup(Path(workspace)) if store.backend.kind == "file" else GitSetup(None)
    report = store.doctor()
    return SyncStatus(
        backend=store.backend.kind,
        git=git,
        conflict_copies=report.conflict_copies,
        diverged=report.diverged,
        renamed_keys=report.renamed_keys,
        key_id=_current_key_id(store),
        other_keys=report.other_keys,
        error=report.error.message if report.error is not None else None,
    )


def _current_key_id(store: RecordStore) -> str | None:
    source = store.record_key
    try:
        key = source.current() if isinstance(source, RecordKey) else source.load()
    except StorageError:
        return None
    return key_id(key) if key is not None else None
