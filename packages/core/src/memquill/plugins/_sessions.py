"""``open_session``: the plugin-aware way every surface opens a :class:`MemorySession`.

A session built directly guards writes with the built-in secret detectors only. Every surface
memquill ships (the CLI, the adapters' ``from_workspace`` factories, the MCP server, the demo)
opens its session here instead, so the detectors that installed plugins register through
``memquill_register_secret_detectors`` refuse content on every write path. The plugin manager
is built once per call; sessions derived with :meth:`MemorySession.with_session_id` keep the
scanner.

The workspace is checked here, so a factory given a folder that does not exist (or is not a
folder) fails when it is called, not at the first tool call; the default folder
(``memquill/workspace`` in the user data directory) is the exception, created on first write.

Given a ``model``, the session re-ranks search candidates with it (a
:class:`~memquill.enhance.ModelRanker` on the process's auxiliary runner), and that runner's
failures reach every plugin's ``memquill_report_event`` hook. Given an ``embedder``, it does the
same with a :class:`~memquill.semantic.SemanticRanker` (semantic recall).

Plugins only guard writes and hear of model failures, so a ``read`` session with neither a
model nor an embedder never builds a manager, and importing this module loads neither pluggy
nor the entry-point machinery.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from memquill.paths import canonical_workspace, fallback_workspace
from memquill.tools import MemorySession

if typing.TYPE_CHECKING:
    from memquill.enhance import AuxiliaryRunner, ProviderEvent, TextModel
    from memquill.plugins._manager import MemquillPluginManager
    from memquill.semantic import Embedder
    from memquill.tools import Access


_LOGGER = "memquill.plugins"
"""Where a plugin that fails to load is reported (:mod:`logging` loads only then)."""


def open_session(
    workspace: str | os.PathLike[str],
    session_id: str | None = None,
    access: Access = "read_write",
    authorize_write: Callable[[], bool] | None = None,
    *,
    plugins: MemquillPluginManager | None = None,
    lock_timeout: float = 5.0,
    now: Callable[[], datetime] | None = None,
    store: str | None = None,
    model: TextModel | None = None,
    runner: AuxiliaryRunner | None = None,
    embedder: Embedder | None = None,
    capacity: int | None = None,
) -> MemorySession:
    """A session on ``workspace`` whose writes run every installed plugin's secret detectors.

    Args:
        workspace: the workspace folder (``~`` is expanded).
        session_id: the host's trusted id of the conversation; writes of tools need one.
        access: ``read`` or ``read_write``.
        authorize_write: asked at every write; return ``False`` to refuse (Plan mode).
        plugins: the plugin manager to take detectors from (default: a new one, loading the
            installed plugins unless ``MEMQUILL_DISABLE_PLUGIN_AUTOLOAD`` is set).
        lock_timeout: seconds a write waits for another writer.
        now: the clock (UTC); injectable for tests.
        store: where the records live: ``"file"`` or a ``postgresql://`` URL; default
            ``$MEMQUILL_STORE``, else the workspace's ``memory/records.md``.
        model: the host's model, to re-rank ``memory_search`` candidates (optional model
            assistance; ``docs/model-assistance.md``). Without one, search is keyword order.
        runner: the auxiliary runner model calls go through (default: the process's).
        embedder: the host's embedding model, for semantic recall: search re-orders its
            keyword candidates with similarity (``docs/ranking.md``). Not with ``model``.
        capacity: the largest records file, in bytes (whole MiB, 1 to 64; default: the
            workspace's ``.assistant/config.json`` ``store.capacityMiB``, else 2 MiB).

    A plugin that fails to load is logged on ``memquill.plugins`` and left out; the others
    still guard writes. A ``read`` session never writes, so it loads no plugins unless
    ``plugins`` is given, or a ``model`` whose failures plugins may want to hear of.

    Raises:
        StorageError: the workspace does not exist (unless it is the default folder).
        UnsafePathError: it is relative, or not a folder.
        ValueError: both a ``model`` and an ``embedder``.
    """
    if model is not None and embedder is not None:
        raise ValueError("a session ranks with a model or an embedder, not both")
    root = Path(workspace).expanduser()
    if root != fallback_workspace() or os.path.lexists(root):
        canonical_workspace(root)
    scanner = None
    manager = plugins
    if access == "read_write" or plugins is not None or model is not None or embedder is not None:
        # Loaded only here: a read session that needs no plugin never loads pluggy.
        from memquill.plugins._manager import get_plugin_manager, plugin_report, secret_scanner

        manager = plugins if plugins is not None else get_plugin_manager()
        for failure in plugin_report(manager).failures:
            import logging  # only a failure is logged: importing a session loads no logging

            logging.getLogger(_LOGGER).warning("plugin %s: %s", failure.plugin, failure.message)
        scanner = secret_scanner(manager)
    ranker = None
    if model is not None:
        assert manager is not None
        from memquill.enhance import ModelRanker  # model assistance loads only when used

        runner = connect_telemetry(manager, runner)
        ranker = ModelRanker(model, runner=runner)
    session = MemorySession(
        root,
        session_id,
        access,
        authorize_write,
        lock_timeout=lock_timeout,
        now=now,
        secrets=scanner,
        store=store,
        ranker=ranker,
        capacity=capacity,
    )
    if embedder is not None:
        # Imported here: a keyword session never loads semantic recall or model assistance.
        from memquill.semantic import SemanticRanker

        assert manager is not None
        runner = connect_telemetry(manager, runner)
        session = session.with_ranker(SemanticRanker(embedder, session.query, runner=runner))
    return session


def connect_telemetry(
    manager: MemquillPluginManager, runner: AuxiliaryRunner | None = None
) -> AuxiliaryRunner:
    """Send ``runner``'s model-failure events to ``manager``'s ``memquill_report_event`` hook.

    ``runner`` defaults to the process's; it is returned. Connecting again replaces the
    previous manager, so events are never delivered twice.
    """
    from memquill.enhance import default_runner

    runner = runner or default_runner()
    runner.telemetry.connect("plugins", _reporter(manager))
    return runner


def _reporter(manager: MemquillPluginManager) -> Callable[[ProviderEvent], None]:
    def report(event: ProviderEvent) -> None:
        manager.hook.memquill_report_event(event=event)

    return report
