"""``MemquillMiddleware``: memory for a ``create_agent`` agent without a single memory tool call.

Before each model call it adds what memquill remembers to the system message: the recent
memory and the search hits for the latest user message, the same text the LlamaIndex memory
block shows (:func:`memquill.tools.memory_context`). After the agent finished a turn it records the
turn for automatic extraction and lets the runner work in the background: the reply is never
delayed, and every third turn's facts are saved with a verbatim quote of the user.

One agent can serve many users: a resolver the application supplies maps each run (its
``thread_id``, ``user_id``, runtime context and configurable) to a :class:`MemoryScope`, a
workspace and a session, so each user's memory is read from and saved to their own workspace::

    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from memquill_langchain import MemoryScope, MemquillMiddleware

    saver = InMemorySaver()
    memory = MemquillMiddleware(
        lambda run: MemoryScope(f"/srv/memory/{run.user_id}"),   # one workspace per user
        model=extraction_chat_model,                               # any LangChain chat model
        checkpointer=saver,                                        # where the thread lives
    )
    agent = create_agent(model, tools, middleware=[memory], checkpointer=saver)
    agent.invoke({"messages": [...]}, {"configurable": {"thread_id": "t1", "user_id": "ana"}})
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Final

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.runtime import Runtime

from memquill import MemorySession, MemoryToolset, MemquillError, open_session
from memquill.enhance import AuxiliaryRunner, TextModel
from memquill.lifecycle import (
    Extraction,
    MessageSource,
    RecordedMessages,
    SessionGate,
    committed_turns,
)
from memquill.paths import prepare_workspace
from memquill.tools import memory_context
from memquill_langchain.history import CheckpointerSource, to_source_messages
from memquill_langchain.model import ChatModelTextModel
from memquill_langchain.scope import MemoryScope, ScopeResolver, run_scope

__all__ = ["MemquillMiddleware"]

_LOG: Final = logging.getLogger("memquill.langchain")


@dataclass(slots=True)
class _Bound:
    session: MemorySession
    toolset: MemoryToolset
    extraction: Extraction


class MemquillMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Memory in the prompt before each model call; turns recorded after each run.

    Args:
        resolve: maps a run to its :class:`MemoryScope` (``None``: no memory for that run).
        model: the model that extracts facts (a LangChain chat model or a memquill
            ``TextModel``); ``None`` records turns only (they wait for a model).
        checkpointer: the agent's checkpointer; the messages are re-read from it. Without one,
            the middleware keeps the messages it saw in memory (:class:`~memquill.
            RecordedMessages`, lost when the process ends).
        gate: the host's answer per session (``ready``, ``read_only`` for Plan mode,
            ``unbound``); default: every session is ready.
        runner: the auxiliary runner model calls go through (default: the process's).
        days: recent daily files in the memory context (1–7).
        search_limit: search hits for the latest user message (0: none).
    """

    def __init__(
        self,
        resolve: ScopeResolver,
        *,
        model: BaseChatModel | TextModel | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        gate: SessionGate | None = None,
        runner: AuxiliaryRunner | None = None,
        days: int = 3,
        search_limit: int = 5,
    ) -> None:
        super().__init__()
        self.resolve = resolve
        self.model: TextModel | None = (
            ChatModelTextModel(model) if isinstance(model, BaseChatModel) else model
        )
        self.checkpointer = checkpointer
        self.source: MessageSource = (
            CheckpointerSource(checkpointer) if checkpointer is not None else RecordedMessages()
        )
        self.gate = gate
        self.runner = runner
        self.days = days
        self.search_limit = search_limit
        self._bound: dict[str, _Bound] = {}
        self._lock = threading.Lock()
        self._background: set[Future[Any]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def name(self) -> str:
        """The middleware's node name."""
        return "MemquillMiddleware"

    # -- before the model ------------------------------------------------------------------

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse]
    ) -> ModelResponse:
        """Call the model with memquill's memory added to the system message."""
        return handler(self._with_memory(request, self._context_text(request)))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        """:meth:`wrap_model_call`, reading memory on a worker thread."""
        text = await asyncio.to_thread(self._context_text, request)
        return await handler(self._with_memory(request, text))

    # -- after the run ---------------------------------------------------------------------

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Record the finished turn; the extraction runs on memquill's background thread."""
        extraction = self._record(state, runtime)
        if extraction is not None:
            future = extraction.resume()
            with self._lock:
                self._background.add(future)
            future.add_done_callback(self._forget_future)
        return None

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Record the finished turn; the extraction runs as a task on the agent's loop."""
        extraction = await asyncio.to_thread(self._record, state, runtime)
        if extraction is not None:
            task = asyncio.get_running_loop().create_task(extraction.aresume())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return None

    # -- for hosts -------------------------------------------------------------------------

    def extraction(self, workspace: str | os.PathLike[str]) -> Extraction:
        """The :class:`~memquill.lifecycle.Extraction` of ``workspace`` (its status, retry, flush).

        Raises:
            StorageError, UnsafePathError: ``workspace`` is not an existing absolute folder.
        """
        return self._bind(workspace).extraction

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the background extraction this middleware started is done (sync hosts).

        ``False`` when ``timeout`` seconds passed first.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                pending = [future for future in self._background if not future.done()]
                bound = list(self._bound.values())
            if not pending:
                break
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                pending[0].result(remaining)
            except TimeoutError:
                return False
            except Exception:  # noqa: BLE001,S112 - a failed run is logged where it failed
                continue
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        return all(item.extraction.wait(left) for item in bound)

    async def drain(self) -> None:
        """Wait for the extraction tasks started on this event loop (async hosts)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # -- internals -------------------------------------------------------------------------

    def _scope(self, runtime: Runtime[Any] | None) -> MemoryScope | None:
        return self.resolve(run_scope(runtime.context if runtime is not None else None))

    @staticmethod
    def _session_id(scope: MemoryScope) -> str | None:
        return scope.session_id or run_scope(None).thread_id

    def _bind(self, workspace: str | os.PathLike[str], *, create: bool = False) -> _Bound:
        # Checked at every run: a scope that cannot be used fails the run, loudly.
        key = str(prepare_workspace(workspace, create=create))
        with self._lock:
            bound = self._bound.get(key)
            if bound is None:
                session = open_session(key)
                extraction = Extraction(
                    session, self.source, model=self.model, gate=self.gate, runner=self.runner
                )
                bound = _Bound(session, MemoryToolset(session), extraction)
                self._bound[key] = bound
            return bound

    def _context_text(self, request: ModelRequest[Any]) -> str | None:
        scope = self._scope(request.runtime)
        if scope is None:
            return None
        toolset = self._bind(scope.workspace, create=scope.create).toolset
        question = next(
            (m.text for m in reversed(request.messages) if isinstance(m, HumanMessage)), ""
        )
        texts = memory_context(toolset, question, days=self.days, limit=self.search_limit)
        return "<memquill-memory>\n" + "\n\n".join(texts) + "\n</memquill-memory>"

    @staticmethod
    def _with_memory(request: ModelRequest[Any], text: str | None) -> ModelRequest[Any]:
        if text is None:
            return request
        current = request.system_message
        if current is None:
            return request.override(system_message=SystemMessage(text))
        if isinstance(current.content, str):
            content: Any = f"{current.content}\n\n{text}" if current.content else text
        else:
            content = [*current.content, {"type": "text", "text": text}]
        return request.override(system_message=SystemMessage(content=content))

    def _record(self, state: AgentState[Any], runtime: Runtime[Any]) -> Extraction | None:
        scope = self._scope(runtime)
        if scope is None or not scope.record:
            return None
        session_id = self._session_id(scope)
        if not session_id:
            return None
        raw: list[BaseMessage] = list(state.get("messages", []))
        messages = to_source_messages(raw)
        turns = committed_turns(session_id, messages)
        if not turns or not messages or turns[-1].assistant_message_id != messages[-1].id:
            return None  # the run did not end with a finished reply
        bound = self._bind(scope.workspace, create=scope.create)
        if isinstance(self.source, RecordedMessages):
            self.source.record(session_id, messages)
        elif isinstance(self.source, CheckpointerSource) and runtime.execution_info is not None:
            # The checkpoint with the reply may still be being saved: these messages stand in.
            self.source.hold(session_id, runtime.execution_info.checkpoint_id, messages)
        try:
            bound.extraction.enqueue(turns[-1])
        except MemquillError as error:  # the host's turn is never undone or delayed by it
            _LOG.warning("MEMORY_JOB_ENQUEUE_FAILED: %s", error.code)
            return None
        return bound.extraction

    def _forget_future(self, future: Future[Any]) -> None:
        with self._lock:
            self._background.discard(future)
