"""``MemorySession``: which workspace a host's session may use, and whether it may write now.

The host, never the model, says who is calling (``session_id``) and what they may do
(``access``). ``authorize_write`` is asked again at every write, so a session that switched to a
read-only mode (Plan mode) or to another workspace after its tools were built is refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from memquill.query import MemoryQuery
    from memquill.store import RecordStore, SecretScanner
    from memquill.tools._ranking import CandidateRanker


Access = Literal["read", "read_write"]
"""``read``: search, get and recent only. ``read_write``: also remember, update and forget."""


class MemorySession:
    """One host session's view of one workspace.

    Args:
        workspace: absolute path of the workspace folder (a leading ``~`` is expanded).
        session_id: the host's trusted id of the conversation; writes need one. Never taken
            from model arguments.
        access: ``read`` or ``read_write``; decides which tools exist.
        authorize_write: asked at every write; return ``False`` to refuse (for example in Plan
            mode, or when the session moved to another workspace).
        lock_timeout: seconds a write waits for another writer.
        now: the clock (UTC); injectable for tests.
        secrets: the credential scanner writes use (built-in detectors by default).
        store: where the records live: ``"file"`` (the workspace's ``memory/records.md``) or
            a ``postgresql://`` URL (``docs/multi-host.md``); default ``$MEMQUILL_STORE``,
            else ``file``. Never shown by ``repr``.
        ranker: reorders ``memory_search`` candidates (optional model assistance: a
            :class:`memquill.enhance.ModelRanker` around the host's model); ``None`` keeps keyword
            order, exactly as without model assistance.
        capacity: the largest records file, in bytes (whole MiB, 1 to 64; default: the
            workspace's ``.assistant/config.json``, else 2 MiB).
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        session_id: str | None = None,
        access: Access = "read_write",
        authorize_write: Callable[[], bool] | None = None,
        *,
        lock_timeout: float = 5.0,
        now: Callable[[], datetime] | None = None,
        secrets: SecretScanner | None = None,
        store: str | None = None,
        ranker: CandidateRanker | None = None,
        capacity: int | None = None,
    ) -> None:
        if access not in ("read", "read_write"):
            raise ValueError(f"access must be 'read' or 'read_write', not {access!r}")
        # The store's layer loads with the first session, not when this module is imported.
        from memquill.store import resolve_location

        self.workspace = Path(workspace).expanduser()  # "~/notes", as the commands take it
        self.session_id = session_id or None
        self.access: Access = access
        self._authorize_write = authorize_write
        self._lock_timeout = lock_timeout
        self._now = now
        self._secrets = secrets
        self._location = resolve_location(store)
        self._capacity = capacity
        self._ranker = ranker

    @property
    def now(self) -> Callable[[], datetime] | None:
        """The injected clock, if any."""
        return self._now

    @property
    def authorize_write(self) -> Callable[[], bool] | None:
        """The host's write check, if any."""
        return self._authorize_write

    @property
    def lock_timeout(self) -> float:
        """Seconds a write waits for another writer."""
        return self._lock_timeout

    @property
    def store_location(self) -> str:
        """Where the records live (``file`` or a database URL; keep it out of logs)."""
        return self._location

    @property
    def secrets(self) -> SecretScanner | None:
        """The credential scanner writes use (``None``: the built-in detectors)."""
        return self._secrets

    @property
    def ranker(self) -> CandidateRanker | None:
        """What reorders search candidates, if anything (see :mod:`memquill.tools._ranking`)."""
        return self._ranker

    @property
    def search_scope(self) -> str:
        """Whose searches these are, for per-scope model cooldowns: the session id, or the
        workspace when there is none."""
        return self.session_id or str(self.workspace)

    def with_ranker(self, ranker: CandidateRanker | None) -> MemorySession:
        """The same session (same store and caches) with another candidate ranker."""
        other = self.with_session_id(self.session_id)
        other._ranker = ranker
        return other

    def with_session_id(self, session_id: str | None) -> MemorySession:
        """The same workspace, access and settings for another host session.

        Both sessions use the same records store and query engine (they belong to the
        workspace, not to a session), so their caches are shared.
        """
        other = MemorySession(
            self.workspace,
            session_id,
            self.access,
            self._authorize_write,
            lock_timeout=self._lock_timeout,
            now=self._now,
            secrets=self._secrets,
            store=self._location,
            ranker=self._ranker,
            capacity=self._capacity,
        )
        # Fill the other's cached properties: store and caches belong to the workspace.
        other.__dict__["store"] = self.store
        other.__dict__["query"] = self.query
        return other

    @cached_property
    def store(self) -> RecordStore:
        """The workspace's records store (one per session, so its caches are shared)."""
        from memquill.store import RecordStore  # loaded with the first read, not at import

        return RecordStore(
            self.workspace,
            lock_timeout=self._lock_timeout,
            now=self._now,
            secrets=self._secrets,
            location=self._location,
            capacity=self._capacity,
        )

    @cached_property
    def query(self) -> MemoryQuery:
        """The workspace's query engine, one per session: every tool, retriever and memory
        block built on this session shares its document cache."""
        from memquill.index import IndexSearcher
        from memquill.query import MemoryQuery

        return MemoryQuery(
            self.workspace, store=self.store, now=self._now, searcher=IndexSearcher()
        )

    def write_allowed(self) -> bool:
        """Whether a write may run now: write access, and the host still agrees."""
        if self.access != "read_write":
            return False
        return self._authorize_write is None or bool(self._authorize_write())

    def __repr__(self) -> str:
        return (
            f"MemorySession(workspace={str(self.workspace)!r}, "
            f"session_id={self.session_id!r}, access={self.access!r})"
        )
