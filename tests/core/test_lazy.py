"""Lazy facades (:mod:`memquill.lazy`): a name outside ``__all__`` is the core's own.

The parts of the core import each other's names through the facades, silently; a name that
is not public (the core's own, or one that left a facade's public list) resolves for anyone
else with a ``DeprecationWarning`` on every use, and is not listed by ``dir()``. A facade's
map is its ``if TYPE_CHECKING:`` imports, read from its compiled code (or, as before, a map
given to :func:`~memquill.lazy.lazy_exports`).
"""

from __future__ import annotations

import importlib
import py_compile
import sys
import textwrap
import types
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.meta.facade_imports import type_checking_imports

from memquill.lazy import _skipped_imports  # pyright: ignore[reportPrivateUsage]

FACADES = [
    "memquill.enhance",
    "memquill.index",
    "memquill.lifecycle",
    "memquill.manage",
    "memquill.plugins",
    "memquill.query",
    "memquill.semantic",
    "memquill.store",
    "memquill.sync",
    "memquill.testing",
    "memquill.tools",
    "memquill.web",
]
FACADE_FORMS = {
    # The facades' form: the imports type checkers read are the map.
    "imports": """
        import typing

        from memquill.lazy import lazy_exports as _lazy_exports

        if typing.TYPE_CHECKING:
            from lazy_demo._impl import hidden as hidden, shown

        __all__ = ["shown"]

        __getattr__, __dir__ = _lazy_exports(__name__)
        """,
    # A map given to lazy_exports, as adapters outside memquill may still write it.
    "map": """
        from memquill.lazy import lazy_exports as _lazy_exports

        __all__ = ["shown"]

        __getattr__, __dir__ = _lazy_exports(
            __name__,
            {"shown": "lazy_demo._impl", "hidden": "lazy_demo._impl"},
        )
        """,
}


