"""Each facade: ``__all__`` is sorted and is exactly its public namespace; ``memquill``'s is small;
a lazy facade's ``if TYPE_CHECKING:`` imports are its map (each name written there once, a public
one again in ``__all__``).

``memquill`` holds what a first application needs (at most :data:`FACADE_LIMIT` names, its
docstring says which); every other public name lives in its layer's facade, listed here too.
"""

from __future__ import annotations

import ast
import importlib
import re
import types
import warnings
from pathlib import Path

import pytest
from tests.meta.facade_imports import lazy_facades, type_checking_imports

import memquill
from memquill.lazy import _skipped_imports  # pyright: ignore[reportPrivateUsage]

FACADE_LIMIT = 32

FACADES = [
    "memquill",
    "memquill.enhance",
    "memquill.index",
    "memquill.items",
    "memquill.lifecycle",
    "memquill.manage",
    "memquill.plugins",
    "memquill.query",
    "memquill.semantic",
    "memquill.store",
    "memquill.sync",
    "memquill.testing",
    "memquill.tools",
    "memquill_adk",
    "memquill_anthropic",
    "memquill_langchain",
    "memquill_llamaindex",
    "memquill_mcp",
    "memquill_openai_agents",
    "memquill_pydantic_ai",
]


@pytest.mark.parametrize("name", FACADES)
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    # dir(), not vars(): adapter facades resolve their names lazily (PEP 562).
    public = {
        attr
        for attr in dir(module)
        if not attr.startswith("_")
        and attr != "annotations"
        and not isinstance(getattr(module, attr), types.ModuleType)
    }
    # isort style, as ruff's RUF022 sorts: CONSTANTS, then the rest case-sensitively.
    ordered = sorted(exported, key=lambda n: (not n.isupper(), n))
    assert exported == ordered, f"{name}.__all__ is not sorted"
    assert set(exported) - {"__version__"} == public, f"{name}: __all__ and the public names differ"


@pytest.mark.parametrize("name", FACADES)
def test_every_exported_name_resolves(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        assert getattr(module, attr) is not None


def test_the_memquill_facade_stays_small() -> None:
    assert len(memquill.__all__) <= FACADE_LIMIT, (
        f"memquill exports {len(memquill.__all__)} names (at most {FACADE_LIMIT}): "
        "export a new name from its layer's facade instead"
    )


def test_the_architecture_page_lists_exactly_the_facade() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text("utf-8")
    section = page.split("## The public API", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| ")][1:]
    listed = {name for line in table for name in re.findall(r"`(\w+)`", line)}
    assert listed == set(memquill.__all__)


def _bound_at_import(path: Path) -> set[str]:
    """The names ``path``'s top level binds when it runs (imports outside ``if``, defs)."""
    bound: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Assign):
            bound.update(n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return bound


def test_every_facade_is_lazy() -> None:
    assert set(FACADES) <= set(lazy_facades())


@pytest.mark.parametrize("name", sorted(lazy_facades()))
def test_a_lazy_facade_writes_each_name_once_in_its_map(name: str) -> None:
    """The ``if TYPE_CHECKING:`` imports are the lazy map: a public name is imported plainly
    and listed in ``__all__``, the core's own ``Name as Name``; no second map is written, and
    what the runtime reads from the compiled code is what the block says."""
    path = lazy_facades()[name]
    declared = type_checking_imports(path)
    module = importlib.import_module(name)
    assert declared, f"{name} imports nothing under TYPE_CHECKING"
    assert [n for n, served in declared.items() if served.renamed] == []
    calls = [
        node
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("lazy_exports")
    ]
    assert [ast.unparse(call) for call in calls if len(call.args) != 1] == []
    bound = _bound_at_import(path)
    public = {n for n, served in declared.items() if served.public}
    assert public == set(module.__all__) - bound, f"{name}: plain imports and __all__ differ"
    assert set(module.__all__) <= public | bound
    runtime = _skipped_imports(compile(path.read_bytes(), str(path), "exec"), name)
    assert {n: runtime.get(n) for n in declared} == {n: s.module for n, s in declared.items()}
    assert set(runtime) - set(declared) <= bound  # the imports it runs: bound before a lookup
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for attr, served in declared.items():
            assert getattr(module, attr) is getattr(importlib.import_module(served.module), attr)
