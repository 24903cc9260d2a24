"""A snippet that says what to install imports only what that install brings.

A Python block of the README or ``docs/`` that opens with ``# pip install SPEC`` promises that
``SPEC`` is enough: every module the block imports must come from a distribution in the
requirement closure of ``SPEC`` (its extras included), read from the installed distributions'
own metadata, so the extras declared in ``pyproject.toml`` and the snippets cannot disagree.
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from tests.doc_blocks import Block, blocks, documentation

INSTALL = re.compile(r"^# pip install (?P<spec>'[^']+'|\S+)")


def _promising() -> list[Block]:
    """The Python blocks of the README and ``docs/`` that open with an install line (pytest
    comes with packaging, which reads the requirements)."""
    every = [block for path in documentation() for block in blocks(path)]
    return [b for b in every if b.lang == "python" and INSTALL.match(b.first_line)]


def closure(spec: str) -> set[str]:
    """The canonical names of ``spec``'s distribution and of everything it requires, with the
    extras asked for at each step (markers evaluated for this interpreter)."""
    seen: set[str] = set()
    pending = [Requirement(spec)]
    done: set[tuple[str, frozenset[str]]] = set()
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        step = (name, frozenset(requirement.extras))
        if step in done:
            continue
        done.add(step)
        seen.add(name)
        for line in metadata.requires(requirement.name) or []:
            needed = Requirement(line)
            marker = needed.marker
            if marker is None or any(
                marker.evaluate({"extra": extra}) for extra in (*requirement.extras, "")
            ):
                pending.append(needed)
    return seen


def imported(code: str) -> set[str]:
    """The top-level modules ``code`` imports (absolute imports only)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module.split(".")[0])
    return modules


def test_there_are_snippets_that_say_what_to_install() -> None:
    assert any("langgraph" in b.first_line for b in _promising())


@pytest.mark.parametrize("block", _promising(), ids=lambda block: block.key)
def test_a_snippet_imports_only_what_its_install_line_brings(block: Block) -> None:
    match = INSTALL.match(block.first_line)
    assert match is not None
    spec = match.group("spec").strip("'")
    brought = closure(spec)
    providers = metadata.packages_distributions()

    def provided(module: str) -> bool:
        # An editable install (this workspace's own packages) is not in packages_distributions:
        # its module is named as the distribution is (memquill_langchain, memquill-langchain).
        names = {canonicalize_name(d) for d in providers.get(module, [])}
        return bool(brought & (names | {canonicalize_name(module)}))

    missing = sorted(
        module
        for module in imported(block.text)
        if module not in sys.stdlib_module_names and not provided(module)
    )
    assert not missing, f"{block.path}:{block.line}: `pip install {spec}` brings no {missing}"
