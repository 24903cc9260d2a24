"""``MemquillMemoryService``: an ADK ``BaseMemoryService`` whose memory is Markdown.

Give it to a runner (``Runner(..., memory_service=MemquillMemoryService("/srv/memory"))``) and
ADK's ``load_memory``/``preload_memory`` tools search it. ``(app_name, user_id)`` is the scope:
the workspace folder ``ROOT/<app>/<user>/`` (labels escaped reversibly as the LangGraph store
escapes namespaces, folders ``0700``, made at the first write), so one user's memory never
answers another's search.

- ``add_memory`` remembers the text of each ``MemoryEntry`` as a fact through the one write
  path (source ``tool``, the service's session id): credentials are refused (``SecretError``),
  a batch of up to 40 entries is saved all or nothing, the same text twice is one fact, and a
  text whose fact was forgotten is not saved again (the tombstone blocks it). An entry's own
  ``id``, ``author``, ``timestamp`` and ``custom_metadata`` are not kept: memquill names facts.
- ``search_memory`` answers memquill's keyword ranking (the ``memory_search`` tool's), at most
  ``search_limit`` entries, best first; each entry's ``id`` is the fact's record id (a
  note's ``path#line``), its content the hit's text, ``custom_metadata`` its ``score`` and
  ``key``. A scope
  with no folder answers nothing and creates nothing.
- ``delete_memory`` forgets the fact with that id (text and key erased, a tombstone kept;
  compare-and-swap on its revision, retried when another writer moved it); an id that names
  nothing raises ``NotFoundError``.
- ``add_session_to_memory``, ``add_events_to_memory`` and ``flush_session`` feed the
  session's finished turns to extraction: the host's model (``model=``, an ADK ``BaseLlm`` or
  a ``TextModel``) is asked for the durable facts the user stated, a fact is saved only if it
  quotes the user's message verbatim, and the job ledger (``.assistant/memory-jobs.json``)
  keeps every batch paid for at most three times. A turn is counted once however often its
  session is added (ADK adds it after each interaction); every third turn closes a batch, and
  ``flush_session`` closes the last partial one when the conversation ends. Each waits for the
  passes it starts. Without a model they record nothing and log so (``memquill.adk``,
  warning): raw chat is never stored as facts. The messages are kept in this process
  (bounded), so jobs of a session this process has not seen wait for a process that has.

Every refusal is memquill's error (``MemquillError``); the core's file work runs on worker
threads, so a write waiting for another writer never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.models.base_llm import BaseLlm
from google.genai import types
from typing_extensions import override

from memquill import InvalidInputError, MemorySession, NotFoundError, WriteSource
from memquill.enhance import TextModel
from memquill.errors import Messages
from memquill.items import check_folders, namespace_folder, validate_namespace
from memquill.lifecycle import Extraction, RecordedMessages, committed_turns
from memquill.owner_only import private_folder
from memquill.plugins import (
    MemquillPluginManager,
    get_plugin_manager,
    open_session,
    plugin_report,
)
from memquill.query import SearchArgs, parse_args
from memquill.store import Candidate
from memquill.tools import forget_current, retrieve, save_candidates
from memquill_adk._events import source_messages
from memquill_adk.model import AdkTextModel

if TYPE_CHECKING:
    from google.adk.events.event import Event
    from google.adk.sessions.session import Session

__all__ = ["DEFAULT_SESSION_ID", "NO_MODEL", "MemquillMemoryService"]

DEFAULT_SESSION_ID: Final = "adk"
"""The session ``add_memory`` writes are recorded under (``source.sessionId``)."""
NO_MODEL: Final = (
    "memquill-adk: no model configured: the session's turns were not recorded for extraction "
    "(give MemquillMemoryService a model; raw chat is never stored as facts)"
)
_LOG: Final = logging.getLogger("memquill.adk")
_BATCH: Final = 40  # the store's largest all-or-nothing batch


@dataclass
class _Scope:
    """One user's workspace: its session, its extraction, the messages seen in this process."""

    folder: Path
    session: MemorySession
    messages: RecordedMessages = field(default_factory=RecordedMessages)
    extraction: Extraction | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class MemquillMemoryService(BaseMemoryService):
    """An ADK memory service on memquill (see the module docstring).

    Args:
        root: an existing folder; each ``(app_name, user_id)`` is a workspace folder under it.
        model: the host's model for extraction: an ADK ``BaseLlm`` or a memquill
            ``TextModel`` (``None``: sessions are not learned from).
        session_id: the session ``add_memory`` writes are recorded under.
        search_limit: the most entries a search answers (1–20, the search's own bounds).
        lock_timeout: seconds a write waits for another writer before ``BusyError``.
        plugins: the plugin manager whose secret detectors guard every write (default: a new
            one, loading the installed plugins).

    Raises:
        InvalidInputError: ``root`` is not an existing folder.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        model: BaseLlm | TextModel | None = None,
        session_id: str = DEFAULT_SESSION_ID,
        search_limit: int = 10,
        lock_timeout: float = 5.0,
        plugins: MemquillPluginManager | None = None,
    ) -> None:
        self.root = Path(root).expanduser().absolute()
        if not self.root.is_dir():
            raise InvalidInputError(Messages.ITEM_ROOT)
        self.model: TextModel | None = AdkTextModel(model) if isinstance(model, BaseLlm) else model
        self._session_id = session_id
        self._search_limit = search_limit
        self._lock_timeout = lock_timeout
        self._plugins = plugins if plugins is not None else get_plugin_manager()
        for failure in plugin_report(self._plugins).failures:
            _LOG.warning("plugin %s: %s", failure.plugin, failure.message)
        self._scopes: dict[tuple[str, ...], _Scope] = {}
        self._scopes_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MemquillMemoryService({str(self.root)!r})"

    def workspace(self, app_name: str, user_id: str) -> Path:
        """The workspace folder of ``(app_name, user_id)`` (it may not exist yet).

        Raises:
            InvalidInputError: an empty name, or one too long for a folder name.
        """
        return namespace_folder(self.root, validate_namespace((app_name, user_id)))

    def session(self, app_name: str, user_id: str) -> MemorySession:
        """The memquill session of ``(app_name, user_id)`` (its folder made if missing), for
        :func:`~memquill_adk.memory_tools`: an agent's own memory tools then write where
        ``search_memory`` reads.

        Raises:
            InvalidInputError: a bad scope. UnsafePathError: a folder of it is a link.
        """
        scope = self._scope(app_name, user_id, True)
        assert scope is not None
        return scope.session

    # -- explicit memories ----------------------------------------------------------------

    @override
    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Remember each entry's text as a fact (see the module docstring).

        Raises:
            InvalidInputError: a bad scope, or an entry without text (nothing is written).
            SecretError: an entry holds credential material (nothing of its batch is written).
            The store's other errors (``capacity``, ``busy``, ``storage``...).
        """
        texts = [_entry_text(entry) for entry in memories]
        if not texts:
            return
        await asyncio.to_thread(self._remember, app_name, user_id, texts)

    @override
    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """memquill's ranking of the scope's memory for ``query``, best first.

        Raises:
            InvalidInputError: a bad scope, or a query the search refuses (empty, too long).
        """
        return await asyncio.to_thread(self._search, app_name, user_id, query)

    @override
    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        """Forget the fact ``memory_id`` (a ``MemoryEntry.id`` from :meth:`search_memory`).

        Raises:
            InvalidInputError: a bad scope.
            NotFoundError: no id, or no fact of the scope has that id.
        """
        if not memory_id:
            raise NotFoundError(Messages.NOT_FOUND)
        await asyncio.to_thread(self._forget, app_name, user_id, memory_id)

    # -- sessions, for extraction ---------------------------------------------------------

    @override
    async def add_session_to_memory(self, session: Session) -> None:
        """Record the session's finished turns for extraction (each counted once, however
        often the session is added) and run the passes; every third turn closes a batch.
        Nothing without a model: see the module docstring."""
        await self._learn(session.app_name, session.user_id, session.id, session.events, False)

    async def flush_session(self, session: Session) -> None:
        """:meth:`add_session_to_memory`, then close the session's last partial batch (its
        conversation ended) and run the passes."""
        await self._learn(session.app_name, session.user_id, session.id, session.events, True)

    @override
    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Record new events of a session (a delta) for extraction; every third finished turn
        closes a batch, and the passes run (nothing without a model). ``session_id`` names the
        conversation; without it the events' invocation id stands for it."""
        conversation = session_id or next((e.invocation_id for e in events if e.invocation_id), "")
        await self._learn(app_name, user_id, conversation, events, False)

    # -- internals ------------------------------------------------------------------------

    async def _learn(
        self, app_name: str, user_id: str, session_id: str, events: Sequence[Event], flush: bool
    ) -> None:
        if self.model is None:
            _LOG.warning(NO_MODEL)
            return
        if not session_id:
            raise InvalidInputError(Messages.NO_SESSION)
        scope = await asyncio.to_thread(self._scope, app_name, user_id, True)
        assert scope is not None and scope.extraction is not None
        extraction = scope.extraction
        scope.messages.record(session_id, source_messages(events))
        history = await scope.messages.messages(session_id) or ()
        for turn in committed_turns(session_id, history):
            await asyncio.to_thread(extraction.enqueue, turn)
        if flush:
            await asyncio.to_thread(extraction.flush, session_id)
        report = await extraction.aresume()
        if report.error is not None:
            _LOG.warning("extraction: %s", report.error)

    def _remember(self, app_name: str, user_id: str, texts: list[str]) -> None:
        scope = self._scope(app_name, user_id, True)
        assert scope is not None
        source = WriteSource("tool", session_id=self._session_id).metadata()
        with scope.lock:
            for start in range(0, len(texts), _BATCH):
                candidates = [
                    Candidate(text, source, f"adk:{hashlib.sha256(text.encode()).hexdigest()}")
                    for text in texts[start : start + _BATCH]
                ]
                save_candidates(scope.session, candidates)

    def _search(self, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        parse_args(SearchArgs, {"query": query, "limit": self._search_limit})  # before a read
        scope = self._scope(app_name, user_id, False)
        if scope is None:
            return SearchMemoryResponse()
        hits = retrieve(scope.session.query, query, limit=self._search_limit)
        return SearchMemoryResponse(
            memories=[
                MemoryEntry(
                    id=hit.id,
                    content=types.Content(role="user", parts=[types.Part(text=hit.text)]),
                    custom_metadata={"score": hit.score, "key": hit.metadata.get("key")},
                )
                for hit in hits
            ]
        )

    def _forget(self, app_name: str, user_id: str, memory_id: str) -> None:
        scope = self._scope(app_name, user_id, False)
        if scope is None:
            raise NotFoundError(Messages.NOT_FOUND)
        source = WriteSource("tool", session_id=self._session_id)
        with scope.lock:
            if forget_current(scope.session, memory_id, source=source) is None:
                raise NotFoundError(Messages.NOT_FOUND)

    def _scope(self, app_name: str, user_id: str, create: bool) -> _Scope | None:
        labels = validate_namespace((app_name, user_id))
        with self._scopes_lock:
            scope = self._scopes.get(labels)
            if scope is not None:
                return scope
            if not check_folders(self.root, labels):
                if not create:
                    return None
                folder = namespace_folder(self.root, labels)
                private_folder(folder)
                check_folders(self.root, labels)  # made meanwhile as a link: refused
            folder = namespace_folder(self.root, labels)
            session = open_session(
                folder,
                self._session_id,
                plugins=self._plugins,
                lock_timeout=self._lock_timeout,
            )
            scope = _Scope(folder, session)
            if self.model is not None:
                scope.extraction = Extraction(session, scope.messages, model=self.model)
            self._scopes[labels] = scope
            return scope


def _entry_text(entry: MemoryEntry) -> str:
    parts = entry.content.parts or ()
    text = "\n".join(part.text for part in parts if part.text and not part.thought)
    if not text.strip():
        raise InvalidInputError(Messages.CONTENT)
    return text
