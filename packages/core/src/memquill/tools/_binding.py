"""The binding store: which host sessions may use which workspace's memory.

A binding is a host's explicit statement that one session works with one workspace's memory
(an assistant session created for that folder, an onboarding step, a chat channel opened
there). Only :meth:`BindingStore.bind` creates one. **A shared working directory alone is never
binding intent**: an ordinary session that happens to run in the workspace folder stays unbound,
so its memory tools are not mounted and its writes are refused. The single exception is the
one-time :meth:`BindingStore.migrate_legacy`, which binds sessions that existed before a host
adopted bindings; sessions created after it ran are never inferred from their directory.

Bindings persist as one JSON file (default ``<user data dir>/memquill/bindings.json``)::

    {"version": 1,
     "bindings": {"<session id>": {"version": 1, "workspace": "<canonical path>"}},
     "legacyMigration": {"version": 1, "migratedSessions": 2}}

The file is a :class:`memquill.foundation.json_file.JsonFile`: every change is a read-modify-write
under a kernel lock on the sidecar ``bindings.json.lock``, written only if it changed something,
whole (a staging file, synced, renamed over the old one, the folder synced), so concurrent binders
never lose each other's rows and a crash leaves the old or the new file, never a torn one.
Reads take no lock and never write. Hosts that keep sessions in their own database can implement
:class:`BindingBackend` instead and still use :func:`write_authorizer`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Final, Protocol, cast

from memquill.errors import BindingError, BusyError, MemquillError, Messages, StorageError
from memquill.foundation.json_file import Faults, JsonFile
from memquill.jsondoc import parse_json
from memquill.paths import canonical_workspace, user_data_dir

TASK_SESSION: Final = "task"
"""The session kind that is never bound: background tasks never own workspace memory."""

_VERSION: Final = 1
_MAX_BINDINGS_BYTES: Final = 16 * 1024 * 1024  # a bound, far above any real bindings file
_LEGACY_SOURCE: Final = "legacy_upgrade"
_Document = dict[str, object]
_UNSAVED: Final = partial(StorageError, Messages.BINDINGS_SAVE_FAILED)
# Any file trouble reads as "no bindings" for a resolver and fails a change as ``storage``.
_FAULTS: Final = Faults(
    unsafe=_UNSAVED,
    too_large=_UNSAVED,
    unreadable=_UNSAVED,
    unsaved=_UNSAVED,
    busy=partial(BusyError, Messages.LOCK_HELD),
)


class BindingBackend(Protocol):
    """Where a host keeps bindings; all the core needs is the read-only resolver."""

    def resolve(
        self, session_id: str, requested_workspace: str | os.PathLike[str] | None = None
    ) -> Path | None:
        """The bound canonical workspace, or ``None`` (as :meth:`BindingStore.resolve`)."""
        ...


@dataclass(frozen=True, slots=True)
class LegacySession:
    """A session that existed before bindings, as :meth:`BindingStore.migrate_legacy` sees it.

    Attributes:
        session_id: the host's session id.
        working_directory: the directory string the host stored for it (``None`` or empty: none).
        session_kind: ``"task"`` for background tasks; ``None`` counts as an ordinary user session.
    """

    session_id: str
    working_directory: str | None
    session_kind: str | None = None


def default_bindings_path() -> Path:
    """``memquill/bindings.json`` in the user's data directory (nothing is created)."""
    return user_data_dir() / "memquill" / "bindings.json"


def write_authorizer(
    bindings: BindingBackend,
    session_id: str | None,
    workspace: str | os.PathLike[str],
    is_read_only_mode: Callable[[], bool] | None = None,
) -> Callable[[], bool]:
    """An ``authorize_write`` callback for :class:`~memquill.tools.MemorySession`.

    The callback answers afresh at every call: it refuses when there is no session id, when
    ``is_read_only_mode()`` says the host is in a read-only mode (Plan mode, heartbeat), or
    when the session is no longer bound to ``workspace`` (unbound, rebound elsewhere, or the
    folder moved).
    """

    def authorize() -> bool:
        if not session_id:
            return False
        if is_read_only_mode is not None and is_read_only_mode():
            return False
        return bindings.resolve(session_id, workspace) is not None

    return authorize


