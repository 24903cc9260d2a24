"""The plugin system: hooks, the manager, the adapter contract, and the plugin-aware session.

Plugin authors use :data:`memquill.hookimpl` with the hooks of :mod:`memquill.plugins.hookspecs`
(contribute adapters, other framework integrations and secret detectors, receive model-assistance
telemetry as :class:`ProviderEvent`), and describe an adapter with :class:`AdapterSpec` and an
integration with :class:`IntegrationSpec`. Hosts open sessions with :func:`memquill.open_session`,
so every plugin detector guards every write. memquill's own adapters also take ``hookimpl``,
``open_session`` and ``lazy_exports`` (their package's lazy exports) from here: the core's own
names, outside ``__all__``.

Names are imported on first use (:func:`memquill.lazy.lazy_exports`), so an adapter that only
needs ``lazy_exports`` or ``hookimpl`` loads nothing else.
"""

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memquill.enhance import ProviderEvent
    from memquill.lazy import lazy_exports as lazy_exports
    from memquill.plugins._adapters import (
        AdapterHarness,
        AdapterSpec,
        HarnessResult as HarnessResult,
        IntegrationSpec,
        ToolDescriptor as ToolDescriptor,
    )
    from memquill.plugins._manager import (
        DISABLE_AUTOLOAD_ENV as DISABLE_AUTOLOAD_ENV,
        ENTRY_POINT_GROUP as ENTRY_POINT_GROUP,
        MemquillPluginManager,
        PluginFailure,
        PluginInfo as PluginInfo,
        PluginReport as PluginReport,
        RegisteredAdapter as RegisteredAdapter,
        RegisteredDetector as RegisteredDetector,
        RegisteredIntegration as RegisteredIntegration,
        get_plugin_manager,
        plugin_report,
        registered_adapters,
        secret_scanner,
        text_model,
    )
    from memquill.plugins._sessions import (
        connect_telemetry as connect_telemetry,
        open_session as open_session,
    )
    from memquill.plugins.hookspecs import hookimpl as hookimpl
    from memquill.store import RegexDetector, SecretDetector

__all__ = [
    "AdapterHarness",
    "AdapterSpec",
    "IntegrationSpec",
    "MemquillPluginManager",
    "PluginFailure",
    "ProviderEvent",
    "RegexDetector",
    "SecretDetector",
    "get_plugin_manager",
    "plugin_report",
    "registered_adapters",
    "secret_scanner",
    "text_model",
]

__getattr__, __dir__ = _lazy_exports(__name__)
