"""The plugin system: hooks, the manager, the adapter contract, and the plugin-aware session.

Plugin authors use :data:`hookimpl` with the hooks of :mod:`memquill.plugins.hookspecs`
(contribute adapters, other framework integrations and secret detectors, receive
model-assistance telemetry as :class:`ProviderEvent`), describe an adapter with
:class:`AdapterSpec` and an integration with :class:`IntegrationSpec`, and give their package
lazy exports with :func:`lazy_exports`. Hosts open sessions with
:func:`open_session`, so every plugin detector guards every write.
"""

from memquill.enhance import ProviderEvent
from memquill.plugins._adapters import AdapterHarness, AdapterSpec, HarnessResult, ToolDescriptor
from memquill.plugins._integrations import IntegrationSpec
from memquill.plugins._lazy import lazy_exports
from memquill.plugins._manager import (
    DISABLE_AUTOLOAD_ENV,
    ENTRY_POINT_GROUP,
    MemquillPluginManager,
    PluginFailure,
    PluginInfo,
    PluginReport,
    RegisteredAdapter,
    RegisteredDetector,
    RegisteredIntegration,
    get_plugin_manager,
    plugin_report,
    registered_adapters,
    secret_scanner,
    text_model,
)
from memquill.plugins._sessions import connect_telemetry, open_session
from memquill.plugins.hookspecs import hookimpl
from memquill.store import RegexDetector, SecretDetector

__all__ = [
    "DISABLE_AUTOLOAD_ENV",
    "ENTRY_POINT_GROUP",
    "AdapterHarness",
    "AdapterSpec",
    "HarnessResult",
    "IntegrationSpec",
    "MemquillPluginManager",
    "PluginFailure",
    "PluginInfo",
    "PluginReport",
    "ProviderEvent",
    "RegexDetector",
    "RegisteredAdapter",
    "RegisteredDetector",
    "RegisteredIntegration",
    "SecretDetector",
    "ToolDescriptor",
    "connect_telemetry",
    "get_plugin_manager",
    "hookimpl",
    "lazy_exports",
    "open_session",
    "plugin_report",
    "registered_adapters",
    "secret_scanner",
    "text_model",
]
