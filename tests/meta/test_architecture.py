"""Import direction, checked by parsing every module (no import needed).

- Inside the core, layers depend downwards only, and subpackages form no cycle:
  foundation (the ``foundation`` subpackage, and ``errors``, ``paths``, ``private_paths``,
  ``owner_only``, ``jsondoc`` and ``lazy`` beside it) ← ``store``
  ← ``query`` ← ``index`` ← ``tools`` ← ``enhance`` and ``sync`` ← ``lifecycle`` ← ``manage``;
  ``plugins``, ``testing`` and ``cli`` sit on top (with the ``memquill`` facade, whose
  ``__version__`` any part may read: the facade imports nothing until a name is used). Every
  import counts, inside functions too.
- No module imports another part's private module (``memquill.<part>._<module>``, or
  ``from memquill.<part> import _<module>``): it goes through that part's facade, which names
  what the part offers (and imports it lazily).
- The core imports no framework (Anthropic's SDK, LangChain, LlamaIndex, MCP) and no adapter
  package.
- An adapter imports memquill only through its public facades: ``memquill`` and each part's
  facade (``memquill.tools``, ``memquill.store``, ``memquill.errors``, …), never a module
  inside a part, never a private one (``memquill._x``, ``from memquill.tools import _writes``),
  never another adapter.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

ROOT = Path(__file__).resolve().parents[2] / "packages"
CORE = ROOT / "core" / "src"
FRAMEWORKS = (
    "anthropic",
    "google",
    "langchain",
    "langchain_core",
    "langgraph",
    "llama_index",
    "mcp",
    "pydantic_ai",
    "agents",
)
ADAPTERS = (
    "memquill_adk",
    "memquill_anthropic",
    "memquill_langchain",
    "memquill_llamaindex",
    "memquill_mcp",
    "memquill_openai_agents",
    "memquill_pydantic_ai",
)

FOUNDATION: Final = frozenset(
    {
        *("errors", "paths", "private_paths", "owner_only", "jsondoc", "lazy"),
    }
)
LAYERS: Final = {
    "foundation": 0,
    "store": 1,
    "query": 2,
    "index": 3,
    "tools": 4,
    "enhance": 5,
    "semantic": 5,
    "sync": 5,
    "items": 5,
    "lifecycle": 6,
    "manage": 7,
    "web": 1,
    "plugins": 8,
    "testing": 8,
    "cli": 8,
    "facade": 9,
}
"""Each part of the core and its height: a module may import only parts at its height or
below (same-height parts are then checked for cycles)."""


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text("utf-8"), str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "memquill" and all(a.name == "__version__" for a in node.names):
                # The version is a constant of the facade, which loads nothing else (lazy).
                continue
            found.append(node.module)
            # ``from memquill import errors`` names a module of the package.
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _part(module: str) -> str | None:
    """The core part a dotted module name belongs to (``None`` outside memquill)."""
    parts = module.split(".")
    if parts[0] != "memquill":
        return None
    if len(parts) == 1:
        return "facade"
    head = parts[1]
    if head in FOUNDATION:
        return "foundation"
    return head if head in LAYERS else None


def _module_name(path: Path, source_root: Path) -> str:
    relative = path.relative_to(source_root).with_suffix("")
    names = list(relative.parts)
    if names[-1] == "__init__":
        names.pop()
    return ".".join(names)


def layering_violations(source_root: Path) -> list[str]:
    """Every upward import and every cycle between core parts under ``source_root``."""
    problems: list[str] = []
    edges: dict[str, set[str]] = {}
    for path in sorted((source_root / "memquill").rglob("*.py")):
        here = _part(_module_name(path, source_root))
        if here is None:
            problems.append(f"{path.relative_to(source_root)}: not in any layer")
            continue
        for name in _imports(path):
            there = _part(name)
            if there is None or there == here:
                continue
            if LAYERS[there] > LAYERS[here]:
                problems.append(f"{path.relative_to(source_root)}: {here} imports {there} ({name})")
            edges.setdefault(here, set()).add(there)
    problems.extend(f"cycle: {' -> '.join(cycle)}" for cycle in _cycles(edges))
    return problems


def private_imports(source_root: Path) -> list[str]:
    """Every import, under ``source_root``, of a private module of another part of the core."""
    problems: list[str] = []
    for path in sorted((source_root / "memquill").rglob("*.py")):
        relative = path.relative_to(source_root / "memquill").parts
        own = relative[0] if len(relative) > 1 else None  # a top-level module has no part
        found: list[str] = []
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] != "memquill" or len(parts) < 3 or parts[1] == own:
                continue
            private = [i for i, part in enumerate(parts) if i >= 2 and _is_private(part)]
            if private:  # ``from memquill.a._b import c`` names the module, and the module.c
                module = ".".join(parts[: private[0] + 1])
                if module not in found:
                    found.append(module)
        problems.extend(f"{path.relative_to(source_root)}: {module}" for module in found)
    return problems


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _cycles(edges: dict[str, set[str]]) -> Iterator[list[str]]:
    seen: set[str] = set()

    def walk(node: str, trail: list[str]) -> Iterator[list[str]]:
        if node in trail:
            yield [*trail[trail.index(node) :], node]
            return
        if node in seen:
            return
        seen.add(node)
        for target in sorted(edges.get(node, ())):
            yield from walk(target, [*trail, node])

    for start in sorted(edges):
        yield from walk(start, [])


def test_the_core_layers_depend_downwards_only() -> None:
    assert layering_violations(CORE) == []


def test_the_checker_catches_an_upward_import_and_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / "memquill"
    for folder in ("store", "query", "tools"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "errors.py").write_text("")
    (package / "store" / "_store.py").write_text(
        "from memquill.errors import MemquillError\n"
        "def late():\n    from memquill.tools import MemoryToolset\n"
    )
    (package / "query" / "_engine.py").write_text("import memquill.store\n")
    assert layering_violations(tmp_path) == [
        "memquill/store/_store.py: store imports tools (memquill.tools)",
        "memquill/store/_store.py: store imports tools (memquill.tools.MemoryToolset)",
    ]
    (package / "cli").mkdir()
    (package / "cli" / "a.py").write_text("import memquill.testing\n")
    (package / "testing").mkdir()
    (package / "testing" / "b.py").write_text("import memquill.cli\n")
    assert "cycle: cli -> testing -> cli" in layering_violations(tmp_path)


def test_no_part_imports_another_parts_private_module() -> None:
    assert private_imports(CORE) == []


def test_the_checker_catches_a_private_import_of_another_part(tmp_path: Path) -> None:
    package = tmp_path / "memquill"
    for folder in ("store", "query", "index"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "atomic.py").write_text("")
    (package / "store" / "_codec.py").write_text("from memquill.store._record import Record\n")
    (package / "query" / "_rank.py").write_text(
        "from memquill.store import Record\nfrom memquill.foundation.atomic import atomic_write\n"
    )
    assert private_imports(tmp_path) == []  # its own part's module, another part's facade
    (package / "index" / "_corpus.py").write_text(
        "from memquill.query._rank import rank\ndef late():\n    import memquill.store._codec\n"
    )
    (package / "index" / "_sync.py").write_text("from memquill.query import _scan\n")
    (package / "text.py").write_text("from memquill.store._codec import sha256_hex\n")
    assert private_imports(tmp_path) == [
        "memquill/index/_corpus.py: memquill.query._rank",
        "memquill/index/_corpus.py: memquill.store._codec",
        "memquill/index/_sync.py: memquill.query._scan",
        "memquill/text.py: memquill.store._codec",
    ]


def test_core_imports_no_framework_or_adapter() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted(CORE.rglob("*.py"))
        for name in _imports(path)
        if name.split(".")[0] in FRAMEWORKS + ADAPTERS
    ]
    assert not offenders


def core_facades(source_root: Path) -> frozenset[str]:
    """``memquill`` and the facade of each part: every public subpackage and top-level module."""
    package = source_root / "memquill"
    return frozenset(
        {
            "memquill",
            *(
                f"memquill.{path.stem}"
                for path in package.iterdir()
                if not _is_private(path.stem)
                and (path.suffix == ".py" or (path / "__init__.py").is_file())
            ),
        }
    )


def adapter_violations(source: Path, own: str, facades: frozenset[str]) -> list[str]:
    """Every import, under an adapter's ``source``, of memquill other than through ``facades``
    and of another adapter."""
    offenders: list[str] = []
    for path in sorted(source.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"), str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
                if node.module.split(".")[0] == "memquill":  # ``from memquill.tools import _x``
                    names += [f"{node.module}.{a.name}" for a in node.names if _is_private(a.name)]
            for name in names:
                top = name.split(".")[0]
                if top == "memquill" and name not in facades:
                    offenders.append(f"{path.relative_to(source)}: {name}")
                if top in ADAPTERS and top != own:
                    offenders.append(f"{path.relative_to(source)}: {name}")
    return offenders


@pytest.mark.parametrize(
    "package",
    [
        "adk_plugin",
        "anthropic_plugin",
        "langchain_plugin",
        "llamaindex_plugin",
        "mcp_plugin",
        "openai_agents_plugin",
        "pydantic_ai_plugin",
    ],
)
def test_adapters_use_only_the_public_core(package: str) -> None:
    own = {
        "adk_plugin": "memquill_adk",
        "anthropic_plugin": "memquill_anthropic",
        "langchain_plugin": "memquill_langchain",
        "llamaindex_plugin": "memquill_llamaindex",
        "mcp_plugin": "memquill_mcp",
        "openai_agents_plugin": "memquill_openai_agents",
        "pydantic_ai_plugin": "memquill_pydantic_ai",
    }[package]
    source = ROOT / package / "src"
    assert sorted(source.rglob("*.py")), f"{package} has no modules"
    facades = core_facades(CORE)
    assert {"memquill.tools", "memquill.errors", "memquill.testing"} <= facades
    offenders = adapter_violations(source, own, facades)
    assert not offenders, f"adapters must import memquill only through its facades: {offenders}"


def test_the_adapter_checker_catches_private_and_inner_modules(tmp_path: Path) -> None:
    adapter = tmp_path / "memquill_x"
    adapter.mkdir()
    (adapter / "ok.py").write_text(
        "import memquill\nfrom memquill import open_session\n"
        "from memquill.tools import MemoryToolset\nimport memquill.errors\n"
    )
    facades = core_facades(CORE)
    assert adapter_violations(tmp_path, "memquill_x", facades) == []
    (adapter / "bad.py").write_text(
        "from memquill.tools._writes import remember\n"
        "from memquill.store import _codec\n"
        "def late():\n    import memquill.plugins.hookspecs\n"
        "from memquill_mcp import build_server\n"
    )
    assert sorted(adapter_violations(tmp_path, "memquill_x", facades)) == [
        "memquill_x/bad.py: memquill.plugins.hookspecs",
        "memquill_x/bad.py: memquill.store._codec",
        "memquill_x/bad.py: memquill.tools._writes",
        "memquill_x/bad.py: memquill_mcp",
    ]
