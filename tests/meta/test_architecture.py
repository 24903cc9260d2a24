"""Import direction, checked by parsing every module (no import needed).

- The core imports no framework (LangChain, LlamaIndex, MCP) and no adapter package.
- An adapter imports memquill only through its public facade (``memquill``) or the published
  test kit (``memquill.testing``), never a core submodule, and never another adapter.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "packages"
FRAMEWORKS = ("langchain", "langchain_core", "llama_index", "mcp", "pydantic_ai")
ADAPTERS = ("memquill_langchain", "memquill_llamaindex", "memquill_mcp")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text("utf-8"), str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package / "src").rglob("*.py"))


def test_core_imports_no_framework_or_adapter() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in _modules("core")
        for name in _imports(path)
        if name.split(".")[0] in FRAMEWORKS + ADAPTERS
    ]
    assert not offenders


@pytest.mark.parametrize("package", ["langchain_plugin", "llamaindex_plugin", "mcp_plugin"])
def test_adapters_use_only_the_public_core(package: str) -> None:
    own = {
        "langchain_plugin": "memquill_langchain",
        "llamaindex_plugin": "memquill_llamaindex",
        "mcp_plugin": "memquill_mcp",
    }[package]
    modules = _modules(package)
    assert modules, f"{package} has no modules"
    offenders: list[str] = []
    for path in modules:
        for name in _imports(path):
            top = name.split(".")[0]
            if top == "memquill" and name not in {"memquill", "memquill.testing"}:
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
            if top in ADAPTERS and top != own:
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert not offenders, "adapters must import only `memquill` or `memquill.testing`"


def test_the_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("from memquill.store import RecordStore\nimport langchain_core.tools\n")
    assert _imports(module) == ["memquill.store", "langchain_core.tools"]
