"""The plugin manager factory, memquill's own plugin, and what installed plugins contribute.

:func:`get_plugin_manager` builds a fresh manager on every call (nothing is global and nothing
happens at import): it adds :mod:`memquill.plugins.hookspecs`, registers the built-in plugin
(:mod:`memquill.plugins._manager`), then loads the ``memquill`` entry-point group one plugin
at a time.
A plugin that fails to import, to register or to validate is recorded as a
:class:`PluginFailure` and left out; the others still load. ``MEMQUILL_DISABLE_PLUGIN_AUTOLOAD=1``
skips entry points entirely (only the built-ins remain).

:func:`plugin_report` asks each plugin's hooks separately, so every adapter and detector is
attributed to the plugin that registered it, and a hook that raises only loses that plugin's
contributions.
"""

from __future__ import annotations

import importlib.metadata
import os
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, cast

import pluggy

from memquill.plugins import hookspecs
from memquill.plugins._adapters import AdapterSpec, IntegrationSpec
from memquill.plugins.hookspecs import PROJECT_NAME, hookimpl
from memquill.store import BUILTIN_DETECTORS, SecretDetector, SecretScanner

PLUGIN_NAME: Final = "memquill.builtin"
"""The name memquill's own plugin is registered under."""


class Builtin:
    """memquill's own plugin: the built-in contributions, registered like any third party's.

    :func:`get_plugin_manager` registers it under :data:`PLUGIN_NAME` before it loads any entry
    point. Keeping the built-ins on the same path as plugins means a host that lists or filters
    plugins sees them too, and nothing in the core calls the built-ins by a private route.
    """

    @hookimpl
    def memquill_register_secret_detectors(
        self, register: Callable[[SecretDetector], None]
    ) -> None:
        """Contribute :data:`~memquill.store.BUILTIN_DETECTORS`, in their documented order."""
        for detector in BUILTIN_DETECTORS:
            register(detector)


if typing.TYPE_CHECKING:
    from memquill.enhance import TextModel


ENTRY_POINT_GROUP: Final = PROJECT_NAME
"""The entry-point group plugin distributions declare (``[project.entry-points.memquill]``)."""

DISABLE_AUTOLOAD_ENV: Final = "MEMQUILL_DISABLE_PLUGIN_AUTOLOAD"
"""Set to ``1`` (or ``true``/``yes``/``on``) to load no entry-point plugins."""

