"""Private modules declare no ``__all__``, and facades load each name from its home.

A facade's ``__all__`` is the public list (``test_public_api.py``); a private module's would be
a second list of the same names to keep in step. So names are imported from the module that
defines them, and a lazy map (:func:`memquill.lazy.lazy_exports`) that names a private module
names that one, not a module that happens to import it (a facade's map is its
``if TYPE_CHECKING:`` imports).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.meta.facade_imports import ROOT, lazy_facades, type_checking_imports

SOURCES = sorted(ROOT.glob("packages/*/src"))


def _private_modules() -> list[Path]:
    return [
        path
        for source in SOURCES
        for path in sorted(source.rglob("_*.py"))
        if path.name not in {"__init__.py", "__main__.py"}
    ]


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _module_file(module: str) -> Path | None:
    parts = module.split(".")
    for source in SOURCES:
        candidate = source.joinpath(*parts)
        if candidate.with_suffix(".py").is_file():
            return candidate.with_suffix(".py")
        if (candidate / "__init__.py").is_file():
            return candidate / "__init__.py"
    return None


def test_private_modules_declare_no_all() -> None:
    modules = _private_modules()
    assert len(modules) > 100  # the glob found the packages
    declaring = [
        str(path.relative_to(ROOT))
        for path in modules
        if "__all__" in _top_level_names(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert declaring == []


def test_lazy_maps_name_the_module_that_defines_each_name() -> None:
    checked = 0
    elsewhere: list[str] = []
    for facade in lazy_facades().values():
        for name, served in type_checking_imports(facade).items():
            module = served.module
            if not module.rsplit(".", 1)[-1].startswith("_"):
                continue  # another facade: it answers for its own names
            path = _module_file(module)
            assert path is not None, f"{facade}: {module} does not exist"
            checked += 1
            if name not in _top_level_names(ast.parse(path.read_text(encoding="utf-8"))):
                elsewhere.append(f"{facade.relative_to(ROOT)}: {name} -> {module}")
    assert checked > 50  # the maps were found
    assert elsewhere == []
