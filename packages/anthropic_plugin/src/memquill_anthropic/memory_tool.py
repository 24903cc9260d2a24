"""Claude's memory tool (``memory_20250818``) with memquill as the store behind ``/memories``.

:class:`MemquillMemoryTool` and :class:`MemquillAsyncMemoryTool` are the SDK's
``BetaAbstractMemoryTool`` and ``BetaAsyncAbstractMemoryTool``: hand one to
``client.beta.messages.tool_runner(tools=[...])`` and the runner dispatches the model's
``view``, ``create``, ``str_replace``, ``insert``, ``delete`` and ``rename`` commands to it.
Each file under ``/memories`` is a named fact of the session's workspace (its key is the path
below ``/memories``), so what Claude keeps there is what ``memory_search``, the CLI, the
management page and every other adapter see, and every write goes through memquill's one write
path: under the store's lock, against the text it was computed from, with the session's secret
detectors, tombstones and limits. The rules are in :mod:`memquill_anthropic._commands`; the
differences from the SDK's ``BetaLocalFilesystemMemoryTool`` are listed in
``docs/adapters/anthropic.md``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Self

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from memquill import MemorySession, open_session
from memquill.tools import Access
from memquill_anthropic._commands import MemoryCommands

__all__ = ["MemquillAsyncMemoryTool", "MemquillMemoryTool"]


class _SessionTool:
    """What both tools share: their session and its commands, and :meth:`from_workspace`.

    Listed before the SDK's tool class, whose constructor it calls with ``cache_control``.
    """

    def __init__(
        self,
        session: MemorySession,
        *,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        # The SDK's BetaAbstractMemoryTool or BetaAsyncAbstractMemoryTool comes next in the MRO.
        super().__init__(cache_control=cache_control)  # pyright: ignore[reportCallIssue]
        self.session = session
        self._commands = MemoryCommands(session)

    @classmethod
    def from_workspace(
        cls,
        workspace: str | os.PathLike[str],
        session_id: str | None = None,
        access: Access = "read_write",
        authorize_write: Callable[[], bool] | None = None,
        *,
        store: str | None = None,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> Self:
        """The tool and its session in one call (:func:`memquill.open_session`, so every
        installed plugin's secret detectors guard the writes).

        Args:
            workspace: absolute path of the workspace folder.
            session_id: the host's trusted conversation id; writes need one.
            access: ``read`` (view only) or ``read_write``.
            authorize_write: asked at every write; return ``False`` to refuse (Plan mode).
            store: ``file`` or a ``postgresql://`` URL (default ``$MEMQUILL_STORE``, else the
                workspace's ``memory/records.md``).
            cache_control: as for the constructor.

        Raises:
            ValueError: ``access`` is neither ``read`` nor ``read_write``.
        """
        session = open_session(workspace, session_id, access, authorize_write, store=store)
        return cls(session, cache_control=cache_control)


class MemquillMemoryTool(_SessionTool, BetaAbstractMemoryTool):
    """The memory tool on a memquill session, for ``Anthropic().beta.messages.tool_runner``.

    Example::

        memory = MemquillMemoryTool.from_workspace("/home/me/notes", session_id="chat-42")
        runner = client.beta.messages.tool_runner(
            model=MODEL, max_tokens=1024, tools=[memory], messages=[...]
        )

    Args:
        session: who calls (its id is the writes' source; writes need one), on which
            workspace, with which access (``read`` refuses every write).
        cache_control: the tool definition's cache-control breakpoint, as the SDK takes it.
    """

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        """A file's numbered lines, or a directory's listing."""
        return self._commands.view(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        """A new file (an existing path is refused, as by the reference)."""
        return self._commands.create(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        """``old_str`` replaced by ``new_str`` in the current text, if it occurs exactly once."""
        return self._commands.str_replace(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        """``insert_text`` put before line ``insert_line`` of the current text."""
        return self._commands.insert(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        """A file forgotten, or a directory: every file under it, in one write."""
        return self._commands.delete(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        """A file or a directory moved to a new path that does not exist yet, in one write."""
        return self._commands.rename(command)

    def clear_all_memory(self) -> str:
        """Forget every file under ``/memories`` in one write (never called by the model)."""
        return self._commands.clear_all()


class MemquillAsyncMemoryTool(_SessionTool, BetaAsyncAbstractMemoryTool):
    """:class:`MemquillMemoryTool` for ``AsyncAnthropic().beta.messages.tool_runner``: each
    command runs on a worker thread, so the event loop keeps running while a write waits for
    the store's lock.

    Args:
        session: as for :class:`MemquillMemoryTool`.
        cache_control: as for :class:`MemquillMemoryTool`.
    """

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        """A file's numbered lines, or a directory's listing."""
        return await asyncio.to_thread(self._commands.view, command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        """A new file (an existing path is refused, as by the reference)."""
        return await asyncio.to_thread(self._commands.create, command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        """``old_str`` replaced by ``new_str`` in the current text, if it occurs exactly once."""
        return await asyncio.to_thread(self._commands.str_replace, command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        """``insert_text`` put before line ``insert_line`` of the current text."""
        return await asyncio.to_thread(self._commands.insert, command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        """A file forgotten, or a directory: every file under it, in one write."""
        return await asyncio.to_thread(self._commands.delete, command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        """A file or a directory moved to a new path that does not exist yet, in one write."""
        return await asyncio.to_thread(self._commands.rename, command)

    async def clear_all_memory(self) -> str:
        """Forget every file under ``/memories`` in one write (never called by the model)."""
        return await asyncio.to_thread(self._commands.clear_all)
