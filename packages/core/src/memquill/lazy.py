"""Lazy package facades: a name's module is imported when the name is first used.

``import memquill`` must not load model assistance, extraction and the management page for an
application that only searches, and an adapter's package is imported whenever memquill loads
plugins (``memquill plugins``, an MCP server collecting secret detectors) though its framework
(LangChain, LlamaIndex, MCP) is only needed once a tool is built. :func:`lazy_exports` gives a
package ``__getattr__`` and ``__dir__`` (PEP 562) that import each name from its module on
first use. (Foundation: it imports nothing of memquill; adapters reach it as
:func:`memquill.plugins.lazy_exports`.)

A facade's ``__all__`` lists its public names: what users import, as the README,
``docs/`` and ``examples/`` show it (an adapter or plugin author's kit included), nothing more.
The facade also serves the core's own names: what only the CLI, the management page, the parts
above it and memquill's own adapters import (a part never imports another part's private
module), and names that were public once. Those resolve silently for code inside memquill and with a
``DeprecationWarning`` for anyone else, so a name leaves ``__all__`` without breaking a user
for a release (the CHANGELOG says so). Inside memquill is every module of its own
distributions: ``memquill`` and its parts, the adapters' packages (``memquill_langchain``,
``memquill_mcp``, …: every top-level package named ``memquill_*``) and the pytest plugin
``_memquill_pytest``; they still import only facades, never a private module. A name only
the part itself and its tests use stays in its private module, and tests import it from there.

A facade writes each name once, in its ``if TYPE_CHECKING:`` imports: they are its map (type
checkers read them, and :func:`lazy_exports` reads the same imports from the facade's compiled
code; the interpreter never runs them). A public name is imported plainly (``from
memquill.x._y import Name``) and written once more, in ``__all__``; the core's own is imported
``Name as Name`` and left out of ``__all__``.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from functools import cache
from types import CodeType, FrameType
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    homes: Mapping[str, str] | None = None,
    moved: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose names live in ``homes``.

    Called from the package's own code (its ``__init__``), after its imports.

    Args:
        package: the package's ``__name__``; its ``__all__`` (default: every name it serves)
            says which names are public.
        homes: every name the facade resolves → the module that defines it. By default the
            names the package's code imports (``from module import name``, absolute or
            relative, never renamed) but did not bind when it ran: its ``if TYPE_CHECKING:``
            imports, read from its compiled code at the first lookup. A public name is cached
            and listed by ``__dir__``; any other is the core's own: silent for a caller inside
            memquill (:func:`_inside_memquill`), a ``DeprecationWarning`` (never cached, so
            every use warns) for any other caller.
        moved: a name that was public here and now lives in another facade → that facade. It
            still resolves, with a ``DeprecationWarning`` naming its new home, but is no
            longer listed (a name is removed only after such a release; see the CHANGELOG).

    Example::

        if TYPE_CHECKING:
            from my_adapter.toolkit import Toolkit

        __all__ = ["Toolkit"]

        __getattr__, __dir__ = lazy_exports(__name__)
    """
    namespace = importlib.import_module(package).__dict__
    caller = sys._getframe(1)  # pyright: ignore[reportPrivateUsage]
    if homes is None and caller.f_globals is not namespace:
        raise TypeError(f"lazy_exports({package!r}) without homes runs in {package}'s own code")
    code = caller.f_code  # its imports are read at the first lookup, never at import
    served: dict[str, str] | None = None if homes is None else dict(homes)

    def served_names() -> dict[str, str]:
        nonlocal served
        if served is None:
            served = _skipped_imports(code, package)
        return served

    def public() -> set[str]:
        return set(namespace.get("__all__", served_names()))

    def __getattr__(name: str) -> Any:
        home = served_names().get(name)
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
        if not _inside_memquill(_caller(frame)):
            message = (
                f"{package}.{name} is no longer public and will be removed from {package} "
                f"in a future release (it lives in {home})"
            )
            warnings.warn(message, DeprecationWarning, stacklevel=level + 1)
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *public()})

    return __getattr__, __dir__


@cache
def installed(name: str) -> Any:
    """Module ``name`` if it is installed (imported at the first call), else ``None``: for an
    optional accelerator such as numpy, which memquill never depends on."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _skipped_imports(code: CodeType, package: str) -> dict[str, str]:
    """Each name ``code`` (``package``'s ``__init__``) imports with ``from module import name``
    → ``module``, made absolute. Its ``if TYPE_CHECKING:`` imports are the ones that matter:
    the names it imports when it runs are bound before any lookup reaches ``__getattr__``.
    Renamed imports (``name as other``), private names (``_name``), ``__future__`` and
    everything ``import module`` binds are left out.

    The compiled code (through :mod:`dis`, whose instructions are the same from one Python to
    the next for these statements), not the source, so a package installed without its ``.py``
    files serves its names too.
    """
    import dis  # the first lookup's, never the import's

    homes: dict[str, str] = {}
    pushed: list[object] = [None, None]  # what the last two instructions pushed (constants)
    module: str | None = None  # the module of the ``from`` import being read
    imported = ""  # the name the last instruction imported from it
    for instruction in dis.get_instructions(code):
        operation, value = instruction.opname, instruction.argval
        if operation == "EXTENDED_ARG":  # a long argument's prefix, part of what follows
            continue
        if operation == "IMPORT_NAME":
            # A ``from`` import pushes its level, then the names it takes (``import``: None).
            level, names = pushed
            module = None
            if isinstance(level, int) and isinstance(names, tuple):
                module = _absolute(str(value), level, package)
        elif (
            operation == "STORE_NAME"
            and value == imported  # not renamed
            and module not in (None, "__future__")
            and not imported.startswith("_")
        ):
            homes[imported] = module
        imported = str(value) if operation == "IMPORT_FROM" else ""
        constant = operation in ("LOAD_CONST", "LOAD_SMALL_INT")  # 3.14: small ints apart
        pushed = [pushed[1], value if constant else None]
    return homes


def _absolute(module: str, level: int, package: str) -> str:
    """``module`` imported ``level`` dots up from ``package``'s ``__init__``, made absolute."""
    if level == 0:
        return module
    base = package.rsplit(".", level - 1)[0] if level > 1 else package
    return f"{base}.{module}" if module else base


def _caller(frame: FrameType) -> str:
    """The name of the module whose code runs in ``frame``."""
    return str(frame.f_globals.get("__name__", ""))


def _inside_memquill(module: str) -> bool:
    """Whether ``module`` belongs to memquill's own distributions: ``memquill`` and its parts,
    an adapter's package (a top-level ``memquill_*``) or the pytest plugin (``_memquill_pytest``).
    A name is matched by its top-level package, so ``memquillish`` is not inside."""
    top = module.partition(".")[0]
    return top in ("memquill", "_memquill_pytest") or top.startswith("memquill_")
