"""Lazy facades (:mod:`memquill.lazy`): an internalised name still resolves, with a warning.

A name that leaves a facade's public list (only its own part and the tests use it) keeps
working for a release: it resolves from the facade with a ``DeprecationWarning`` on every use,
and is no longer listed by ``dir()``.
"""

from __future__ import annotations

import importlib
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
    "memquill.plugins",
    "memquill.query",
    "memquill.semantic",
]


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
                {"shown": "lazy_demo._impl"},
                internal={"hidden": "lazy_demo._impl"},
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


@pytest.mark.parametrize("name", FACADES)
def test_the_facades_internal_names_still_resolve_with_a_warning(name: str) -> None:
    """Each name a facade stopped exporting resolves, warns, and is its home's object."""
    facade = importlib.import_module(name)
    internal: dict[str, str] = facade._INTERNAL  # pyright: ignore[reportAttributeAccessIssue]
    assert internal, f"{name} internalised no name"
    for attr, home in internal.items():
        with pytest.warns(DeprecationWarning, match=f"{name}.{attr} is no longer public"):
            value = getattr(facade, attr)
        assert value is getattr(importlib.import_module(home), attr)
        assert attr not in facade.__all__
        assert attr not in dir(facade)
