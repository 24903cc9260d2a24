"""Each facade: ``__all__`` is sorted and is exactly its public namespace; ``memquill``'s is small;
a lazy facade's ``if TYPE_CHECKING:`` imports are its map (each name written there once, a public
one again in ``__all__``).

``memquill`` holds what a first application needs (at most :data:`FACADE_LIMIT` names, its
docstring says which); every other public name lives in its layer's facade, listed here too.
A public name is one users need, so a user can find each in the README, a package's README,
``docs/`` or ``examples/``; what only memquill's own parts, CLI, page and adapters use is the
core's own. The public names of every package facade together stay under :data:`NAMES_BUDGET`
(what ``benchmarks/core_size.py`` counts).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import types
import warnings
from pathlib import Path

import pytest
from tests.meta.facade_imports import lazy_facades, type_checking_imports

import memquill
from memquill.lazy import _skipped_imports  # pyright: ignore[reportPrivateUsage]

FACADE_LIMIT = 32
NAMES_BUDGET = 150  # public names over every package facade, fewer than this
ROOT = Path(__file__).resolve().parents[2]

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


def _measured_facades() -> list[str]:
    """The package facades ``benchmarks/core_size.py`` counts (its own discovery, not a copy)."""
    spec = importlib.util.spec_from_file_location("core_size", ROOT / "benchmarks" / "core_size.py")
    assert spec is not None and spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    return benchmark.facades(ROOT)


def _public_lists() -> dict[str, list[str]]:
    """Each package facade's ``__all__``, for those that have one."""
    lists: dict[str, list[str]] = {}
    for name in _measured_facades():
        exported = getattr(importlib.import_module(name), "__all__", None)
        if exported is not None:
            lists[name] = list(exported)
    return lists


def _user_code_text() -> str:
    """What a user reads as code: inline code and fenced blocks of the README, the packages'
    READMEs and ``docs/``, and every example file."""
    pages = [ROOT / "README.md", *ROOT.glob("packages/*/README.md"), *ROOT.glob("docs/**/*.md")]
    chunks: list[str] = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        chunks += re.findall(r"^```.*?^```", text, flags=re.MULTILINE | re.DOTALL)
        chunks += re.findall(r"`[^`]+`", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S))
    chunks += [
        path.read_text(encoding="utf-8")
        for path in sorted(ROOT.glob("examples/**/*"))
        if path.is_file() and path.suffix in {".py", ".md", ".toml"}
    ]
    return "\n".join(chunks)


def test_every_public_name_is_one_a_user_can_find() -> None:
    code = _user_code_text()
    assert "open_session" in code  # the pages were read
    unfound = [
        f"{facade}.{name}"
        for facade, names in _public_lists().items()
        for name in names
        if not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", code)
    ]
    assert unfound == [], (
        f"public names no README, docs page or example names: {unfound}; document one, or "
        "import it `Name as Name` (the core's own) and leave it out of __all__"
    )


def test_the_facades_public_names_stay_under_the_budget() -> None:
    lists = _public_lists()
    assert {"memquill", "memquill.store", "memquill_mcp"} <= set(lists)  # the facades were found
    counts = {facade: len(names) for facade, names in lists.items()}
    total = sum(counts.values())
    assert total < NAMES_BUDGET, (
        f"the package facades export {total} names (fewer than {NAMES_BUDGET}): {counts}; "
        "a name only memquill itself uses is the core's own (`Name as Name`, not in __all__)"
    )