def _demo_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, init: str) -> Path:
    """A real package on disk whose facade has one public and one internal name."""
    root = tmp_path / "lazy_demo"
    root.mkdir()
    (root / "_impl.py").write_text("shown = 'shown'\nhidden = 'hidden'\n", encoding="utf-8")
    (root / "__init__.py").write_text(textwrap.dedent(init), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("lazy_demo", "lazy_demo._impl"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return root


@pytest.fixture(params=sorted(FACADE_FORMS))
def package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[types.ModuleType]:
    _demo_package(tmp_path, monkeypatch, FACADE_FORMS[request.param])
    try:
        yield importlib.import_module("lazy_demo")
    finally:
        for name in ("lazy_demo", "lazy_demo._impl"):
            sys.modules.pop(name, None)


def test_an_internal_name_resolves_with_a_warning_every_time(package: types.ModuleType) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert package.shown == "shown"  # a public name never warns
    for _ in range(2):  # never cached: the second use warns too
        with pytest.warns(DeprecationWarning, match="lazy_demo.hidden is no longer public"):
            assert package.hidden == "hidden"
    assert "shown" in dir(package)
    assert "hidden" not in dir(package)
    assert "hidden" not in vars(package)
    with pytest.raises(AttributeError):
        package.missing  # noqa: B018 - the lookup is the test


def test_an_internal_name_is_silent_for_the_core(package: types.ModuleType) -> None:
    # ``from package import name`` asks through importlib first, then from the importer.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found: dict[str, object] = {"__name__": "memquill.some_part._module"}
        exec("from lazy_demo import hidden", found)
    assert found["hidden"] == "hidden"
    with pytest.warns(DeprecationWarning, match="lazy_demo.hidden is no longer public"):
        exec("from lazy_demo import hidden", {"__name__": "an_application"})


def _importer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> str:
    """A real top-level package ``name`` that takes the internal name at its import."""
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("from lazy_demo import hidden\n", encoding="utf-8")
    monkeypatch.delitem(sys.modules, name, raising=False)
    return name


@pytest.mark.parametrize("name", ["memquill_demo_adapter", "memquill_demo_adapter.tools"])
def test_an_internal_name_is_silent_for_memquills_own_adapters(
    package: types.ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """An adapter's package (``memquill_*``) is one of memquill's distributions: the names a
    facade serves to memquill's own packages are served to it without a warning."""
    top = _importer(tmp_path, monkeypatch, "memquill_demo_adapter")
    if name != top:  # a module inside the adapter's package
        (tmp_path / top / "__init__.py").write_text("", encoding="utf-8")
        (tmp_path / top / "tools.py").write_text("from lazy_demo import hidden\n", "utf-8")
        monkeypatch.delitem(sys.modules, name, raising=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert importlib.import_module(name).hidden == "hidden"
    finally:
        for module in (name, top):
            sys.modules.pop(module, None)


@pytest.mark.parametrize("name", ["acme_agents", "memquillish", "memquills_fork"])
def test_an_internal_name_warns_a_third_party_package(
    package: types.ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Any other package, however close its name, is outside memquill."""
    _importer(tmp_path, monkeypatch, name)
    try:
        with pytest.warns(DeprecationWarning, match="lazy_demo.hidden is no longer public"):
            assert importlib.import_module(name).hidden == "hidden"
    finally:
        sys.modules.pop(name, None)


def test_a_package_without_its_sources_serves_its_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The map is read from the compiled code, so a package shipped as ``.pyc`` files only (a
    frozen application) resolves its names as well."""
    root = _demo_package(tmp_path, monkeypatch, FACADE_FORMS["imports"])
    for source in sorted(root.glob("*.py")):
        py_compile.compile(str(source), str(source.with_suffix(".pyc")), doraise=True)
        source.unlink()
    try:
        package = importlib.import_module("lazy_demo")
        assert package.__file__ is not None and package.__file__.endswith(".pyc")
        assert package.shown == "shown"
        with pytest.warns(DeprecationWarning, match="lazy_demo.hidden is no longer public"):
            assert package.hidden == "hidden"
    finally:
        for name in ("lazy_demo", "lazy_demo._impl"):
            sys.modules.pop(name, None)


def test_the_map_is_the_from_imports_the_code_skipped() -> None:
    source = textwrap.dedent(
        """
        from __future__ import annotations

        import typing

        from memquill.lazy import lazy_exports as _lazy_exports

        if typing.TYPE_CHECKING:
            import memquill.store as store
            from memquill.errors import ERRORS, MemquillError as MemquillError
            from memquill.tools import CATALOGUE as catalogue, _writes
            from . import _impl, sibling
            from ._impl import hidden as hidden
            from .. import other
        """
    )
    assert _skipped_imports(compile(source, "<facade>", "exec"), "pkg.sub") == {
        "ERRORS": "memquill.errors",
        "MemquillError": "memquill.errors",
        "sibling": "pkg.sub",
        "hidden": "pkg.sub._impl",
        "other": "pkg",
    }


def test_only_the_package_itself_may_leave_out_the_map() -> None:
    """Its imports are its map: called from anywhere else, there is none to read."""
    from memquill.lazy import lazy_exports

    with pytest.raises(TypeError, match="without homes runs in"):
        lazy_exports("memquill.store")


@pytest.mark.parametrize("name", FACADES)
def test_the_facades_internal_names_still_resolve_with_a_warning(name: str) -> None:
    """Each name a facade resolves but does not export warns and is its home's object."""
    facade = importlib.import_module(name)
    served = type_checking_imports(Path(facade.__file__ or ""))
    internal = {attr: s.module for attr, s in served.items() if attr not in facade.__all__}
    assert internal, f"{name} internalised no name"
    for attr, home in internal.items():
        with pytest.warns(DeprecationWarning, match=f"{name}.{attr} is no longer public"):
            value = getattr(facade, attr)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # another facade's own name
            assert value is getattr(importlib.import_module(home), attr)
        assert not served[attr].public
        assert attr not in dir(facade)