_OFF_VALUES: Final = frozenset({"", "0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class PluginFailure:
    """A plugin that could not be loaded or whose hook failed; it contributes nothing.

    Attributes:
        plugin: the entry-point (or registered) name of the plugin.
        message: what went wrong, for a person.
    """

    plugin: str
    message: str


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """A registered plugin.

    Attributes:
        name: the name it is registered under (the entry-point name for installed plugins).
        distribution: the distribution that ships it, when known.
        version: that distribution's version, when known.
    """

    name: str
    distribution: str | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class RegisteredAdapter:
    """An adapter and the plugin that registered it."""

    plugin: str
    adapter: AdapterSpec


@dataclass(frozen=True, slots=True)
class RegisteredIntegration:
    """An integration and the plugin that registered it."""

    plugin: str
    integration: IntegrationSpec


@dataclass(frozen=True, slots=True)
class RegisteredDetector:
    """A secret detector and the plugin that registered it."""

    plugin: str
    detector: SecretDetector


@dataclass(frozen=True, slots=True)
class PluginReport:
    """Everything the registered plugins contribute, and everything that went wrong.

    Attributes:
        plugins: registered plugins, sorted by name.
        adapters: adapters sorted by name, one per name.
        detectors: detectors in the order a scanner runs them.
        failures: load failures first, then hook failures and duplicates.
        integrations: integrations sorted by name, one per name.
    """

    plugins: tuple[PluginInfo, ...]
    adapters: tuple[RegisteredAdapter, ...]
    detectors: tuple[RegisteredDetector, ...]
    failures: tuple[PluginFailure, ...]
    integrations: tuple[RegisteredIntegration, ...] = ()


class MemquillPluginManager(pluggy.PluginManager):
    """A pluggy manager for the ``memquill`` project that remembers how its plugins loaded."""

    def __init__(self) -> None:
        super().__init__(PROJECT_NAME)
        self.load_failures: list[PluginFailure] = []
        """Entry points that could not be loaded, in the order they were tried."""
        self.distributions: dict[str, tuple[str, str]] = {}
        """Plugin name → (distribution, version) for plugins that came from a distribution."""


def get_plugin_manager(load_entrypoints: bool = True) -> MemquillPluginManager:
    """A new plugin manager with the built-ins and (unless disabled) the installed plugins.

    Args:
        load_entrypoints: load the ``memquill`` entry-point group. Ignored (treated as
            ``False``) when ``MEMQUILL_DISABLE_PLUGIN_AUTOLOAD`` is set to a true value.

    Raises:
        pluggy.PluginValidationError: only if memquill's own built-in plugin is invalid.
    """
    pm = MemquillPluginManager()
    pm.add_hookspecs(hookspecs)
    pm.register(Builtin(), name=PLUGIN_NAME)
    pm.distributions[PLUGIN_NAME] = (PROJECT_NAME, _own_version())
    pm.check_pending()
    if load_entrypoints and not _autoload_disabled():
        _load_entry_points(pm)
    pm.check_pending()
    return pm


def plugin_report(pm: MemquillPluginManager) -> PluginReport:
    """Call every plugin's contribution hooks and collect the results and the failures."""
    failures = list(pm.load_failures)
    adapters: dict[str, RegisteredAdapter] = {}
    for plugin, item in _contributions(pm, "memquill_register_adapters", failures):
        if not isinstance(item, AdapterSpec):
            failures.append(PluginFailure(plugin, f"registered {_kind(item)}, not an AdapterSpec"))
        elif item.name in adapters:
            kept = adapters[item.name].plugin
            message = f"adapter {item.name!r} is already registered by {kept!r}; ignored"
            failures.append(PluginFailure(plugin, message))
        else:
            adapters[item.name] = RegisteredAdapter(plugin, item)
    integrations: dict[str, RegisteredIntegration] = {}
    for plugin, item in _contributions(pm, "memquill_register_integrations", failures):
        if not isinstance(item, IntegrationSpec):
            message = f"registered {_kind(item)}, not an IntegrationSpec"
            failures.append(PluginFailure(plugin, message))
        elif item.name in integrations:
            kept = integrations[item.name].plugin
            message = f"integration {item.name!r} is already registered by {kept!r}; ignored"
            failures.append(PluginFailure(plugin, message))
        else:
            integrations[item.name] = RegisteredIntegration(plugin, item)
    detectors: list[RegisteredDetector] = []
    for plugin, item in _contributions(pm, "memquill_register_secret_detectors", failures):
        if isinstance(getattr(item, "name", None), str) and callable(getattr(item, "detect", None)):
            detectors.append(RegisteredDetector(plugin, cast("SecretDetector", item)))
        else:
            message = f"registered {_kind(item)}, not a detector (name and detect(text))"
            failures.append(PluginFailure(plugin, message))
    plugins = [
        PluginInfo(name, *pm.distributions.get(name, (None, None)))
        for name, plugin in sorted(pm.list_name_plugin(), key=lambda pair: pair[0])
        if plugin is not None  # a blocked name maps to None
    ]
    return PluginReport(
        plugins=tuple(plugins),
        adapters=tuple(adapters[name] for name in sorted(adapters)),
        detectors=tuple(detectors),
        failures=tuple(failures),
        integrations=tuple(integrations[name] for name in sorted(integrations)),
    )


def registered_adapters(pm: MemquillPluginManager) -> list[AdapterSpec]:
    """The installed adapters, sorted by name (see :func:`plugin_report` for duplicates)."""
    return [entry.adapter for entry in plugin_report(pm).adapters]


def secret_scanner(pm: MemquillPluginManager) -> SecretScanner:
    """A scanner running every detector the plugins registered, built-ins included."""
    return SecretScanner(entry.detector for entry in plugin_report(pm).detectors)


def _autoload_disabled() -> bool:
    return os.environ.get(DISABLE_AUTOLOAD_ENV, "").strip().lower() not in _OFF_VALUES


def _own_version() -> str:
    try:
        return importlib.metadata.version(PROJECT_NAME)
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "unknown"


def _load_entry_points(pm: MemquillPluginManager) -> None:
    # Sorted, so which plugin wins a name does not depend on directory listing order.
    found = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    for entry in sorted(found, key=lambda e: (e.name, e.value)):
        if pm.is_blocked(entry.name):
            continue
        if pm.has_plugin(entry.name):
            message = f"a plugin named {entry.name!r} is already registered; {entry.value} skipped"
            pm.load_failures.append(PluginFailure(entry.name, message))
            continue
        try:
            pm.register(entry.load(), name=entry.name)
            pm.check_pending()
        except Exception as error:  # noqa: BLE001 - any error in a plugin is reported, not fatal
            pm.unregister(name=entry.name)
            pm.load_failures.append(PluginFailure(entry.name, _describe(error)))
            continue
        if entry.dist is not None:
            pm.distributions[entry.name] = (entry.dist.name, entry.dist.version)


def text_model(model: object, pm: MemquillPluginManager | None = None) -> TextModel | None:
    """``model`` as a :class:`~memquill.enhance.TextModel`: itself, or what the first plugin
    converter that knows its framework makes of it (``None``: nothing does). A converter that
    raises is skipped, as a failing plugin is."""
    from memquill.enhance import TextModel  # model assistance loads only when a model is given

    if isinstance(model, TextModel):
        return model
    manager = pm if pm is not None else get_plugin_manager()
    for _, convert in _contributions(manager, "memquill_register_text_models", []):
        if not callable(convert):
            continue
        try:
            converted: object = convert(model)
        except Exception:  # noqa: BLE001,S112 - a broken converter loses only its own answer
            continue
        if isinstance(converted, TextModel):
            return converted
    return None


def _contributions(
    pm: MemquillPluginManager, hook_name: str, failures: list[PluginFailure]
) -> list[tuple[str, object]]:
    """``(plugin name, item)`` for each ``register(item)``, plugin by plugin, in call order."""
    caller: pluggy.HookCaller = getattr(pm.hook, hook_name)
    everyone = pm.get_plugins()
    done: list[object] = []
    collected: list[tuple[str, object]] = []
    for impl in reversed(caller.get_hookimpls()):  # pluggy calls the last one first
        if impl.wrapper or impl.hookwrapper or any(impl.plugin is seen for seen in done):
            continue
        done.append(impl.plugin)
        others = [plugin for plugin in everyone if plugin is not impl.plugin]
        items: list[object] = []
        register: Callable[[object], None] = items.append
        try:
            pm.subset_hook_caller(hook_name, remove_plugins=others)(register=register)
        except Exception as error:  # noqa: BLE001 - a broken plugin loses only its own items
            failures.append(PluginFailure(impl.plugin_name, f"{hook_name}: {_describe(error)}"))
            continue
        collected.extend((impl.plugin_name, item) for item in items)
    return collected


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def _kind(item: object) -> str:
    return type(item).__name__
