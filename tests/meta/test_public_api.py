"""Each facade: ``__all__`` is sorted and is exactly its public namespace; ``memquill``'s is small.

``memquill`` holds what a first application needs (at most :data:`FACADE_LIMIT` names, its
docstring says which); every other public name lives in its layer's facade, listed here too.
"""

from __future__ import annotations

import importlib
import re
import types
from pathlib import Path

import pytest

import memquill

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
