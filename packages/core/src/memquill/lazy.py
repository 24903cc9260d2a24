"""Lazy package facades: a name's module is imported when the name is first used.

``import memquill`` must not load model assistance, extraction and the management page for an
application that only searches, and an adapter's package is imported whenever memquill loads
plugins (``memquill plugins``, an MCP server collecting secret detectors) though its framework
(LangChain, LlamaIndex, MCP) is only needed once a tool is built. :func:`lazy_exports` gives a
package ``__getattr__`` and ``__dir__`` (PEP 562) that import each name from its module on
first use. (Foundation: it imports nothing of memquill; adapters reach it as
:func:`memquill.plugins.lazy_exports`.)

A facade's ``__all__`` lists its public names: what the CLI, the adapters and users (the
README, ``docs/``, ``examples/``) import, nothing more. The facade also serves the core's own
names: what the parts above it import (a part never imports another part's private module),
and names that were public once. Those resolve silently for code inside memquill and with a
``DeprecationWarning`` for anyone else, so a name leaves ``__all__`` without breaking a user
for a release (the CHANGELOG says so). A name only the part itself and its tests use stays in
its private module, and tests import it from there.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    homes: Mapping[str, str],
    moved: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose names live in ``homes``.

    Args:
        package: the package's ``__name__``; its ``__all__`` (default: every name in
            ``homes``) says which names are public.
        homes: every name the facade resolves → the module that defines it. A public name is
            cached and listed by ``__dir__``; any other is the core's own: silent for a caller
            inside memquill, a ``DeprecationWarning`` (never cached, so every use warns) for
            any other caller.
        moved: a name that was public here and now lives in another facade → that facade. It
            still resolves, with a ``DeprecationWarning`` naming its new home, but is no
            longer listed (a name is removed only after such a release; see the CHANGELOG).

    Example::

        __getattr__, __dir__ = lazy_exports(__name__, {"Toolkit": "my_adapter.toolkit"})
    """
    namespace = importlib.import_module(package).__dict__

    def public() -> set[str]:
        return set(namespace.get("__all__", homes))

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None and moved and name in moved:
            where = moved[name]
            message = f"{package}.{name} moved to {where}.{name}; import it from there"
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(where), name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        if name in public():
            namespace[name] = value  # later lookups skip this function
            return value
        # Who asked: the first frame outside the import system (``from package import name``
        # asks through importlib's ``_handle_fromlist`` first).
        level, frame = 1, sys._getframe(1)  # pyright: ignore[reportPrivateUsage]
        while frame.f_back is not None and _caller(frame).startswith("importlib"):
            level, frame = level + 1, frame.f_back
        if not _caller(frame).startswith("memquill."):
            message = (
                f"{package}.{name} is no longer public and will be removed from {package} "
                f"in a future release (it lives in {home})"
            )
            warnings.warn(message, DeprecationWarning, stacklevel=level + 1)
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *public()})

    return __getattr__, __dir__


def _caller(frame: FrameType) -> str:
    """The name of the module whose code runs in ``frame``."""
    return str(frame.f_globals.get("__name__", ""))
