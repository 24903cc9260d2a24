"""Lazy facades (:mod:`memquill.lazy`): a name outside ``__all__`` is the core's own.

The parts of the core import each other's names through the facades, silently; a name that
is not public (the core's own, or one that left a facade's public list) resolves for anyone
else with a ``DeprecationWarning`` on every use, and is not listed by ``dir()``.
"""

from __future__ import annotations

import importlib
import re
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

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
# ``"Name": "memquill.some.module"`` entries of a facade's lazy map.
LAZY_ENTRY = re.compile(r'"(\w+)": "(memquill[\w.]*)"')


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """A real package on disk whose facade has one public and one internal name."""
    root = tmp_path / "lazy_demo"
    root.mkdir()
    (root / "_impl.py").write_text("shown = 'shown'\nhidden = 'hidden'\n", encoding="utf-8")
    (root / "__init__.py").write_text(
        textwrap.dedent(
            """
            from memquill.lazy import lazy_exports as _lazy_exports

            __all__ = ["shown"]

            __getattr__, __dir__ = _lazy_exports(
                __name__,
                {"shown": "lazy_demo._impl", "hidden": "lazy_demo._impl"},
            )
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
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


@pytest.mark.parametrize("name", FACADES)
def test_the_facades_internal_names_still_resolve_with_a_warning(name: str) -> None:
    """Each name a facade resolves but does not export warns and is its home's object."""
    facade = importlib.import_module(name)
    source = Path(facade.__file__ or "").read_text(encoding="utf-8")
    homes = {
        attr: home
        for attr, home in LAZY_ENTRY.findall(source)
        # a package is another facade: the name moved there (it warns so, and says where)
        if not hasattr(importlib.import_module(home), "__path__")
    }
    internal = {attr: home for attr, home in homes.items() if attr not in facade.__all__}
    assert internal, f"{name} internalised no name"
    for attr, home in internal.items():
        with pytest.warns(DeprecationWarning, match=f"{name}.{attr} is no longer public"):
            value = getattr(facade, attr)
        assert value is getattr(importlib.import_module(home), attr)
        assert attr not in facade.__all__
        assert attr not in dir(facade)