class BindingStore:
    """Bindings of host sessions to workspaces, kept in one JSON file.

    Args:
        path: the bindings file (default: :func:`default_bindings_path`). Its folder is created
            on the first write.
        lock_timeout: seconds a change waits for another process's change to finish.
    """

    def __init__(self, path: Path | None = None, *, lock_timeout: float = 5.0) -> None:
        self.path: Final = path if path is not None else default_bindings_path()
        self._file = JsonFile(
            self.path,
            decode=_decode,
            encode=_encode,
            empty=lambda: {"version": _VERSION, "bindings": {}},
            faults=_FAULTS,
            limit=_MAX_BINDINGS_BYTES,
            lock_timeout=lock_timeout,
        )

    def __repr__(self) -> str:
        return f"BindingStore({str(self.path)!r})"

    def bind(
        self, session_id: str, workspace: str | os.PathLike[str], *, session_kind: str = "user"
    ) -> Path:
        """Bind a session to a workspace's memory; call only on the host's explicit intent.

        Binding again replaces the session's previous binding. Never call this because a
        session's working directory happens to be the workspace.

        Returns:
            The canonical workspace the session is now bound to.

        Raises:
            BindingError: the session id is blank, the session is a task session, the
                workspace is not an existing absolute directory, or the bindings file is not
                valid.
            BusyError: another process kept the bindings lock past ``lock_timeout``.
            StorageError: the bindings file could not be written.
        """
        if not session_id or not session_id.strip():
            raise BindingError(Messages.BINDING_SESSION)
        if session_kind == TASK_SESSION:
            raise BindingError(Messages.BINDING_TASK)
        try:
            root = canonical_workspace(workspace)
        except MemquillError as error:
            raise BindingError(Messages.BINDING_WORKSPACE) from error

        def change(document: _Document) -> bool:
            _rows(document)[session_id] = {"version": _VERSION, "workspace": str(root)}
            return True

        self._mutate(change)
        return root

    def unbind(self, session_id: str) -> bool:
        """Remove exactly this session's binding (call it when the session is deleted).

        Returns:
            Whether a binding was removed.

        Raises:
            BindingError: the bindings file is not valid.
            BusyError: another process kept the bindings lock past ``lock_timeout``.
            StorageError: the bindings file could not be written.
        """
        return self._mutate(lambda document: _rows(document).pop(session_id, None) is not None)

    def resolve(
        self, session_id: str, requested_workspace: str | os.PathLike[str] | None = None
    ) -> Path | None:
        """The session's bound canonical workspace, or ``None``; read-only, never raises.

        ``None`` when the session has no valid binding, when the bound folder no longer
        canonicalises to the stored path (moved, renamed, deleted, replaced by a symlink), or
        when ``requested_workspace`` is given and does not canonicalise to that same path.
        """
        document = self._read_quietly()
        row = _as_dict(_rows(document).get(session_id)) if document is not None else None
        if row is None or row.get("version") != _VERSION:
            return None
        stored = row.get("workspace")
        if not isinstance(stored, str):
            return None
        bound = _canonical_or_none(stored)
        if bound is None or str(bound) != stored:
            return None
        if requested_workspace is not None and _canonical_or_none(requested_workspace) != bound:
            return None
        return bound

    def migrated_sessions(self) -> int | None:
        """How many sessions the legacy migration bound, or ``None`` if it has not run."""
        document = self._read_quietly()
        marker = _as_dict(document.get("legacyMigration")) if document is not None else None
        count = marker.get("migratedSessions") if marker is not None else None
        return count if isinstance(count, int) else None

    def migrate_legacy(
        self, sessions: Iterable[LegacySession], workspace: str | os.PathLike[str]
    ) -> int:
        """Bind pre-existing sessions that ran in ``workspace``, once per bindings file.

        Call it once when a host upgrades to bindings, with the sessions that existed before.
        Non-task sessions without a binding whose stored working directory is absolute and
        resolves to the workspace are bound (``"source": "legacy_upgrade"``); a sibling or
        parent directory is not. Both sides resolve leniently (the real path when it exists,
        else the normalised path), so an offline workspace still migrates. The marker
        ``{"version": 1, "migratedSessions": N}`` is written in the same atomic change, and any
        later call binds nothing: sessions created after the upgrade are never inferred from
        their working directory.

        Returns:
            How many sessions this call bound (0 when the migration already ran).

        Raises:
            BindingError: ``workspace`` is not an absolute path, or the bindings file is not
                valid.
            BusyError: another process kept the bindings lock past ``lock_timeout``.
            StorageError: the bindings file could not be written.
        """
        target = _relaxed(os.fspath(workspace))
        if target is None:
            raise BindingError(Messages.BINDING_WORKSPACE)
        pending = list(sessions)
        resolved: dict[str, str | None] = {}  # one lookup per distinct stored directory
        bound = 0

        def change(document: _Document) -> bool:
            nonlocal bound
            bound = 0
            if "legacyMigration" in document:
                return False
            rows = _rows(document)
            for session in pending:
                if (
                    session.session_kind == TASK_SESSION
                    or not session.session_id
                    or session.session_id in rows
                ):
                    continue
                directory = session.working_directory or ""
                if directory not in resolved:
                    resolved[directory] = _relaxed(directory)
                if resolved[directory] != target:
                    continue
                rows[session.session_id] = {
                    "version": _VERSION,
                    "workspace": target,
                    "source": _LEGACY_SOURCE,
                }
                bound += 1
            document["legacyMigration"] = {"version": _VERSION, "migratedSessions": bound}
            return True

        self._mutate(change)
        return bound

    def authorizer(
        self,
        session_id: str | None,
        workspace: str | os.PathLike[str],
        is_read_only_mode: Callable[[], bool] | None = None,
    ) -> Callable[[], bool]:
        """:func:`write_authorizer` over this store."""
        return write_authorizer(self, session_id, workspace, is_read_only_mode)

    def _read_quietly(self) -> _Document | None:
        # Resolution must never fail a tool call: an unreadable or invalid file binds nothing.
        try:
            return self._file.read()
        except (OSError, BindingError):
            return None

    def _mutate(self, change: Callable[[_Document], bool]) -> bool:
        """Apply ``change`` to the current document under the lock (written if it changed)."""
        with self._file.change() as document:
            return change(document)


def _decode(data: bytes) -> _Document:
    try:
        document = _as_dict(parse_json(data))
    except ValueError:  # not JSON, or not text at all (UnicodeDecodeError)
        document = None
    if (
        document is None
        or document.get("version") != _VERSION
        or _as_dict(document.setdefault("bindings", {})) is None
    ):
        raise BindingError(Messages.BINDINGS_INVALID)
    return document


def _encode(document: _Document) -> bytes:
    document["bindings"] = dict(sorted(_rows(document).items()))
    return (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode()


def _as_dict(value: object) -> _Document | None:
    return cast("_Document", value) if isinstance(value, dict) else None


def _rows(document: _Document) -> _Document:
    rows = _as_dict(document.get("bindings"))
    return rows if rows is not None else {}


def _canonical_or_none(workspace: str | os.PathLike[str]) -> Path | None:
    try:
        return canonical_workspace(workspace)
    except MemquillError:
        return None


def _relaxed(directory: str) -> str | None:
    """The real path when it exists, else the normalised absolute path; relative → ``None``."""
    if not directory or "\0" in directory or not os.path.isabs(directory):
        return None
    try:
        return os.path.realpath(directory, strict=True)
    except OSError:
        return os.path.normpath(directory)
