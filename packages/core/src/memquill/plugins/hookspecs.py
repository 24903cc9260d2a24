"""The plugin contract: every hook memquill calls, and the markers plugins use.

This module holds specifications only. A plugin is a module (or object) whose functions are
decorated with :data:`hookimpl` and named after a hook below; a distribution makes it known
through the ``memquill`` entry-point group::

    [project.entry-points.memquill]
    langchain = "memquill_langchain.plugin"

Conventions, shared by every hook:

- Names carry the ``memquill_`` prefix; pluggy matches implementations by name.
- Hooks are called with keyword arguments only. An implementation may accept fewer
  parameters than the specification, never more or differently named ones.
- Contribution hooks take a ``register`` callback: call it once per contribution, and return
  ``None``. memquill's own built-ins are contributed the same way.
- Hooks are synchronous and cheap: build objects, do not open files or networks. A hook that
  raises is reported against its plugin (``memquill plugins``) and the other plugins still count.

``docs/plugins.md`` documents each hook with an example.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import pluggy

if TYPE_CHECKING:
    from memquill.enhance import ProviderEvent, TextModel
    from memquill.plugins._adapters import AdapterSpec, IntegrationSpec
    from memquill.store import SecretDetector

__all__ = [
    "PROJECT_NAME",
    "hookimpl",
    "hookspec",
    "memquill_register_adapters",
    "memquill_register_integrations",
    "memquill_register_secret_detectors",
    "memquill_register_text_models",
    "memquill_report_event",
]

PROJECT_NAME: Final = "memquill"
"""The pluggy project name, which is also the entry-point group plugins are found in."""

hookspec: Final = pluggy.HookspecMarker(PROJECT_NAME)
"""Marks a hook specification (used in this module only)."""

hookimpl: Final = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin's implementation of a hook: ``@hookimpl def memquill_register_...``."""


# -------------------------------------------------------------------------------------------------
# Contribution hooks
# -------------------------------------------------------------------------------------------------


@hookspec
def memquill_register_adapters(register: Callable[[AdapterSpec], None]) -> None:
    """Register the framework adapters this plugin provides.

    Called every time a host lists adapters (``memquill plugins``, the parity suite, a host
    choosing a framework). Call ``register`` once per adapter. Adapter names are unique: when two
    plugins register the same name, the implementation pluggy calls first keeps it (plugins
    registered later are called first; ``tryfirst``/``trylast`` adjust that) and the other is
    reported as a duplicate.

    Args:
        register: takes one :class:`~memquill.plugins.AdapterSpec`. Its ``open`` builds the
            adapter's harness for a :class:`~memquill.tools.MemorySession`; importing the
            framework belongs inside ``open`` (or the plugin module), never in the core.

    Use in plugins:
        Implement it in the module the ``memquill`` entry point names, with ``@hookimpl``.
    """


@hookspec
def memquill_register_integrations(register: Callable[[IntegrationSpec], None]) -> None:
    """Register the framework integrations this plugin provides that are not tool adapters.

    Called when a host lists what is installed (``memquill plugins``). Call ``register`` once
    per integration (a LangGraph store, a memory block). Names are unique as adapters' are.
    Registering is how people find an integration; it never imports the framework: a spec
    names its distributions, and ``memquill plugins`` says which are missing.

    Args:
        register: takes one :class:`~memquill.plugins.IntegrationSpec`.

    Use in plugins:
        Implement it in the module the ``memquill`` entry point names, with ``@hookimpl``.
    """


@hookspec
def memquill_register_secret_detectors(register: Callable[[SecretDetector], None]) -> None:
    """Register credential detectors that every write path runs before saving.

    Called when a host builds its :class:`~memquill.store.SecretScanner` from the plugin
    manager. Call ``register`` once per detector. Detectors only add refusals: content that
    any registered detector flags is never saved (error code ``secret``). The built-in
    detectors arrive through this same hook from the plugin ``memquill.plugins._manager``.

    Args:
        register: takes one :class:`~memquill.store.SecretDetector`: an object with a stable
            ``name`` (shown in findings, never the matched text) and ``detect(text) -> bool``.
            It must be pure and fast; it runs on every write.

    Use in plugins:
        Implement it in the module the ``memquill`` entry point names, with ``@hookimpl``.
    """


@hookspec
def memquill_register_text_models(
    register: Callable[[Callable[[object], TextModel | None]], None],
) -> None:
    """Register converters that make a memquill text model from a framework's own model.

    Called when a host names a model object that is not a :class:`~memquill.enhance.TextModel`
    itself (``memquill extract --model myapp:chat_model`` with a LangChain chat model, a LlamaIndex
    LLM). Call ``register`` once per converter. The first converter that answers wins.

    Args:
        register: takes a function ``convert(model) -> TextModel | None`` that returns a text
            model for the objects of its framework and ``None`` for anything else. Import the
            framework inside ``convert``, never when the plugin loads.

    Use in plugins:
        Implement it in the module the ``memquill`` entry point names, with ``@hookimpl``.
    """


# -------------------------------------------------------------------------------------------------
# Notification hooks
# -------------------------------------------------------------------------------------------------


@hookspec
def memquill_report_event(event: ProviderEvent) -> None:
    """Receive a reportable model-assistance failure (telemetry).

    Called when a model call made for memquill (re-ranking, extraction) fails in a way an
    operator can act on: transient upstream failures (5xx, timeouts, connection errors),
    protocol faults and unknown failures. Credentials, other 4xx answers (429 included),
    cancellations and unsupported models are never reported. Transient failures are budgeted:
    at most 3 events per (root cause, scene, provider) group per 15 minutes; the next event of
    a group carries the count left out in ``event.suppressed``.

    Args:
        event: a :class:`~memquill.enhance.ProviderEvent`: enums and one integer only, never a
            prompt, path, key or error message. ``event.attributes()`` gives them flat.

    Use in plugins:
        Forward the event to your telemetry (an OpenTelemetry span event or counter, a Sentry
        message); ``docs/model-assistance.md`` shows both. Keep it fast and never raise: a
        failing implementation is logged and skipped.
    """
