"""Whose memory a LangChain run uses: what the run says about itself, and the app's answer.

An application serving many users supplies a resolver: it receives a :class:`RunScope` (the
run's ``thread_id``, ``user_id``, runtime context and ``configurable``) and returns a
:class:`MemoryScope` (the workspace and session the run reads from and records into) or
``None`` (no memory for this run). One user's memory then never reaches another user's run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from langgraph.config import get_config

__all__ = ["MemoryScope", "RunScope", "ScopeResolver", "run_scope"]


@dataclass(frozen=True, slots=True)
class RunScope:
    """What a run tells the resolver about itself.

    Attributes:
        thread_id: the run's ``thread_id`` (``None`` without one).
        user_id: ``configurable["user_id"]``, else the runtime context's ``user_id`` (an
            attribute or a key), else ``None``.
        context: the runtime context given to ``invoke(..., context=...)``.
        configurable: the run's ``configurable`` mapping.
    """

    thread_id: str | None
    user_id: str | None
    context: Any
    configurable: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """Whose memory a run uses.

    A scope that cannot be used fails the run: the middleware raises memquill's
    ``StorageError`` (code ``storage``: the folder is missing and may not be created, or
    cannot be created) or ``UnsafePathError`` (code ``unsafe_path``: not an absolute path to a
    folder) from the agent's ``invoke``, never answering without memory in silence.

    Attributes:
        workspace: the workspace folder, an absolute path (``~`` is expanded). The application
            maps its users to folders: memquill does not check that a user id is a safe name.
        session_id: the conversation's id in memquill (default: the thread id; with a
            checkpointer it must be the thread id, which is where the messages are read).
        record: record this run's turn for extraction (``False`` for automatic runs:
            heartbeats, scheduled tasks).
        create: create the workspace (and its missing parent folders, each ``0700``) when it
            does not exist yet, as a new user's first run needs; ``False`` requires it to
            exist.
    """

    workspace: str | os.PathLike[str]
    session_id: str | None = None
    record: bool = True
    create: bool = True


ScopeResolver = Callable[[RunScope], MemoryScope | None]
"""Maps a run to its memory scope; ``None``: no memory for this run."""


def run_scope(context: object) -> RunScope:
    """The current run's :class:`RunScope` (call it inside a graph node; ``context`` is the
    node's ``runtime.context``)."""
    configurable: Mapping[str, Any] = get_config().get("configurable") or {}
    thread: object = configurable.get("thread_id")
    user: object = configurable.get("user_id")
    if user is None and isinstance(context, Mapping):
        user = cast("Mapping[str, object]", context).get("user_id")
    elif user is None and context is not None:
        user = getattr(context, "user_id", None)
    return RunScope(
        None if thread is None else str(thread),
        None if user is None else str(user),
        context,
        configurable,
    )
