"""memquill's own plugin: the built-in contributions, registered like any third party's.

:func:`memquill.plugins.get_plugin_manager` registers this module under the name
``memquill.builtin`` before it loads any entry point. Keeping the built-ins on the same path as
plugins means a host that lists or filters plugins sees them too, and nothing in the core calls
the built-ins by a private route.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from memquill.plugins.hookspecs import hookimpl
from memquill.store import BUILTIN_DETECTORS, SecretDetector

PLUGIN_NAME: Final = "memquill.builtin"
"""The name this module is registered under."""


@hookimpl
def memquill_register_secret_detectors(register: Callable[[SecretDetector], None]) -> None:
    """Contribute :data:`~memquill.store.BUILTIN_DETECTORS`, in their documented order."""
    for detector in BUILTIN_DETECTORS:
        register(detector)
