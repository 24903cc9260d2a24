"""Lazy package facades: a public name's module is imported when the name is first used.

``import memquill`` must not load model assistance, extraction and the management page for an
application that only searches, and an adapter's package is imported whenever memquill loads
plugins (``memquill plugins``, an MCP server collecting secret detectors) though its framework
(LangChain, LlamaIndex, MCP) is only needed once a tool is built. :func:`lazy_exports` gives a
package ``__getattr__`` and ``__dir__`` (PEP 562) that import each public name from its module
on first use. (Foundation: it imports nothing of memquill; adapters reach it as
:func:`memquill.plugins.lazy_exports`.)

A facade lists what is imported through it: by other parts of the core (which may not import
a part's private modules), the CLI, the adapters and users (the README, ``docs/``,
``examples/``), nothing more. A name only the part itself and its tests use stays in its
private module, and tests import it from there. A name leaves a facade only after a release in
which it still resolves with a ``DeprecationWarning`` (``moved=``, ``internal=``).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    homes: Mapping[str, str],
    moved: Mapping[str, str] | None = None,
    internal: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public names live in ``homes``.

    Args:
        package: the package's ``__name__``.
        homes: public name → the module that defines it.
        moved: a name that was public here and now lives in another facade → that facade. It
            still resolves, with a ``DeprecationWarning`` naming its new home, but is no
            longer listed (a name is removed only after such a release; see the CHANGELOG).
        internal: a name that was public here and is no longer public (only the package's own
            code and its tests use it) → the module that defines it. It still resolves, with
            a ``DeprecationWarning`` saying it will be removed from ``package``, but is no
            longer listed and is never cached, so every use warns.

    Example::

        __getattr__, __dir__ = lazy_exports(__name__, {"Toolkit": "my_adapter.toolkit"})
    """
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None and moved and name in moved:
            where = moved[name]
            message = f"{package}.{name} moved to {where}.{name}; import it from there"
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(where), name)
        if home is None and internal and name in internal:
            message = (
                f"{package}.{name} is no longer public and will be removed from {package} "
                "in a future release"
            )
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(internal[name]), name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
